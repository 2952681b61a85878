//! From the merged layers to the typed configuration: each key's value
//! (the highest layer that set it wins; tables merge key by key), the model
//! providers (built-ins, replaced by definitions in files, then changed
//! field by field), and the [`Origin`] of every value.

use std::collections::{BTreeMap, BTreeSet};

use oi_protocol::{HarnessKind, WireApi};
use serde_json::Value;

use crate::config::{
    Config, McpServerSettings, McpTransport, ModelSettings, ProviderInfo, TrustLevel,
};
use crate::error::ConfigError;
use crate::layers::Layer;
use crate::load::is_small_model;
use crate::origin::Origin;
use crate::providers::{self, API_BASE_PROVIDER, BUILTIN_BASE_URL, BUILTIN_PROVIDER, is_local_url};

/// The merged values, and the origins of those read so far.
struct Values {
    merged: BTreeMap<Vec<String>, (Value, Origin)>,
    origins: BTreeMap<String, Origin>,
}

impl Values {
    /// `layers` merged, lowest first: a value replaces a table (and its
    /// keys) set below it.
    fn merge(layers: &[&Layer]) -> Self {
        let mut merged: BTreeMap<Vec<String>, (Value, Origin)> = BTreeMap::new();
        for layer in layers {
            for entry in &layer.entries {
                merged.retain(|path, _| !path.starts_with(&entry.path) || path == &entry.path);
                merged.insert(
                    entry.path.clone(),
                    (entry.value.clone(), entry.origin.clone()),
                );
            }
        }
        Self {
            merged,
            origins: BTreeMap::new(),
        }
    }

    /// The value of the dotted `key`, its origin remembered.
    fn get(&mut self, key: &str) -> Option<(Value, Origin)> {
        let path: Vec<String> = key.split('.').map(str::to_owned).collect();
        let found = self.merged.get(&path).cloned();
        if let Some((_, origin)) = &found {
            self.origins.insert(key.to_owned(), origin.clone());
        }
        found
    }

    fn string(&mut self, key: &str) -> Option<String> {
        self.get(key).map(|(v, _)| as_string(&v))
    }

    /// A word of a vocabulary. Every value was checked against the schema,
    /// so one that does not parse is absent (or `auto`, for the harness).
    fn word<T: std::str::FromStr>(&mut self, key: &str) -> Option<T> {
        self.string(key).and_then(|w| w.parse().ok())
    }

    fn bool(&mut self, key: &str) -> Option<bool> {
        self.get(key).and_then(|(v, _)| v.as_bool())
    }

    fn u64(&mut self, key: &str) -> Option<u64> {
        self.get(key).and_then(|(v, _)| v.as_u64())
    }

    fn u32(&mut self, key: &str) -> Option<u32> {
        self.u64(key).map(|n| n.min(u64::from(u32::MAX)) as u32)
    }

    fn f64(&mut self, key: &str) -> Option<f64> {
        self.get(key).and_then(|(v, _)| v.as_f64())
    }

    fn strings(&mut self, key: &str) -> Vec<String> {
        self.get(key)
            .and_then(|(v, _)| {
                v.as_array()
                    .map(|items| items.iter().map(as_string).collect())
            })
            .unwrap_or_default()
    }
}

