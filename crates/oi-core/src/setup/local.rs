//! A model served on this machine (`--local`): find the servers running
//! here, settle on a model, and learn whether it calls tools.
//!
//! The usual ports are asked at once (Ollama 11434, LM Studio 1234,
//! llama.cpp 8080, vLLM 8000, Jan 1337, and `OLLAMA_HOST`);
//! `OI_LOCAL_SERVERS` (comma-separated URLs) replaces that list. The
//! context window is asked of the server later, by the agent; the harness
//! follows from the tool-call probe (small models get the markdown harness
//! from the configuration's own rule).

use oi_config::FlagSetting;
use oi_providers::discover::{LOCAL_PORTS, LocalServer, find_local_servers};

use super::{SessionRequest, SetupError, load_config};

/// The server and model settled on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalChoice {
    /// What kind of server it is (`Ollama`, `llama.cpp` …).
    pub kind: String,
    pub base_url: String,
    pub model: String,
    /// Whether the model made a real tool call when asked to (`None`: not
    /// asked: the harness was set, or the model is small).
    pub calls_tools: Option<bool>,
    /// What asked for it (`--local`), for the settings it makes.
    pub from: String,
    /// No server answered: oi runs `model` itself (the built-in model).
    pub builtin: bool,
}

impl LocalChoice {
    /// The configuration this choice sets: the provider that follows
    /// `api_base`, the model, and the harness the probe found.
    pub(super) fn settings(&self) -> Vec<FlagSetting> {
        if self.builtin {
            return vec![
                FlagSetting::new(&self.from, "model_provider", oi_config::BUILTIN_PROVIDER),
                FlagSetting::new(&self.from, "model", self.model.as_str()),
            ];
        }
        let mut settings = vec![
            FlagSetting::new(&self.from, "model_provider", oi_config::API_BASE_PROVIDER),
            FlagSetting::new(&self.from, "model", self.model.as_str()),
        ];
        if let Some(tools) = self.calls_tools {
            let harness = if tools { "native" } else { "markdown" };
            settings.push(FlagSetting::new(&self.from, "harness", harness));
        }
        settings
    }

    /// `--local: MODEL on KIND at URL (…)`
    pub(super) fn describe(&self) -> String {
        if self.builtin {
            return format!(
                "{}: no model server is running here ({}), so oi runs {} itself",
                self.from, self.base_url, self.model
            );
        }
        let tools = match self.calls_tools {
            Some(true) => " (it calls tools: native harness)",
            Some(false) => " (it made no tool call when asked: markdown harness)",
            None => "",
        };
        format!(
            "{}: {} on {} at {}{tools}",
            self.from, self.model, self.kind, self.base_url
        )
    }
}

/// Asks the user to pick one of several models (the front end's picker):
/// the title and the choices; `None` when nothing was picked.
pub type Picker<'a> = &'a mut dyn FnMut(&str, &[String]) -> std::io::Result<Option<String>>;

/// `host:port`, `http://host:port` or `0.0.0.0:port` as a URL to reach.
fn normalize(address: &str) -> String {
    let address = address.trim().trim_end_matches('/');
    let with_scheme = if address.contains("://") {
        address.to_owned()
    } else {
        format!("http://{address}")
    };
    // A server listening on every address is reached on loopback.
    with_scheme.replace("://0.0.0.0", "://127.0.0.1")
}

/// Where to look: `OI_LOCAL_SERVERS`, else `OLLAMA_HOST` and the usual
/// ports on 127.0.0.1.
fn places() -> Vec<(String, String)> {
    if let Ok(list) = std::env::var("OI_LOCAL_SERVERS")
        && !list.trim().is_empty()
    {
        return list
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                let url = normalize(s);
                let url = url.strip_suffix("/v1").unwrap_or(&url).to_owned();
                (url, "OpenAI-compatible server".to_owned())
            })
            .collect();
    }
    let mut places = Vec::new();
    if let Ok(host) = std::env::var("OLLAMA_HOST")
        && !host.trim().is_empty()
    {
        places.push((normalize(&host), "Ollama".to_owned()));
    }
    for (port, kind) in LOCAL_PORTS {
        let url = format!("http://127.0.0.1:{port}");
        if !places.iter().any(|(u, _)| *u == url) {
            places.push((url, (*kind).to_owned()));
        }
    }
    places
}

