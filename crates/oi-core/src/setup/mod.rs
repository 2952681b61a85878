//! Session set-up: from what a front end knows to a session ready to
//! spawn — the one place where session policy lives, so the terminal,
//! `exec` and every later front end start sessions the same way.
//!
//! [`setup`] loads the configuration (with the front end's settings as its
//! top layer), checks it against the machine (languages, the sandbox,
//! `--offline`, OS mode), decides what the configuration leaves open (the
//! harness for a local model, small-model handling, the context window,
//! prices and the budget, the `approval = "never"` gate), prepares the
//! kernels, checkpoints and transcript, and returns a [`Setup`] — or a
//! [`SetupError`] that names what was wrong and where.

pub mod builtin;
mod error;
pub mod local;
mod parts;
mod resume;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use oi_config::{FlagSetting, LoadOptions, Loaded};
use oi_kernels::KernelManager;
use oi_protocol::{ApprovalPolicy, Event, HarnessKind, Op, SandboxMode, WireApi};
use oi_providers::ModelClient;
use tokio::sync::mpsc;

use crate::{Agent, AgentConfig, transcript};

/// The reply limit (`max_tokens`) of a small model served on this machine,
/// unless one is configured: enough for a script and an answer.
pub const SMALL_MODEL_MAX_TOKENS: u32 = 1024;

/// The sampling temperature of a small model served on this machine,
/// unless one is configured: greedy.
pub const SMALL_MODEL_TEMPERATURE: f64 = 0.0;

pub use error::SetupError;
pub use local::LocalChoice;
pub use parts::{checkpoints, config_notices, container_spec, policy, provider};

/// A value and where the front end got it (`--workspace`, a request
/// field), so an error about it can say where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given<T> {
    pub value: T,
    pub from: String,
}

impl<T> Given<T> {
    pub fn new(value: T, from: impl Into<String>) -> Self {
        Self {
            value,
            from: from.into(),
        }
    }
}

/// Which recorded session to take up again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// The session with this id (a unique prefix is enough).
    Id(String),
    /// The most recent session of the workspace.
    Latest,
    /// A conversation file: one saved with `/save`, or by Open
    /// Interpreter; the session itself is new.
    File(PathBuf),
}

/// What a front end knows when it asks for a session.
#[derive(Debug, Clone, Default)]
pub struct SessionRequest {
    /// The folder the configuration's project layers are found from, and
    /// the default workspace (default: the process's current folder).
    pub cwd: Option<PathBuf>,
    /// A profile to apply (`--profile`).
    pub profile: Option<String>,
    /// `KEY=VALUE` overrides, in order (`-c`).
    pub overrides: Vec<String>,
    /// Settings the front end gives, each named as the front end names it
    /// (`--max-turns`, a request field): the top layer of the
    /// configuration.
    pub settings: Vec<FlagSetting>,
    /// The front end's own defaults, below every configuration file (the
    /// setting's `flag` says why the front end chose it).
    pub defaults: Vec<FlagSetting>,
    /// The model server's base URL (`--api-base`).
    pub api_base: Option<String>,
    /// The API key, instead of the provider's `env_key` variable.
    pub api_key: Option<String>,
    /// The folder the task works in (default: `cwd`).
    pub workspace: Option<Given<PathBuf>>,
    /// More folders code may write (`--add-dir`).
    pub add_dirs: Vec<Given<PathBuf>>,
    /// Code must not reach the network; refused where that cannot be
    /// enforced. The value names what asked for it (`--offline`).
    pub offline: Option<String>,
    /// A model server on this machine, found by [`local::choose`].
    pub local: Option<LocalChoice>,
    /// A recorded session to continue (`--resume`, `--continue`).
    pub resume: Option<Given<Resume>>,
    /// The user opened this session on purpose for code that runs without
    /// asking, risky code included (`--dangerously-allow-all`): only then
    /// is `approval = "never"` accepted.
    pub allow_all: bool,
    /// A person can type what a running program asks for (the front end
    /// answers `InputRequested`).
    pub user_input: bool,
    /// Keep no transcript: the session cannot be resumed or listed.
    pub ephemeral: bool,
    /// MCP servers the front end adds for this session (an editor's
    /// `mcpServers`), beside the configured ones; one of the same name
    /// replaces the configured one.
    pub mcp_servers: Vec<oi_config::McpServerSettings>,
}

/// Something the user should know before the session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub level: NoticeLevel,
    pub text: String,
}

/// How a [`Notice`] is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    /// `warning: …`: something works less well than asked.
    Warning,
    /// `note: …`, or a plain line: for information.
    Note,
}

