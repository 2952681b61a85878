//! Loading the layers and merging them into the effective configuration.
//!
//! Layers, lowest to highest precedence:
//!
//! 1. built-in defaults (and built-in model providers);
//! 2. the user file, `$INTERPRETER_HOME/config.toml` (default
//!    `~/.openinterpreter/config.toml`);
//! 3. the profile chosen with `--profile NAME`: `[profiles.NAME]` in the user
//!    file, else `$INTERPRETER_HOME/profiles/NAME.toml`;
//! 4. project files, `.openinterpreter/config.toml` in each folder from the
//!    repository root (the nearest folder upward with `.git`) down to the
//!    working directory, only when the project is trusted; they may not set
//!    `model_provider`, `model_providers` (where requests and keys go) or
//!    `projects`;
//! 5. environment variables: `OI_MODEL` (model) and `OPENAI_BASE_URL` (the
//!    base URL of the built-in `openai` provider);
//! 6. `-c key=value` arguments, in order;
//! 7. dedicated flags (`--model`, `--harness`, `--api-base` …).
//!
//! Tables merge key by key; any other value replaces the one below. A
//! `[model_providers.ID]` table in a file replaces a built-in provider of the
//! same id as a whole; `-c`, environment variables and flags change single
//! fields of whichever provider results.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use oi_protocol::{HarnessKind, WireApi};

use crate::config::{Config, ModelSettings, ProviderInfo, TrustLevel};
use crate::error::ConfigError;
use crate::layers::{Entry, Layer, parse_override, parse_toml};
use crate::origin::Origin;
use crate::providers::{self, API_BASE_PROVIDER, is_local_url};
use crate::schema::{self, Problem, Scope};

/// A value set by a dedicated flag.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagSetting {
    /// The flag as the user typed it, e.g. `--max-turns`.
    pub flag: String,
    /// The dotted key it sets, e.g. `max_turns`.
    pub key: String,
    pub value: Value,
}

impl FlagSetting {
    pub fn new(flag: &str, key: &str, value: impl Into<Value>) -> Self {
        Self {
            flag: flag.to_owned(),
            key: key.to_owned(),
            value: value.into(),
        }
    }
}

/// Everything `load` reads besides the files themselves.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// oi's folder: `$INTERPRETER_HOME`, else `~/.openinterpreter`.
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub profile: Option<String>,
    /// `-c` arguments, in the order given.
    pub overrides: Vec<String>,
    pub flags: Vec<FlagSetting>,
    /// `--api-base`: the active provider's base URL, or an OpenAI-compatible
    /// chat server when no provider is configured.
    pub api_base: Option<String>,
    /// The environment (a snapshot, so tests need not touch the real one).
    pub env: BTreeMap<String, String>,
}

/// A project whose configuration file was not applied because it is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntrustedProject {
    pub root: PathBuf,
    pub files: Vec<PathBuf>,
}

/// The result of loading: the configuration and where each value came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Dotted key → the layer that set its value.
    pub origins: BTreeMap<String, Origin>,
    /// Things the user should know (ignored keys, unenforced settings).
    pub warnings: Vec<String>,
    pub untrusted: Option<UntrustedProject>,
    pub home: PathBuf,
    pub user_file: PathBuf,
    pub env: BTreeMap<String, String>,
}

/// oi's folder: `$INTERPRETER_HOME`, else `$HOME/.openinterpreter`.
pub fn home_dir(env: &BTreeMap<String, String>) -> Result<PathBuf, ConfigError> {
    if let Some(home) = env.get("INTERPRETER_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    env.get("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(h).join(".openinterpreter"))
        .ok_or(ConfigError::NoHome)
}

/// The project root for `dir`: the nearest folder upward holding `.git`, or
/// `dir` itself outside a repository.
pub fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_owned()
}

