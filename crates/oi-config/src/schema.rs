//! The keys oi understands and the values they take.

use oi_protocol::{ApprovalPolicy, SandboxMode, WireApi};
use serde_json::Value;

/// What a key's value must be.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Str,
    /// A string naming one of these (the names shown, then every
    /// spelling accepted, aliases included).
    OneOf(&'static [&'static str], &'static [&'static str]),
    /// An integer ≥ 1.
    Positive,
    /// An integer ≥ 0.
    NonNegative,
    /// A number in this range.
    Number(f64, f64),
    /// An `http://` or `https://` URL.
    Url,
    /// A non-empty array of strings.
    Command,
    /// An array of strings (may be empty).
    StrList,
    /// A table of string values (`NAME = "value"`).
    StrMap,
    /// A table with keys of its own.
    Table,
    /// `true` or `false`.
    Bool,
    /// The name of an environment variable (`OPENAI_API_KEY`); what is
    /// given instead is never echoed, since it is often the key itself.
    VarName,
}

impl Kind {
    fn describe(self) -> String {
        match self {
            Self::Str => "a string".to_owned(),
            Self::OneOf(values, _) => format!(
                "one of {}",
                values
                    .iter()
                    .map(|v| format!("\"{v}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Self::Positive => "a whole number of at least 1".to_owned(),
            Self::NonNegative => "a whole number of at least 0".to_owned(),
            Self::Number(min, max) => format!("a number from {min} to {max}"),
            Self::Url => "an http:// or https:// URL".to_owned(),
            Self::Command => {
                "a list of strings: the program and its arguments, e.g. [\"/usr/bin/python3\"]"
                    .to_owned()
            }
            Self::StrList => "a list of strings, e.g. [\"/data\"]".to_owned(),
            Self::StrMap => "a table of NAME = \"value\" strings".to_owned(),
            Self::Table => "a table".to_owned(),
            Self::Bool => "true or false".to_owned(),
            Self::VarName => "the NAME of the environment variable that holds the secret (letters, digits and `_`, e.g. \"OPENAI_API_KEY\"), not the secret itself: put the secret in that variable".to_owned(),
        }
    }

    fn accepts(self, value: &Value) -> bool {
        match self {
            Self::Str => value.is_string(),
            Self::OneOf(_, accepted) => value.as_str().is_some_and(|v| accepted.contains(&v)),
            Self::Positive => value.as_u64().is_some_and(|n| n >= 1),
            Self::NonNegative => value.as_u64().is_some(),
            Self::Number(min, max) => value.as_f64().is_some_and(|n| (min..=max).contains(&n)),
            Self::Url => value
                .as_str()
                .is_some_and(|u| u.starts_with("http://") || u.starts_with("https://")),
            Self::Command => value.as_array().is_some_and(|items| {
                !items.is_empty()
                    && items.iter().all(Value::is_string)
                    && items[0].as_str().is_some_and(|p| !p.is_empty())
            }),
            Self::Bool => value.is_boolean(),
            Self::StrList => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            Self::VarName => value.as_str().is_some_and(is_var_name),
            Self::StrMap | Self::Table => false,
        }
    }
}

/// Whether `name` can name an environment variable.
fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `harness` also takes `auto` (chosen from the model and provider).
pub(crate) const HARNESS_VALUES: &[&str] = &["native", "markdown", "claude-code", "codex", "auto"];
pub(crate) const TRUST_VALUES: &[&str] = &["trusted", "untrusted"];

/// Top-level keys (also valid inside a profile, except `profiles` and `projects`).
pub(crate) const TOP: &[(&str, Kind)] = &[
    ("model_provider", Kind::Str),
    ("model", Kind::Str),
    ("harness", Kind::OneOf(HARNESS_VALUES, HARNESS_VALUES)),
    (
        "approval",
        Kind::OneOf(ApprovalPolicy::NAMES, ApprovalPolicy::ACCEPTED),
    ),
    (
        "sandbox",
        Kind::OneOf(SandboxMode::NAMES, SandboxMode::ACCEPTED),
    ),
    ("sandbox_required", Kind::Bool),
    ("network", Kind::Bool),
    ("writable_roots", Kind::StrList),
    ("pass_env", Kind::StrList),
    ("max_output", Kind::Positive),
    ("max_turns", Kind::Positive),
    ("run_timeout", Kind::NonNegative),
    ("max_time", Kind::NonNegative),
    ("checkpoints", Kind::Bool),
    ("os", Kind::Bool),
    ("checkpoint_max_file_mb", Kind::Positive),
    ("loop_guard", Kind::Table),
    ("builtin", Kind::Table),
    ("container", Kind::Table),
    ("context_window", Kind::Positive),
    ("max_tokens", Kind::Positive),
    ("temperature", Kind::Number(0.0, 2.0)),
    ("reply_grammar", Kind::Bool),
    ("custom_instructions", Kind::Str),
    ("system_message", Kind::Str),
    ("project_doc_max_bytes", Kind::NonNegative),
    ("project_doc_fallback_filenames", Kind::StrList),
    ("max_budget", Kind::Number(0.0, 1e9)),
    ("model_providers", Kind::Table),
    ("mcp_servers", Kind::Table),
    ("models", Kind::Table),
    ("languages", Kind::Table),
    ("profiles", Kind::Table),
    ("projects", Kind::Table),
];

/// `[container] engine`.
pub(crate) const ENGINE_VALUES: &[&str] = &["auto", "docker", "podman"];

/// Keys of `[container]`: where code runs with `sandbox = "container"`.
pub(crate) const CONTAINER: &[(&str, Kind)] = &[
    ("engine", Kind::OneOf(ENGINE_VALUES, ENGINE_VALUES)),
    ("image", Kind::Str),
    ("host", Kind::Str),
    ("memory", Kind::Str),
    ("cpus", Kind::Number(0.01, 4096.0)),
    ("pids", Kind::Positive),
    ("network", Kind::Str),
    ("mounts", Kind::StrList),
    ("env", Kind::StrMap),
    ("sync_max_file_mb", Kind::Positive),
];

/// Keys of `[builtin]`: the model oi runs in its own process.
pub(crate) const BUILTIN: &[(&str, Kind)] = &[
    ("threads", Kind::NonNegative),
    ("context", Kind::Positive),
    ("mirror", Kind::Url),
];

/// Keys of `[model_providers.<id>]`.
pub(crate) const PROVIDER: &[(&str, Kind)] = &[
    ("name", Kind::Str),
    ("base_url", Kind::Url),
    ("env_key", Kind::VarName),
    ("wire_api", Kind::OneOf(WireApi::NAMES, WireApi::ACCEPTED)),
    ("http_headers", Kind::StrMap),
    ("env_http_headers", Kind::StrMap),
    ("query_params", Kind::StrMap),
    ("request_max_retries", Kind::NonNegative),
    ("stream_idle_timeout_ms", Kind::Positive),
    ("stream_max_duration_ms", Kind::Positive),
];

/// Keys of `[mcp_servers.<name>]`: an MCP server whose tools the model
/// gets (`command` for one started on stdio, `url` for streamable HTTP).
pub(crate) const MCP_SERVER: &[(&str, Kind)] = &[
    ("command", Kind::Str),
    ("args", Kind::StrList),
    ("env", Kind::StrMap),
    ("env_vars", Kind::StrList),
    ("cwd", Kind::Str),
    ("url", Kind::Url),
    ("bearer_token_env_var", Kind::VarName),
    ("http_headers", Kind::StrMap),
    ("env_http_headers", Kind::StrMap),
    ("enabled", Kind::Bool),
    ("startup_timeout_sec", Kind::Number(0.0, 86400.0)),
    ("tool_timeout_sec", Kind::Number(0.0, 86400.0)),
    ("enabled_tools", Kind::StrList),
    ("disabled_tools", Kind::StrList),
];

/// Whether `name` can name an MCP server (it becomes part of tool names).
pub(crate) fn is_mcp_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Keys of `[models."<id>"]`: what oi should know about a model.
pub(crate) const MODEL: &[(&str, Kind)] = &[
    ("context_window", Kind::Positive),
    ("max_output_tokens", Kind::Positive),
    ("input_price", Kind::Number(0.0, 1e6)),
    ("output_price", Kind::Number(0.0, 1e6)),
    ("cached_input_price", Kind::Number(0.0, 1e6)),
    ("cache_write_price", Kind::Number(0.0, 1e6)),
    ("tools", Kind::Bool),
    ("vision", Kind::Bool),
];

/// Which file (or flag) a key comes from decides what it may set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The user's own file: everything.
    User,
    /// Inside a profile: everything but `profiles` and `projects`.
    Profile,
    /// A project's file: not where requests and keys go, nor trust.
    Project,
    /// `-c` and `config set`: everything but `profiles`.
    Override,
}

/// Why an entry is not accepted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Problem {
    Unknown {
        key: String,
        suggestion: Option<String>,
        valid: Vec<String>,
    },
    Invalid {
        key: String,
        expected: String,
    },
    /// Valid, but not allowed in this scope (a project file may not redirect
    /// requests); the entry is ignored with a warning.
    Denied {
        key: String,
        reason: &'static str,
    },
}

/// Checks one entry: `path` is the dotted key, `value` a leaf value.
pub(crate) fn check(path: &[String], value: &Value, scope: Scope) -> Result<(), Problem> {
    let Some(first) = path.first() else {
        return Ok(());
    };
    let allowed: Vec<&str> = TOP
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| match scope {
            Scope::User => true,
            Scope::Profile => !matches!(*k, "profiles" | "projects"),
            Scope::Project | Scope::Override => *k != "profiles",
        })
        .collect();
    let Some((_, kind)) = TOP.iter().find(|(k, _)| k == first && allowed.contains(k)) else {
        return Err(unknown(first, first, &allowed));
    };
    if scope == Scope::Project {
        match first.as_str() {
            "model_provider" | "model_providers" => {
                return Err(Problem::Denied {
                    key: path.join("."),
                    reason: "a project file may not change where requests and API keys are sent",
                });
            }
            "projects" => {
                return Err(Problem::Denied {
                    key: path.join("."),
                    reason: "a project cannot trust itself",
                });
            }
            "writable_roots" => {
                return Err(Problem::Denied {
                    key: path.join("."),
                    reason: "a project file may not open other folders to writes",
                });
            }
            "pass_env" => {
                return Err(Problem::Denied {
                    key: path.join("."),
                    reason: "a project file may not hand API keys to code",
                });
            }
            "os" => {
                return Err(Problem::Denied {
                    key: path.join("."),
                    reason: "a project file may not give the model the screen, mouse and keyboard (use --os, or `os = true` in your own configuration)",
                });
            }
            "container"
                if path
                    .get(1)
                    .is_some_and(|k| matches!(k.as_str(), "host" | "mounts" | "network")) =>
            {
                return Err(Problem::Denied {
                    key: path.join("."),
                    reason: "a project file may not send code to another machine, mount other folders into the container or give it the network",
                });
            }
            _ => {}
        }
    }
    match first.as_str() {
        "model_providers" => check_provider(path, value),
        "mcp_servers" => check_mcp_server(path, value),
        "languages" => check_nested(
            path,
            value,
            &[("command", Kind::Command)],
            "[languages.NAME]",
        ),
        "models" => check_nested(path, value, MODEL, "[models.\"MODEL-ID\"]"),
        "loop_guard" => check_table(
            path,
            value,
            &[("max_repeats", Kind::Positive)],
            "[loop_guard] max_repeats = 3",
        ),
        "builtin" => check_table(path, value, BUILTIN, "[builtin] threads = 4"),
        "container" => check_container(path, value),
        "projects" => check_nested(
            path,
            value,
            &[("trust_level", Kind::OneOf(TRUST_VALUES, TRUST_VALUES))],
            "[projects.\"/path\"]",
        ),
        "profiles" => match path.len() {
            1 | 2 => Err(Problem::Invalid {
                key: path.join("."),
                expected: "a table of settings, e.g. [profiles.NAME] with model = \"…\"".to_owned(),
            }),
            _ => check(&path[2..], value, Scope::Profile).map_err(|p| prefix(p, &path[..2])),
        },
        "project_doc_fallback_filenames" => {
            leaf(path, 1, *kind, value)?;
            let bare = |name: &Value| {
                name.as_str().is_some_and(|n| {
                    !n.is_empty() && n != "." && n != ".." && !n.contains(['/', '\\'])
                })
            };
            match value.as_array() {
                Some(names) if !names.iter().all(bare) => Err(Problem::Invalid {
                    key: path.join("."),
                    expected: "an array of file names without a folder, e.g. [\"CLAUDE.md\"]"
                        .to_owned(),
                }),
                _ => Ok(()),
            }
        }
        _ => leaf(path, 1, *kind, value),
    }
}

