//! The pieces of a session's set-up, each from the loaded configuration:
//! the provider connection, the sandbox policy, the languages, the model's
//! limits and prices, OS mode, and the notices about the configuration.

use std::path::{Path, PathBuf};
use std::time::Duration;

use oi_config::{
    DEFAULT_REQUEST_MAX_RETRIES, DEFAULT_STREAM_IDLE_TIMEOUT_MS, DEFAULT_STREAM_MAX_DURATION_MS,
    Loaded,
};
use oi_kernels::{LanguageSpec, detect_languages, known_languages};
use oi_protocol::WireApi;
use oi_providers::{ModelInfo, ProviderConfig};
use oi_sandbox::Policy;

use super::{Notice, SessionRequest, SetupError, current_dir, first_time, origin_prefix};
use crate::AgentConfig;

/// The connection settings of the active provider, with its credentials.
pub fn provider(
    loaded: &Loaded,
    api_key: Option<&str>,
) -> Result<(ProviderConfig, WireApi), SetupError> {
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
            .unwrap_or(DEFAULT_STREAM_MAX_DURATION_MS),
    );
    Ok((config, p.wire_api))
}

/// What the user should know about the configuration itself: its
/// warnings, and (once per project) that a project's files were not
/// applied.
pub fn config_notices(loaded: &Loaded) -> Vec<Notice> {
    let mut notices: Vec<Notice> = loaded
        .warnings
        .iter()
        .cloned()
        .map(Notice::warning)
        .collect();
    if let Some(untrusted) = &loaded.untrusted
        && first_time(
            &loaded.home,
            &format!("untrusted {}", untrusted.root.display()),
        )
    {
        let files = untrusted
            .files
            .iter()
            .map(|f| oi_config::display_path(f))
            .collect::<Vec<_>>()
            .join(", ");
        notices.push(Notice::note(format!(
            "note: {files} not applied: the project {} is not trusted. To apply it: `interpreter trust {}` (this note is shown once)",
            oi_config::display_path(&untrusted.root),
            untrusted.root.display()
        )));
    }
    notices
}

/// The sandbox policy: the mode, the workspace (as asked, or the current
/// folder), `writable_roots` and the added folders, and `network`; oi's
/// own folder is always protected.
pub fn policy(loaded: &Loaded, request: &SessionRequest) -> Result<Policy, SetupError> {
    let c = &loaded.config;
    let cwd = current_dir(request)?;
    let workspace = match &request.workspace {
        Some(given) => {
            let problem = |problem: String, is_file| SetupError::Workspace {
                from: given.from.clone(),
                given: given.value.clone(),
                problem,
                is_file,
            };
            let path = fs_err::canonicalize(cwd.join(&given.value))
                .map_err(|e| problem(io_problem(&cwd.join(&given.value), &e), false))?;
            if !path.is_dir() {
                return Err(problem(
                    format!("{} is a file, not a folder", path.display()),
                    true,
                ));
            }
            path
        }
        None => cwd.clone(),
    };
    let mut policy = Policy::new(c.sandbox, workspace);
    policy.network = c.network;
    if policy.in_container() {
        policy.network = container_network(loaded) != "none";
    }
    // Code may never change oi's own folder: its configuration (which
    // could lift the sandbox), checkpoints, transcripts and trust list.
    let home = fs_err::canonicalize(&loaded.home).unwrap_or_else(|_| loaded.home.clone());
    policy.protected_roots.push(home.clone());
    // The API keys pasted at set-up: code sees the file empty.
    policy
        .hidden_files
        .push(home.join(oi_config::keys::KEYS_FILE));
    let origin = match loaded.origins.get("writable_roots") {
        Some(origin) => format!("writable_roots ({origin})"),
        None => "writable_roots".to_owned(),
    };
    let configured = c
        .writable_roots
        .iter()
        .map(|root| (expand_home(root), origin.clone()));
    let added = request.add_dirs.iter().map(|dir| {
        (
            dir.value.clone(),
            format!("{} {}", dir.from, dir.value.display()),
        )
    });
    for (root, from) in configured.chain(added) {
        let root = fs_err::canonicalize(cwd.join(&root)).map_err(|e| SetupError::WritableRoot {
            from: from.clone(),
            problem: io_problem(&cwd.join(&root), &e),
            is_file: false,
        })?;
        if !root.is_dir() {
            return Err(SetupError::WritableRoot {
                from,
                problem: format!("{} is a file, not a folder", root.display()),
                is_file: true,
            });
        }
        if root.starts_with(&home) {
            return Err(SetupError::InsideOiFolder { from, root, home });
        }
        policy.writable_roots.push(root);
    }
    Ok(policy)
}

