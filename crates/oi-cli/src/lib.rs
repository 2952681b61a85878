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
pub mod habits;
pub mod input;
pub mod mcp_cmd;
pub mod render;
pub mod session;
pub mod signals;
pub mod tui;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser as _;

use crate::cli::{Cli, Command, ConfigAction, SessionOptions};
use crate::error::{CliError, exit};
use crate::render::HumanRenderer;

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
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
        if cli.profiles {
            return commands::profiles(&request().await?);
        }
        if cli.local_models {
            return commands::local_models(&options).await;
        }
        if cli.conversations {
            return resume(&options, None, false, false).await;
        }
        match cli.command {
            Some(Command::Exec(args)) => {
                exec::run(args, session(false, true).await?, options.verbose).await
            }
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
            Some(Command::Doctor { json }) => {
                commands::doctor(&request().await?, options.api_key.as_deref(), json).await
            }
            Some(Command::Undo) => commands::undo(&request().await?).await,
            Some(Command::Checkpoints { action }) => {
                commands::checkpoints(&request().await?, action).await
            }
            Some(Command::Trust { path, untrust }) => commands::trust(path, untrust),
            Some(Command::Resume {
                session_id,
                last,
                here,
            }) => resume(&options, session_id, last, here).await,
            None => {
                if let Some(prompt) = &cli.prompt {
                    check_not_a_mistyped_command(prompt)?;
                }
                tui::run(&options, session(true, true).await?, cli.prompt).await
            }
        }
    });
    // A line read from the terminal may still be pending; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(error) => report(&error, &secrets),
    }
}

/// The command line, with Open Interpreter's spellings put in oi's; a
/// usage error is reported here (the exit code returned).
fn parse() -> Result<Cli, ExitCode> {
    let secrets = || secrets_of_this_process(None);
    let args = habits::rewrite(std::env::args_os().collect())
        .map_err(|error| report(&error, &secrets()))?;
    Cli::try_parse_from(args).map_err(|error| {
        // An Open Interpreter flag oi does not take gets its one line.
        if error.kind() == clap::error::ErrorKind::UnknownArgument
            && let Some(clap::error::ContextValue::String(arg)) =
                error.get(clap::error::ContextKind::InvalidArg)
            && let Some(answer) = habits::instead(arg.split('=').next().unwrap_or(arg))
        {
            return report(&answer, &secrets());
        }
        let _ = error.print();
        ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(exit::USAGE))
    })
}

/// A one-word task that is a command's name mistyped (`interpreter
/// sesions`) is an error, not a task for the model.
fn check_not_a_mistyped_command(prompt: &str) -> Result<(), CliError> {
    use clap::CommandFactory as _;
    let word = prompt.trim();
    let after_double_dash = std::env::args_os().any(|a| a == "--");
    if after_double_dash || word.is_empty() || word.contains(char::is_whitespace) {
        return Ok(());
    }
    // One slip (two in a long word): `sesions`, `exce`, `sandbx` — not
    // `hello` (two from `help`) or `test` (two from `trust`), which are tasks.
    let slips = if word.chars().count() >= 7 { 2 } else { 1 };
    let command = Cli::command();
    let close = command
        .get_subcommands()
        .map(clap::Command::get_name)
        .find(|name| word.len() > 2 && strsim::damerau_levenshtein(word, name) <= slips);
    match close {
        Some(name) => Err(CliError::usage(
            format!("unknown command `{word}`; did you mean `{name}`?"),
            format!("to give the model this one-word task, write `interpreter -- {word}`"),
        )),
        None => Ok(()),
    }
}

/// `interpreter resume`: the interactive session on a recorded one —
/// named, this folder's latest, or picked from a list.
async fn resume(
    options: &SessionOptions,
    id: Option<String>,
    last: bool,
    here: bool,
) -> Result<ExitCode, CliError> {
    let chosen = match (id, last) {
        (Some(id), _) => id,
        (None, true) => String::new(),
        (None, false) => match commands::pick_session(&session::request(options).await?, here)? {
            Some(id) => id,
            None => return Ok(ExitCode::from(exit::OK)),
        },
    };
    let options = SessionOptions {
        resume: Some(chosen),
        continue_session: false,
        ..options.clone()
    };
    let request = session::request(&options).await?;
    let request = first_run::before_session(&options, request, false, true).await?;
    tui::run(&options, request, None).await
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
