//! Turning the command line and the configuration files into a running agent.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use oi_config::{
    Approval, DEFAULT_REQUEST_MAX_RETRIES, DEFAULT_STREAM_IDLE_TIMEOUT_MS, FlagSetting,
    LoadOptions, Loaded, WireApi,
};
use oi_core::{AgentConfig, ApprovalPolicy};
use oi_kernels::{KernelManager, LanguageSpec, detect_languages};
use oi_providers::{ModelClient, ProviderConfig, Wire};

use crate::cli::SessionOptions;
use crate::error::CliError;
use crate::render::HumanRenderer;

/// What an agent is started with.
#[derive(Debug)]
pub struct Setup {
    pub config: AgentConfig,
    pub client: Arc<dyn ModelClient>,
    pub kernels: KernelManager,
    pub loaded: Loaded,
}

/// Loads the configuration with every layer, including this command line.
pub fn load_config(options: &SessionOptions) -> Result<Loaded, CliError> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let home = oi_config::home_dir(&env)?;
    let cwd = std::env::current_dir()?;
    let mut flags = Vec::new();
    if let Some(model) = &options.model {
        flags.push(FlagSetting::new("--model", "model", model.as_str()));
    }
    if let Some(harness) = &options.harness {
        flags.push(FlagSetting::new("--harness", "harness", harness.as_str()));
    }
    if let Some(n) = options.max_turns {
        flags.push(FlagSetting::new("--max-turns", "max_turns", n));
    }
    if let Some(n) = options.max_output {
        flags.push(FlagSetting::new("--max-output", "max_output", n as u64));
    }
    if options.yes {
        flags.push(FlagSetting::new("--yes", "approval", "auto"));
    }
    let loaded = oi_config::load(&LoadOptions {
        home,
        cwd,
        profile: options.profile.clone(),
        overrides: options.config.clone(),
        flags,
        api_base: options.api_base.clone().filter(|b| !b.trim().is_empty()),
        env,
    })?;
    Ok(loaded)
}

/// Tells the user what they should know about the configuration: warnings,
/// and (once per project) that a project's files were not applied.
pub fn report_notices<W: Write>(
    loaded: &Loaded,
    out: &mut HumanRenderer<W>,
) -> std::io::Result<()> {
    let yellow =
        anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Yellow)));
    for warning in &loaded.warnings {
        out.line(yellow, &format!("warning: {warning}"))?;
    }
    if let Some(untrusted) = &loaded.untrusted
        && first_notice(&loaded.home, &untrusted.root)
    {
        let files = untrusted
            .files
            .iter()
            .map(|f| oi_config::display_path(f))
            .collect::<Vec<_>>()
            .join(", ");
        out.line(
            yellow,
            &format!(
                "note: {files} not applied: the project {} is not trusted. To apply it: `interpreter trust {}` (this note is shown once)",
                oi_config::display_path(&untrusted.root),
                untrusted.root.display()
            ),
        )?;
    }
    Ok(())
}

/// Whether the untrusted-project note for `root` has not been shown yet;
/// remembers that it now has (in `$INTERPRETER_HOME/notices`).
fn first_notice(home: &std::path::Path, root: &std::path::Path) -> bool {
    let file = home.join("notices");
    let line = format!("untrusted {}", root.display());
    let seen = fs_err::read_to_string(&file).unwrap_or_default();
    if seen.lines().any(|l| l == line) {
        return false;
    }
    // If it cannot be recorded the note is shown again next time: harmless.
    let _ = fs_err::create_dir_all(home).and_then(|()| {
        let mut f = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)?;
        writeln!(f, "{line}")
    });
    true
}

/// The connection settings of the active provider, with its credentials.
pub fn provider_config(
    loaded: &Loaded,
    api_key: Option<&str>,
) -> Result<(ProviderConfig, Wire), CliError> {
    let p = &loaded.config.provider;
    let credentials = loaded.credentials(api_key)?;
    let mut config = ProviderConfig::new(p.name.clone(), p.base_url.clone());
    config.api_key = credentials.api_key;
    config.headers = credentials.headers;
    config.query_params = p.query_params.clone().into_iter().collect();
    config.retry.max_retries = p.request_max_retries.unwrap_or(DEFAULT_REQUEST_MAX_RETRIES);
    config.stream_idle_timeout = Duration::from_millis(
        p.stream_idle_timeout_ms
            .unwrap_or(DEFAULT_STREAM_IDLE_TIMEOUT_MS),
    );
    let wire = match p.wire_api {
        WireApi::Chat => Wire::Chat,
        WireApi::Responses => Wire::Responses,
        WireApi::Messages => Wire::Messages,
    };
    Ok((config, wire))
}

/// Checks the configuration and builds the agent's parts.
pub fn setup(options: &SessionOptions) -> Result<Setup, CliError> {
    let loaded = load_config(options)?;
    let c = &loaded.config;
    let Some(model) = c.model.clone() else {
        return Err(oi_config::ConfigError::MissingModel {
            provider: c.model_provider.clone(),
        }
        .into());
    };
    let (provider, wire) = provider_config(&loaded, options.api_key.as_deref())?;

    let mut languages = detect_languages();
    for (name, command) in &c.languages {
        let replacement = match languages.iter().position(|l| l.answers_to(name)) {
            Some(i) => languages.remove(i).with_command(command),
            None => match name.as_str() {
                "python" => LanguageSpec::python(PathBuf::new()).with_command(command),
                "shell" | "bash" => LanguageSpec::shell(PathBuf::new()).with_command(command),
                _ => {
                    let origin = loaded
                        .origins
                        .get(&format!("languages.{name}.command"))
                        .map(|o| format!("{o}: "))
                        .unwrap_or_default();
                    return Err(CliError::usage(
                        format!(
                            "{origin}[languages.{name}]: oi has no kernel for `{name}` in this version"
                        ),
                        "oi runs `python` and `shell`; `[languages.python] command = [\"/path/to/python\"]` picks the interpreter",
                    ));
                }
            },
        };
        languages.push(replacement);
    }
    languages.sort_by_key(|l| l.name != "python");
    if languages.is_empty() {
        return Err(CliError::usage(
            "no language can run here: neither `python3` nor `bash` is on PATH",
            "install Python 3 or bash, add them to PATH, or set `[languages.python] command`",
        ));
    }
    let cwd = std::env::current_dir()?;

    let mut config = AgentConfig::new(model);
    config.harness = c.harness;
    config.approval = match c.approval {
        Approval::Auto => ApprovalPolicy::Auto,
        Approval::Ask => ApprovalPolicy::Ask,
    };
    config.max_turns = c.max_turns;
    config.max_output = c.max_output;
    config.max_tokens = c.max_tokens;
    config.temperature = c.temperature;
    config.context_window = c.context_window;
    config.custom_instructions = c.custom_instructions.clone();
    Ok(Setup {
        config,
        client: oi_providers::client(provider, wire),
        kernels: KernelManager::new(languages, cwd),
        loaded,
    })
}
