//! `POST /settings` and `GET /settings/{key}`: the settings of the
//! conversations started after a change. What would weaken safety (running
//! code without asking, the sandbox, the network, where the model is) is
//! the server's own configuration and cannot be set by a request.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use oi_config::FlagSetting;
use oi_core::SessionRequest;
use serde_json::{Map, Value, json};

use crate::{AppState, KeyPath, error, json_body};

/// Settings a request may change: its name (Open Interpreter's, with
/// `llm.` for the model's) → oi's configuration key.
const SETTABLE: &[(&str, &str)] = &[
    ("model", "model"),
    ("llm.model", "model"),
    ("temperature", "temperature"),
    ("llm.temperature", "temperature"),
    ("max_tokens", "max_tokens"),
    ("llm.max_tokens", "max_tokens"),
    ("context_window", "context_window"),
    ("llm.context_window", "context_window"),
    ("custom_instructions", "custom_instructions"),
    ("system_message", "system_message"),
    ("max_output", "max_output"),
    ("max_turns", "max_turns"),
];

/// Settings only the server's configuration sets.
const SERVER_ONLY: &[&str] = &[
    "auto_run",
    "safe_mode",
    "approval",
    "sandbox",
    "dangerously_allow_all",
    "allow_all",
    "offline",
    "network",
    "os",
    "workspace",
    "writable_roots",
    "pass_env",
    "api_base",
    "api_key",
    "llm.api_base",
    "llm.api_key",
    "model_provider",
    "max_budget",
    "max_time",
    "run_timeout",
];

/// What requests changed, in order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Changed {
    values: Vec<(String, Value)>,
}

impl Changed {
    pub(crate) fn apply(&self, request: &mut SessionRequest) {
        for (key, value) in &self.values {
            request.settings.push(FlagSetting::new(
                &format!("`{key}` of POST /settings"),
                key,
                value.clone(),
            ));
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// The settings of a body, `{"llm": {"model": …}}` read as `llm.model`.
fn flatten(body: &Map<String, Value>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (key, value) in body {
        match value {
            Value::Object(inner) if key == "llm" || key == "computer" => {
                for (sub, v) in inner {
                    out.push((format!("{key}.{sub}"), v.clone()));
                }
            }
            _ => out.push((key.clone(), value.clone())),
        }
    }
    out
}

fn settable() -> String {
    SETTABLE
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) async fn post(State(state): State<Arc<AppState>>, body: axum::body::Bytes) -> Response {
    let body = match json_body(&body) {
        Ok(Value::Object(body)) => body,
        Ok(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "the settings must be a JSON object",
                Some("e.g. {\"llm\": {\"model\": \"gpt-5\"}, \"custom_instructions\": \"…\"}"),
            );
        }
        Err(refusal) => return refusal.into_response(),
    };
    let mut changes = Vec::new();
    for (name, value) in flatten(&body) {
        if SERVER_ONLY.contains(&name.as_str()) || name.starts_with("computer.") {
            return error(
                StatusCode::FORBIDDEN,
                format!("`{name}` is the server's to set, not a request's"),
                Some(
                    "it is set in the server's configuration or flags (e.g. `interpreter -y server`); nothing was changed",
                ),
            );
        }
        let Some((_, key)) = SETTABLE.iter().find(|(n, _)| *n == name) else {
            return error(
                StatusCode::NOT_FOUND,
                format!("there is no setting `{name}`"),
                Some(&format!(
                    "the settings a request may change: {}; nothing was changed",
                    settable()
                )),
            );
        };
        changes.push(((*key).to_owned(), value));
    }
    let mut changed = state.settings.lock().map(|c| c.clone()).unwrap_or_default();
    changed.values.extend(changes);
    // A value the configuration refuses is refused now, not at the next
    // conversation.
    let mut request = state.base.clone();
    changed.apply(&mut request);
    if let Err(e) = oi_core::setup::load_config(&request) {
        return error(
            StatusCode::BAD_REQUEST,
            e.to_string(),
            Some("nothing was changed"),
        );
    }
    if let Ok(mut current) = state.settings.lock() {
        *current = changed;
    }
    axum::Json(json!({ "status": "success" })).into_response()
}

pub(crate) async fn get(State(state): State<Arc<AppState>>, key: KeyPath) -> Response {
    let name = key.0;
    let changed = state.settings.lock().map(|c| c.clone()).unwrap_or_default();
    let config_key = SETTABLE.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
    if let Some(value) = config_key.and_then(|k| changed.get(k)) {
        return axum::Json(json!({ name: value })).into_response();
    }
    let mut request = state.base.clone();
    changed.apply(&mut request);
    let loaded = match oi_core::setup::load_config(&request) {
        Ok(loaded) => loaded,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    };
    let c = &loaded.config;
    let value = match config_key.unwrap_or(name.as_str()) {
        "model" => json!(c.model),
        "temperature" => json!(c.temperature),
        "max_tokens" => json!(c.max_tokens),
        "context_window" => json!(c.context_window),
        "custom_instructions" => json!(c.custom_instructions),
        "system_message" => json!(c.system_message),
        "max_output" => json!(c.max_output),
        "max_turns" => json!(c.max_turns),
        // Readable, not settable.
        "auto_run" => json!(c.approval != oi_protocol::ApprovalPolicy::Ask),
        "approval" => json!(c.approval.to_string()),
        "sandbox" => json!(c.sandbox.to_string()),
        "offline" => json!(!c.network),
        _ => {
            return error(
                StatusCode::NOT_FOUND,
                format!("there is no setting `{name}`"),
                Some(&format!(
                    "the settings: {}, auto_run, approval, sandbox, offline",
                    settable()
                )),
            );
        }
    };
    axum::Json(json!({ name: value })).into_response()
}
