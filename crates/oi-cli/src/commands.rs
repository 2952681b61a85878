//! The subcommands that do not run a task: `config show`, `config set`,
//! `models`, `trust`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use oi_core::SessionRequest;
use oi_core::setup;

use crate::error::{CliError, exit};

/// `interpreter sandbox -- CMD…`: runs CMD under the session's sandbox
/// policy and exits with its exit code.
pub async fn sandbox(request: &SessionRequest, command: &[String]) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    let policy = setup::policy(&loaded, request)?;
    let mut err = crate::render::HumanRenderer::new(anstream::stderr());
    let dim = anstyle::Style::new().dimmed();
    let yellow =
        anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Yellow)));
    let shortfalls = oi_sandbox::shortfalls(&policy);
    if loaded.config.sandbox_required && !shortfalls.is_empty() {
        return Err(setup::SetupError::SandboxRequired { shortfalls }.into());
    }
    for problem in &shortfalls {
        err.line(yellow, &format!("warning: {problem}"))?;
    }
    err.line(dim, &policy.summary())?;
    let Some((program, args)) = command.split_first() else {
        return Err(CliError::usage(
            "no command given",
            "put the command after `--`: `interpreter sandbox -- touch /etc/x`",
        ));
    };
    if policy.in_container() {
        use std::io::IsTerminal;
        let spec = setup::container_spec(&loaded);
        let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
        // Said as it happens (a pull, the copies of a remote engine); a
        // note that cannot be written is not worth stopping the command.
        let status = oi_kernels::run_once(&spec, &policy, command, terminal, &mut |line| {
            let _ = err.line(dim, &line);
        })
        .await;
        let status = status.map_err(|e| {
            CliError::usage(e.to_string(), "see `[container]` in docs/configuration.md")
        })?;
        return Ok(exit_code_of(status));
    }
    let temp = tempfile::Builder::new().prefix("oi-sandbox-").tempdir()?;
    let confinement =
        oi_sandbox::Confinement::prepare(&policy, &[temp.path().to_path_buf()], &policy.workspace)
            .map_err(|e| CliError::usage(e.to_string(), "run with `--sandbox full-access`"))?;
    let mut child = std::process::Command::new(program);
    child
        .args(args)
        .current_dir(&policy.workspace)
        .env("TMPDIR", temp.path());
    for name in loaded.hidden_env() {
        child.env_remove(name);
    }
    confinement.install(&mut child);
    let status = child.status().map_err(|e| {
        CliError::usage(
            format!("cannot run `{program}`: {e}"),
            "check the command's name and that it is on PATH",
        )
    })?;
    Ok(exit_code_of(status))
}

