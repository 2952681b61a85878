//! The WebSocket at `/`: Open Interpreter's LMC chunks both ways.
//!
//! In: the key first when no header carried it (`{"auth": KEY}`); a user
//! message as a start flag, content and an end flag (`{"role": "user",
//! "type": "message", "start": true}` …), or whole (`{"role": "user",
//! "type": "message", "content": "…"}`); commands `{"role": "user",
//! "type": "command", "content": "go"}` (run the code of the last
//! confirmation) and `"stop"`. Out: the session's LMC chunks and server
//! lines (`status` `complete` after each answer). One socket is one
//! conversation; closing it stops what runs.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::{key_of, same_key};
use crate::conversation::Conversation;

pub(crate) async fn upgrade(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let authed = key_of(&headers).is_some_and(|k| same_key(k, &state.api_key));
    ws.on_upgrade(move |socket| socket_loop(socket, state, authed))
}

fn error_line(message: impl Into<String>, hint: Option<&str>) -> Value {
    oi_lmc::chunks::error(message, hint.map(str::to_owned))
}

async fn send(socket: &mut WebSocket, value: &Value) -> bool {
    socket
        .send(Message::Text(value.to_string().into()))
        .await
        .is_ok()
}

/// Waits for `{"auth": KEY}`; false (and the socket told why) otherwise.
async fn authenticate(socket: &mut WebSocket, state: &AppState) -> bool {
    let first = tokio::time::timeout(Duration::from_secs(30), socket.recv()).await;
    let given = match first {
        Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("auth").and_then(Value::as_str).map(str::to_owned)),
        _ => None,
    };
    if given
        .as_deref()
        .is_some_and(|k| same_key(k, &state.api_key))
    {
        return true;
    }
    let _ = send(
        socket,
        &error_line(
            "authentication failed: this server needs its API key",
            Some("send `X-API-KEY` (or `Authorization: Bearer`) with the upgrade request, or {\"auth\": KEY} as the first message"),
        ),
    )
    .await;
    let _ = socket.send(Message::Close(None)).await;
    false
}

/// What a client's message asks for.
enum Incoming {
    /// Forward this LMC request to the session.
    Request(Value),
    /// Nothing to do yet (a start flag, content being gathered).
    Nothing,
    /// A message the server cannot read: tell the client.
    Bad(String),
}

/// The user's message being gathered between its flags.
#[derive(Default)]
struct Gathering {
    open: bool,
    messages: Vec<Value>,
}

impl Gathering {
    fn read(&mut self, chunk: &Value, confirmation: Option<u64>) -> Incoming {
        let Some(object) = chunk.as_object() else {
            return Incoming::Bad("a message is a JSON object (an LMC chunk)".to_owned());
        };
        if object.contains_key("auth") {
            return Incoming::Nothing;
        }
        let role = chunk["role"].as_str().unwrap_or("user");
        if role != "user" {
            return Incoming::Bad(format!("oi reads the user's chunks, not `{role}`'s"));
        }
        let kind = chunk["type"].as_str().unwrap_or("message");
        if kind == "command" {
            if chunk.get("start").is_some()
                || chunk.get("end").is_some() && chunk.get("content").is_none()
            {
                return Incoming::Nothing;
            }
            return match chunk["content"].as_str() {
                Some("go") => match confirmation {
                    Some(id) => Incoming::Request(
                        json!({ "op": "approve", "id": id, "decision": "approve" }),
                    ),
                    None => Incoming::Bad(
                        "`go` approves the code of a confirmation, and none is waiting".to_owned(),
                    ),
                },
                Some("stop") => Incoming::Request(json!({ "op": "interrupt" })),
                other => Incoming::Bad(format!(
                    "unknown command {}: the commands are `go` and `stop`",
                    other.map_or_else(|| "(none)".to_owned(), |c| format!("`{c}`"))
                )),
            };
        }
        if chunk.get("start").is_some() {
            if !self.open {
                self.messages.clear();
            }
            self.open = true;
            let mut message = chunk.clone();
            message.as_object_mut().map(|m| m.remove("start"));
            message["content"] = json!("");
            self.messages.push(message);
            return Incoming::Nothing;
        }
        if chunk.get("end").is_some() {
            self.open = false;
            let messages = std::mem::take(&mut self.messages);
            if messages.is_empty() {
                return Incoming::Bad("an end flag without a message".to_owned());
            }
            return Incoming::Request(json!({ "op": "chat", "message": messages, "append": true }));
        }
        let Some(content) = chunk.get("content") else {
            return Incoming::Bad("a chunk has `start`, `end` or `content`".to_owned());
        };
        if self.open {
            match self.messages.last_mut() {
                Some(last) if last["type"] == kind => {
                    let joined = format!(
                        "{}{}",
                        last["content"].as_str().unwrap_or(""),
                        content.as_str().unwrap_or("")
                    );
                    last["content"] = json!(joined);
                }
                _ => {
                    let mut message = chunk.clone();
                    message["role"] = json!("user");
                    self.messages.push(message);
                }
            }
            return Incoming::Nothing;
        }
        // A whole message, without flags.
        Incoming::Request(json!({ "op": "chat", "message": chunk }))
    }
}