fn describe(places: &[(String, String)]) -> String {
    places
        .iter()
        .map(|(url, kind)| format!("{kind} at {url}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The servers on this machine that serve at least one model, and a
/// description of where they were looked for.
pub async fn servers() -> (Vec<LocalServer>, String) {
    let places = places();
    let servers = find_local_servers(&places)
        .await
        .into_iter()
        .filter(|s| !s.models.is_empty())
        .collect();
    (servers, describe(&places))
}

/// Finds the servers and settles on a model: `model` if given, the only
/// one, or the one `pick` returns (without a picker, several models are an
/// error that lists them). `request` is the rest of the session's request,
/// for the configuration the tool probe consults.
pub async fn choose(
    request: &SessionRequest,
    from: &str,
    model: Option<&str>,
    pick: Option<Picker<'_>>,
) -> Result<LocalChoice, SetupError> {
    let (servers, places) = servers().await;
    if servers.is_empty() {
        // No server: the built-in model, when this build has its engine.
        if oi_builtin::AVAILABLE {
            return Ok(LocalChoice {
                kind: "built-in".to_owned(),
                base_url: format!("looked for {places}"),
                model: model
                    .filter(|m| !m.is_empty())
                    .unwrap_or(oi_config::BUILTIN_DEFAULT_MODEL)
                    .to_owned(),
                calls_tools: None,
                from: from.to_owned(),
                builtin: true,
            });
        }
        return Err(SetupError::NoLocalServer {
            from: from.to_owned(),
            places,
        });
    }
    let mut choice = pick_model(from, model, &servers, pick)?;
    choice.calls_tools = probe_tools(request, &choice).await?;
    Ok(choice)
}

/// With the harness left to oi and a model that is not small (those get
/// the markdown harness anyway): whether it makes real tool calls, asked
/// once per server and model and remembered in oi's cache folder.
async fn probe_tools(
    request: &SessionRequest,
    choice: &LocalChoice,
) -> Result<Option<bool>, SetupError> {
    if oi_config::is_small_model(&choice.model) {
        return Ok(None);
    }
    let loaded = load_config(request)?;
    if !matches!(
        loaded.origins.get("harness"),
        None | Some(oi_config::Origin::Auto { .. })
    ) {
        return Ok(None);
    }
    let cache = loaded.home.join("cache").join("tool-calls.json");
    let key = format!("{} {}", choice.base_url, choice.model);
    let mut known: std::collections::BTreeMap<String, bool> = fs_err::read_to_string(&cache)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if let Some(answer) = known.get(&key) {
        return Ok(Some(*answer));
    }
    let config = oi_providers::ProviderConfig::new(choice.kind.clone(), choice.base_url.clone());
    let Some(answer) = oi_providers::discover::calls_tools(&config, &choice.model).await else {
        return Ok(None);
    };
    known.insert(key, answer);
    if let Some(parent) = cache.parent() {
        let _ = fs_err::create_dir_all(parent);
    }
    if let Ok(text) = serde_json::to_string_pretty(&known) {
        let _ = fs_err::write(&cache, text);
    }
    Ok(Some(answer))
}

/// `model`, the only model, or the user's pick.
fn pick_model(
    from: &str,
    model: Option<&str>,
    servers: &[LocalServer],
    pick: Option<Picker<'_>>,
) -> Result<LocalChoice, SetupError> {
    let choice = |server: &LocalServer, model: &str| LocalChoice {
        kind: server.kind.clone(),
        base_url: server.base_url.clone(),
        model: model.to_owned(),
        calls_tools: None,
        from: from.to_owned(),
        builtin: false,
    };
    let pairs: Vec<(&LocalServer, &String)> = servers
        .iter()
        .flat_map(|s| s.models.iter().map(move |m| (s, m)))
        .collect();
    if let Some(wanted) = model.filter(|m| !m.is_empty()) {
        if let Some((server, model)) = pairs.iter().find(|(_, m)| m.as_str() == wanted) {
            return Ok(choice(server, model));
        }
        // Not listed (Ollama pulls on demand, aliases): the only server.
        if let [only] = servers {
            return Ok(choice(only, wanted));
        }
        return Err(SetupError::LocalModelNotServed {
            from: from.to_owned(),
            model: wanted.to_owned(),
            servers: servers
                .iter()
                .map(|s| format!("{} at {}", s.kind, s.base_url))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    if let [(server, model)] = pairs[..] {
        return Ok(choice(server, model));
    }
    let labels: Vec<String> = pairs
        .iter()
        .map(|(s, m)| format!("{m}  ({}, {})", s.kind, s.base_url))
        .collect();
    let Some(pick) = pick else {
        return Err(SetupError::LocalModelNotChosen {
            from: from.to_owned(),
            models: labels,
        });
    };
    let Some(picked) = pick("Local model", &labels)? else {
        return Err(SetupError::LocalNothingPicked {
            from: from.to_owned(),
        });
    };
    match labels.iter().position(|l| *l == picked) {
        Some(i) => Ok(choice(pairs[i].0, pairs[i].1)),
        // A name typed instead of picked: on the first server.
        None => Ok(choice(&servers[0], picked.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_server_the_choice_is_the_built_in_model() {
        let choice = LocalChoice {
            kind: "built-in".into(),
            base_url: "looked for Ollama at http://127.0.0.1:11434".into(),
            model: "qwen2.5-coder-0.5b".into(),
            calls_tools: None,
            from: "--local".into(),
            builtin: true,
        };
        let settings = choice.settings();
        assert_eq!(settings.len(), 2);
        assert_eq!(settings[0].key, "model_provider");
        assert_eq!(settings[0].value, serde_json::json!("builtin"));
        assert_eq!(settings[1].value, serde_json::json!("qwen2.5-coder-0.5b"));
        let said = choice.describe();
        assert!(said.contains("no model server is running here"), "{said}");
        assert!(said.contains("oi runs qwen2.5-coder-0.5b itself"), "{said}");
    }

    #[test]
    fn addresses_become_urls_to_reach() {
        assert_eq!(normalize("0.0.0.0:11434"), "http://127.0.0.1:11434");
        assert_eq!(normalize("http://gpu-box:11434/"), "http://gpu-box:11434");
        assert_eq!(normalize("localhost:8080"), "http://localhost:8080");
    }

    fn server(kind: &str, models: &[&str]) -> LocalServer {
        LocalServer {
            kind: kind.to_owned(),
            base_url: format!("http://127.0.0.1:1/{kind}"),
            models: models.iter().map(|m| (*m).to_owned()).collect(),
        }
    }

    #[test]
    fn a_model_is_taken_as_given_the_only_one_or_picked() {
        let one = [server("Ollama", &["qwen"])];
        assert_eq!(
            pick_model("--local", None, &one, None).unwrap().model,
            "qwen"
        );
        // Not listed, but the only server pulls on demand.
        assert_eq!(
            pick_model("--local", Some("llama3"), &one, None)
                .unwrap()
                .model,
            "llama3"
        );
        let two = [server("Ollama", &["qwen"]), server("LM Studio", &["phi"])];
        let error = pick_model("--local", None, &two, None).unwrap_err();
        assert!(
            matches!(&error, SetupError::LocalModelNotChosen { models, .. } if models.len() == 2),
            "{error}"
        );
        let mut second = |_: &str, labels: &[String]| Ok(Some(labels[1].clone()));
        let picked = pick_model("--local", None, &two, Some(&mut second)).unwrap();
        assert_eq!(
            (picked.kind.as_str(), picked.model.as_str()),
            ("LM Studio", "phi")
        );
        let mut nothing = |_: &str, _: &[String]| Ok(None);
        assert!(matches!(
            pick_model("--local", None, &two, Some(&mut nothing)),
            Err(SetupError::LocalNothingPicked { .. })
        ));
        assert!(matches!(
            pick_model("--local", Some("mistral"), &two, None),
            Err(SetupError::LocalModelNotServed { .. })
        ));
    }
}
