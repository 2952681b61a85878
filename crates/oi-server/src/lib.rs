//! `interpreter server`: oi over HTTP and WebSocket.
//!
//! Open Interpreter's endpoints — the WebSocket at `/` with LMC chunks both
//! ways, `POST /`, `POST /settings`, `GET /settings/{key}`, `GET
//! /heartbeat` — and an OpenAI-compatible `POST /openai/chat/completions`
//! (also `/v1/chat/completions`) that streams the agent's work as a chat
//! completion. Every conversation is its own oi session (own kernels,
//! workspace, limits), served by `oi-lmc`; every request but the heartbeat
//! needs the server's key. See docs/server.md.

mod auth;
mod conversation;
mod openai;
mod settings;
mod ws;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use oi_core::SessionRequest;
use serde_json::{Value, json};

use crate::conversation::{Conversation, Failure};

/// How the server is run.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The address to listen on (`127.0.0.1` unless told otherwise).
    pub host: String,
    pub port: u16,
    /// The key clients must send; `None`: one is generated at start.
    pub api_key: Option<String>,
    /// A conversation unused this long ends (its kernels stop).
    pub idle_timeout: Duration,
    /// Where each conversation gets its workspace folder (default:
    /// `$INTERPRETER_HOME/server`).
    pub workspaces: Option<PathBuf>,
    /// The sessions' settings (the server's configuration and flags).
    pub request: SessionRequest,
}

/// What the front end shows once the server listens.
#[derive(Debug, Clone)]
pub struct Listening {
    pub addr: SocketAddr,
    pub api_key: String,
    /// The key was made now (so it must be shown once).
    pub generated: bool,
    pub workspaces: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("no random source for the API key: {0}")]
    Random(String),
    #[error(transparent)]
    Config(#[from] oi_config::ConfigError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ServerError {
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Bind { .. } => Some(
                "another program may use the port: choose one with `--port`, or stop it".to_owned(),
            ),
            Self::Random(_) => Some("set the key yourself in INTERPRETER_API_KEY".to_owned()),
            _ => None,
        }
    }
}

pub(crate) struct AppState {
    api_key: String,
    base: SessionRequest,
    /// Settings changed with `POST /settings`, for conversations started
    /// after.
    settings: Mutex<settings::Changed>,
    conversations: Mutex<HashMap<String, Arc<Conversation>>>,
    idle_timeout: Duration,
    workspaces: PathBuf,
}

impl AppState {
    /// The session request of a new conversation: the server's, the
    /// settings changed since, and a workspace of its own.
    fn request(&self, id: &str) -> Result<SessionRequest, Failure> {
        let mut request = self.base.clone();
        if let Ok(changed) = self.settings.lock() {
            changed.apply(&mut request);
        }
        let workspace = self.workspaces.join(id);
        fs_err::create_dir_all(&workspace).map_err(|e| {
            Failure::new(
                format!("cannot make the conversation's workspace: {e}"),
                None,
            )
        })?;
        request.cwd = Some(workspace.clone());
        request.workspace = Some(oi_core::setup::Given::new(
            workspace,
            "the conversation's workspace",
        ));
        request.user_input = false;
        Ok(request)
    }

    async fn start(&self) -> Result<Arc<Conversation>, Failure> {
        let id = new_id();
        let request = self.request(&id)?;
        Conversation::start(id, request).await.map(Arc::new)
    }

    fn find(&self, id: &str) -> Option<Arc<Conversation>> {
        self.conversations.lock().ok()?.get(id).cloned()
    }

    fn keep(&self, conversation: &Arc<Conversation>) {
        if let Ok(mut all) = self.conversations.lock() {
            all.insert(conversation.id.clone(), Arc::clone(conversation));
        }
    }
}

/// A conversation id: random, so one client cannot guess another's.
fn new_id() -> String {
    let mut bytes = [0u8; 12];
    if getrandom::fill(&mut bytes).is_err() {
        // Never on a working system; the id is still unique.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes[..12].copy_from_slice(&now.to_le_bytes()[..12]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A refused request, answered with [`error`].
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    message: String,
    hint: Option<String>,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>, hint: &str) -> Self {
        Self {
            status,
            message: message.into(),
            hint: Some(hint.to_owned()),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        error(self.status, self.message, self.hint.as_deref())
    }
}

/// A JSON error response: `{"error": {"message", "type", "hint"?}}` (the
/// shape OpenAI's clients read too).
pub(crate) fn error(
    status: StatusCode,
    message: impl Into<String>,
    hint: Option<&str>,
) -> Response {
    let kind = match status {
        StatusCode::UNAUTHORIZED => "authentication_error",
        StatusCode::FORBIDDEN => "permission_error",
        StatusCode::NOT_FOUND => "not_found_error",
        s if s.is_client_error() => "invalid_request_error",
        _ => "server_error",
    };
    let mut body = json!({ "error": { "message": message.into(), "type": kind } });
    if let Some(hint) = hint {
        body["error"]["hint"] = json!(hint);
    }
    (status, axum::Json(body)).into_response()
}

/// Reads a JSON body, answering a malformed one with a 400 that says why.
pub(crate) fn json_body(body: &[u8]) -> Result<Value, Refusal> {
    serde_json::from_slice(body).map_err(|e| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            format!("the body is not JSON: {e}"),
            "send a JSON object with `content-type: application/json`",
        )
    })
}

