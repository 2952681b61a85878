//! The `interpreter` command: argument parsing, the `exec` and interactive
//! front ends, and error reporting at the edge. The agent itself lives in
//! `oi-core`; this crate only wires it to a terminal.

pub mod approve;
pub mod cli;
pub mod commands;
pub mod error;
pub mod eval;
pub mod exec;
pub mod first_run;
pub mod input;
pub mod mcp_cmd;
pub mod render;
pub mod session;
pub mod signals;
pub mod tui;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::cli::{Cli, Command, ConfigAction, SessionOptions};
use crate::error::{CliError, exit};
use crate::render::HumanRenderer;

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
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
        let options = cli.options;
        // The session the command line asks for (with `--local`, the model
        // server found here), for the commands that use one.
        let request = || session::request(&options);
        // For the commands that run sessions: with the built-in model, its
        // weights downloaded first (agreed to with `--yes`, or asked where
        // a person can answer); a first start's set-up dialog where asked.
        let options_ref = &options;
        let session = |dialog: bool, questions: bool| async move {
            let request = session::request(options_ref).await?;
            first_run::before_session(options_ref, request, dialog, questions).await
        };
        match cli.command {
            Some(Command::Exec(args)) => exec::run(args, session(false, true).await?).await,
            Some(Command::Acp) => commands::acp(session(false, false).await?).await,
            Some(Command::McpServer) => commands::mcp_server(session(false, false).await?).await,
            Some(Command::Lmc) => commands::lmc(session(false, false).await?).await,
            Some(Command::Server(args)) => {
                commands::server(args, session(false, false).await?).await
            }
            None if options.server => {
                commands::server(cli::ServerArgs::default(), session(false, false).await?).await
            }
            Some(Command::AppServer { listen }) => {
                commands::app_server(&listen, session(false, false).await?).await
            }
            Some(Command::Setup) => first_run::setup_command(&request().await?).await,
            Some(Command::Mcp { action }) => mcp_cmd::run(&request().await?, action).await,
            Some(Command::Config {
                action: ConfigAction::Show,
            }) => commands::config_show(&request().await?),
            Some(Command::Config {
                action: ConfigAction::Set { key, value },
            }) => commands::config_set(&key, &value),
            Some(Command::Models {
                download: Some(name),
            }) => commands::download_model(&request().await?, &name).await,
            Some(Command::Models { download: None }) if options.local => {
                commands::local_models(&options).await
            }
            Some(Command::Models { download: None }) => commands::models(&request().await?).await,
            Some(Command::Eval(args)) => {
                // Eval's `--resume` names its results file, not a session.
                let without_resume = SessionOptions {
                    resume: None,
                    ..options.clone()
                };
                let request = session::request(&without_resume).await?;
                eval::run(args, &options, &request).await
            }
            Some(Command::Sessions { here, limit }) => {
                commands::sessions(&request().await?, here, limit)
            }
            Some(Command::Sandbox { command }) => {
                commands::sandbox(&request().await?, &command).await
            }
            Some(Command::Completion { shell }) => commands::completion(shell),
            Some(Command::Undo) => commands::undo(&request().await?).await,
            Some(Command::Checkpoints { action }) => {
                commands::checkpoints(&request().await?, action).await
            }
            Some(Command::Trust { path, untrust }) => commands::trust(path, untrust),
            None => tui::run(&options, session(true, true).await?).await,
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
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let stored = oi_config::home_dir(&env)
        .map(|home| oi_config::keys::stored(&home))
        .unwrap_or_default();
    oi_protocol::Secrets::new(
        env.into_iter()
            .filter(|(name, _)| named_secret(name))
            .map(|(_, value)| value)
            .chain(api_key.map(str::to_owned))
            .chain(stored),
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