fn check_provider(path: &[String], value: &Value) -> Result<(), Problem> {
    if path.len() < 3 {
        return Err(Problem::Invalid {
            key: path.join("."),
            expected:
                "a table of provider settings, e.g. [model_providers.ID] with base_url = \"…\""
                    .to_owned(),
        });
    }
    let field = &path[2];
    let Some((_, kind)) = PROVIDER.iter().find(|(k, _)| k == field) else {
        let valid: Vec<&str> = PROVIDER.iter().map(|(k, _)| *k).collect();
        return Err(unknown(&path[..3].join("."), field, &valid));
    };
    if let Kind::StrMap = kind {
        return check_str_map(path, value);
    }
    leaf(path, 3, *kind, value)
}

/// `[section.NAME] field = { KEY = "value" }` (`path` is section, name,
/// field …): string values, or variable names for `env_http_headers`.
fn check_str_map(path: &[String], value: &Value) -> Result<(), Problem> {
    match path.len() {
        3 => Err(Problem::Invalid {
            key: path.join("."),
            expected: Kind::StrMap.describe(),
        }),
        4 if path[2] == "env_http_headers" => leaf(path, 4, Kind::VarName, value),
        _ => leaf(path, 4, Kind::Str, value),
    }
}

fn check_mcp_server(path: &[String], value: &Value) -> Result<(), Problem> {
    if path.len() < 3 {
        return Err(Problem::Invalid {
            key: path.join("."),
            expected: "a table of server settings, e.g. [mcp_servers.NAME] with command = \"…\" or url = \"…\"".to_owned(),
        });
    }
    if !is_mcp_server_name(&path[1]) {
        return Err(Problem::Invalid {
            key: path[..2].join("."),
            expected: "a server name of letters, digits, `_` and `-` (it becomes part of the tools' names)".to_owned(),
        });
    }
    let field = &path[2];
    let Some((_, kind)) = MCP_SERVER.iter().find(|(k, _)| k == field) else {
        let valid: Vec<&str> = MCP_SERVER.iter().map(|(k, _)| *k).collect();
        return Err(unknown(&path[..3].join("."), field, &valid));
    };
    if let Kind::StrMap = kind {
        return check_str_map(path, value);
    }
    if field == "env_vars" {
        leaf(path, 3, *kind, value)?;
        let names = value.as_array().map(Vec::as_slice).unwrap_or_default();
        if !names.iter().all(|n| n.as_str().is_some_and(is_var_name)) {
            return Err(Problem::Invalid {
                key: path.join("."),
                expected: "a list of environment variable NAMES, e.g. [\"GITHUB_TOKEN\"]"
                    .to_owned(),
            });
        }
        return Ok(());
    }
    leaf(path, 3, *kind, value)
}