/// Why a folder given cannot be used, in words (the path is named once).
fn io_problem(path: &Path, error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => format!("{} does not exist", path.display()),
        std::io::ErrorKind::PermissionDenied => {
            format!("{} cannot be read (permission denied)", path.display())
        }
        _ => error.to_string(),
    }
}

/// The checkpoints of the policy's workspace.
pub fn checkpoints(loaded: &Loaded, policy: &Policy) -> crate::Checkpoints {
    crate::Checkpoints::new(
        &loaded.home,
        &policy.workspace,
        loaded
            .config
            .checkpoint_max_file_mb
            .saturating_mul(1024 * 1024),
    )
}

/// `~/x` as `$HOME/x`.
/// The container's network: `[container] network`, but none when
/// `network = false`.
fn container_network(loaded: &Loaded) -> String {
    let c = &loaded.config;
    if c.network {
        c.container.network.clone()
    } else {
        "none".to_owned()
    }
}

/// The container code runs in (`sandbox = "container"`), as
/// `[container]` describes it.
pub fn container_spec(loaded: &Loaded) -> oi_kernels::ContainerSpec {
    let k = &loaded.config.container;
    let mut spec = oi_kernels::ContainerSpec::new(k.image.clone());
    // The word was checked with the configuration.
    spec.engine = k.engine.parse().unwrap_or_default();
    spec.host = k.host.clone();
    spec.memory = k.memory.clone();
    spec.cpus = k.cpus;
    spec.pids = k.pids;
    spec.network = container_network(loaded);
    spec.mounts = k
        .mounts
        .iter()
        .map(|m| match m.strip_prefix("~/") {
            Some(_) => {
                let (source, rest) = m.split_once(':').unwrap_or((m, ""));
                format!("{}:{rest}", expand_home(source).display())
            }
            None => m.clone(),
        })
        .collect();
    spec.env = k.env.clone();
    spec.sync_max_file = k.sync_max_file_mb.saturating_mul(1 << 20);
    spec
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The languages of this machine, with the interpreters the configuration
/// names (`[languages.<name>] command`), Python first.
pub(super) fn languages(loaded: &Loaded) -> Result<Vec<LanguageSpec>, SetupError> {
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
                    return Err(SetupError::UnknownLanguage {
                        origin: origin_prefix(loaded, &format!("languages.{name}.command")),
                        name: name.clone(),
                        known: known_languages().into_iter().map(str::to_owned).collect(),
                    });
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
pub(super) fn model_info(loaded: &Loaded, model: &str) -> Result<ModelInfo, SetupError> {
    let catalog = oi_providers::Catalog::builtin().map_err(SetupError::Catalog)?;
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

/// The model's context window, vision and reply limit.
pub(super) fn model_limits(
    loaded: &Loaded,
    info: &ModelInfo,
    wire: WireApi,
    config: &mut AgentConfig,
) {
    let c = &loaded.config;
    // The window: configured; else what the server says (asked first of a
    // server on this machine, which may run the model with less than it
    // was trained for); else the catalog's; else 8192.
    config.context_window = c
        .context_window
        .or_else(|| c.models.get(&config.model).and_then(|m| m.context_window));
    // (`info` is the catalog's entry with `[models."ID"]` over it; when
    // that setting exists it is `context_window` already.)
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
}

/// The model's prices and the budget: set in the configuration; else a
/// model served on this machine is free; else the catalog's. A budget
/// needs a price.
pub(super) fn pricing(
    loaded: &Loaded,
    info: &ModelInfo,
    config: &mut AgentConfig,
    notices: &mut Vec<Notice>,
) -> Result<(), SetupError> {
    let c = &loaded.config;
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
    if config.pricing.is_some() {
        return Ok(());
    }
    if let Some(budget) = c.max_budget {
        return Err(SetupError::BudgetWithoutPrice {
            origin: origin_prefix(loaded, "max_budget"),
            budget,
            model: config.model.clone(),
        });
    }
    if first_time(&loaded.home, &format!("unknown model {}", config.model)) {
        notices.push(Notice::note(format!(
            "note: `{}` is not in oi's model catalog, so its cost is not known or shown. To tell oi: `[models.\"{}\"] input_price = …, output_price = …` (USD per million tokens) in the configuration (this note is shown once)",
            config.model, config.model
        )));
    }
    Ok(())
}

/// What must never be written to a transcript: the API key in use, and the
/// values of every provider's key and header variables.
pub(super) fn secrets(loaded: &Loaded, provider: &ProviderConfig) -> Vec<String> {
    let mut secrets: Vec<String> = provider.api_key.iter().cloned().collect();
    for p in loaded.config.providers.values() {
        let vars = p.env_key.iter().chain(p.env_http_headers.values());
        secrets.extend(vars.filter_map(|var| std::env::var(var).ok()));
    }
    secrets.retain(|s| !s.trim().is_empty());
    secrets
}

/// OS mode: a vision model and a screen to drive.
pub(super) fn os_mode(
    loaded: &Loaded,
    config: &AgentConfig,
    screenshots: &Path,
) -> Result<crate::OsMode, SetupError> {
    // Named when a file turned it on (a flag or `-c` is in plain sight).
    let origin = loaded
        .origins
        .get("os")
        .filter(|o| o.file().is_some())
        .map(|o| format!(" (os = true from {o})"))
        .unwrap_or_default();
    if !config.vision {
        return Err(SetupError::OsModeNeedsVision {
            origin,
            model: config.model.clone(),
        });
    }
    let computer = oi_computer::connect().map_err(|error| SetupError::OsModeUnavailable {
        origin,
        problem: error.to_string(),
    })?;
    Ok(crate::OsMode::new(oi_computer::Desktop::new(
        computer,
        screenshots.to_path_buf(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::Given;

    /// The configuration of an empty home, loaded from `cwd`.
    fn loaded(home: &Path, cwd: &Path) -> Loaded {
        oi_config::load(&oi_config::LoadOptions {
            home: home.to_path_buf(),
            cwd: cwd.to_path_buf(),
            ..oi_config::LoadOptions::default()
        })
        .unwrap()
    }

    #[test]
    fn the_policy_protects_ois_folder_and_names_bad_folders_by_where_they_came_from() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let loaded = loaded(home.path(), ws.path());
        let request = SessionRequest {
            cwd: Some(ws.path().to_path_buf()),
            ..SessionRequest::default()
        };
        let made = policy(&loaded, &request).unwrap();
        assert_eq!(made.workspace, ws.path());
        assert_eq!(
            made.protected_roots,
            [fs_err::canonicalize(home.path()).unwrap()]
        );

        fs_err::write(ws.path().join("notes.txt"), "x").unwrap();
        let request = SessionRequest {
            cwd: Some(ws.path().to_path_buf()),
            workspace: Some(Given::new(PathBuf::from("notes.txt"), "`cwd` field")),
            ..SessionRequest::default()
        };
        let error = policy(&loaded, &request).unwrap_err();
        assert!(
            error.to_string().starts_with("`cwd` field notes.txt: ")
                && error.to_string().ends_with("is a file, not a folder"),
            "{error}"
        );
        let request = SessionRequest {
            cwd: Some(ws.path().to_path_buf()),
            add_dirs: vec![Given::new(home.path().join("sessions"), "--add-dir")],
            ..SessionRequest::default()
        };
        fs_err::create_dir_all(home.path().join("sessions")).unwrap();
        assert!(matches!(
            policy(&loaded, &request),
            Err(SetupError::InsideOiFolder { .. })
        ));
    }

    #[test]
    fn a_budget_needs_a_price_and_a_local_model_is_free() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let mut loaded = loaded(home.path(), ws.path());
        loaded.config.max_budget = Some(1.0);
        let mut config = AgentConfig::new("mystery-1");
        let info = model_info(&loaded, "mystery-1").unwrap();
        let error = pricing(&loaded, &info, &mut config, &mut Vec::new()).unwrap_err();
        assert!(
            matches!(error, SetupError::BudgetWithoutPrice { .. }),
            "{error}"
        );
        loaded.config.provider.base_url = "http://127.0.0.1:11434/v1".to_owned();
        pricing(&loaded, &info, &mut config, &mut Vec::new()).unwrap();
        assert_eq!(config.pricing, Some(oi_providers::Pricing::FREE));
    }
}
