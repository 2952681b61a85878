//! Turning the command line and the configuration files into a running agent.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use oi_config::{
    DEFAULT_REQUEST_MAX_RETRIES, DEFAULT_STREAM_IDLE_TIMEOUT_MS, FlagSetting, LoadOptions, Loaded,
};
use oi_core::{AgentConfig, transcript};
use oi_kernels::{KernelManager, LanguageSpec, detect_languages, known_languages};
use oi_protocol::{ApprovalPolicy, SandboxMode, WireApi};
use oi_providers::{ModelClient, ModelInfo, ProviderConfig};
use oi_sandbox::Policy;

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
    /// One-time notes to show before the session starts.
    pub notes: Vec<String>,
    /// The recorded session taken up again (`--resume`, `--continue`).
    pub resumed: Option<transcript::Loaded>,
}

/// The session `--resume [ID]` or `--continue` names, read back.
fn resumed_session(
    loaded: &Loaded,
    options: &SessionOptions,
    cwd: &std::path::Path,
) -> Result<Option<transcript::Loaded>, CliError> {
    let wanted = match (&options.resume, options.continue_session) {
        (Some(id), _) if !id.is_empty() => Some(id.clone()),
        (Some(_), _) | (None, true) => None,
        (None, false) => return Ok(None),
    };
    let dir = loaded.home.join("sessions");
    let hint = "`interpreter sessions` lists the recorded sessions (`--here`: this folder's)";
    let found = match wanted {
        Some(id) => {
            let exact = dir.join(&id).join(transcript::FILE_NAME);
            if exact.is_file() {
                Some(transcript::read(&exact).map_err(|e| CliError::usage(e.to_string(), hint))?)
            } else {
                // A unique prefix of an id is enough.
                let mut matching: Vec<transcript::Loaded> = transcript::list(&dir)
                    .into_iter()
                    .filter(|l| l.header.id.starts_with(&id))
                    .collect();
                match matching.len() {
                    0 => {
                        return Err(CliError::usage(
                            format!("--resume {id}: there is no recorded session `{id}`"),
                            hint,
                        ));
                    }
                    1 => matching.pop(),
                    n => {
                        return Err(CliError::usage(
                            format!("--resume {id}: {n} sessions start with `{id}`"),
                            "give more of the id",
                        ));
                    }
                }
            }
        }
        None => {
            let here = cwd.display().to_string();
            let found = transcript::list(&dir)
                .into_iter()
                .find(|l| l.header.cwd == here);
            if found.is_none() {
                return Err(CliError::usage(
                    format!("no session was recorded in {here} yet, so there is none to continue"),
                    hint,
                ));
            }
            found
        }
    };
    Ok(found)
}

/// What must never be written to a transcript: the API key in use, and the
/// values of every provider's key and header variables.
fn secrets(loaded: &Loaded, provider: &ProviderConfig) -> Vec<String> {
    let mut secrets: Vec<String> = provider.api_key.iter().cloned().collect();
    for p in loaded.config.providers.values() {
        let vars = p.env_key.iter().chain(p.env_http_headers.values());
        secrets.extend(vars.filter_map(|var| std::env::var(var).ok()));
    }
    secrets.retain(|s| !s.trim().is_empty());
    secrets
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
        flags.push(FlagSetting::new("--max-output", "max_output", n));
    }
    if let Some(seconds) = options.max_time {
        flags.push(FlagSetting::new("--max-time", "max_time", seconds));
    }
    if let Some(seconds) = options.run_timeout {
        flags.push(FlagSetting::new("--run-timeout", "run_timeout", seconds));
    }
    if options.yes {
        flags.push(FlagSetting::new("--yes", "approval", "auto"));
    }
    if options.dangerously_allow_all {
        flags.push(FlagSetting::new(
            "--dangerously-allow-all",
            "approval",
            "never",
        ));
    }
    let mut api_base = options.api_base.clone().filter(|b| !b.trim().is_empty());
    if let Some(choice) = &options.local_choice {
        flags.push(FlagSetting::new(
            "--local",
            "model_provider",
            oi_config::API_BASE_PROVIDER,
        ));
        flags.push(FlagSetting::new("--local", "model", choice.model.as_str()));
        if let Some(tools) = choice.calls_tools {
            let harness = if tools { "native" } else { "markdown" };
            flags.push(FlagSetting::new("--local", "harness", harness));
        }
        api_base = Some(choice.base_url.clone());
    }
    if options.offline {
        flags.push(FlagSetting::new("--offline", "network", false));
    }
    if options.os {
        flags.push(FlagSetting::new("--os", "os", true));
    }
    if let Some(mode) = options.sandbox {
        flags.push(FlagSetting::new("--sandbox", "sandbox", mode.as_str()));
    }
    if let Some(usd) = options.max_budget {
        flags.push(FlagSetting::new("--max-budget", "max_budget", usd));
    }
    let loaded = oi_config::load(&LoadOptions {
        home,
        cwd,
        profile: options.profile.clone(),
        overrides: options.config.clone(),
        flags,
        api_base,
        env,
    })?;
    Ok(loaded)
}