/// Loads and merges every layer. Errors name the file and line (or flag, or
/// variable), the key and the problem.
pub fn load(options: &LoadOptions) -> Result<Loaded, ConfigError> {
    let user_file = options.home.join("config.toml");
    let mut warnings = Vec::new();

    // 2. The user file; its profiles and project trust are read from it too.
    let user = read_layer(&user_file, &|line| Origin::File {
        path: user_file.clone(),
        line,
    })?;
    let mut user_layer = Layer::default();
    let mut profiles_in_file: BTreeMap<String, Layer> = BTreeMap::new();
    if let Some(layer) = user {
        for entry in layer.entries {
            validate(&entry, Scope::User)?;
            if entry.path[0] == "profiles" {
                let name = entry.path[1].clone();
                let (path, line) = entry
                    .origin
                    .file()
                    .map(|(p, l)| (p.to_owned(), l))
                    .unwrap_or_default();
                profiles_in_file
                    .entry(name.clone())
                    .or_default()
                    .entries
                    .push(Entry {
                        path: entry.path[2..].to_vec(),
                        value: entry.value,
                        origin: Origin::Profile { name, path, line },
                    });
            } else {
                user_layer.entries.push(entry);
            }
        }
        for (path, origin) in layer.tables {
            if path.first().is_some_and(|p| p == "profiles") {
                if path.len() > 2 {
                    let name = path[1].clone();
                    let (file, line) = origin
                        .file()
                        .map(|(p, l)| (p.to_owned(), l))
                        .unwrap_or_default();
                    profiles_in_file
                        .entry(name.clone())
                        .or_default()
                        .tables
                        .push((
                            path[2..].to_vec(),
                            Origin::Profile {
                                name,
                                path: file,
                                line,
                            },
                        ));
                } else if path.len() == 2 {
                    profiles_in_file.entry(path[1].clone()).or_default();
                }
            } else {
                user_layer.tables.push((path, origin));
            }
        }
    }

    // 3. The profile.
    let profile_layer = match &options.profile {
        None => Layer::default(),
        Some(name) => load_profile(options, name, &user_file, profiles_in_file)?,
    };

    // 6. `-c` arguments (read before the project files: they may trust one).
    let mut override_layer = Layer::default();
    for argument in &options.overrides {
        let (path, value) = parse_override(argument)?;
        let entry = Entry {
            path,
            value,
            origin: Origin::Override,
        };
        validate(&entry, Scope::Override)?;
        override_layer.entries.push(entry);
    }

    // 4. Trusted project files.
    let trust = trust_map(&[&user_layer, &profile_layer, &override_layer]);
    let root = project_root(&options.cwd);
    let mut project_layer = Layer::default();
    let mut untrusted_files = Vec::new();
    for dir in dirs_from_root(&root, &options.cwd) {
        let file = dir.join(".openinterpreter").join("config.toml");
        if file == user_file || !file.is_file() {
            continue;
        }
        if trust_of(&trust, &root) != Some(TrustLevel::Trusted) {
            untrusted_files.push(file);
            continue;
        }
        let origin_file = file.clone();
        let Some(layer) = read_layer(&file, &|line| Origin::Project {
            path: origin_file.clone(),
            line,
        })?
        else {
            continue;
        };
        for entry in layer.entries {
            match schema::check(&entry.path, &entry.value, Scope::Project) {
                Ok(()) => project_layer.entries.push(entry),
                Err(Problem::Denied { key, reason }) => {
                    warnings.push(format!("{}: `{key}` is ignored: {reason}", entry.origin))
                }
                Err(problem) => return Err(to_error(problem, &entry)),
            }
        }
    }
    let untrusted = (!untrusted_files.is_empty()
        && trust_of(&trust, &root) != Some(TrustLevel::Untrusted))
    .then(|| UntrustedProject {
        root: root.clone(),
        files: untrusted_files,
    });

    // 5. Environment variables.
    let mut env_layer = Layer::default();
    if let Some(model) = options.env.get("OI_MODEL").filter(|v| !v.is_empty()) {
        env_layer.entries.push(Entry {
            path: vec!["model".into()],
            value: Value::String(model.clone()),
            origin: Origin::Env {
                var: "OI_MODEL".into(),
            },
        });
    }
    if let Some(url) = options.env.get("OPENAI_BASE_URL").filter(|v| !v.is_empty()) {
        let entry = Entry {
            path: ["model_providers", "openai", "base_url"]
                .map(String::from)
                .to_vec(),
            value: Value::String(url.clone()),
            origin: Origin::Env {
                var: "OPENAI_BASE_URL".into(),
            },
        };
        validate(&entry, Scope::Override)?;
        env_layer.entries.push(entry);
    }

    // 7. Dedicated flags.
    let mut flag_layer = Layer::default();
    for flag in &options.flags {
        let entry = Entry {
            path: flag.key.split('.').map(str::to_owned).collect(),
            value: flag.value.clone(),
            origin: Origin::Flag {
                flag: flag.flag.clone(),
            },
        };
        validate(&entry, Scope::Override)?;
        flag_layer.entries.push(entry);
    }

    let layers = [
        &user_layer,
        &profile_layer,
        &project_layer,
        &env_layer,
        &override_layer,
        &flag_layer,
    ];
    let mut merged: BTreeMap<Vec<String>, (Value, Origin)> = BTreeMap::new();
    for layer in layers {
        for entry in &layer.entries {
            // A value replaces a table (and its keys) set below it.
            merged.retain(|path, _| !path.starts_with(&entry.path) || path == &entry.path);
            merged.insert(
                entry.path.clone(),
                (entry.value.clone(), entry.origin.clone()),
            );
        }
    }
    // Providers defined by a file replace the built-in of the same id.
    let defined: BTreeMap<String, Origin> = [&user_layer, &profile_layer]
        .iter()
        .flat_map(|l| {
            l.tables
                .iter()
                .filter(|(p, _)| p.len() == 2 && p[0] == "model_providers")
                .map(|(p, o)| (p[1].clone(), o.clone()))
                .chain(
                    l.entries
                        .iter()
                        .filter(|e| e.path.len() >= 3 && e.path[0] == "model_providers")
                        .map(|e| (e.path[1].clone(), e.origin.clone())),
                )
        })
        .fold(BTreeMap::new(), |mut map, (id, origin)| {
            map.entry(id).or_insert(origin);
            map
        });

    let mut origins: BTreeMap<String, Origin> = BTreeMap::new();
    let get = |origins: &mut BTreeMap<String, Origin>, key: &str| -> Option<(Value, Origin)> {
        let path: Vec<String> = key.split('.').map(str::to_owned).collect();
        let found = merged.get(&path).cloned();
        if let Some((_, origin)) = &found {
            origins.insert(key.to_owned(), origin.clone());
        }
        found
    };

    let mut model_provider = get(&mut origins, "model_provider").map(|(v, o)| (as_string(&v), o));
    let api_base = match &options.api_base {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => Some(url.clone()),
        Some(url) => {
            return Err(ConfigError::InvalidValue {
                origin: Box::new(Origin::Flag {
                    flag: "--api-base".into(),
                }),
                key: "base_url".into(),
                value: Value::String(url.clone()).to_string(),
                expected: "an http:// or https:// URL, e.g. http://localhost:11434/v1".into(),
            });
        }
        None => None,
    };
    if model_provider.is_none() && api_base.is_some() {
        model_provider = Some((
            API_BASE_PROVIDER.to_owned(),
            Origin::Flag {
                flag: "--api-base".into(),
            },
        ));
    }
    let (model_provider, provider_origin) =
        model_provider.unwrap_or_else(|| ("openai".to_owned(), Origin::Default));
    origins.insert("model_provider".into(), provider_origin.clone());

    // Providers: built-ins, replaced by file definitions, then field by field.
    let mut providers: BTreeMap<String, ProviderInfo> = BTreeMap::new();
    for b in providers::BUILT_IN {
        if defined.contains_key(b.id) {
            continue;
        }
        providers.insert(
            b.id.to_owned(),
            ProviderInfo {
                id: b.id.to_owned(),
                name: b.name.to_owned(),
                base_url: b.base_url.to_owned(),
                env_key: b.env_key.map(str::to_owned),
                wire_api: b.wire_api,
                http_headers: BTreeMap::new(),
                env_http_headers: BTreeMap::new(),
                query_params: BTreeMap::new(),
                request_max_retries: None,
                stream_idle_timeout_ms: None,
                stream_max_duration_ms: None,
                default_model: b.default_model.map(str::to_owned),
                key_required: b.env_key.is_some(),
                built_in: true,
            },
        );
    }
    let mut provider_origins: BTreeMap<String, Origin> = BTreeMap::new();
    for (path, (value, origin)) in merged
        .iter()
        .filter(|(p, _)| p.len() >= 3 && p[0] == "model_providers")
    {
        let id = &path[1];
        let provider = providers
            .entry(id.clone())
            .or_insert_with(|| user_defined(id));
        let field = path[2].as_str();
        let text = as_string(value);
        match field {
            "name" => provider.name = text,
            "base_url" => provider.base_url = text,
            "env_key" => {
                provider.env_key = Some(text);
                provider.key_required = true;
            }
            "wire_api" => provider.wire_api = text.parse().unwrap_or_default(),
            "http_headers" if path.len() == 4 => {
                provider.http_headers.insert(path[3].clone(), text);
            }
            "env_http_headers" if path.len() == 4 => {
                provider.env_http_headers.insert(path[3].clone(), text);
            }
            "query_params" if path.len() == 4 => {
                provider.query_params.insert(path[3].clone(), text);
            }
            "request_max_retries" => {
                provider.request_max_retries =
                    value.as_u64().map(|n| n.min(u64::from(u32::MAX)) as u32);
            }
            "stream_idle_timeout_ms" => provider.stream_idle_timeout_ms = value.as_u64(),
            "stream_max_duration_ms" => provider.stream_max_duration_ms = value.as_u64(),
            _ => {}
        }
        provider_origins.insert(path.join("."), origin.clone());
    }
    if let Some(url) = &api_base {
        let flag = Origin::Flag {
            flag: "--api-base".into(),
        };
        let provider = providers
            .entry(model_provider.clone())
            .or_insert_with(|| api_base_provider(url));
        provider.base_url = url.clone();
        provider_origins.insert(format!("model_providers.{model_provider}.base_url"), flag);
    }
    for (id, provider) in &providers {
        if provider.base_url.is_empty() {
            let origin = defined.get(id).cloned().unwrap_or(Origin::Override);
            return Err(ConfigError::MissingBaseUrl {
                origin,
                id: id.clone(),
            });
        }
    }
    let Some(provider) = providers.get(&model_provider).cloned() else {
        return Err(ConfigError::UnknownProvider {
            origin: Box::new(provider_origin),
            id: model_provider,
            known: providers.keys().cloned().collect(),
        });
    };
    origins.extend(provider_origins);

    let model = match get(&mut origins, "model") {
        Some((value, _)) => Some(as_string(&value)),
        None => {
            let default = provider.default_model.clone();
            if default.is_some() {
                origins.insert(
                    "model".into(),
                    Origin::Auto {
                        reason: format!("the default model of provider `{}`", provider.id),
                    },
                );
            }
            default
        }
    };
    // Every value was checked against the schema, so a word that does not
    // parse is absent (or `auto`, for the harness).
    let word = |origins: &mut BTreeMap<String, Origin>, key: &str| {
        get(origins, key).map(|(v, _)| as_string(&v))
    };
    let harness = match word(&mut origins, "harness").and_then(|w| w.parse().ok()) {
        Some(kind) => kind,
        None => {
            let (kind, reason) = auto_harness(&provider, model.as_deref());
            origins.insert("harness".into(), Origin::Auto { reason });
            kind
        }
    };
    let approval = word(&mut origins, "approval")
        .and_then(|w| w.parse().ok())
        .unwrap_or_default();
    let sandbox = word(&mut origins, "sandbox")
        .and_then(|w| w.parse().ok())
        .unwrap_or_default();
    let flag = |origins: &mut BTreeMap<String, Origin>, key: &str| {
        get(origins, key).and_then(|(v, _)| v.as_bool())
    };
    let sandbox_required = flag(&mut origins, "sandbox_required").unwrap_or(false);
    let network = flag(&mut origins, "network").unwrap_or(true);
    let writable_roots = get(&mut origins, "writable_roots")
        .and_then(|(v, _)| {
            v.as_array()
                .map(|items| items.iter().map(as_string).collect())
        })
        .unwrap_or_default();
    let pass_env = get(&mut origins, "pass_env")
        .and_then(|(v, _)| {
            v.as_array()
                .map(|items| items.iter().map(as_string).collect())
        })
        .unwrap_or_default();
    let number = |v: Option<(Value, Origin)>| v.and_then(|(v, _)| v.as_u64());
    let max_output = number(get(&mut origins, "max_output"))
        .map(|n| n as usize)
        .unwrap_or(Config::DEFAULT_MAX_OUTPUT);
    let max_turns = number(get(&mut origins, "max_turns"))
        .map(|n| n.min(u64::from(u32::MAX)) as u32)
        .unwrap_or(Config::DEFAULT_MAX_TURNS);
    let run_timeout =
        number(get(&mut origins, "run_timeout")).unwrap_or(Config::DEFAULT_RUN_TIMEOUT);
    let max_time = number(get(&mut origins, "max_time")).unwrap_or(0);
    let checkpoints = get(&mut origins, "checkpoints")
        .and_then(|(v, _)| v.as_bool())
        .unwrap_or(true);
    let os = get(&mut origins, "os")
        .and_then(|(v, _)| v.as_bool())
        .unwrap_or(false);
    let checkpoint_max_file_mb = number(get(&mut origins, "checkpoint_max_file_mb"))
        .unwrap_or(Config::DEFAULT_CHECKPOINT_MAX_FILE_MB);
    let loop_guard_max_repeats = number(get(&mut origins, "loop_guard.max_repeats"))
        .map(|n| n.min(u64::from(u32::MAX)) as u32)
        .unwrap_or(Config::DEFAULT_LOOP_GUARD_MAX_REPEATS);
    let context_window =
        number(get(&mut origins, "context_window")).map(|n| n.min(u64::from(u32::MAX)) as u32);
    let max_tokens =
        number(get(&mut origins, "max_tokens")).map(|n| n.min(u64::from(u32::MAX)) as u32);
    let temperature = get(&mut origins, "temperature").and_then(|(v, _)| v.as_f64());
    let custom_instructions = get(&mut origins, "custom_instructions").map(|(v, _)| as_string(&v));
    let max_budget = get(&mut origins, "max_budget").and_then(|(v, _)| v.as_f64());

    let mut languages = BTreeMap::new();
    let mut projects = BTreeMap::new();
    let mut models: BTreeMap<String, ModelSettings> = BTreeMap::new();
    for (path, (value, origin)) in &merged {
        match path.as_slice() {
            [section, name, field] if section == "languages" && field == "command" => {
                let command = value
                    .as_array()
                    .map(|items| items.iter().map(as_string).collect())
                    .unwrap_or_default();
                languages.insert(name.clone(), command);
                origins.insert(path.join("."), origin.clone());
            }
            [section, id, field] if section == "models" => {
                let settings = models.entry(id.clone()).or_default();
                let int = || value.as_u64().map(|n| n.min(u64::from(u32::MAX)) as u32);
                match field.as_str() {
                    "context_window" => settings.context_window = int(),
                    "max_output_tokens" => settings.max_output_tokens = int(),
                    "input_price" => settings.input_price = value.as_f64(),
                    "output_price" => settings.output_price = value.as_f64(),
                    "cached_input_price" => settings.cached_input_price = value.as_f64(),
                    "cache_write_price" => settings.cache_write_price = value.as_f64(),
                    "tools" => settings.tools = value.as_bool(),
                    "vision" => settings.vision = value.as_bool(),
                    _ => {}
                }
                origins.insert(path.join("."), origin.clone());
            }
            [section, root, field] if section == "projects" && field == "trust_level" => {
                let level = if as_string(value) == "trusted" {
                    TrustLevel::Trusted
                } else {
                    TrustLevel::Untrusted
                };
                projects.insert(root.clone(), level);
                origins.insert(path.join("."), origin.clone());
            }
            _ => {}
        }
    }

    Ok(Loaded {
        config: Config {
            model_provider,
            provider,
            model,
            harness,
            approval,
            sandbox,
            sandbox_required,
            network,
            writable_roots,
            pass_env,
            max_output,
            max_turns,
            run_timeout,
            max_time,
            checkpoints,
            os,
            checkpoint_max_file_mb,
            loop_guard_max_repeats,
            context_window,
            max_tokens,
            temperature,
            custom_instructions,
            max_budget,
            models,
            languages,
            providers,
            projects,
        },
        origins,
        warnings,
        untrusted,
        home: options.home.clone(),
        user_file,
        env: options.env.clone(),
    })
}