async fn socket_loop(mut socket: WebSocket, state: Arc<AppState>, authed: bool) {
    if !authed && !authenticate(&mut socket, &state).await {
        return;
    }
    let conversation = match state.start().await {
        Ok(c) => c,
        Err(failure) => {
            let _ = send(
                &mut socket,
                &error_line(failure.message, failure.hint.as_deref()),
            )
            .await;
            let _ = socket.send(Message::Close(None)).await;
            return;
        }
    };
    let _ = send(
        &mut socket,
        &oi_lmc::chunks::server("ready", json!({ "conversation": conversation.id })),
    )
    .await;
    run(&mut socket, &conversation, state.idle_timeout).await;
    // The client left (or idled out): stop what runs; dropping the
    // conversation ends the session and its kernels.
    conversation.interrupt();
}

async fn run(socket: &mut WebSocket, conversation: &Conversation, idle: Duration) {
    let mut lines = conversation.output.lock().await;
    let mut gathering = Gathering::default();
    let mut confirmation: Option<u64> = None;
    loop {
        let timeout = idle.saturating_sub(conversation.idle_for());
        tokio::select! {
            incoming = socket.recv() => {
                let text = match incoming {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Binary(_))) => {
                        if !send(socket, &error_line("binary messages are not read: send LMC chunks as JSON text", None)).await {
                            return;
                        }
                        continue;
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                };
                conversation.touch();
                let chunk = match serde_json::from_str::<Value>(&text) {
                    Ok(chunk) => chunk,
                    Err(e) => {
                        if !send(socket, &error_line(format!("not JSON: {e}"), Some("send LMC chunks as JSON objects"))).await {
                            return;
                        }
                        continue;
                    }
                };
                match gathering.read(&chunk, confirmation) {
                    Incoming::Request(request) => {
                        if request["op"] == "approve" {
                            confirmation = None;
                        }
                        conversation.send(&request);
                    }
                    Incoming::Nothing => {}
                    Incoming::Bad(problem) => {
                        if !send(socket, &error_line(problem, None)).await {
                            return;
                        }
                    }
                }
            }
            line = lines.recv() => {
                let Some(line) = line else { return };
                conversation.touch();
                if line["type"] == "confirmation" {
                    confirmation = line["id"].as_u64();
                }
                if !send(socket, &line).await {
                    return;
                }
            }
            () = tokio::time::sleep(timeout) => {
                if conversation.idle_for() >= idle {
                    let _ = send(socket, &oi_lmc::chunks::server("notice", format!("the conversation ended after {} s without use", idle.as_secs()))).await;
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            }
        }
    }
}
