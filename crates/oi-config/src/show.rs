//! `interpreter config show`: the effective configuration, each value with
//! the place it came from. Secrets are never printed: API keys only ever live
//! in environment variables, shown by name with whether they are set.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::ProviderInfo;
use crate::load::Loaded;
use crate::origin::{Origin, display_path};

/// `request_max_retries` when a provider does not set it.
pub const DEFAULT_REQUEST_MAX_RETRIES: u32 = 4;
/// `stream_idle_timeout_ms` when a provider does not set it.
pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
/// `stream_max_duration_ms` when a provider does not set it (one hour).
pub const DEFAULT_STREAM_MAX_DURATION_MS: u64 = 3_600_000;

struct Lines {
    rows: Vec<(String, String)>,
}

impl Lines {
    fn row(&mut self, left: String, right: String) {
        self.rows.push((left, right));
    }

    fn text(&mut self, text: &str) {
        self.rows.push((text.to_owned(), String::new()));
    }

    fn render(self) -> String {
        let width = self
            .rows
            .iter()
            .filter(|(_, r)| !r.is_empty())
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0)
            .min(48);
        let mut out = String::new();
        for (left, right) in self.rows {
            if right.is_empty() {
                out.push_str(left.trim_end());
            } else {
                let pad = width.saturating_sub(left.chars().count());
                out.push_str(&format!("{left}{}  # {right}", " ".repeat(pad)));
            }
            out.push('\n');
        }
        out
    }
}

fn toml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

fn origin_of(loaded: &Loaded, key: &str, fallback: Origin) -> String {
    loaded
        .origins
        .get(key)
        .cloned()
        .unwrap_or(fallback)
        .to_string()
}

/// Lists the `AGENTS.md` files the model gets, as comments.
fn show_instructions(loaded: &Loaded, lines: &mut Lines) {
    let found = &loaded.instructions;
    if found.files.is_empty() && found.left_out.is_empty() {
        lines.text(if found.max_bytes == 0 {
            "# Project instructions: none read (project_doc_max_bytes = 0)."
        } else {
            "# Project instructions: no AGENTS.md here, in the folders above it up to the project root, or in oi's folder."
        });
        return;
    }
    lines.text("# Project instructions the model gets, in this order (the nearest last):");
    for file in &found.files {
        let size = if file.is_cut() {
            format!("the first {} of {} bytes", file.kept, file.size)
        } else {
            format!("{} bytes", file.size)
        };
        lines.text(&format!("#   {} ({size})", display_path(&file.path)));
    }
    for path in &found.left_out {
        lines.text(&format!(
            "#   not read: {} (see the warning above)",
            display_path(path)
        ));
    }
}

