//! The subcommands that do not run a task: `config show`, `config set`,
//! `models`, `trust`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::SessionOptions;
use crate::error::{CliError, exit};
use crate::session;

/// `interpreter config show`
pub fn config_show(options: &SessionOptions) -> Result<ExitCode, CliError> {
    let loaded = session::load_config(options)?;
    write_stdout(&oi_config::show(&loaded))?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter config set KEY VALUE`
pub fn config_set(key: &str, value: &str) -> Result<ExitCode, CliError> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let home = oi_config::home_dir(&env)?;
    let (file, written) = oi_config::edit::set(&home, key, value)?;
    write_stdout(&format!(
        "{key} = {written}  (written to {})\n",
        oi_config::display_path(&file)
    ))?;
    Ok(ExitCode::from(exit::OK))
}

/// `interpreter models`: the active provider's models, the current one marked.
pub async fn models(options: &SessionOptions) -> Result<ExitCode, CliError> {
    let loaded = session::load_config(options)?;
    let (provider, wire) = session::provider_config(&loaded, options.api_key.as_deref())?;
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

/// `interpreter trust [PATH] [--untrust]`
pub fn trust(path: Option<PathBuf>, untrust: bool) -> Result<ExitCode, CliError> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let home = oi_config::home_dir(&env)?;
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

fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