/// Tells the user what they should know before the session starts.
pub fn report_setup_notices<W: Write>(
    setup: &Setup,
    out: &mut HumanRenderer<W>,
) -> std::io::Result<()> {
    report_notices(&setup.loaded, out)?;
    let yellow =
        anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Yellow)));
    for note in &setup.notes {
        out.line(yellow, note)?;
    }
    Ok(())
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
    once(home, &format!("untrusted {}", root.display()))
}

/// Whether the note `line` has not been shown yet; remembers that it now has
/// (in `$INTERPRETER_HOME/notices`).
fn once(home: &std::path::Path, line: &str) -> bool {
    let file = home.join("notices");
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
) -> Result<(ProviderConfig, WireApi), CliError> {
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
    config.stream_max_duration = Duration::from_millis(
        p.stream_max_duration_ms
            .unwrap_or(oi_config::DEFAULT_STREAM_MAX_DURATION_MS),
    );
    Ok((config, p.wire_api))
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

    let languages = languages(&loaded)?;
    if languages.is_empty() {
        return Err(CliError::usage(
            "no language can run here: neither `python3` nor `bash` is on PATH",
            "install Python 3 or bash, add them to PATH, or set `[languages.python] command`",
        ));
    }
    let policy = policy(&loaded, options)?;
    let mut notes = Vec::new();
    let shortfalls = oi_sandbox::shortfalls(&policy);
    if options.offline {
        if policy.mode == SandboxMode::FullAccess {
            return Err(CliError::usage(
                "--offline cannot be kept with --sandbox full-access, which lifts the network limit",
                "drop one of the two (--offline works with read-only and workspace-write)",
            ));
        }
        if let Some(problem) = shortfalls.iter().find(|s| s.contains("network")) {
            return Err(CliError::usage(
                format!("--offline cannot be kept here: {problem}"),
                "run where the sandbox works (Linux with seccomp), or leave out --offline",
            ));
        }
    }
    if let Some(choice) = &options.local_choice {
        let tools = match choice.calls_tools {
            Some(true) => " (it calls tools: native harness)",
            Some(false) => " (it made no tool call when asked: markdown harness)",
            None => "",
        };
        notes.push(format!(
            "--local: {} on {} at {}{tools}",
            choice.model, choice.kind, choice.base_url
        ));
    }
    if !shortfalls.is_empty() {
        if c.sandbox_required {
            return Err(CliError::usage(
                format!("sandbox_required = true, but {}", shortfalls.join("; and ")),
                "run where the sandbox works (Linux 5.13+ with Landlock), or set `sandbox_required = false` to run with a warning",
            ));
        }
        notes.extend(shortfalls.into_iter().map(|s| format!("warning: {s}")));
    }
    let leftovers = oi_kernels::kill_leftovers();
    if leftovers > 0 {
        notes.push(format!(
            "note: ended {leftovers} process{} that code of an earlier session left running when that session was killed",
            if leftovers == 1 { "" } else { "es" }
        ));
    }
    let cwd = policy.workspace.clone();
    let resumed = resumed_session(&loaded, options, &cwd)?;
    let session_id = resumed
        .as_ref()
        .map_or_else(oi_core::new_session_id, |r| r.header.id.clone());
    if let Some(r) = &resumed {
        notes.extend(r.warnings.iter().map(|w| format!("warning: {w}")));
        let last = r
            .first_prompt
            .as_deref()
            .map(|p| format!(", begun with “{}”", p.lines().next().unwrap_or(p)))
            .unwrap_or_default();
        notes.push(format!(
            "Resumed session {} ({} messages{last}; last active {}). The kernels start afresh.",
            r.header.id,
            r.messages.len(),
            r.last_active.replace('T', " ")
        ));
    }
    let images = loaded
        .home
        .join("sessions")
        .join(&session_id)
        .join("images");

    let mut config = AgentConfig::new(model);
    config.harness = c.harness;
    // Only models served on this machine are moved to the markdown harness
    // when they write code as text: a cloud model's code example in a final
    // answer is not meant to run.
    config.harness_auto = matches!(
        loaded.origins.get("harness"),
        Some(oi_config::Origin::Auto { .. })
    ) && oi_config::is_local_url(&c.provider.base_url);
    config.small_model =
        oi_config::is_local_url(&c.provider.base_url) && oi_config::is_small_model(&config.model);
    config.approval = match c.approval {
        ApprovalPolicy::Never if !options.dangerously_allow_all => {
            let origin = loaded
                .origins
                .get("approval")
                .map(|o| format!("{o}: "))
                .unwrap_or_default();
            return Err(CliError::usage(
                format!(
                    "{origin}approval = \"never\" runs even risky code without asking, so it is only accepted with the --dangerously-allow-all flag"
                ),
                "pass `--dangerously-allow-all` for this run, or use `approval = \"auto\"` (risky code still asks)",
            ));
        }
        policy => policy,
    };
    config.max_turns = c.max_turns;
    config.run_timeout = (c.run_timeout > 0).then(|| Duration::from_secs(c.run_timeout));
    config.max_time = (c.max_time > 0).then(|| Duration::from_secs(c.max_time));
    config.loop_guard_max_repeats = c.loop_guard_max_repeats;
    if c.checkpoints {
        if which::which("git").is_ok() {
            config.checkpoints = Some(checkpoints(&loaded, &policy));
        } else {
            notes.push(
                "warning: `git` is not installed, so the workspace is not saved before runs and /undo is not available (install git, or set `checkpoints = false` to silence this)".to_owned(),
            );
        }
    }
    config.max_output = c.max_output;
    config.max_tokens = c.max_tokens;
    config.temperature = c.temperature;
    config.custom_instructions = c.custom_instructions.clone();
    let info = model_info(&loaded, &config.model)?;
    // The window: configured; else what the server says (asked first of a
    // server on this machine, which may run the model with less than it
    // was trained for); else the catalog's; else 8192.
    let configured = c
        .context_window
        .or_else(|| c.models.get(&config.model).and_then(|m| m.context_window));
    config.context_window = configured;
    // (`info` is the catalog's entry with `[models."ID"]` over it; when
    // that setting exists it is `configured` already.)
    config.catalog_window = info.context_window;
    config.ask_server_window =
        oi_config::is_local_url(&c.provider.base_url) || config.catalog_window.is_none();
    config.vision = info.vision.unwrap_or(false);
    if wire == WireApi::Messages && config.max_tokens.is_none() {
        // The Messages API requires a limit; the model's own, within reason.
        config.max_tokens = Some(
            info.max_output_tokens
                .unwrap_or(oi_providers::DEFAULT_MAX_TOKENS)
                .min(16_384),
        );
    }
    // Prices set in the configuration win; otherwise a model served on
    // this machine is free, and others cost what the catalog says.
    let configured = c
        .models
        .get(&config.model)
        .is_some_and(|m| m.input_price.is_some() || m.output_price.is_some());
    config.pricing = if !configured && oi_config::is_local_url(&c.provider.base_url) {
        Some(oi_providers::Pricing::FREE)
    } else {
        info.pricing()
    };
    config.max_budget = c.max_budget;
    if config.pricing.is_none() {
        if let Some(budget) = c.max_budget {
            let origin = loaded
                .origins
                .get("max_budget")
                .map(|o| format!("{o}: "))
                .unwrap_or_default();
            return Err(CliError::usage(
                format!(
                    "{origin}max_budget = {budget} cannot be kept: the price of `{}` is unknown",
                    config.model
                ),
                format!(
                    "tell oi the price (USD per million tokens): `[models.\"{}\"] input_price = …, output_price = …`",
                    config.model
                ),
            ));
        }
        if once(&loaded.home, &format!("unknown model {}", config.model)) {
            notes.push(format!(
                "note: `{}` is not in oi's model catalog, so its cost is not known or shown. To tell oi: `[models.\"{}\"] input_price = …, output_price = …` (USD per million tokens) in the configuration (this note is shown once)",
                config.model, config.model
            ));
        }
    }
    let sessions = loaded.home.join("sessions");
    config.transcript = Some(oi_core::TranscriptSetup {
        path: sessions.join(&session_id).join(transcript::FILE_NAME),
        header: transcript::Header {
            id: session_id.clone(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started: oi_core::now_rfc3339(),
            cwd: cwd.display().to_string(),
            model: config.model.clone(),
            provider: c.model_provider.clone(),
        },
        secrets: secrets(&loaded, &provider),
        resume: resumed.as_ref().map(|r| r.messages.clone()),
    });
    if c.os {
        // Named when a file turned it on (a flag or `-c` is in plain sight).
        let origin = loaded
            .origins
            .get("os")
            .filter(|o| o.file().is_some())
            .map(|o| format!(" (os = true from {o})"))
            .unwrap_or_default();
        if !config.vision {
            return Err(CliError::usage(
                format!(
                    "OS mode{origin} needs a model that can see screenshots, and `{}` is not known to read images",
                    config.model
                ),
                format!(
                    "choose a vision model with --model; if `{}` does read images, say so in the configuration: `[models.\"{}\"] vision = true`",
                    config.model, config.model
                ),
            ));
        }
        let computer = oi_computer::connect().map_err(|error| {
            CliError::usage(
                format!("OS mode{origin} cannot start: {error}"),
                "leave out --os (or set `os = false`) to work without the screen",
            )
        })?;
        let shots = sessions.join(&session_id).join("screenshots");
        config.os = Some(oi_core::OsMode::new(oi_computer::Desktop::new(
            computer, shots,
        )));
    }
    Ok(Setup {
        config,
        resumed,
        client: oi_providers::client(provider, wire),
        kernels: KernelManager::new(languages, cwd)
            .with_image_dir(images)
            .with_cache_dir(loaded.home.join("cache"))
            .with_hidden_env(loaded.hidden_env())
            .with_sandbox(policy),
        loaded,
        notes,
    })
}

/// The sandbox policy: the mode, the workspace (`--workspace` or the
/// current folder), `writable_roots` and `--add-dir`, and `network`.
pub fn policy(loaded: &Loaded, options: &SessionOptions) -> Result<Policy, CliError> {
    let c = &loaded.config;
    let cwd = std::env::current_dir()?;
    let workspace = match &options.workspace {
        Some(dir) => {
            let path = fs_err::canonicalize(cwd.join(dir)).map_err(|e| {
                CliError::usage(
                    format!("--workspace {}: {e}", dir.display()),
                    "give an existing folder",
                )
            })?;
            if !path.is_dir() {
                return Err(CliError::usage(
                    format!(
                        "--workspace {}: {} is a file, not a folder",
                        dir.display(),
                        path.display()
                    ),
                    "give the folder the task works in (the folder that holds this file?)",
                ));
            }
            path
        }
        None => cwd.clone(),
    };
    let mut policy = Policy::new(c.sandbox, workspace);
    policy.network = c.network;
    // Code may never change oi's own folder: its configuration (which
    // could lift the sandbox), checkpoints, transcripts and trust list.
    let home = fs_err::canonicalize(&loaded.home).unwrap_or_else(|_| loaded.home.clone());
    policy.protected_roots.push(home.clone());
    let origin = match loaded.origins.get("writable_roots") {
        Some(origin) => format!("writable_roots ({origin})"),
        None => "writable_roots".to_owned(),
    };
    let configured = c
        .writable_roots
        .iter()
        .map(|root| (expand_home(root), origin.clone()));
    let added = options
        .add_dir
        .iter()
        .map(|dir| (dir.clone(), format!("--add-dir {}", dir.display())));
    for (root, from) in configured.chain(added) {
        let root = fs_err::canonicalize(cwd.join(&root)).map_err(|e| {
            CliError::usage(
                format!("{from}: {e}"),
                "code may only be given folders that exist; create it first",
            )
        })?;
        if !root.is_dir() {
            return Err(CliError::usage(
                format!("{from}: {} is a file, not a folder", root.display()),
                "code may only be given folders; give the folder that holds it",
            ));
        }
        if root.starts_with(&home) {
            return Err(CliError::usage(
                format!(
                    "{from}: {} is inside oi's own folder {}, which code may never change",
                    root.display(),
                    home.display()
                ),
                "give code a folder outside it (oi's configuration, checkpoints and transcripts live there)",
            ));
        }
        policy.writable_roots.push(root);
    }
    Ok(policy)
}

/// The checkpoints of the policy's workspace.
pub fn checkpoints(loaded: &Loaded, policy: &Policy) -> oi_core::Checkpoints {
    oi_core::Checkpoints::new(
        &loaded.home,
        &policy.workspace,
        loaded
            .config
            .checkpoint_max_file_mb
            .saturating_mul(1024 * 1024),
    )
}

/// `~/x` as `$HOME/x`.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The languages of this machine, with the interpreters the configuration
/// names (`[languages.<name>] command`), Python first.
fn languages(loaded: &Loaded) -> Result<Vec<LanguageSpec>, CliError> {
    let mut languages = detect_languages();
    for (name, command) in &loaded.config.languages {
        let found = languages
            .iter()
            .position(|l| l.name.eq_ignore_ascii_case(name))
            .or_else(|| languages.iter().position(|l| l.answers_to(name)));
        let replacement = match found {
            Some(i) => languages.remove(i).with_command(command),
            None => match known_spec(name) {
                Some(spec) => spec.with_command(command),
                None => {
                    let origin = loaded
                        .origins
                        .get(&format!("languages.{name}.command"))
                        .map(|o| format!("{o}: "))
                        .unwrap_or_default();
                    return Err(CliError::usage(
                        format!("{origin}[languages.{name}]: oi has no kernel for `{name}`"),
                        format!(
                            "the languages oi can run are {}; e.g. `[languages.python] command = [\"/path/to/venv/bin/python\"]` picks the interpreter",
                            known_languages().join(", ")
                        ),
                    ));
                }
            },
        };
        languages.push(replacement);
    }
    languages.sort_by_key(|l| l.name != "python");
    Ok(languages)
}

/// The spec of a known language by its name or one of its aliases.
fn known_spec(name: &str) -> Option<LanguageSpec> {
    LanguageSpec::known(name, PathBuf::new()).or_else(|| {
        known_languages()
            .into_iter()
            .filter_map(|known| LanguageSpec::known(known, PathBuf::new()))
            .find(|spec| spec.answers_to(name))
    })
}

/// What is known about `model`: the catalog's entry, overridden field by
/// field by `[models."<model>"]`.
fn model_info(loaded: &Loaded, model: &str) -> Result<ModelInfo, CliError> {
    let catalog = oi_providers::Catalog::builtin().map_err(|e| CliError::Usage {
        message: e,
        hint: None,
    })?;
    let mut info = catalog.lookup(model).cloned().unwrap_or_default();
    if let Some(settings) = loaded.config.models.get(model) {
        info = info.overridden_by(&ModelInfo {
            id: model.to_owned(),
            context_window: settings.context_window,
            max_output_tokens: settings.max_output_tokens,
            input_price: settings.input_price,
            output_price: settings.output_price,
            cached_input_price: settings.cached_input_price,
            cache_write_price: settings.cache_write_price,
            tools: settings.tools,
            vision: settings.vision,
            aliases: Vec::new(),
        });
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_shown_once_per_subject() {
        let home = tempfile::tempdir().unwrap();
        assert!(once(home.path(), "unknown model x"));
        assert!(!once(home.path(), "unknown model x"));
        assert!(once(home.path(), "unknown model y"));
        assert!(first_notice(home.path(), std::path::Path::new("/repo")));
        assert!(!first_notice(home.path(), std::path::Path::new("/repo")));
    }
}