impl Notice {
    pub(crate) fn warning(text: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Warning,
            text: text.into(),
        }
    }

    pub(crate) fn note(text: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Note,
            text: text.into(),
        }
    }
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.level {
            NoticeLevel::Warning => write!(f, "warning: {}", self.text),
            NoticeLevel::Note => f.write_str(&self.text),
        }
    }
}

/// A session ready to start: what [`Agent::spawn`] takes, and what the
/// front end should show first.
#[derive(Debug)]
pub struct Setup {
    /// The session's id (its transcript's folder, unless ephemeral; the
    /// resumed session's when one was taken up again).
    pub session_id: String,
    pub config: AgentConfig,
    pub client: Arc<dyn ModelClient>,
    pub kernels: KernelManager,
    pub loaded: Loaded,
    /// How far the session's code may reach (what its kernels get).
    pub sandbox: oi_sandbox::Policy,
    /// To show before the session starts, in order.
    pub notices: Vec<Notice>,
    /// The recorded session taken up again.
    pub resumed: Option<transcript::Loaded>,
}

impl Setup {
    /// Starts the session (see [`Agent::spawn`]).
    pub fn spawn(self) -> (mpsc::UnboundedSender<Op>, mpsc::UnboundedReceiver<Event>) {
        Agent::spawn(self.config, self.client, self.kernels)
    }
}

/// The process's environment, as the configuration reads it.
fn environment() -> BTreeMap<String, String> {
    std::env::vars().collect()
}

/// The folder the request's relative paths are read from.
pub fn current_dir(request: &SessionRequest) -> Result<PathBuf, SetupError> {
    match &request.cwd {
        Some(cwd) => Ok(cwd.clone()),
        None => Ok(std::env::current_dir()?),
    }
}

/// The folder the session works in, as far as the configuration is
/// concerned: the workspace when one is given (its project files and
/// `AGENTS.md` apply), else the current folder. A workspace that does not
/// exist is reported by [`parts::policy`]; until then the current folder
/// stands in.
fn config_dir(request: &SessionRequest) -> Result<PathBuf, SetupError> {
    let cwd = current_dir(request)?;
    Ok(request
        .workspace
        .as_ref()
        .and_then(|given| fs_err::canonicalize(cwd.join(&given.value)).ok())
        .filter(|dir| dir.is_dir())
        .unwrap_or(cwd))
}

/// Loads the configuration with every layer, the request's settings on
/// top (and those `offline` and `local` imply).
pub fn load_config(request: &SessionRequest) -> Result<Loaded, SetupError> {
    let env = environment();
    let home = oi_config::home_dir(&env)?;
    let mut settings = request.settings.clone();
    let mut api_base = request.api_base.clone().filter(|b| !b.trim().is_empty());
    if let Some(choice) = &request.local {
        settings.extend(choice.settings());
        if !choice.builtin {
            api_base = Some(choice.base_url.clone());
        }
    }
    if let Some(from) = &request.offline {
        settings.push(FlagSetting::new(from, "network", false));
    }
    // Codex's keys (what Codex clients pass with `-c`) are read as oi's.
    let (overrides, notices) = oi_codex::config::translate_all(&request.overrides);
    let mut loaded = oi_config::load(&LoadOptions {
        home,
        cwd: config_dir(request)?,
        profile: request.profile.clone(),
        overrides,
        flags: settings,
        defaults: request.defaults.clone(),
        api_base,
        env,
    })?;
    loaded.warnings.extend(notices);
    Ok(loaded)
}

/// Whether this is a first start: nothing chose the provider and the
/// default one has no key (none given, its variable unset, none stored).
/// Returns the variable that would hold the key.
pub fn first_run_needed(loaded: &Loaded, api_key: Option<&str>) -> Option<String> {
    if !matches!(
        loaded.origins.get("model_provider"),
        None | Some(oi_config::Origin::Default)
    ) {
        return None;
    }
    match loaded.credentials(api_key) {
        Err(oi_config::ConfigError::MissingApiKey { var, .. }) => Some(var),
        _ => None,
    }
}

