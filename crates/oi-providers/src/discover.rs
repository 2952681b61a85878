//! What a model server can tell about itself: the context window a model
//! is served with, and which servers run on this machine.
//!
//! Servers on this machine each have their own ways: llama.cpp reports
//! `n_ctx` under `GET /props` and in its model list; Ollama under
//! `POST /api/show`; vLLM lists `max_model_len`; LM Studio
//! `loaded_context_length` (its `/api/v0` API); OpenRouter `context_length`.
//! Every question is short (a couple of seconds at most) and a server that
//! does not answer one is simply asked the next.

use std::time::Duration;

use serde_json::Value;

use crate::ProviderConfig;

/// How long one question may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// The base URL's root: without a trailing `/v1` (or `/api/v0`).
pub fn server_root(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    let base = base.strip_suffix("/api/v0").unwrap_or(base);
    base.to_owned()
}

fn http(url: &str) -> reqwest::Client {
    crate::transport::client_for(
        url,
        reqwest::Client::builder()
            .timeout(ASK_TIMEOUT)
            .connect_timeout(ASK_TIMEOUT),
    )
}

async fn get_json(http: &reqwest::Client, url: &str, config: &ProviderConfig) -> Option<Value> {
    let mut builder = http.get(url);
    if let Some(key) = &config.api_key {
        builder = builder.bearer_auth(key);
    }
    let response = builder.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

async fn post_json(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    config: &ProviderConfig,
) -> Option<Value> {
    let mut builder = http.post(url).json(body);
    if let Some(key) = &config.api_key {
        builder = builder.bearer_auth(key);
    }
    let response = builder.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

fn as_window(value: Option<&Value>) -> Option<u32> {
    let n = value?.as_u64()?;
    u32::try_from(n).ok().filter(|n| *n >= 256)
}

/// The context window a model list entry states (vLLM, llama.cpp, LM
/// Studio, OpenRouter spell it differently).
fn window_of_entry(entry: &Value) -> Option<u32> {
    as_window(entry.get("max_model_len"))
        .or_else(|| as_window(entry.pointer("/meta/n_ctx")))
        .or_else(|| as_window(entry.get("loaded_context_length")))
        .or_else(|| as_window(entry.get("context_length")))
        .or_else(|| as_window(entry.get("max_context_length")))
}

/// The entry for `model` in an OpenAI-style list (`data` or `models`):
/// the one whose id matches, or the only one.
fn entry_for<'a>(list: &'a Value, model: &str) -> Option<&'a Value> {
    let entries = list
        .get("data")
        .or_else(|| list.get("models"))
        .and_then(Value::as_array)?;
    let id = |e: &Value| {
        e.get("id")
            .or_else(|| e.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    entries
        .iter()
        .find(|e| id(e).as_deref() == Some(model))
        .or_else(|| (entries.len() == 1).then(|| &entries[0]))
}

/// Ollama's `/api/show`: the `num_ctx` the model is run with if set, else
/// the context length it was trained for.
fn window_of_ollama_show(show: &Value) -> Option<u32> {
    let from_parameters = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|p| {
            p.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<u32>().ok())
                    .flatten()
            })
        });
    from_parameters.or_else(|| {
        show.get("model_info")?
            .as_object()?
            .iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| as_window(Some(v)))
    })
}

/// The context window `model` is served with, as the server says; `None`
/// when it does not say.
pub async fn context_window(config: &ProviderConfig, model: &str) -> Option<u32> {
    let http = http(&config.base_url);
    let root = server_root(&config.base_url);
    // llama.cpp: what the server runs with, whatever the model could do.
    if let Some(props) = get_json(&http, &format!("{root}/props"), config).await
        && let Some(n) = as_window(props.pointer("/default_generation_settings/n_ctx"))
            .or_else(|| as_window(props.get("n_ctx")))
    {
        return Some(n);
    }
    if let Some(list) = get_json(&http, &config.endpoint("models"), config).await
        && let Some(n) = entry_for(&list, model).and_then(window_of_entry)
    {
        return Some(n);
    }
    if let Some(show) = post_json(
        &http,
        &format!("{root}/api/show"),
        &serde_json::json!({ "model": model }),
        config,
    )
    .await
        && let Some(n) = window_of_ollama_show(&show)
    {
        return Some(n);
    }
    let list = get_json(&http, &format!("{root}/api/v0/models"), config).await?;
    entry_for(&list, model).and_then(window_of_entry)
}