/// The configuration `layers` make (lowest first), with the origin of each
/// value; `files` are the layers whose provider tables replace built-ins.
pub(crate) fn resolve(
    layers: &[&Layer],
    files: &[&Layer],
    api_base: Option<&str>,
) -> Result<(Config, BTreeMap<String, Origin>), ConfigError> {
    let mut values = Values::merge(layers);
    let (model_provider, provider, providers) =
        resolve_providers(&mut values, &defined_providers(files), api_base)?;
    let model = match values.string("model") {
        Some(model) => Some(model),
        None => {
            let default = provider.default_model.clone();
            if default.is_some() {
                values.origins.insert(
                    "model".into(),
                    Origin::Auto {
                        reason: format!("the default model of provider `{}`", provider.id),
                    },
                );
            }
            default
        }
    };
    let harness = match values.word("harness") {
        Some(kind) => kind,
        None => {
            let (kind, reason) = auto_harness(&provider, model.as_deref());
            values
                .origins
                .insert("harness".into(), Origin::Auto { reason });
            kind
        }
    };
    let (models, languages, projects) = tables(&mut values);
    let mcp_servers = mcp_servers(&mut values)?;
    let v = &mut values;
    let config = Config {
        model_provider,
        provider,
        model,
        harness,
        approval: v.word("approval").unwrap_or_default(),
        sandbox: v.word("sandbox").unwrap_or_default(),
        sandbox_required: v.bool("sandbox_required").unwrap_or(false),
        network: v.bool("network").unwrap_or(true),
        writable_roots: v.strings("writable_roots"),
        pass_env: v.strings("pass_env"),
        max_output: v
            .u64("max_output")
            .map_or(Config::DEFAULT_MAX_OUTPUT, |n| n as usize),
        max_turns: v.u32("max_turns").unwrap_or(Config::DEFAULT_MAX_TURNS),
        run_timeout: v.u64("run_timeout").unwrap_or(Config::DEFAULT_RUN_TIMEOUT),
        max_time: v.u64("max_time").unwrap_or(0),
        checkpoints: v.bool("checkpoints").unwrap_or(true),
        os: v.bool("os").unwrap_or(false),
        checkpoint_max_file_mb: v
            .u64("checkpoint_max_file_mb")
            .unwrap_or(Config::DEFAULT_CHECKPOINT_MAX_FILE_MB),
        loop_guard_max_repeats: v
            .u32("loop_guard.max_repeats")
            .unwrap_or(Config::DEFAULT_LOOP_GUARD_MAX_REPEATS),
        context_window: v.u32("context_window"),
        builtin: crate::config::BuiltinSettings {
            threads: v.u32("builtin.threads").filter(|n| *n > 0),
            context: v.u32("builtin.context"),
            mirror: v.string("builtin.mirror"),
        },
        container: container(v),
        max_tokens: v.u32("max_tokens"),
        temperature: v.f64("temperature"),
        reply_grammar: v.bool("reply_grammar"),
        custom_instructions: v.string("custom_instructions"),
        system_message: v.string("system_message"),
        project_doc_max_bytes: v
            .u64("project_doc_max_bytes")
            .unwrap_or(crate::instructions::DEFAULT_PROJECT_DOC_MAX_BYTES),
        project_doc_fallback_filenames: v.strings("project_doc_fallback_filenames"),
        max_budget: v.f64("max_budget"),
        models,
        languages,
        providers,
        mcp_servers,
        projects,
    };
    Ok((config, values.origins))
}

/// The providers defined in `files` (by a table or a key under it), with
/// where first: they replace the built-in of the same id.
fn defined_providers(files: &[&Layer]) -> BTreeMap<String, Origin> {
    files
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
        })
}