/// Checks the configuration and builds the session's parts.
pub fn setup(request: &SessionRequest) -> Result<Setup, SetupError> {
    let loaded = load_config(request)?;
    let c = &loaded.config;
    let Some(model) = c.model.clone() else {
        return Err(oi_config::ConfigError::MissingModel {
            provider: c.model_provider.clone(),
        }
        .into());
    };
    if let Some(var) = first_run_needed(&loaded, request.api_key.as_deref()) {
        return Err(SetupError::NoModelSetUp { var });
    }
    let (provider, wire) = provider(&loaded, request.api_key.as_deref())?;
    let client = if builtin::selected(&loaded) {
        builtin::client(&loaded, &current_dir(request)?)?
    } else {
        oi_providers::client(provider.clone(), wire)
    };
    let languages = parts::languages(&loaded)?;
    if languages.is_empty() {
        return Err(SetupError::NoLanguage);
    }
    let policy = policy(&loaded, request)?;
    let mut notices = config_notices(&loaded);
    let shortfalls = oi_sandbox::shortfalls(&policy);
    if let Some(from) = &request.offline {
        if policy.mode == SandboxMode::FullAccess {
            return Err(SetupError::OfflineWithFullAccess {
                from: from.clone(),
                full_access: setting_text(&loaded, "sandbox", "full-access"),
            });
        }
        if let Some(problem) = shortfalls.iter().find(|s| s.contains("network")) {
            return Err(SetupError::OfflineUnenforceable {
                from: from.clone(),
                problem: problem.clone(),
            });
        }
    }
    if let Some(choice) = &request.local {
        notices.push(Notice::note(choice.describe()));
    }
    if !shortfalls.is_empty() {
        if c.sandbox_required {
            return Err(SetupError::SandboxRequired { shortfalls });
        }
        notices.extend(shortfalls.into_iter().map(Notice::warning));
    }
    let leftovers = oi_kernels::kill_leftovers_once();
    if leftovers > 0 {
        notices.push(Notice::note(format!(
            "note: ended {leftovers} process{} that code of an earlier session left running when that session was killed",
            if leftovers == 1 { "" } else { "es" }
        )));
    }
    let cwd = policy.workspace.clone();
    let (resumed, initial_history) = match &request.resume {
        Some(Given {
            value: Resume::File(path),
            from,
        }) => {
            let (messages, saved_by) = crate::lmc::read_conversation(path).map_err(|problem| {
                SetupError::BadConversationFile {
                    from: from.clone(),
                    problem,
                }
            })?;
            notices.push(Notice::note(format!(
                "Loaded {} messages from {} (saved by {}). The kernels start afresh.",
                messages.len(),
                oi_config::display_path(path),
                match saved_by {
                    crate::lmc::SavedBy::Oi => "oi",
                    crate::lmc::SavedBy::OpenInterpreter => "Open Interpreter",
                }
            )));
            (None, Some(messages))
        }
        resume => (resume::find(&loaded, resume.as_ref(), &cwd)?, None),
    };
    let session_id = resumed
        .as_ref()
        .map_or_else(crate::new_session_id, |r| r.header.id.clone());
    if let Some(r) = &resumed {
        notices.extend(r.warnings.iter().cloned().map(Notice::warning));
        notices.push(Notice::note(resume::describe(r)));
    }
    let sessions = loaded.home.join("sessions");
    let session_dir = sessions.join(&session_id);

    let mut config = AgentConfig::new(model);
    config.harness = c.harness;
    config.initial_history =
        initial_history.or_else(|| resumed.as_ref().map(|r| r.messages.clone()));
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
        ApprovalPolicy::Never if !request.allow_all => {
            return Err(SetupError::ApprovalNeverNotAllowed {
                origin: origin_prefix(&loaded, "approval"),
            });
        }
        policy => policy,
    };
    config.user_input = request.user_input;
    config.max_turns = c.max_turns;
    config.run_timeout = (c.run_timeout > 0).then(|| Duration::from_secs(c.run_timeout));
    config.max_time = (c.max_time > 0).then(|| Duration::from_secs(c.max_time));
    config.loop_guard_max_repeats = c.loop_guard_max_repeats;
    if c.checkpoints {
        if which::which("git").is_ok() {
            config.checkpoints = Some(checkpoints(&loaded, &policy));
        } else {
            notices.push(Notice::warning(
                "`git` is not installed, so the workspace is not saved before runs and /undo is not available (install git, or set `checkpoints = false` to silence this)",
            ));
        }
    }
    config.max_output = c.max_output;
    config.max_tokens = c.max_tokens;
    config.temperature = c.temperature;
    config.reply_grammar = reply_grammar(&loaded, wire, config.small_model)?;
    config.project_instructions = loaded.instructions.prompt_block();
    config.custom_instructions = c.custom_instructions.clone();
    config.system_message = c.system_message.clone();
    let info = parts::model_info(&loaded, &config.model)?;
    parts::model_limits(&loaded, &info, wire, &mut config);
    if config.small_model && config.max_tokens.is_none() {
        // A small model's useful reply is short; one that runs on (a loop,
        // a wall of data) should not take minutes and the whole window.
        config.max_tokens = Some(SMALL_MODEL_MAX_TOKENS);
    }
    if config.small_model && config.temperature.is_none() {
        // Servers sample at their own default (llama.cpp: 0.8), which
        // makes a small model's code sloppier; greedy is reproducible.
        config.temperature = Some(SMALL_MODEL_TEMPERATURE);
    }
    parts::pricing(&loaded, &info, &mut config, &mut notices)?;
    config.transcript = (!request.ephemeral).then(|| crate::TranscriptSetup {
        path: session_dir.join(transcript::FILE_NAME),
        header: transcript::Header {
            id: session_id.clone(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started: crate::now_rfc3339(),
            cwd: cwd.display().to_string(),
            model: config.model.clone(),
            provider: c.model_provider.clone(),
        },
        secrets: parts::secrets(&loaded, &provider),
        continued: resumed.is_some(),
    });
    let mut servers: Vec<_> = c
        .mcp_servers
        .values()
        .filter(|s| s.enabled && !request.mcp_servers.iter().any(|r| r.name == s.name))
        .cloned()
        .collect();
    servers.extend(request.mcp_servers.iter().filter(|s| s.enabled).cloned());
    if !servers.is_empty() {
        config.mcp = Some(crate::mcp::McpSetup {
            servers,
            env: loaded.env.clone(),
            cwd: cwd.clone(),
        });
    }
    if c.os {
        config.os = Some(parts::os_mode(
            &loaded,
            &config,
            &session_dir.join("screenshots"),
        )?);
    }
    let mut kernels = KernelManager::new(languages, cwd)
        .with_image_dir(session_dir.join("images"))
        .with_cache_dir(loaded.home.join("cache"))
        .with_hidden_env(loaded.hidden_env())
        .with_sandbox(policy.clone());
    if policy.in_container() {
        kernels = kernels.with_container(parts::container_spec(&loaded));
    }
    Ok(Setup {
        session_id,
        config,
        resumed,
        client,
        kernels,
        sandbox: policy,
        loaded,
        notices,
    })
}

