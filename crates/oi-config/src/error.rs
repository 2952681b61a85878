//! Configuration errors: each says where (file:line, flag, variable), what
//! was wrong, and how to fix it.

use std::path::PathBuf;

use crate::origin::{Origin, display_path};

/// A configuration problem that stops oi from starting.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}:{line}:{column}: invalid TOML: {message}", display_path(path))]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
        /// The offending line, for context.
        source_line: String,
    },
    #[error("{origin}: unknown key `{key}`")]
    UnknownKey {
        origin: Box<Origin>,
        key: String,
        suggestion: Option<String>,
        valid: Vec<String>,
    },
    #[error("{origin}: `{key}` = {value} is not valid: expected {expected}")]
    InvalidValue {
        origin: Box<Origin>,
        key: String,
        value: String,
        expected: String,
    },
    #[error("{origin}: model_provider `{id}` is not defined")]
    UnknownProvider {
        origin: Box<Origin>,
        id: String,
        known: Vec<String>,
    },
    #[error("{origin}: model provider `{id}` has no `base_url`")]
    MissingBaseUrl { origin: Origin, id: String },
    #[error("the API key for {provider} is missing: `${var}` is not set")]
    MissingApiKey { provider: String, var: String },
    #[error("no model is set for model provider `{provider}`")]
    MissingModel { provider: String },
    #[error("-c `{argument}`: expected KEY=VALUE")]
    MalformedOverride { argument: String, problem: String },
    #[error("profile `{name}` does not exist")]
    UnknownProfile {
        name: String,
        searched: Vec<PathBuf>,
        available: Vec<String>,
    },
    #[error("profile `{name}` is one of Open Interpreter's Python profiles, which oi cannot run")]
    PythonProfile { name: String },
    #[error("cannot read {}: {source}", display_path(path))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} is not a TOML file: it holds binary data, not text",
        display_path(path)
    )]
    NotText { path: PathBuf },
    #[error("cannot write {}: {source}", display_path(path))]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the home directory is unknown: neither `$INTERPRETER_HOME` nor `$HOME` is set")]
    NoHome,
    #[error("there is no MCP server `{name}` in {}", display_path(path))]
    UnknownMcpServer {
        name: String,
        path: PathBuf,
        known: Vec<String>,
    },
}

/// `line` with every word that looks like an API key (`sk-…`, or a long
/// run of letters and digits) replaced by `…`, so that a line quoted back
/// to the user never shows a key.
fn mask_key_like(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let looks_like_key = word.starts_with("sk-")
            || (word.len() >= 20
                && word.chars().any(|c| c.is_ascii_digit())
                && word.chars().any(|c| c.is_ascii_alphabetic()));
        out.push_str(if looks_like_key { "…" } else { word });
        word.clear();
    };
    for c in line.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

impl ConfigError {
    /// How to fix it, in one line.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Syntax { source_line, .. } => {
                format!(
                    "fix the TOML on that line: `{}`",
                    mask_key_like(source_line.trim())
                )
            }
            Self::UnknownKey {
                suggestion: Some(s),
                ..
            } => format!("did you mean `{s}`?"),
            Self::UnknownKey { valid, .. } if !valid.is_empty() => {
                format!("valid keys here: {}", valid.join(", "))
            }
            Self::UnknownKey { .. } => return None,
            Self::InvalidValue { key, origin, .. } => match &**origin {
                Origin::Flag { flag } if flag.starts_with('-') => {
                    format!("give `{flag}` a valid value")
                }
                Origin::Flag { .. } => format!("give `{key}` a valid value"),
                Origin::Override => format!("correct the `-c {key}=…` argument"),
                Origin::Env { var } => format!("correct `${var}`, or unset it"),
                _ => format!("change `{key}`, or remove it to use the default"),
            },
            Self::UnknownProvider { known, id, .. } => format!(
                "define it as `[model_providers.{id}]` with `base_url` (and `env_key`, `wire_api`), or use one of: {}",
                known.join(", ")
            ),
            Self::MissingBaseUrl { id, .. } => format!(
                "add `base_url = \"https://…/v1\"` under `[model_providers.{id}]`"
            ),
            Self::MissingApiKey { var, .. } => {
                format!("set it (`export {var}=…`), or pass the key with `--api-key`")
            }
            Self::MissingModel { .. } => {
                "pass `--model NAME` or set `model` in the config; `interpreter models` lists what the server offers".to_owned()
            }
            Self::MalformedOverride { problem, .. } => problem.clone(),
            Self::PythonProfile { .. } => "write its settings as TOML (`model = \"…\"`, `temperature = 0.2` …) in ~/.openinterpreter/profiles/NAME.toml; docs/coming-from.md lists the keys".to_owned(),
            Self::UnknownProfile {
                searched,
                available,
                ..
            } => {
                let places = searched
                    .iter()
                    .map(|p| display_path(p))
                    .collect::<Vec<_>>()
                    .join(" and ");
                if available.is_empty() {
                    format!("no profiles are defined; oi looked in {places}")
                } else {
                    format!(
                        "available profiles: {} (oi looked in {places})",
                        available.join(", ")
                    )
                }
            }
            Self::NotText { path } => format!(
                "replace it with a TOML file, or move it away to start from the defaults (`mv {0} {0}.bak`)",
                display_path(path)
            ),
            Self::Read { .. } | Self::Write { .. } => {
                "check that the file exists and that you may read and write it".to_owned()
            }
            Self::NoHome => {
                "set `INTERPRETER_HOME` to the folder for oi's configuration".to_owned()
            }
            Self::UnknownMcpServer { known, .. } if known.is_empty() => {
                "it has no [mcp_servers] at all; `interpreter mcp list` shows those of every file".to_owned()
            }
            Self::UnknownMcpServer { known, .. } => {
                format!("the servers configured there: {}", known.join(", "))
            }
        })
    }
}