/// The active provider's id, its settings, and every provider: the
/// built-ins, those files define instead, then changes field by field
/// (`-c`, variables, flags); `api_base` moves the active one (or selects
/// an OpenAI-compatible server when none is configured).
fn resolve_providers(
    values: &mut Values,
    defined: &BTreeMap<String, Origin>,
    api_base: Option<&str>,
) -> Result<(String, ProviderInfo, BTreeMap<String, ProviderInfo>), ConfigError> {
    let mut model_provider = values
        .get("model_provider")
        .map(|(v, o)| (as_string(&v), o));
    let api_base = match api_base {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            Some(url.to_owned())
        }
        Some(url) => {
            return Err(ConfigError::InvalidValue {
                origin: Box::new(Origin::Flag {
                    flag: "--api-base".into(),
                }),
                key: "base_url".into(),
                value: Value::String(url.to_owned()).to_string(),
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
    // A model given as a GGUF file is run by oi itself.
    if model_provider.is_none()
        && let Some((Value::String(model), _)) = values.get("model")
        && model.to_ascii_lowercase().ends_with(".gguf")
    {
        model_provider = Some((
            BUILTIN_PROVIDER.to_owned(),
            Origin::Auto {
                reason: "`model` names a GGUF file, which oi runs itself".into(),
            },
        ));
    }
    let (model_provider, provider_origin) =
        model_provider.unwrap_or_else(|| ("openai".to_owned(), Origin::Default));
    values
        .origins
        .insert("model_provider".into(), provider_origin.clone());

    // Providers: built-ins, replaced by file definitions, then field by field.
    let mut providers: BTreeMap<String, ProviderInfo> = BTreeMap::new();
    for b in providers::BUILT_IN {
        if defined.contains_key(b.id) {
            continue;
        }
        providers.insert(
            b.id.to_owned(),
            ProviderInfo {
                name: b.name.to_owned(),
                base_url: b.base_url.to_owned(),
                env_key: b.env_key.map(str::to_owned),
                wire_api: b.wire_api,
                default_model: b.default_model.map(str::to_owned),
                key_required: b.env_key.is_some(),
                built_in: true,
                ..user_defined(b.id)
            },
        );
    }
    let mut provider_origins: BTreeMap<String, Origin> = BTreeMap::new();
    for (path, (value, origin)) in values
        .merged
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
    values.origins.extend(provider_origins);
    Ok((model_provider, provider, providers))
}

/// The tables keyed by name: `[models."ID"]`, `[languages.NAME]`,
/// `[projects."PATH"]`.
#[expect(
    clippy::type_complexity,
    reason = "three maps, named by the function and its caller"
)]
fn tables(
    values: &mut Values,
) -> (
    BTreeMap<String, ModelSettings>,
    BTreeMap<String, Vec<String>>,
    BTreeMap<String, TrustLevel>,
) {
    let mut languages = BTreeMap::new();
    let mut projects = BTreeMap::new();
    let mut models: BTreeMap<String, ModelSettings> = BTreeMap::new();
    for (path, (value, origin)) in &values.merged {
        match path.as_slice() {
            [section, name, field] if section == "languages" && field == "command" => {
                let command = value
                    .as_array()
                    .map(|items| items.iter().map(as_string).collect())
                    .unwrap_or_default();
                languages.insert(name.clone(), command);
                values.origins.insert(path.join("."), origin.clone());
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
                values.origins.insert(path.join("."), origin.clone());
            }
            [section, root, field] if section == "projects" && field == "trust_level" => {
                let level = if as_string(value) == "trusted" {
                    TrustLevel::Trusted
                } else {
                    TrustLevel::Untrusted
                };
                projects.insert(root.clone(), level);
                values.origins.insert(path.join("."), origin.clone());
            }
            _ => {}
        }
    }
    (models, languages, projects)
}

/// `[container]`, defaults for what is not set.
fn container(values: &mut Values) -> crate::config::ContainerSettings {
    let defaults = crate::config::ContainerSettings::default();
    let prefix = ["container".to_owned(), "env".to_owned()];
    let env: Vec<(String, String, Origin)> = values
        .merged
        .iter()
        .filter(|(p, _)| p.len() == 3 && p.starts_with(&prefix))
        .map(|(p, (v, o))| (p[2].clone(), as_string(v), o.clone()))
        .collect();
    let mut vars = BTreeMap::new();
    for (name, value, origin) in env {
        values
            .origins
            .insert(format!("container.env.{name}"), origin);
        vars.insert(name, value);
    }
    crate::config::ContainerSettings {
        engine: values.string("container.engine").unwrap_or(defaults.engine),
        image: values.string("container.image").unwrap_or(defaults.image),
        host: values.string("container.host"),
        memory: values.string("container.memory"),
        cpus: values.f64("container.cpus"),
        pids: values.u32("container.pids"),
        network: values
            .string("container.network")
            .unwrap_or(defaults.network),
        mounts: values.strings("container.mounts"),
        env: vars,
        sync_max_file_mb: values
            .u64("container.sync_max_file_mb")
            .unwrap_or(defaults.sync_max_file_mb),
    }
}

/// `[mcp_servers.NAME]`: each server with a `command` or a `url` (not
/// both, not neither).
fn mcp_servers(values: &mut Values) -> Result<BTreeMap<String, McpServerSettings>, ConfigError> {
    let names: BTreeSet<String> = values
        .merged
        .keys()
        .filter(|p| p.len() >= 2 && p[0] == "mcp_servers")
        .map(|p| p[1].clone())
        .collect();
    let mut servers = BTreeMap::new();
    for name in names {
        let key = |field: &str| format!("mcp_servers.{name}.{field}");
        let map = |values: &mut Values, field: &str| -> BTreeMap<String, String> {
            let prefix = ["mcp_servers".to_owned(), name.clone(), field.to_owned()];
            let found: Vec<(String, String, Origin)> = values
                .merged
                .iter()
                .filter(|(p, _)| p.len() == 4 && p.starts_with(&prefix))
                .map(|(p, (v, o))| (p[3].clone(), as_string(v), o.clone()))
                .collect();
            let mut out = BTreeMap::new();
            for (k, v, origin) in found {
                values
                    .origins
                    .insert(format!("mcp_servers.{name}.{field}.{k}"), origin);
                out.insert(k, v);
            }
            out
        };
        let command = values.string(&key("command"));
        let url = values.string(&key("url"));
        let transport = match (command, url) {
            (Some(command), None) => McpTransport::Stdio {
                command,
                args: values.strings(&key("args")),
                env: map(values, "env"),
                env_vars: values.strings(&key("env_vars")),
                cwd: values.string(&key("cwd")),
            },
            (None, Some(url)) => McpTransport::Http {
                url,
                bearer_token_env_var: values.string(&key("bearer_token_env_var")),
                http_headers: map(values, "http_headers"),
                env_http_headers: map(values, "env_http_headers"),
            },
            (command, _) => {
                let origin = values
                    .merged
                    .iter()
                    .find(|(p, _)| p.len() >= 2 && p[0] == "mcp_servers" && p[1] == name)
                    .map(|(_, (_, o))| o.clone())
                    .unwrap_or(Origin::Default);
                return Err(ConfigError::InvalidValue {
                    origin: Box::new(origin),
                    key: format!("mcp_servers.{name}"),
                    value: if command.is_some() {
                        "a table with both `command` and `url`".to_owned()
                    } else {
                        "a table with neither `command` nor `url`".to_owned()
                    },
                    expected: "either `command` (a program oi starts, e.g. command = \"npx\") or `url` (a streamable HTTP server, e.g. url = \"https://…/mcp\")".to_owned(),
                });
            }
        };
        let settings = McpServerSettings {
            name: name.clone(),
            transport,
            enabled: values.bool(&key("enabled")).unwrap_or(true),
            startup_timeout_sec: values
                .f64(&key("startup_timeout_sec"))
                .unwrap_or(McpServerSettings::DEFAULT_STARTUP_TIMEOUT_SEC),
            tool_timeout_sec: values
                .f64(&key("tool_timeout_sec"))
                .unwrap_or(McpServerSettings::DEFAULT_TOOL_TIMEOUT_SEC),
            enabled_tools: values.get(&key("enabled_tools")).map(|(v, _)| {
                v.as_array()
                    .map(|a| a.iter().map(as_string).collect())
                    .unwrap_or_default()
            }),
            disabled_tools: values.strings(&key("disabled_tools")),
        };
        servers.insert(name, settings);
    }
    Ok(servers)
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

/// A Claude model id (`claude-sonnet-4-5`, `anthropic/claude-opus-4`,
/// `us.anthropic.claude-…`).
fn is_claude(model: &str) -> bool {
    model.to_ascii_lowercase().contains("claude")
}

/// A GPT-5 or Codex model id (`gpt-5`, `gpt-5.1-codex`, `openai/gpt-5-mini`,
/// `codex-mini-latest`).
fn is_codex_family(model: &str) -> bool {
    let id = model.to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    id.starts_with("gpt-5") || id.contains("codex")
}

/// The harness when none is set: `markdown` for small models served on this
/// machine (they rarely call tools reliably), else `native`.
fn auto_harness(provider: &ProviderInfo, model: Option<&str>) -> (HarnessKind, String) {
    let local = is_local_url(&provider.base_url);
    if provider.base_url == BUILTIN_BASE_URL {
        return (
            HarnessKind::Markdown,
            "the built-in model answers in text (it makes no tool calls)".to_owned(),
        );
    }
    match model {
        Some(model) if local && is_small_model(model) => (
            HarnessKind::Markdown,
            format!(
                "`{model}` is a small model served on this machine; such models rarely call tools reliably"
            ),
        ),
        Some(model) if is_claude(model) => (
            HarnessKind::ClaudeCode,
            format!(
                "`{model}` is a Claude model: it gets the bash and text-editor tools it was trained on"
            ),
        ),
        Some(model) if is_codex_family(model) => (
            HarnessKind::Codex,
            format!(
                "`{model}` is a GPT-5 or Codex model: it gets the shell and apply_patch tools it was trained on"
            ),
        ),
        Some(model) => (
            HarnessKind::Native,
            format!("`{model}` is expected to call tools"),
        ),
        None => (HarnessKind::Native, "no model is set".to_owned()),
    }
}