/// `[section.NAME]` tables whose keys are `fields`.
fn check_nested(
    path: &[String],
    value: &Value,
    fields: &[(&str, Kind)],
    shape: &str,
) -> Result<(), Problem> {
    if path.len() < 3 {
        return Err(Problem::Invalid {
            key: path.join("."),
            expected: format!("a table: {shape}"),
        });
    }
    let field = &path[2];
    let Some((_, kind)) = fields.iter().find(|(k, _)| k == field) else {
        let valid: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
        return Err(unknown(&path[..3].join("."), field, &valid));
    };
    leaf(path, 3, *kind, value)
}

/// A table of fixed keys at the top (`[loop_guard] max_repeats = 3`).
fn check_table(
    path: &[String],
    value: &Value,
    fields: &[(&str, Kind)],
    shape: &str,
) -> Result<(), Problem> {
    if path.len() < 2 {
        return Err(Problem::Invalid {
            key: path.join("."),
            expected: format!("a table: {shape}"),
        });
    }
    let field = &path[1];
    let Some((_, kind)) = fields.iter().find(|(k, _)| k == field) else {
        let valid: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
        return Err(unknown(&path[..2].join("."), field, &valid));
    };
    leaf(path, 2, *kind, value)
}

/// `[container]`: the table's keys, with the shapes of `host`, `memory`,
/// `mounts` and `env` checked as the engines would.
fn check_container(path: &[String], value: &Value) -> Result<(), Problem> {
    let shape = "[container] image = \"python:3.12-slim\"";
    match path.get(1).map(String::as_str) {
        Some("env") => {
            return match path.len() {
                2 => Err(Problem::Invalid {
                    key: path.join("."),
                    expected: Kind::StrMap.describe(),
                }),
                _ if !is_var_name(&path[2]) => Err(Problem::Invalid {
                    key: path[..3].join("."),
                    expected: "a variable name (letters, digits and `_`)".to_owned(),
                }),
                _ => leaf(path, 3, Kind::Str, value),
            };
        }
        Some(field @ ("host" | "memory" | "mounts")) if path.len() == 2 => {
            let fits = match field {
                "host" => value.as_str().is_some_and(is_engine_host),
                "memory" => value.as_str().is_some_and(is_memory_size),
                _ => value
                    .as_array()
                    .is_some_and(|m| m.iter().all(|m| m.as_str().is_some_and(is_mount))),
            };
            if !fits {
                let expected = match field {
                    "host" => {
                        "the engine's address: \"unix:///path/to.sock\", \"tcp://HOST:PORT\" or \"ssh://USER@HOST[:PORT]/path/to.sock\""
                    }
                    "memory" => "a size such as \"512m\" or \"2g\" (a number, then b, k, m or g)",
                    _ => {
                        "a list of \"SOURCE:TARGET\" or \"SOURCE:TARGET:ro\" with absolute paths (SOURCE may start with ~/), e.g. [\"/data:/data:ro\"]"
                    }
                };
                return Err(Problem::Invalid {
                    key: path.join("."),
                    expected: expected.to_owned(),
                });
            }
        }
        _ => {}
    }
    check_table(path, value, CONTAINER, shape)
}