/// Starts listening; `listening` is called once the port is bound. Runs
/// until the process ends.
pub async fn serve(
    options: ServerOptions,
    listening: impl FnOnce(&Listening),
) -> Result<(), ServerError> {
    let (api_key, generated) = match options.api_key.filter(|k| !k.trim().is_empty()) {
        Some(key) => (key, false),
        None => (auth::generate_key().map_err(ServerError::Random)?, true),
    };
    let workspaces = match options.workspaces {
        Some(dir) => dir,
        None => {
            let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
            oi_config::home_dir(&env)?.join("server")
        }
    };
    fs_err::create_dir_all(&workspaces)?;
    let state = Arc::new(AppState {
        api_key: api_key.clone(),
        base: options.request,
        settings: Mutex::new(settings::Changed::default()),
        conversations: Mutex::new(HashMap::new()),
        idle_timeout: options.idle_timeout,
        workspaces: workspaces.clone(),
    });
    let addr = format!("{}:{}", options.host, options.port);
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|source| ServerError::Bind {
            addr: addr.clone(),
            source,
        })?;
    listening(&Listening {
        addr: listener.local_addr()?,
        api_key,
        generated,
        workspaces,
    });
    tokio::spawn(end_idle(Arc::clone(&state)));
    axum::serve(listener, router(state)).await?;
    Ok(())
}

fn router(state: Arc<AppState>) -> Router {
    let protected = Router::new()
        .route("/", post(post_chat))
        .route("/settings", post(settings::post))
        .route("/settings/{key}", get(settings::get))
        .route("/openai/chat/completions", post(openai::completions))
        .route("/v1/chat/completions", post(openai::completions))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::require,
        ));
    Router::new()
        .route("/heartbeat", get(|| async { axum::Json(json!({ "status": "alive" })) }))
        // The WebSocket checks the key itself (a header, or its first message).
        .route("/", get(ws::upgrade))
        .merge(protected)
        .fallback(|uri: axum::http::Uri| async move {
            error(
                StatusCode::NOT_FOUND,
                format!("no endpoint {uri}"),
                Some("the endpoints: GET /heartbeat, WebSocket /, POST /, POST /settings, GET /settings/{key}, POST /openai/chat/completions"),
            )
        })
        .layer(DefaultBodyLimit::max(32 * 1024 * 1024))
        .with_state(state)
}

/// Ends the conversations unused for longer than the idle timeout.
async fn end_idle(state: Arc<AppState>) {
    let every = (state.idle_timeout / 4).clamp(Duration::from_millis(200), Duration::from_secs(30));
    loop {
        tokio::time::sleep(every).await;
        if let Ok(mut all) = state.conversations.lock() {
            all.retain(|_, c| c.idle_for() < state.idle_timeout);
        }
    }
}

/// `POST /`: `{"message": …, "conversation"?: ID}` runs a task and answers
/// `{"conversation", "messages"}` with the new LMC messages. Code that
/// needs approval is not run (nobody can be asked over plain HTTP).
async fn post_chat(State(state): State<Arc<AppState>>, body: axum::body::Bytes) -> Response {
    let body = match json_body(&body) {
        Ok(body) => body,
        Err(refusal) => return refusal.into_response(),
    };
    let Some(message) = body.get("message").filter(|m| !m.is_null()).cloned() else {
        return error(
            StatusCode::BAD_REQUEST,
            "the request has no `message`",
            Some(
                "send {\"message\": \"…\"} (a string, an LMC message or a list of them), and `conversation` to continue one",
            ),
        );
    };
    let conversation = match body.get("conversation") {
        None | Some(Value::Null) => match state.start().await {
            Ok(c) => {
                state.keep(&c);
                c
            }
            Err(failure) => {
                return error(
                    StatusCode::BAD_GATEWAY,
                    failure.message,
                    failure.hint.as_deref(),
                );
            }
        },
        Some(Value::String(id)) => match state.find(id) {
            Some(c) => c,
            None => {
                return error(
                    StatusCode::NOT_FOUND,
                    format!("no conversation `{id}` (it may have ended after being idle)"),
                    Some("leave `conversation` out to start a new one"),
                );
            }
        },
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "`conversation` must be a string id",
                None,
            );
        }
    };
    let mut chunks = Vec::new();
    let mut failure = None;
    conversation
        .unattended(
            &json!({ "op": "chat", "message": message }),
            std::future::pending(),
            |line| {
                match line {
                    Ok(chunk) => chunks.push(chunk),
                    Err(f) => failure = failure.take().or(Some(f)),
                }
                true
            },
        )
        .await;
    let messages = oi_lmc::chunks::merge(&chunks);
    match failure {
        Some(failure) if messages.is_empty() => {
            let status = if failure.refused {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::BAD_GATEWAY
            };
            let mut response = error(status, failure.message, failure.hint.as_deref());
            if let Ok(id) = conversation.id.parse() {
                response.headers_mut().insert("x-oi-conversation", id);
            }
            response
        }
        failure => axum::Json(json!({
            "conversation": conversation.id,
            "messages": messages,
            "error": failure.map(|f| json!({ "message": f.message, "hint": f.hint })),
        }))
        .into_response(),
    }
}

/// `GET /settings/{key}` and friends take the key from the path.
pub(crate) type KeyPath = Path<String>;

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ids_are_random_and_hex() {
        let (a, b) = (new_id(), new_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 24);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