/// Renders the effective configuration as annotated TOML; `key_from_flag`
/// when `--api-key` gives the key (which is never shown).
pub fn show(loaded: &Loaded, key_from_flag: bool) -> String {
    let c = &loaded.config;
    let mut lines = Lines { rows: Vec::new() };
    lines.text("# The effective configuration; after each value, the layer that set it.");
    let user_file = display_path(&loaded.user_file);
    let read = if loaded.user_file.is_file() {
        "read"
    } else {
        "not present"
    };
    lines.text(&format!("# User file: {user_file} ({read})."));
    if let Some(untrusted) = &loaded.untrusted {
        lines.text(&format!(
            "# Not applied: the project files of {}, which is not trusted (`interpreter trust` trusts it).",
            display_path(&untrusted.root)
        ));
    }
    for warning in &loaded.warnings {
        lines.text(&format!("# warning: {warning}"));
    }
    lines.text("");

    let top = |lines: &mut Lines, key: &str, value: Option<String>| match value {
        Some(value) => lines.row(
            format!("{key} = {value}"),
            origin_of(loaded, key, Origin::Default),
        ),
        None => lines.text(&format!("# {key} is not set")),
    };
    top(
        &mut lines,
        "model_provider",
        Some(toml_string(&c.model_provider)),
    );
    top(&mut lines, "model", c.model.as_deref().map(toml_string));
    top(&mut lines, "harness", Some(toml_string(c.harness.as_str())));
    top(
        &mut lines,
        "approval",
        Some(toml_string(c.approval.as_str())),
    );
    top(&mut lines, "sandbox", Some(toml_string(c.sandbox.as_str())));
    top(
        &mut lines,
        "sandbox_required",
        Some(c.sandbox_required.to_string()),
    );
    top(&mut lines, "network", Some(c.network.to_string()));
    top(
        &mut lines,
        "writable_roots",
        Some(toml_list(&c.writable_roots)),
    );
    top(&mut lines, "pass_env", Some(toml_list(&c.pass_env)));
    top(&mut lines, "max_output", Some(c.max_output.to_string()));
    top(&mut lines, "max_turns", Some(c.max_turns.to_string()));
    top(&mut lines, "run_timeout", Some(c.run_timeout.to_string()));
    top(&mut lines, "max_time", Some(c.max_time.to_string()));
    top(&mut lines, "checkpoints", Some(c.checkpoints.to_string()));
    top(&mut lines, "os", Some(c.os.to_string()));
    top(
        &mut lines,
        "checkpoint_max_file_mb",
        Some(c.checkpoint_max_file_mb.to_string()),
    );
    lines.row(
        format!("loop_guard.max_repeats = {}", c.loop_guard_max_repeats),
        origin_of(loaded, "loop_guard.max_repeats", Origin::Default),
    );
    top(
        &mut lines,
        "context_window",
        c.context_window.map(|n| n.to_string()),
    );
    for (key, value) in [
        ("builtin.threads", c.builtin.threads.map(|n| n.to_string())),
        ("builtin.context", c.builtin.context.map(|n| n.to_string())),
        (
            "builtin.mirror",
            c.builtin.mirror.as_deref().map(toml_string),
        ),
    ] {
        if let Some(value) = value {
            lines.row(
                format!("{key} = {value}"),
                origin_of(loaded, key, Origin::Default),
            );
        }
    }
    if c.sandbox == oi_protocol::SandboxMode::Container
        || loaded.origins.keys().any(|k| k.starts_with("container."))
    {
        let k = &c.container;
        for (key, value) in [
            ("container.engine", Some(toml_string(&k.engine))),
            ("container.image", Some(toml_string(&k.image))),
            ("container.host", k.host.as_deref().map(toml_string)),
            ("container.memory", k.memory.as_deref().map(toml_string)),
            ("container.cpus", k.cpus.map(|n| n.to_string())),
            ("container.pids", k.pids.map(|n| n.to_string())),
            ("container.network", Some(toml_string(&k.network))),
            ("container.mounts", Some(toml_list(&k.mounts))),
            (
                "container.sync_max_file_mb",
                Some(k.sync_max_file_mb.to_string()),
            ),
        ] {
            if let Some(value) = value {
                lines.row(
                    format!("{key} = {value}"),
                    origin_of(loaded, key, Origin::Default),
                );
            }
        }
        // Values hidden: they are often secrets.
        for name in k.env.keys() {
            let key = format!("container.env.{name}");
            lines.row(
                format!("{key} = \"…\""),
                origin_of(loaded, &key, Origin::Default),
            );
        }
    }
    top(
        &mut lines,
        "max_tokens",
        c.max_tokens.map(|n| n.to_string()),
    );
    top(
        &mut lines,
        "temperature",
        c.temperature.map(|n| n.to_string()),
    );
    top(
        &mut lines,
        "reply_grammar",
        c.reply_grammar.map(|b| b.to_string()),
    );
    top(
        &mut lines,
        "custom_instructions",
        c.custom_instructions.as_deref().map(toml_string),
    );
    top(
        &mut lines,
        "system_message",
        c.system_message.as_deref().map(toml_string),
    );
    top(
        &mut lines,
        "project_doc_max_bytes",
        Some(c.project_doc_max_bytes.to_string()),
    );
    top(
        &mut lines,
        "project_doc_fallback_filenames",
        Some(format!(
            "[{}]",
            c.project_doc_fallback_filenames
                .iter()
                .map(|r| toml_string(r))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    );
    show_instructions(loaded, &mut lines);
    top(
        &mut lines,
        "max_budget",
        c.max_budget.map(|n| n.to_string()),
    );

    lines.text("");
    show_provider(loaded, &c.provider, key_from_flag, &mut lines);
    let others: Vec<&str> = c
        .providers
        .keys()
        .filter(|id| **id != c.model_provider)
        .map(String::as_str)
        .collect();
    lines.text(&format!("# Other providers: {}.", others.join(", ")));

    for (name, command) in &c.languages {
        lines.text("");
        lines.text(&format!("[languages.{name}]"));
        let value = Value::from(command.clone()).to_string();
        lines.row(
            format!("command = {value}"),
            origin_of(
                loaded,
                &format!("languages.{name}.command"),
                Origin::Default,
            ),
        );
    }
    for server in c.mcp_servers.values() {
        show_mcp_server(loaded, server, &mut lines);
    }
    for (id, settings) in &c.models {
        lines.text("");
        lines.text(&format!("[models.{}]", toml_string(id)));
        let fields: [(&str, Option<String>); 8] = [
            (
                "context_window",
                settings.context_window.map(|n| n.to_string()),
            ),
            (
                "max_output_tokens",
                settings.max_output_tokens.map(|n| n.to_string()),
            ),
            ("input_price", settings.input_price.map(|n| n.to_string())),
            ("output_price", settings.output_price.map(|n| n.to_string())),
            (
                "cached_input_price",
                settings.cached_input_price.map(|n| n.to_string()),
            ),
            (
                "cache_write_price",
                settings.cache_write_price.map(|n| n.to_string()),
            ),
            ("tools", settings.tools.map(|b| b.to_string())),
            ("vision", settings.vision.map(|b| b.to_string())),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                lines.row(
                    format!("{field} = {value}"),
                    origin_of(loaded, &format!("models.{id}.{field}"), Origin::Default),
                );
            }
        }
    }
    for (root, level) in &c.projects {
        lines.text("");
        lines.text(&format!("[projects.{}]", toml_string(root)));
        let value = match level {
            crate::TrustLevel::Trusted => "trusted",
            crate::TrustLevel::Untrusted => "untrusted",
        };
        lines.row(
            format!("trust_level = {}", toml_string(value)),
            origin_of(
                loaded,
                &format!("projects.{root}.trust_level"),
                Origin::Default,
            ),
        );
    }
    lines.render()
}

fn show_provider(loaded: &Loaded, p: &ProviderInfo, key_from_flag: bool, lines: &mut Lines) {
    let key = |field: &str| format!("model_providers.{}.{field}", p.id);
    let fallback = if p.built_in {
        Origin::BuiltIn
    } else {
        Origin::Default
    };
    let field = |lines: &mut Lines, name: &str, value: String, note: Option<String>| {
        let mut origin = origin_of(loaded, &key(name), fallback.clone());
        if let Some(note) = note {
            origin = format!("{origin}; {note}");
        }
        lines.row(format!("{name} = {value}"), origin);
    };
    lines.text(&format!(
        "[model_providers.{}]  # the active provider",
        p.id
    ));
    field(lines, "name", toml_string(&p.name), None);
    field(lines, "base_url", toml_string(&p.base_url), None);
    match &p.env_key {
        Some(var) if key_from_flag => field(
            lines,
            "env_key",
            toml_string(var),
            Some("not used: the key comes from --api-key".to_owned()),
        ),
        None if key_from_flag => lines.text("# the API key comes from --api-key"),
        Some(var) => {
            let set = if loaded.env.get(var).is_some_and(|v| !v.is_empty()) {
                "is set"
            } else if p.key_required {
                "is NOT set"
            } else {
                "is not set (not needed)"
            };
            field(
                lines,
                "env_key",
                toml_string(var),
                Some(format!("${var} {set}")),
            );
        }
        None => lines.text("# env_key is not set: requests carry no API key"),
    }
    field(lines, "wire_api", toml_string(p.wire_api.as_str()), None);
    for (name, value) in &p.http_headers {
        let shown = if looks_secret(name) {
            "\"<hidden>\"".to_owned()
        } else {
            toml_string(value)
        };
        lines.row(
            format!("http_headers.{} = {shown}", toml_string(name)),
            origin_of(
                loaded,
                &format!("{}.{name}", key("http_headers")),
                Origin::Default,
            ),
        );
    }
    for (name, var) in &p.env_http_headers {
        let set = if loaded.env.get(var).is_some_and(|v| !v.is_empty()) {
            "is set"
        } else {
            "is not set: the header is not sent"
        };
        lines.row(
            format!(
                "env_http_headers.{} = {}",
                toml_string(name),
                toml_string(var)
            ),
            format!(
                "{}; ${var} {set}",
                origin_of(
                    loaded,
                    &format!("{}.{name}", key("env_http_headers")),
                    Origin::Default
                )
            ),
        );
    }
    for (name, value) in &p.query_params {
        lines.row(
            format!(
                "query_params.{} = {}",
                toml_string(name),
                toml_string(value)
            ),
            origin_of(
                loaded,
                &format!("{}.{name}", key("query_params")),
                Origin::Default,
            ),
        );
    }
    field(
        lines,
        "request_max_retries",
        p.request_max_retries
            .unwrap_or(DEFAULT_REQUEST_MAX_RETRIES)
            .to_string(),
        None,
    );
    field(
        lines,
        "stream_idle_timeout_ms",
        p.stream_idle_timeout_ms
            .unwrap_or(DEFAULT_STREAM_IDLE_TIMEOUT_MS)
            .to_string(),
        None,
    );
    field(
        lines,
        "stream_max_duration_ms",
        p.stream_max_duration_ms
            .unwrap_or(DEFAULT_STREAM_MAX_DURATION_MS)
            .to_string(),
        None,
    );
}

/// `["a", "b"]`.
fn toml_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|r| toml_string(r))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Header names whose values are credentials.
fn looks_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["auth", "key", "token", "secret", "cookie", "password"]
        .iter()
        .any(|w| lower.contains(w))
}