/// The exit code a shell would give for `status` (128 + a signal).
fn exit_code_of(status: std::process::ExitStatus) -> ExitCode {
    let code = match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The checkpoints of this session's workspace (`--workspace` or here).
fn workspace_checkpoints(request: &SessionRequest) -> Result<oi_core::Checkpoints, CliError> {
    let loaded = setup::load_config(request)?;
    let policy = setup::policy(&loaded, request)?;
    Ok(setup::checkpoints(&loaded, &policy))
}

/// `interpreter undo`
pub async fn undo(request: &SessionRequest) -> Result<ExitCode, CliError> {
    let checkpoints = workspace_checkpoints(request)?;
    let restored = checkpoints.undo().await.map_err(checkpoint_error)?;
    let mut out = crate::render::HumanRenderer::new(anstream::stdout());
    crate::render::Render::event(&mut out, &restored.event())?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter checkpoints [restore ID]`
pub async fn checkpoints(
    request: &SessionRequest,
    action: Option<crate::cli::CheckpointAction>,
) -> Result<ExitCode, CliError> {
    let checkpoints = workspace_checkpoints(request)?;
    match action {
        Some(crate::cli::CheckpointAction::Restore { id }) => {
            let restored = checkpoints.restore(&id).await.map_err(checkpoint_error)?;
            let mut out = crate::render::HumanRenderer::new(anstream::stdout());
            crate::render::Render::event(&mut out, &restored.event())?;
        }
        None => {
            let list = checkpoints.list().await.map_err(checkpoint_error)?;
            if list.is_empty() {
                write_stdout(&format!(
                    "No checkpoints yet for {}: one is saved before each run that changes it.\n",
                    checkpoints.workspace().display()
                ))?;
            } else {
                let mut text = format!(
                    "Checkpoints of {} (newest first):\n",
                    checkpoints.workspace().display()
                );
                for c in list {
                    text.push_str(&format!(
                        "{}  {}  {}\n",
                        c.short_id(),
                        oi_core::format_utc(c.time),
                        c.message
                    ));
                }
                text.push_str("Restore one with `interpreter checkpoints restore ID`.\n");
                write_stdout(&text)?;
            }
        }
    }
    Ok(ExitCode::from(exit::OK))
}

fn checkpoint_error(error: oi_core::CheckpointError) -> CliError {
    let hint = match &error {
        oi_core::CheckpointError::NoGit(_) => "install git",
        oi_core::CheckpointError::NothingToUndo { .. } => {
            "`interpreter checkpoints` lists every saved state; `interpreter checkpoints restore ID` goes to any of them"
        }
        oi_core::CheckpointError::Unknown { .. } => "copy an id from `interpreter checkpoints`",
        _ => "check that the folder is readable and writable",
    };
    CliError::usage(error.to_string(), hint)
}

/// `interpreter config show`
pub fn config_show(request: &SessionRequest) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    write_stdout(&oi_config::show(&loaded, request.api_key.is_some()))?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter config set KEY VALUE`
pub fn config_set(key: &str, value: &str) -> Result<ExitCode, CliError> {
    let home = oi_home()?;
    let (file, written) = oi_config::edit::set(&home, key, value)?;
    write_stdout(&format!(
        "{key} = {written}  (written to {})\n",
        oi_config::display_path(&file)
    ))?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter models`: the active provider's models, the current one marked.
pub async fn models(request: &SessionRequest) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    if setup::builtin::selected(&loaded) {
        return local_models_of(request).await;
    }
    let (provider, wire) = setup::provider(&loaded, request.api_key.as_deref())?;
    let models = oi_providers::list_models(&provider, wire).await?;
    if models.is_empty() {
        return Err(CliError::usage(
            format!("{} lists no models", provider.name),
            "for Ollama, pull one first (`ollama pull qwen2.5-coder:7b`); for other servers, load a model",
        ));
    }
    let current = loaded.config.model.as_deref();
    let mut text = String::new();
    for model in &models {
        let mark = if Some(model.as_str()) == current {
            "*"
        } else {
            " "
        };
        text.push_str(&format!("{mark} {model}\n"));
    }
    write_stdout(&text)?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter models --download NAME`: a model for the built-in engine,
/// into the cache.
pub async fn download_model(request: &SessionRequest, name: &str) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    let Some(known) = oi_builtin::catalog::known(name) else {
        return Err(
            oi_core::SetupError::Builtin(oi_builtin::BuiltinError::UnknownModel {
                model: name.to_owned(),
            })
            .into(),
        );
    };
    let dest = setup::builtin::cache_dir(&loaded)?.join(known.file);
    if dest.is_file() {
        write_stdout(&format!(
            "{} is already downloaded: {}\n",
            known.name,
            oi_config::display_path(&dest)
        ))?;
        return Ok(ExitCode::from(exit::OK));
    }
    let url = setup::builtin::download_url(&loaded, known);
    crate::first_run::download(known, &url, &dest).await?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter models --local`: the servers here and the built-in
/// model's weights (no server needs to answer).
pub async fn local_models(options: &crate::cli::SessionOptions) -> Result<ExitCode, CliError> {
    let without_local = crate::cli::SessionOptions {
        local: false,
        ..options.clone()
    };
    let request = crate::session::request(&without_local).await?;
    local_models_of(&request).await
}

async fn local_models_of(request: &SessionRequest) -> Result<ExitCode, CliError> {
    write_stdout(&crate::first_run::list_local(request).await?)?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter trust [PATH] [--untrust]`
pub fn trust(path: Option<PathBuf>, untrust: bool) -> Result<ExitCode, CliError> {
    let home = oi_home()?;
    let path = match path {
        Some(p) => p,
        None => std::env::current_dir()?,
    };
    let path = path.canonicalize().map_err(|e| {
        CliError::usage(
            format!("cannot trust `{}`: {e}", path.display()),
            "give the path of an existing folder of the project",
        )
    })?;
    let root = oi_config::project_root(&path);
    let file = oi_config::edit::trust(&home, &root, !untrust)?;
    let what = if untrust {
        "is now untrusted: its .openinterpreter/config.toml files are ignored"
    } else {
        "is now trusted: its .openinterpreter/config.toml files apply"
    };
    write_stdout(&format!(
        "{} {what} (written to {})\n",
        root.display(),
        oi_config::display_path(&file)
    ))?;
    Ok(ExitCode::from(exit::OK))
}

/// oi's folder, where the user's configuration file is.
pub(crate) fn oi_home() -> Result<PathBuf, CliError> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    Ok(oi_config::home_dir(&env)?)
}

pub(crate) fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `interpreter completion SHELL`: the completion script of every
/// subcommand and flag, generated from the same definitions as the parser.
pub fn completion(shell: clap_complete::Shell) -> Result<ExitCode, CliError> {
    let mut command = <crate::cli::Cli as clap::CommandFactory>::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "interpreter", &mut script);
    write_stdout(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter sessions [--here] [-n N]`
pub fn sessions(request: &SessionRequest, here: bool, limit: usize) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    let dir = loaded.home.join("sessions");
    let cwd = setup::policy(&loaded, request)?.workspace;
    let cwd = cwd.display().to_string();
    let all = oi_core::transcript::list(&dir);
    let shown: Vec<_> = all
        .iter()
        .filter(|s| !here || s.header.cwd == cwd)
        .take(limit)
        .collect();
    let mut out = anstream::stdout();
    if shown.is_empty() {
        writeln!(
            out,
            "No sessions recorded{} yet (they are kept in {}).",
            if here { " in this folder" } else { "" },
            oi_config::display_path(&dir)
        )?;
        return Ok(ExitCode::from(exit::OK));
    }
    let dim = anstyle::Style::new().dimmed();
    writeln!(
        out,
        "{dim}{:<22} {:<20} {:>5} {:>9}  {:<24} first prompt{dim:#}",
        "id", "last active (UTC)", "tasks", "cost", "directory"
    )?;
    for s in &shown {
        let (when, prompt) = when_and_prompt(s);
        let cost = s
            .cost_usd
            .map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"));
        let dir = oi_config::display_path(std::path::Path::new(&s.header.cwd));
        writeln!(
            out,
            "{:<22} {:<20} {:>5} {:>9}  {:<24} {}",
            s.header.id,
            when,
            s.turns,
            cost,
            shorten(&dir, 24),
            shorten(&prompt, 60)
        )?;
    }
    if all.len() > shown.len() && !here {
        writeln!(
            out,
            "{dim}({} more; -n N shows more){dim:#}",
            all.len() - shown.len()
        )?;
    }
    writeln!(
        out,
        "{dim}Take one up again with `interpreter --resume ID` (`--continue`: the latest here).{dim:#}"
    )?;
    Ok(ExitCode::from(exit::OK))
}

/// `text` cut to `max` characters, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `interpreter app-server [--listen stdio://]`
pub async fn app_server(listen: &str, request: SessionRequest) -> Result<ExitCode, CliError> {
    if listen != "stdio://" {
        return Err(CliError::usage(
            format!("--listen {listen}: oi's app-server is served on stdin and stdout only"),
            "leave --listen out, or pass `--listen stdio://`",
        ));
    }
    let input = tokio::io::BufReader::new(tokio::io::stdin());
    oi_appserver::serve(input, tokio::io::stdout(), request).await?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter server` (`--server`)
pub async fn server(
    args: crate::cli::ServerArgs,
    request: SessionRequest,
) -> Result<ExitCode, CliError> {
    let options = oi_server::ServerOptions {
        host: args.host,
        port: args.port,
        api_key: std::env::var("INTERPRETER_API_KEY").ok(),
        idle_timeout: std::time::Duration::from_secs(args.idle_timeout.max(1)),
        workspaces: args.workspaces,
        request,
    };
    let result = oi_server::serve(options, |listening| {
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "oi server on http://{} (WebSocket at ws://{}/)",
            listening.addr, listening.addr
        );
        let _ = writeln!(
            err,
            "conversations work in {}",
            listening.workspaces.display()
        );
        if listening.generated {
            let _ = writeln!(
                err,
                "API key (shown once; set INTERPRETER_API_KEY to choose it): {}",
                listening.api_key
            );
        }
        if !listening.addr.ip().is_loopback() {
            let _ = writeln!(
                err,
                "warning: listening on {}: other machines can reach oi (with the key)",
                listening.addr.ip()
            );
        }
    })
    .await;
    result?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter lmc`
pub async fn lmc(request: SessionRequest) -> Result<ExitCode, CliError> {
    let input = tokio::io::BufReader::new(tokio::io::stdin());
    match oi_lmc::serve(input, tokio::io::stdout(), request).await {
        Ok(()) => Ok(ExitCode::from(exit::OK)),
        Err(oi_lmc::LmcError::Setup(error)) => Err(error.into()),
        Err(error) => Err(CliError::Io(std::io::Error::other(error.to_string()))),
    }
}

/// `interpreter mcp-server`
pub async fn mcp_server(request: SessionRequest) -> Result<ExitCode, CliError> {
    oi_mcp::serve_stdio(request)
        .await
        .map_err(|e| CliError::Io(std::io::Error::other(e.to_string())))?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter acp`
pub async fn acp(request: SessionRequest) -> Result<ExitCode, CliError> {
    oi_acp::serve(request)
        .await
        .map_err(|e| CliError::Io(std::io::Error::other(e.to_string())))?;
    Ok(ExitCode::from(exit::OK))
}

/// A recorded session's last activity (`2026-12-03 05:27`, UTC) and its
/// first prompt on one line.
fn when_and_prompt(s: &oi_core::transcript::Loaded) -> (String, String) {
    let when = s.last_active.replace('T', " ");
    let when: String = when.trim_end_matches('Z').chars().take(16).collect();
    let prompt = s
        .first_prompt
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (when, prompt)
}

/// `interpreter --profiles`: the profiles `--profile` takes, where each
/// comes from, and the folder for yours.
pub fn profiles(request: &SessionRequest) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    let profiles = oi_config::list_profiles(&loaded)?;
    let mut out = anstream::stdout();
    let dim = anstyle::Style::new().dimmed();
    for profile in &profiles {
        use oi_config::profiles::ProfileSource;
        let from = match &profile.source {
            ProfileSource::UserFile(path) => {
                format!(
                    "[profiles.{}] in {}",
                    profile.name,
                    oi_config::display_path(path)
                )
            }
            ProfileSource::File(path) => oi_config::display_path(path),
            ProfileSource::OpenInterpreter(path) => {
                format!("{} (Open Interpreter's)", oi_config::display_path(path))
            }
            ProfileSource::BuiltIn => "oi's own".to_owned(),
        };
        writeln!(out, "{:<16} {dim}{from}{dim:#}", profile.name)?;
    }
    writeln!(
        out,
        "{dim}Yours go in {} (NAME.toml); `--profile NAME` or `-p FILE` applies one.{dim:#}",
        oi_config::display_path(&loaded.home.join("profiles"))
    )?;
    Ok(ExitCode::from(exit::OK))
}

/// A recorded session picked by the user (of this folder with `here`):
/// its id, or `None` when they cancel. In a terminal a list to move in;
/// otherwise the list numbered on stderr and a number read from stdin.
pub fn pick_session(request: &SessionRequest, here: bool) -> Result<Option<String>, CliError> {
    use std::io::IsTerminal;
    let loaded = setup::load_config(request)?;
    let dir = loaded.home.join("sessions");
    let cwd = setup::policy(&loaded, request)?
        .workspace
        .display()
        .to_string();
    let sessions: Vec<_> = oi_core::transcript::list(&dir)
        .into_iter()
        .filter(|s| !here || s.header.cwd == cwd)
        .take(50)
        .collect();
    // Label, and what `--resume` takes: an id, or a conversation file.
    let mut choices: Vec<(String, String)> = sessions
        .iter()
        .map(|s| {
            let (when, prompt) = when_and_prompt(s);
            let label = format!(
                "{} · {when} · {} · {}",
                &s.header.id,
                shorten(
                    &oi_config::display_path(std::path::Path::new(&s.header.cwd)),
                    30
                ),
                shorten(&prompt, 50)
            );
            (label, s.header.id.clone())
        })
        .collect();
    // Conversations Open Interpreter saved start a new session from them.
    if !here {
        choices.extend(open_interpreter_conversations(&loaded.env));
    }
    if choices.is_empty() {
        return Err(CliError::usage(
            format!(
                "no sessions recorded{} yet",
                if here { " in this folder" } else { "" }
            ),
            "a session is recorded as you work; start one with `interpreter`",
        ));
    }
    let labels: Vec<String> = choices.iter().map(|(label, _)| label.clone()).collect();
    let value_of = |label: &str| {
        choices
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, value)| value.clone())
    };
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        let picker = oi_tui::dialog::Picker::new("Resume which session?", labels, None);
        return Ok(oi_tui::dialog::pick(&mut std::io::stdout(), picker)?.and_then(|l| value_of(&l)));
    }
    let list: String = labels
        .iter()
        .enumerate()
        .map(|(i, label)| format!("{:>3}. {label}\n", i + 1))
        .collect();
    crate::first_run::say(&list)?;
    let answer = crate::first_run::ask("Resume which session? (number; Enter cancels) ")?
        .unwrap_or_default();
    if answer.is_empty() {
        return Ok(None);
    }
    match answer
        .parse::<usize>()
        .ok()
        .and_then(|n| choices.get(n.wrapping_sub(1)))
    {
        Some((_, value)) => Ok(Some(value.clone())),
        None => Err(CliError::usage(
            format!("there is no session number `{answer}` in the list"),
            "answer with a number from the list",
        )),
    }
}

/// The conversations Open Interpreter saved (its `conversations` folder),
/// newest first: label, and the file.
fn open_interpreter_conversations(
    env: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let Some(dir) = oi_config::profiles::open_interpreter_folder(env, "conversations") else {
        return Vec::new();
    };
    let Ok(entries) = fs_err::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| Some((fs_err::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found
        .into_iter()
        .take(50)
        .map(|(_, path)| {
            let name = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().replace('_', " "));
            (
                format!("Open Interpreter · {}", shorten(&name, 70)),
                path.display().to_string(),
            )
        })
        .collect()
}

/// `interpreter doctor [--json]`: what oi sees, each check with a hint;
/// exit code 1 when something stops tasks from running.
pub async fn doctor(
    request: &SessionRequest,
    api_key: Option<&str>,
    json: bool,
) -> Result<ExitCode, CliError> {
    use oi_core::doctor::Status;
    let report = oi_core::doctor::examine(request, api_key).await;
    let code = ExitCode::from(if report.has_problems() {
        exit::FAILED
    } else {
        exit::OK
    });
    if json {
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        write_stdout(&format!("{text}\n"))?;
        return Ok(code);
    }
    let mut out = anstream::stdout();
    let style = |color: anstyle::AnsiColor| anstyle::Style::new().fg_color(Some(color.into()));
    let dim = anstyle::Style::new().dimmed();
    let bold = anstyle::Style::new().bold();
    writeln!(
        out,
        "oi {} — what oi sees on this machine",
        env!("CARGO_PKG_VERSION")
    )?;
    for section in &report.sections {
        writeln!(out, "\n{bold}{}{bold:#}", section.title)?;
        for check in &section.checks {
            let (mark, style) = match check.status {
                Status::Ok => ("✓", style(anstyle::AnsiColor::Green)),
                Status::Absent => ("·", dim),
                Status::Warning => ("!", style(anstyle::AnsiColor::Yellow)),
                Status::Problem => ("✗", style(anstyle::AnsiColor::Red)),
            };
            writeln!(out, "  {style}{mark}{style:#} {}", check.what)?;
            if let Some(hint) = &check.hint {
                writeln!(out, "    {dim}→ {hint}{dim:#}")?;
            }
        }
    }
    Ok(code)
}