fn read_layer(path: &Path, origin: &dyn Fn(usize) -> Origin) -> Result<Option<Layer>, ConfigError> {
    match read_config_text(path)? {
        Some(text) => parse_toml(path, &text, origin).map(Some),
        None => Ok(None),
    }
}

/// The text of the configuration file at `path`; `None` when there is none.
pub(crate) fn read_config_text(path: &Path) -> Result<Option<String>, ConfigError> {
    match fs_err::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(ConfigError::NotText {
            path: path.to_owned(),
        }),
        Err(e) => Err(ConfigError::Read {
            path: path.to_owned(),
            source: e,
        }),
    }
}

fn load_profile(
    options: &LoadOptions,
    name: &str,
    user_file: &Path,
    mut in_file: BTreeMap<String, Layer>,
) -> Result<Layer, ConfigError> {
    let dir = options.home.join("profiles");
    let valid_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if valid_name {
        if let Some(layer) = in_file.remove(name) {
            return Ok(layer);
        }
        let file = dir.join(format!("{name}.toml"));
        let origin_file = file.clone();
        let profile_name = name.to_owned();
        if let Some(layer) = read_layer(&file, &|line| Origin::Profile {
            name: profile_name.clone(),
            path: origin_file.clone(),
            line,
        })? {
            for entry in &layer.entries {
                validate(entry, Scope::Profile)?;
            }
            return Ok(layer);
        }
    }
    let mut available: BTreeSet<String> = in_file.into_keys().collect();
    if let Ok(entries) = fs_err::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "toml")
                && let Some(stem) = path.file_stem()
            {
                available.insert(stem.to_string_lossy().into_owned());
            }
        }
    }
    Err(ConfigError::UnknownProfile {
        name: name.to_owned(),
        searched: vec![user_file.to_owned(), dir.join(format!("{name}.toml"))],
        available: available.into_iter().collect(),
    })
}