fn is_engine_host(host: &str) -> bool {
    ["unix://", "tcp://", "ssh://"].iter().any(|scheme| {
        host.strip_prefix(scheme)
            .is_some_and(|rest| !rest.is_empty())
    })
}

fn is_memory_size(size: &str) -> bool {
    let digits = size.trim_end_matches(|c: char| "bBkKmMgG".contains(c));
    size.len() - digits.len() <= 1
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.bytes().any(|b| b != b'0')
}

/// `SOURCE:TARGET[:ro|rw]`, both absolute (`~/` allowed for the source).
fn is_mount(mount: &str) -> bool {
    let parts: Vec<&str> = mount.split(':').collect();
    let absolute = |p: &str| p.starts_with('/');
    match parts.as_slice() {
        [source, target] | [source, target, "ro" | "rw"] => {
            (absolute(source) || source.starts_with("~/")) && absolute(target)
        }
        _ => false,
    }
}

/// A key whose value is a single value at depth `depth`.
fn leaf(path: &[String], depth: usize, kind: Kind, value: &Value) -> Result<(), Problem> {
    if path.len() > depth || !kind.accepts(value) {
        return Err(Problem::Invalid {
            key: path[..depth.min(path.len())].join("."),
            expected: kind.describe(),
        });
    }
    Ok(())
}

