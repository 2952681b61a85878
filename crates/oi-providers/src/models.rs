//! `GET …/models`: the models a server offers.

use serde_json::Value;

use crate::error::{describe_transport_error, error_message_from_body};
use crate::transport::with_extras;
use oi_protocol::WireApi;

use crate::{ProviderConfig, ProviderError};

/// The version of the Anthropic API oi speaks.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The ids of the models the provider offers, sorted. Understands the OpenAI
/// list (`{"data": [{"id": …}]}`, also Anthropic's) and Ollama's
/// (`{"models": [{"name": …}]}`).
pub async fn list_models(
    config: &ProviderConfig,
    wire: WireApi,
) -> Result<Vec<String>, ProviderError> {
    fetch_models(config, wire)
        .await
        .map_err(|e| e.redacted(&config.secrets()))
}

async fn fetch_models(
    config: &ProviderConfig,
    wire: WireApi,
) -> Result<Vec<String>, ProviderError> {
    let http = crate::transport::client_for(&config.base_url, reqwest::Client::builder());
    let url = match wire {
        WireApi::Messages => crate::messages_endpoint(&config.base_url, "models"),
        WireApi::Chat | WireApi::Responses => config.endpoint("models"),
    };
    let mut builder = http.get(&url);
    match (wire, &config.api_key) {
        (WireApi::Messages, Some(key)) => {
            builder = builder
                .header("x-api-key", key)
                .header("anthropic-version", ANTHROPIC_VERSION);
        }
        (WireApi::Messages, None) => {
            builder = builder.header("anthropic-version", ANTHROPIC_VERSION)
        }
        (_, Some(key)) => builder = builder.bearer_auth(key),
        (_, None) => {}
    }
    let response =
        with_extras(builder, config)
            .send()
            .await
            .map_err(|e| ProviderError::Unreachable {
                provider: config.name.clone(),
                url: url.clone(),
                reason: describe_transport_error(&e),
                attempts: 1,
            })?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| ProviderError::StreamCut {
            provider: config.name.clone(),
            detail: describe_transport_error(&e),
        })?;
    if !status.is_success() {
        return Err(ProviderError::Http {
            provider: config.name.clone(),
            url,
            status: status.as_u16(),
            message: error_message_from_body(&body),
            attempts: 1,
        });
    }
    let json: Value = serde_json::from_str(&body).map_err(|e| ProviderError::MalformedEvent {
        provider: config.name.clone(),
        detail: format!("the model list is not JSON: {e}"),
    })?;
    model_ids(&json).ok_or_else(|| ProviderError::MalformedEvent {
        provider: config.name.clone(),
        detail: "the model list has neither `data` nor `models`".to_owned(),
    })
}

fn model_ids(json: &Value) -> Option<Vec<String>> {
    let items = json
        .get("data")
        .or_else(|| json.get("models"))
        .and_then(Value::as_array)?;
    let mut ids: Vec<String> = items
        .iter()
        .filter_map(|item| match item {
            Value::String(id) => Some(id.clone()),
            _ => ["id", "name", "model"]
                .iter()
                .find_map(|k| item.get(*k).and_then(Value::as_str))
                .map(str::to_owned),
        })
        .collect();
    ids.sort();
    ids.dedup();
    Some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_openai_and_ollama_lists() {
        let openai = json!({"object": "list", "data": [{"id": "gpt-5", "object": "model"}, {"id": "gpt-5-mini"}]});
        assert_eq!(
            model_ids(&openai),
            Some(vec!["gpt-5".into(), "gpt-5-mini".into()])
        );
        let ollama = json!({"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b"}, {"name": "llama3.2:3b"}]});
        assert_eq!(
            model_ids(&ollama),
            Some(vec!["llama3.2:3b".into(), "qwen2.5-coder:7b".into()])
        );
        assert_eq!(model_ids(&json!({"error": "x"})), None);
    }
}