fn validate(entry: &Entry, scope: Scope) -> Result<(), ConfigError> {
    schema::check(&entry.path, &entry.value, scope).map_err(|p| to_error(p, entry))
}

pub(crate) fn to_error(problem: Problem, entry: &Entry) -> ConfigError {
    match problem {
        Problem::Unknown {
            key,
            suggestion,
            valid,
        } => ConfigError::UnknownKey {
            origin: Box::new(entry.origin.clone()),
            key,
            suggestion,
            valid,
        },
        Problem::Invalid { key, expected } => ConfigError::InvalidValue {
            origin: Box::new(entry.origin.clone()),
            // Where a variable's name belongs, the value given is likely
            // the secret itself: never repeat it.
            value: if key.ends_with(".env_key") || key.contains(".env_http_headers.") {
                "(not shown)".to_owned()
            } else {
                entry.value.to_string()
            },
            key,
            expected,
        },
        Problem::Denied { key, reason } => ConfigError::InvalidValue {
            origin: Box::new(entry.origin.clone()),
            key,
            value: entry.value.to_string(),
            expected: format!("nothing here: {reason}"),
        },
    }
}

/// Project trust from the layers that may grant it (never a project file).
fn trust_map(layers: &[&Layer]) -> BTreeMap<PathBuf, TrustLevel> {
    let mut map = BTreeMap::new();
    for layer in layers {
        for entry in &layer.entries {
            if let [section, root, field] = entry.path.as_slice()
                && section == "projects"
                && field == "trust_level"
            {
                let level = if entry.value.as_str() == Some("trusted") {
                    TrustLevel::Trusted
                } else {
                    TrustLevel::Untrusted
                };
                map.insert(normalize(Path::new(root)), level);
            }
        }
    }
    map
}