/// Whether `model` on an OpenAI-compatible chat server answers a request
/// that plainly calls for the tool with a real `tool_calls` entry; `None`
/// when the server could not be asked.
pub async fn calls_tools(config: &ProviderConfig, model: &str) -> Option<bool> {
    let http = crate::transport::client_for(
        &config.base_url,
        reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .connect_timeout(ASK_TIMEOUT),
    );
    let body = serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": "Use the run_python tool to run this code: print(6 * 7)"}],
        "tools": [{
            "type": "function",
            "function": {
                "name": "run_python",
                "description": "Run Python code and return its output.",
                "parameters": {
                    "type": "object",
                    "properties": {"code": {"type": "string", "description": "The code."}},
                    "required": ["code"]
                }
            }
        }],
        "max_tokens": 64,
        "temperature": 0,
        "stream": false
    });
    let reply = post_json(&http, &config.endpoint("chat/completions"), &body, config).await?;
    let message = reply.pointer("/choices/0/message")?;
    Some(
        message
            .get("tool_calls")
            .and_then(Value::as_array)
            .is_some_and(|calls| !calls.is_empty()),
    )
}

/// A model server found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalServer {
    /// What it is: `Ollama`, `LM Studio`, `llama.cpp`, `vLLM`, `Jan` or
    /// `OpenAI-compatible server`.
    pub kind: String,
    /// Its OpenAI-compatible base URL (ending in `/v1`).
    pub base_url: String,
    pub models: Vec<String>,
}

/// Where local servers usually listen, and what usually listens there.
pub const LOCAL_PORTS: &[(u16, &str)] = &[
    (11434, "Ollama"),
    (1234, "LM Studio"),
    (8080, "llama.cpp"),
    (8000, "vLLM"),
    (1337, "Jan"),
];

/// Looks for model servers at `roots` (e.g. `http://127.0.0.1:11434`),
/// all at once; those that answer with a model list are returned, in the
/// order given.
pub async fn find_local_servers(roots: &[(String, String)]) -> Vec<LocalServer> {
    // Without TLS certificates when every server is plain http://.
    let any_tls = roots.iter().find(|(root, _)| !root.starts_with("http://"));
    let http = crate::transport::client_for(
        any_tls.map_or("http://", |(root, _)| root.as_str()),
        reqwest::Client::builder()
            .timeout(Duration::from_millis(1500))
            .connect_timeout(Duration::from_millis(300)),
    );
    let asks = roots.iter().map(|(root, guess)| {
        let http = http.clone();
        async move {
            let root = root.trim_end_matches('/').to_owned();
            let config = ProviderConfig::new(guess.clone(), format!("{root}/v1"));
            let list = get_json(&http, &config.endpoint("models"), &config).await?;
            let entries = list
                .get("data")
                .or_else(|| list.get("models"))
                .and_then(Value::as_array)?;
            let models: Vec<String> = entries
                .iter()
                .filter_map(|e| e.get("id").or_else(|| e.get("name")))
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            // What answers tells what it is, whatever the port.
            let kind = if get_json(&http, &format!("{root}/api/tags"), &config)
                .await
                .is_some()
            {
                "Ollama".to_owned()
            } else if get_json(&http, &format!("{root}/props"), &config)
                .await
                .is_some()
            {
                "llama.cpp".to_owned()
            } else if entries.iter().any(|e| e.get("max_model_len").is_some()) {
                "vLLM".to_owned()
            } else {
                guess.clone()
            };
            Some(LocalServer {
                kind,
                base_url: format!("{root}/v1"),
                models,
            })
        }
    });
    futures::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roots_lose_their_api_suffix() {
        assert_eq!(server_root("http://h:8080/v1/"), "http://h:8080");
        assert_eq!(server_root("http://h:1234/api/v0"), "http://h:1234");
        assert_eq!(server_root("http://h:11434"), "http://h:11434");
    }

    #[test]
    fn each_server_spells_the_window_its_way() {
        assert_eq!(
            window_of_entry(&json!({"max_model_len": 32768})),
            Some(32768)
        );
        assert_eq!(
            window_of_entry(&json!({"meta": {"n_ctx": 4096}})),
            Some(4096)
        );
        assert_eq!(
            window_of_entry(&json!({"loaded_context_length": 8192, "max_context_length": 131072})),
            Some(8192)
        );
        assert_eq!(
            window_of_entry(&json!({"context_length": 200000})),
            Some(200_000)
        );
        assert_eq!(window_of_entry(&json!({"id": "x"})), None);
        let show = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 16384", "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(window_of_ollama_show(&show), Some(16384));
        let show =
            json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
        assert_eq!(window_of_ollama_show(&show), Some(32768));
    }

    #[test]
    fn the_model_is_found_in_a_list_or_is_the_only_one() {
        let list = json!({"data": [{"id": "a", "max_model_len": 1024}, {"id": "b", "max_model_len": 2048}]});
        assert_eq!(entry_for(&list, "b").and_then(window_of_entry), Some(2048));
        assert_eq!(entry_for(&list, "c"), None);
        let one = json!({"data": [{"id": "/models/x.gguf", "meta": {"n_ctx": 4096}}]});
        assert_eq!(
            entry_for(&one, "anything").and_then(window_of_entry),
            Some(4096)
        );
    }
}