/// Whether replies are held to one step (`reply_grammar`): by default for
/// small models on this machine; asked for explicitly, only where it can be
/// kept.
fn reply_grammar(loaded: &Loaded, wire: WireApi, small_model: bool) -> Result<bool, SetupError> {
    let c = &loaded.config;
    if c.reply_grammar != Some(true) {
        return Ok(c.reply_grammar.unwrap_or(small_model));
    }
    let problem = if c.harness == HarnessKind::Native {
        "the native harness's replies are tool calls, not code blocks".to_owned()
    } else if wire != WireApi::Chat && !builtin::selected(loaded) {
        format!(
            "the {wire} wire has no way to constrain a reply (llama.cpp's `grammar` is sent on the chat wire)"
        )
    } else {
        return Ok(true);
    };
    Err(SetupError::ReplyGrammarUnusable {
        origin: origin_prefix(loaded, "reply_grammar"),
        problem,
    })
}

/// `FILE:LINE: ` (or `--flag: `) where `key` was set, or nothing.
fn origin_prefix(loaded: &Loaded, key: &str) -> String {
    loaded
        .origins
        .get(key)
        .map(|o| format!("{o}: "))
        .unwrap_or_default()
}

/// How `key = value` was chosen, for a message: `--sandbox full-access`
/// when a flag chose it, else the setting and where it was made.
fn setting_text(loaded: &Loaded, key: &str, value: &str) -> String {
    match loaded.origins.get(key) {
        Some(oi_config::Origin::Flag { flag }) if flag.starts_with('-') => {
            format!("{flag} {value}")
        }
        Some(origin) => format!("`{key} = \"{value}\"` ({origin})"),
        None => format!("`{key} = \"{value}\"`"),
    }
}

/// Whether a note about `subject` has not been shown yet; remembers that
/// it now has (in `$INTERPRETER_HOME/notices`).
fn first_time(home: &Path, subject: &str) -> bool {
    use std::io::Write;
    let file = home.join("notices");
    let seen = fs_err::read_to_string(&file).unwrap_or_default();
    if seen.lines().any(|l| l == subject) {
        return false;
    }
    // If it cannot be recorded the note is shown again next time: harmless.
    let _ = fs_err::create_dir_all(home).and_then(|()| {
        let mut f = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)?;
        writeln!(f, "{subject}")
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_shown_once_per_subject() {
        let home = tempfile::tempdir().unwrap();
        assert!(first_time(home.path(), "unknown model x"));
        assert!(!first_time(home.path(), "unknown model x"));
        assert!(first_time(home.path(), "unknown model y"));
    }
}