fn unknown(full_key: &str, segment: &str, valid: &[&str]) -> Problem {
    Problem::Unknown {
        key: full_key.to_owned(),
        suggestion: suggest(segment, valid).map(|s| match full_key.rsplit_once('.') {
            Some((parent, _)) => format!("{parent}.{s}"),
            None => s.to_owned(),
        }),
        valid: valid.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn prefix(problem: Problem, parent: &[String]) -> Problem {
    let add = |key: String| format!("{}.{key}", parent.join("."));
    match problem {
        Problem::Unknown {
            key,
            suggestion,
            valid,
        } => Problem::Unknown {
            key: add(key),
            suggestion: suggestion.map(add),
            valid,
        },
        Problem::Invalid { key, expected } => Problem::Invalid {
            key: add(key),
            expected,
        },
        Problem::Denied { key, reason } => Problem::Denied {
            key: add(key),
            reason,
        },
    }
}

/// The closest known name to a misspelt one, if it is close enough.
pub(crate) fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// What the schema expects at a dotted key, for `-c` and `config set`: a
/// value given for a string key is taken as text even if it parses as TOML
/// of another type (`-c model=1.5`).
pub(crate) fn expects_string(path: &[String]) -> bool {
    let kind = match path {
        [top] => TOP.iter().find(|(k, _)| k == top).map(|(_, kind)| *kind),
        [p, _, field] if p == "model_providers" => PROVIDER
            .iter()
            .find(|(k, _)| k == field)
            .map(|(_, kind)| *kind),
        [p, _, _, _] if p == "model_providers" => Some(Kind::Str),
        [p, _, field] if p == "mcp_servers" => MCP_SERVER
            .iter()
            .find(|(k, _)| k == field)
            .map(|(_, kind)| *kind),
        [p, _, _, _] if p == "mcp_servers" => Some(Kind::Str),
        [p, field] if p == "container" => CONTAINER
            .iter()
            .find(|(k, _)| k == field)
            .map(|(_, kind)| *kind),
        [p, env, _] if p == "container" && env == "env" => Some(Kind::Str),
        [p, _, rest @ ..] if p == "profiles" => {
            return expects_string(rest);
        }
        [p, _, field] if p == "projects" && field == "trust_level" => Some(Kind::Str),
        _ => None,
    };
    matches!(kind, Some(Kind::Str | Kind::OneOf(..) | Kind::Url))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(key: &str) -> Vec<String> {
        key.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn accepts_the_documented_keys() {
        let ok = [
            ("model", json!("gpt-5")),
            ("harness", json!("markdown")),
            ("max_turns", json!(20)),
            ("temperature", json!(0.2)),
            ("temperature", json!(1)),
            (
                "model_providers.kunavo.base_url",
                json!("https://api.kunavo.com/v1"),
            ),
            ("model_providers.kunavo.wire_api", json!("messages")),
            ("model_providers.kunavo.http_headers.X-Org", json!("acme")),
            ("model_providers.kunavo.request_max_retries", json!(0)),
            (
                "languages.python.command",
                json!(["/venv/bin/python", "-X", "utf8"]),
            ),
            ("projects./home/u/p.trust_level", json!("trusted")),
            ("profiles.cheap.model", json!("small")),
            ("project_doc_max_bytes", json!(0)),
            (
                "project_doc_fallback_filenames",
                json!(["CLAUDE.md", ".rules"]),
            ),
            (
                "profiles.cheap.model_providers.x.base_url",
                json!("http://h/v1"),
            ),
        ];
        for (key, value) in ok {
            assert_eq!(check(&p(key), &value, Scope::User), Ok(()), "{key}");
        }
    }

    #[test]
    fn rejects_bad_values_naming_what_was_expected() {
        let bad = [
            (
                "harness",
                json!("xml"),
                "harness",
                "one of \"native\", \"markdown\", \"claude-code\", \"codex\", \"auto\"",
            ),
            (
                "max_turns",
                json!(0),
                "max_turns",
                "a whole number of at least 1",
            ),
            (
                "project_doc_fallback_filenames",
                json!(["docs/AGENTS.md"]),
                "project_doc_fallback_filenames",
                "an array of file names without a folder, e.g. [\"CLAUDE.md\"]",
            ),
            (
                "project_doc_fallback_filenames",
                json!([".."]),
                "project_doc_fallback_filenames",
                "an array of file names without a folder, e.g. [\"CLAUDE.md\"]",
            ),
            (
                "max_turns",
                json!("ten"),
                "max_turns",
                "a whole number of at least 1",
            ),
            (
                "temperature",
                json!(3),
                "temperature",
                "a number from 0 to 2",
            ),
            (
                "model_providers.k.wire_api",
                json!("grpc"),
                "model_providers.k.wire_api",
                "one of \"chat\", \"responses\", \"messages\"",
            ),
            (
                "model_providers.k.base_url",
                json!("api.k.com"),
                "model_providers.k.base_url",
                "an http:// or https:// URL",
            ),
            ("model.x", json!(1), "model", "a string"),
            (
                "model_providers",
                json!("k"),
                "model_providers",
                "a table of provider settings, e.g. [model_providers.ID] with base_url = \"…\"",
            ),
            (
                "languages.python.command",
                json!([]),
                "languages.python.command",
                "a list of strings: the program and its arguments, e.g. [\"/usr/bin/python3\"]",
            ),
        ];
        for (key, value, at, expected) in bad {
            assert_eq!(
                check(&p(key), &value, Scope::User),
                Err(Problem::Invalid {
                    key: at.into(),
                    expected: expected.into()
                }),
                "{key}"
            );
        }
    }

    #[test]
    fn unknown_keys_get_a_suggestion() {
        match check(&p("modle"), &json!("x"), Scope::User) {
            Err(Problem::Unknown {
                key, suggestion, ..
            }) => {
                assert_eq!(
                    (key.as_str(), suggestion.as_deref()),
                    ("modle", Some("model"))
                );
            }
            other => panic!("{other:?}"),
        }
        match check(&p("model_providers.k.base_ur"), &json!("x"), Scope::User) {
            Err(Problem::Unknown {
                key, suggestion, ..
            }) => {
                assert_eq!(key, "model_providers.k.base_ur");
                assert_eq!(suggestion.as_deref(), Some("model_providers.k.base_url"));
            }
            other => panic!("{other:?}"),
        }
        match check(&p("profiles.cheap.max_turn"), &json!(3), Scope::User) {
            Err(Problem::Unknown {
                key, suggestion, ..
            }) => {
                assert_eq!(key, "profiles.cheap.max_turn");
                assert_eq!(suggestion.as_deref(), Some("profiles.cheap.max_turns"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            check(&p("frobnicate"), &json!(1), Scope::User),
            Err(Problem::Unknown {
                suggestion: None,
                ..
            })
        ));
    }

    #[test]
    fn project_files_cannot_redirect_requests_or_trust_themselves() {
        for key in [
            "model_provider",
            "model_providers.openai.base_url",
            "model_providers.x.env_key",
            "projects./p.trust_level",
            "os",
        ] {
            assert!(
                matches!(
                    check(&p(key), &json!("x"), Scope::Project),
                    Err(Problem::Denied { .. })
                ),
                "{key}"
            );
        }
        assert_eq!(check(&p("model"), &json!("x"), Scope::Project), Ok(()));
        assert!(matches!(
            check(&p("profiles.a.model"), &json!("x"), Scope::Project),
            Err(Problem::Unknown { .. })
        ));
        assert!(matches!(
            check(&p("profiles.a.profiles.b.model"), &json!("x"), Scope::User),
            Err(Problem::Unknown { .. })
        ));
    }

    #[test]
    fn string_keys_are_known_for_override_coercion() {
        assert!(expects_string(&p("model")));
        assert!(expects_string(&p("model_providers.k.base_url")));
        assert!(expects_string(&p("profiles.c.model")));
        assert!(!expects_string(&p("max_turns")));
        assert!(!expects_string(&p("languages.python.command")));
        assert!(expects_string(&p("container.memory")));
        assert!(expects_string(&p("container.env.LANG")));
        assert!(!expects_string(&p("container.pids")));
    }

    #[test]
    fn container_keys_are_checked_as_the_engines_read_them() {
        let ok = |key: &str, value: Value| {
            assert_eq!(check(&p(key), &value, Scope::User), Ok(()), "{key}")
        };
        let bad = |key: &str, value: Value, says: &str| match check(&p(key), &value, Scope::User) {
            Err(Problem::Invalid { key: k, expected }) => {
                assert_eq!(k, key);
                assert!(expected.contains(says), "{key}: {expected}");
            }
            other => panic!("{key}: {other:?}"),
        };
        ok("container.engine", json!("podman"));
        ok("container.image", json!("localhost/oi:bookworm"));
        ok("container.host", json!("unix:///run/podman/podman.sock"));
        ok(
            "container.host",
            json!("ssh://me@box/run/user/1000/podman/podman.sock"),
        );
        ok("container.memory", json!("512m"));
        ok("container.memory", json!("2G"));
        ok("container.cpus", json!(1.5));
        ok("container.pids", json!(256));
        ok("container.network", json!("bridge"));
        ok(
            "container.mounts",
            json!(["/data:/data:ro", "~/models:/models"]),
        );
        ok("container.env.LANG", json!("C.UTF-8"));
        ok("container.sync_max_file_mb", json!(200));
        bad("container.engine", json!("lxc"), "\"podman\"");
        bad("container.host", json!("box:2375"), "tcp://");
        bad("container.memory", json!("lots"), "512m");
        bad("container.memory", json!("0m"), "512m");
        bad("container.mounts", json!(["data:/data"]), "absolute");
        bad("container.mounts", json!(["/data:/data:rx"]), "absolute");
        bad("container.env", json!("A=1"), "NAME = \"value\"");
        bad("container.env.1X", json!("1"), "variable name");
        assert!(matches!(
            check(&p("container.imag"), &json!("x"), Scope::User),
            Err(Problem::Unknown { suggestion: Some(s), .. }) if s == "container.image"
        ));
        // A project may choose its image, not reach beyond the container.
        ok("container.image", json!("x"));
        assert_eq!(
            check(&p("container.image"), &json!("x"), Scope::Project),
            Ok(())
        );
        for key in ["container.host", "container.mounts", "container.network"] {
            assert!(
                matches!(
                    check(&p(key), &json!("x"), Scope::Project),
                    Err(Problem::Denied { .. })
                ),
                "{key}"
            );
        }
    }
}
