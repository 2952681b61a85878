//! `--local`: find the model servers running on this machine, pick a model,
//! and point the session at it.
//!
//! The usual ports are asked at once (Ollama 11434, LM Studio 1234,
//! llama.cpp 8080, vLLM 8000, Jan 1337, and `OLLAMA_HOST`);
//! `OI_LOCAL_SERVERS` (comma-separated URLs) replaces that list. The
//! context window is asked of the server later, by the agent; the harness
//! is chosen for the model (small models get the markdown harness).

use std::io::IsTerminal;

use oi_providers::discover::{LOCAL_PORTS, LocalServer, find_local_servers};

use crate::cli::SessionOptions;
use crate::error::CliError;

/// The server and model `--local` settled on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub kind: String,
    pub base_url: String,
    pub model: String,
    /// Whether the model made a real tool call when asked to (`None`: not
    /// asked: the harness was set, or the model is small).
    pub calls_tools: Option<bool>,
}

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

/// Finds the servers and settles on a model: `--model` if given, the only
/// one, or the user's pick in a terminal.
pub async fn choose(options: &SessionOptions) -> Result<Choice, CliError> {
    let places = places();
    let servers: Vec<LocalServer> = find_local_servers(&places)
        .await
        .into_iter()
        .filter(|s| !s.models.is_empty())
        .collect();
    if servers.is_empty() {
        return Err(CliError::usage(
            format!(
                "--local: no model server with a model answered on this machine (looked for {})",
                describe(&places)
            ),
            "start one (e.g. `ollama serve` and `ollama pull qwen2.5-coder:7b`, LM Studio's server, or llama.cpp's `llama-server -m MODEL.gguf`), or give its address with `--api-base URL`",
        ));
    }
    let pairs: Vec<(&LocalServer, &String)> = servers
        .iter()
        .flat_map(|s| s.models.iter().map(move |m| (s, m)))
        .collect();
    let pick = |server: &LocalServer, model: &str| Choice {
        kind: server.kind.clone(),
        base_url: server.base_url.clone(),
        model: model.to_owned(),
        calls_tools: None,
    };
    let mut choice = pick_model(options, &servers, &pairs, &pick)?;
    choice.calls_tools = probe_tools(options, &choice).await?;
    Ok(choice)
}

/// With the harness left to oi and a model that is not small (those get
/// the markdown harness anyway): whether it makes real tool calls, asked
/// once per server and model and remembered in oi's cache folder.
async fn probe_tools(options: &SessionOptions, choice: &Choice) -> Result<Option<bool>, CliError> {
    if oi_config::is_small_model(&choice.model) {
        return Ok(None);
    }
    let loaded = crate::session::load_config(options)?;
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

/// `--model`, the only model, or the user's pick.
fn pick_model(
    options: &SessionOptions,
    servers: &[LocalServer],
    pairs: &[(&LocalServer, &String)],
    pick: &dyn Fn(&LocalServer, &str) -> Choice,
) -> Result<Choice, CliError> {
    if let Some(wanted) = options.model.as_deref().filter(|m| !m.is_empty()) {
        if let Some((server, model)) = pairs.iter().find(|(_, m)| m.as_str() == wanted) {
            return Ok(pick(server, model));
        }
        // Not listed (Ollama pulls on demand, aliases): the only server.
        if servers.len() == 1 {
            return Ok(pick(&servers[0], wanted));
        }
        return Err(CliError::usage(
            format!(
                "--local --model {wanted}: none of the servers found lists it ({})",
                servers
                    .iter()
                    .map(|s| format!("{} at {}", s.kind, s.base_url))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "`interpreter --local models` lists what they serve",
        ));
    }
    if pairs.len() == 1 {
        return Ok(pick(pairs[0].0, pairs[0].1));
    }
    let labels: Vec<String> = pairs
        .iter()
        .map(|(s, m)| format!("{m}  ({}, {})", s.kind, s.base_url))
        .collect();
    let interactive =
        std::io::stdin().is_terminal() && std::io::stdout().is_terminal() && !options.plain;
    if !interactive {
        return Err(CliError::usage(
            format!(
                "--local found {} models and cannot ask which one here (no terminal):\n  {}",
                labels.len(),
                labels.join("\n  ")
            ),
            "choose with `--local --model NAME`",
        ));
    }
    let picker = oi_tui::dialog::Picker::new("Local model", labels.clone(), None);
    let picked = {
        let mut out = std::io::stdout();
        oi_tui::dialog::pick(&mut out, picker)?
    };
    let Some(picked) = picked else {
        return Err(CliError::usage(
            "--local: no model was picked",
            "pick one, or choose with `--local --model NAME`",
        ));
    };
    let index = labels.iter().position(|l| *l == picked);
    match index {
        Some(i) => Ok(pick(pairs[i].0, pairs[i].1)),
        // A name typed instead of picked: on the first server.
        None => Ok(pick(&servers[0], picked.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_become_urls_to_reach() {
        assert_eq!(normalize("0.0.0.0:11434"), "http://127.0.0.1:11434");
        assert_eq!(normalize("http://gpu-box:11434/"), "http://gpu-box:11434");
        assert_eq!(normalize("localhost:8080"), "http://localhost:8080");
    }
}