/// `[mcp_servers.NAME]`, values of `env` and headers hidden (they are
/// often secrets).
fn show_mcp_server(loaded: &Loaded, server: &crate::McpServerSettings, lines: &mut Lines) {
    use crate::McpTransport;
    let name = &server.name;
    lines.text("");
    lines.text(&format!("[mcp_servers.{name}]"));
    let hidden = |map: &BTreeMap<String, String>| {
        format!(
            "{{ {} }}",
            map.keys()
                .map(|k| format!("{} = \"…\"", toml_string(k)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut fields: Vec<(&str, Option<String>)> = Vec::new();
    match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => {
            fields.push(("command", Some(toml_string(command))));
            fields.push(("args", (!args.is_empty()).then(|| toml_list(args))));
            fields.push(("env", (!env.is_empty()).then(|| hidden(env))));
            fields.push((
                "env_vars",
                (!env_vars.is_empty()).then(|| toml_list(env_vars)),
            ));
            fields.push(("cwd", cwd.as_deref().map(toml_string)));
        }
        McpTransport::Http {
            url,
            bearer_token_env_var,
            http_headers,
            env_http_headers,
        } => {
            fields.push(("url", Some(toml_string(url))));
            fields.push((
                "bearer_token_env_var",
                bearer_token_env_var.as_deref().map(toml_string),
            ));
            fields.push((
                "http_headers",
                (!http_headers.is_empty()).then(|| hidden(http_headers)),
            ));
            fields.push((
                "env_http_headers",
                (!env_http_headers.is_empty()).then(|| {
                    format!(
                        "{{ {} }}",
                        env_http_headers
                            .iter()
                            .map(|(k, v)| format!("{} = {}", toml_string(k), toml_string(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }),
            ));
        }
    }
    fields.push(("enabled", Some(server.enabled.to_string())));
    fields.push((
        "startup_timeout_sec",
        Some(server.startup_timeout_sec.to_string()),
    ));
    fields.push((
        "tool_timeout_sec",
        Some(server.tool_timeout_sec.to_string()),
    ));
    fields.push((
        "enabled_tools",
        server.enabled_tools.as_deref().map(toml_list),
    ));
    fields.push((
        "disabled_tools",
        (!server.disabled_tools.is_empty()).then(|| toml_list(&server.disabled_tools)),
    ));
    for (field, value) in fields {
        let Some(value) = value else { continue };
        let key = format!("mcp_servers.{name}.{field}");
        let origin = loaded
            .origins
            .iter()
            .find(|(k, _)| **k == key || k.starts_with(&format!("{key}.")))
            .map(|(_, o)| o.clone())
            .unwrap_or(Origin::Default);
        lines.row(format!("{field} = {value}"), origin.to_string());
    }
}