/// The trust of `root`: its own entry, else that of the nearest folder above
/// it that has one (trusting `~/work` trusts every project below it).
fn trust_of(map: &BTreeMap<PathBuf, TrustLevel>, root: &Path) -> Option<TrustLevel> {
    let root = normalize(root);
    root.ancestors().find_map(|dir| map.get(dir).copied())
}

fn normalize(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

/// The folders from `root` down to `cwd`, root first.
fn dirs_from_root(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .map(Path::to_owned)
        .collect();
    dirs.reverse();
    dirs
}

fn user_defined(id: &str) -> ProviderInfo {
    ProviderInfo {
        id: id.to_owned(),
        name: id.to_owned(),
        base_url: String::new(),
        env_key: None,
        wire_api: WireApi::Chat,
        http_headers: BTreeMap::new(),
        env_http_headers: BTreeMap::new(),
        query_params: BTreeMap::new(),
        request_max_retries: None,
        stream_idle_timeout_ms: None,
        stream_max_duration_ms: None,
        default_model: None,
        key_required: false,
        built_in: false,
    }
}

/// The provider `--api-base` selects when none is configured.
fn api_base_provider(url: &str) -> ProviderInfo {
    ProviderInfo {
        name: "the model server".to_owned(),
        base_url: url.to_owned(),
        // Sent when set, never required: local servers need no key.
        env_key: Some("OPENAI_API_KEY".to_owned()),
        key_required: false,
        ..user_defined(API_BASE_PROVIDER)
    }
}

fn as_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The harness when none is set: `markdown` for small models served on this
/// machine (they rarely call tools reliably), else `native`.
fn auto_harness(provider: &ProviderInfo, model: Option<&str>) -> (HarnessKind, String) {
    let local = is_local_url(&provider.base_url);
    match model {
        Some(model) if local && is_small_model(model) => (
            HarnessKind::Markdown,
            format!(
                "`{model}` is a small model served on this machine; such models rarely call tools reliably"
            ),
        ),
        Some(model) => (
            HarnessKind::Native,
            format!("`{model}` is expected to call tools"),
        ),
        None => (HarnessKind::Native, "no model is set".to_owned()),
    }
}

/// Whether a model id names a model of at most 4 billion parameters
/// (`qwen2.5-coder:1.5b`, `Llama-3.2-3B-Instruct`, `phi3:mini` …).
pub fn is_small_model(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let sized = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter_map(|token| token.strip_suffix('b'))
        .filter_map(|size| size.parse::<f64>().ok())
        .any(|size| size > 0.0 && size <= 4.0);
    sized
        || [
            "tinyllama",
            "smollm",
            "phi3:mini",
            "phi-3-mini",
            "phi4-mini",
            "gemma3:1b",
        ]
        .iter()
        .any(|family| lower.contains(family))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::display_path;

    #[test]
    fn recognises_small_models() {
        for model in [
            "qwen2.5-coder:1.5b",
            "Qwen2.5-Coder-0.5B-Instruct",
            "llama3.2:3b",
            "phi3:mini",
            "smollm2:360m",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        ] {
            assert!(is_small_model(model), "{model}");
        }
        for model in [
            "gpt-5-mini",
            "qwen2.5-coder:7b",
            "llama3.1:70b",
            "gpt-oss-20b",
            "claude-sonnet-5",
            "mistral",
        ] {
            assert!(!is_small_model(model), "{model}");
        }
    }

    #[test]
    fn folders_from_the_root_down() {
        assert_eq!(
            dirs_from_root(Path::new("/r"), Path::new("/r/a/b")),
            vec![
                PathBuf::from("/r"),
                PathBuf::from("/r/a"),
                PathBuf::from("/r/a/b")
            ]
        );
        assert_eq!(
            dirs_from_root(Path::new("/r"), Path::new("/r")),
            vec![PathBuf::from("/r")]
        );
    }

    #[test]
    fn the_home_folder_comes_from_the_environment() {
        let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            home_dir(&env(&[("HOME", "/h")])).unwrap(),
            PathBuf::from("/h/.openinterpreter")
        );
        assert_eq!(
            home_dir(&env(&[("HOME", "/h"), ("INTERPRETER_HOME", "/oi")])).unwrap(),
            PathBuf::from("/oi")
        );
        assert!(matches!(home_dir(&env(&[])), Err(ConfigError::NoHome)));
    }

    #[test]
    fn display_paths_are_readable() {
        assert_eq!(display_path(Path::new("/etc/x")), "/etc/x");
    }
}
