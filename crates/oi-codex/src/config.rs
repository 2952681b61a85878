//! Codex's configuration keys, as a Codex client passes them (`--config
//! key=value`), read as oi's: each means what it means to Codex, or is
//! accepted with a one-line notice saying what oi does instead — never an
//! "unknown key" failure for a key Codex's SDK sends.

use serde_json::Value;

/// What one `key=value` argument becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// The argument in oi's terms (`None`: nothing to set).
    pub argument: Option<String>,
    /// What to tell the user, once, when oi does something else.
    pub notice: Option<String>,
}

impl Translated {
    fn same(argument: &str) -> Self {
        Self {
            argument: Some(argument.to_owned()),
            notice: None,
        }
    }
}

/// `argument` (`key=value`, the value in TOML) in oi's terms: Codex's own
/// keys are translated, anything else passes unchanged (and oi's
/// configuration checks it).
pub fn translate(argument: &str) -> Translated {
    let Some((key, raw)) = argument.split_once('=') else {
        return Translated::same(argument);
    };
    let key = key.trim();
    let value = parse_value(raw.trim());
    let text = || {
        value
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| raw.trim().to_owned())
    };
    match key {
        "openai_base_url" => Translated {
            argument: Some(format!(
                "model_providers.openai.base_url={}",
                Value::String(text())
            )),
            notice: None,
        },
        "sandbox_mode" => Translated {
            argument: Some(format!("sandbox={}", Value::String(text()))),
            notice: None,
        },
        "sandbox_workspace_write.network_access" => Translated {
            argument: Some(format!(
                "network={}",
                value
                    .as_bool()
                    .map_or_else(|| raw.trim().to_owned(), |b| b.to_string())
            )),
            notice: None,
        },
        "approval_policy" => {
            let (oi, notice) = match text().as_str() {
                "untrusted" => (
                    "ask",
                    "approval_policy = \"untrusted\": oi asks before every run (approval = \"ask\")",
                ),
                "on-request" | "on-failure" => (
                    "auto",
                    "approval_policy: oi runs code without asking except risky code, which always needs a person (approval = \"auto\")",
                ),
                "never" => (
                    "auto",
                    "approval_policy = \"never\": oi runs code without asking, but risky code is never run without a person; the model is told and goes on without it (approval = \"auto\")",
                ),
                other => {
                    return Translated {
                        argument: Some(format!("approval={}", Value::String(other.to_owned()))),
                        notice: None,
                    };
                }
            };
            Translated {
                argument: Some(format!("approval=\"{oi}\"")),
                notice: Some(notice.to_owned()),
            }
        }
        "model_reasoning_effort" => Translated {
            argument: None,
            notice: Some(format!(
                "model_reasoning_effort = \"{}\": oi does not set a reasoning effort; the model's default is used",
                text()
            )),
        },
        "web_search" | "tools.web_search" => Translated {
            argument: None,
            notice: Some(format!(
                "{key} = \"{}\": oi has no web search tool; code can fetch pages when the network is on",
                text()
            )),
        },
        _ => Translated::same(argument),
    }
}

/// Every argument in oi's terms, in order, and the notices to show.
pub fn translate_all(arguments: &[String]) -> (Vec<String>, Vec<String>) {
    let mut translated = Vec::new();
    let mut notices = Vec::new();
    for argument in arguments {
        let t = translate(argument);
        translated.extend(t.argument);
        notices.extend(t.notice);
    }
    (translated, notices)
}

/// A TOML value as Codex clients write them: a quoted string, a boolean, a
/// number; anything else as its text.
fn parse_value(raw: &str) -> Value {
    if raw.starts_with('"')
        && let Ok(value) = serde_json::from_str::<Value>(raw)
    {
        return value;
    }
    if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Value::String(inner.to_owned());
    }
    match raw {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn argument(text: &str) -> Option<String> {
        translate(text).argument
    }

    #[test]
    fn codex_keys_become_oi_settings() {
        assert_eq!(
            argument("openai_base_url=\"http://127.0.0.1:9/v1\"").as_deref(),
            Some("model_providers.openai.base_url=\"http://127.0.0.1:9/v1\"")
        );
        assert_eq!(
            argument("sandbox_workspace_write.network_access=false").as_deref(),
            Some("network=false")
        );
        assert_eq!(
            argument("sandbox_mode=\"read-only\"").as_deref(),
            Some("sandbox=\"read-only\"")
        );
        assert_eq!(
            argument("approval_policy=\"never\"").as_deref(),
            Some("approval=\"auto\"")
        );
        assert_eq!(
            argument("approval_policy=\"untrusted\"").as_deref(),
            Some("approval=\"ask\"")
        );
        // oi's own keys pass as they are.
        assert_eq!(argument("max_turns=9").as_deref(), Some("max_turns=9"));
    }

    #[test]
    fn what_oi_does_otherwise_is_said() {
        let t = translate("model_reasoning_effort=\"high\"");
        assert_eq!(t.argument, None);
        assert!(
            t.notice
                .unwrap()
                .contains("oi does not set a reasoning effort")
        );
        let t = translate("web_search=\"live\"");
        assert_eq!(t.argument, None);
        assert!(t.notice.unwrap().contains("no web search tool"));
        let t = translate("approval_policy=\"never\"");
        assert!(
            t.notice
                .unwrap()
                .contains("risky code is never run without a person")
        );
    }
}
