//! The `interpreter` command: argument parsing, the `exec` and interactive
//! front ends, and error reporting at the edge. The agent itself lives in
//! `oi-core`; this crate only wires it to a terminal.

pub mod approve;
pub mod cli;
pub mod commands;
pub mod error;
pub mod eval;
pub mod exec;
pub mod input;
pub mod local;
pub mod render;
pub mod session;
pub mod signals;
pub mod tui;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::cli::{Cli, Command, ConfigAction};
use crate::error::{CliError, exit};
use crate::render::HumanRenderer;

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let mut cli = Cli::parse();
    let secrets = secrets_of_this_process(cli.options.api_key.as_deref());
    // Processes that code starts and leaves behind (daemons, `nohup` jobs)
    // become this process's children when their parent exits, so the
    // session can end them when it ends.
    oi_kernels::become_subreaper();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return report(&CliError::Io(e), &secrets),
    };
    if cli.options.plain {
        // Plain means plain everywhere: no colours even in a terminal.
        anstream::ColorChoice::Never.write_global();
    }
    let result = runtime.block_on(async move {
        if cli.options.local {
            cli.options.local_choice = Some(local::choose(&cli.options).await?);
        }
        match cli.command {
            Some(Command::Exec(args)) => exec::run(args, cli.options).await,
            Some(Command::Config {
                action: ConfigAction::Show,
            }) => commands::config_show(&cli.options),
            Some(Command::Config {
                action: ConfigAction::Set { key, value },
            }) => commands::config_set(&key, &value),
            Some(Command::Models) => commands::models(&cli.options).await,
            Some(Command::Eval(args)) => eval::run(args, &cli.options).await,
            Some(Command::Sessions { here, limit }) => {
                commands::sessions(&cli.options, here, limit)
            }
            Some(Command::Sandbox { command }) => commands::sandbox(&cli.options, &command),
            Some(Command::Undo) => commands::undo(&cli.options).await,
            Some(Command::Checkpoints { action }) => {
                commands::checkpoints(&cli.options, action).await
            }
            Some(Command::Trust { path, untrust }) => commands::trust(path, untrust),
            None => tui::run(cli.options).await,
        }
    });
    // A line read from the terminal may still be pending; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(error) => report(&error, &secrets),
    }
}

/// The secrets an error printed here must not show: `--api-key`, and the
/// values of the environment variables whose names say they hold one.
fn secrets_of_this_process(api_key: Option<&str>) -> oi_protocol::Secrets {
    let named_secret = |name: &str| {
        let name = name.to_ascii_uppercase();
        ["KEY", "TOKEN", "SECRET", "PASSWORD"]
            .iter()
            .any(|word| name.contains(word))
    };
    oi_protocol::Secrets::new(
        std::env::vars()
            .filter(|(name, _)| named_secret(name))
            .map(|(_, value)| value)
            .chain(api_key.map(str::to_owned)),
    )
}

fn report(error: &CliError, secrets: &oi_protocol::Secrets) -> ExitCode {
    let mut out = HumanRenderer::new(anstream::stderr());
    let hint = error.hint().map(|h| secrets.redact(&h).into_owned());
    if out
        .error(&secrets.redact(&error.to_string()), hint.as_deref())
        .is_err()
    {
        return ExitCode::from(exit::FAILED);
    }
    error.exit_code()
}
