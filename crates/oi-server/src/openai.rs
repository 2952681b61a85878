//! `POST /openai/chat/completions` (and `/v1/chat/completions`): oi as a
//! "model" any OpenAI client can use. The request's messages are the
//! conversation (system and developer messages become custom
//! instructions); each request is a new session whose work — the reply,
//! the code it runs and the output — streams back as the completion's
//! text. Code that needs approval is not run: nobody can be asked here.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use oi_config::FlagSetting;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::conversation::{Conversation, Failure};
use crate::{AppState, Refusal, error, json_body};

/// The request, read into the LMC conversation and the instructions.
struct Completion {
    model: String,
    stream: bool,
    messages: Vec<Value>,
    instructions: Vec<String>,
}

fn bad(message: impl Into<String>, hint: &str) -> Refusal {
    Refusal::new(StatusCode::BAD_REQUEST, message, hint)
}

/// The text of a message's `content`: a string, or text parts (images
/// become LMC image messages).
fn read_content(index: usize, content: &Value, images: &mut Vec<Value>) -> Result<String, Refusal> {
    match content {
        Value::String(text) => Ok(text.clone()),
        Value::Null => Ok(String::new()),
        Value::Array(parts) => {
            let mut text = String::new();
            for (p, part) in parts.iter().enumerate() {
                match part["type"].as_str() {
                    Some("text") => text.push_str(part["text"].as_str().unwrap_or("")),
                    Some("image_url") => {
                        let url = part["image_url"]["url"].as_str().unwrap_or("");
                        let Some((head, data)) = url
                            .strip_prefix("data:")
                            .and_then(|u| u.split_once(";base64,"))
                        else {
                            return Err(bad(
                                format!(
                                    "messages[{index}].content[{p}]: only `data:` image URLs are read"
                                ),
                                "send the image inline as data:image/png;base64,…",
                            ));
                        };
                        let kind = head.strip_prefix("image/").unwrap_or("png");
                        images.push(json!({ "role": "user", "type": "image", "format": format!("base64.{kind}"), "content": data }));
                    }
                    other => {
                        return Err(bad(
                            format!(
                                "messages[{index}].content[{p}]: a part of type {other:?} is not read"
                            ),
                            "parts are `text` or `image_url`",
                        ));
                    }
                }
            }
            Ok(text)
        }
        _ => Err(bad(
            format!("messages[{index}].content must be a string or a list of parts"),
            "e.g. {\"role\": \"user\", \"content\": \"…\"}",
        )),
    }
}

fn read(body: &Value) -> Result<Completion, Refusal> {
    let Some(list) = body["messages"].as_array().filter(|l| !l.is_empty()) else {
        return Err(bad(
            "`messages` must be a non-empty list",
            "e.g. {\"messages\": [{\"role\": \"user\", \"content\": \"How many files are here?\"}]}",
        ));
    };
    let mut messages = Vec::new();
    let mut instructions = Vec::new();
    for (index, message) in list.iter().enumerate() {
        let mut images = Vec::new();
        let text = read_content(index, &message["content"], &mut images)?;
        match message["role"].as_str() {
            Some("system" | "developer") => instructions.push(text),
            Some(role @ ("user" | "assistant")) => {
                if !text.is_empty() || images.is_empty() {
                    messages.push(json!({ "role": role, "type": "message", "content": text }));
                }
                messages.extend(images);
            }
            Some("tool") => {
                return Err(bad(
                    format!("messages[{index}]: oi runs its own code and takes no tool results"),
                    "send user and assistant messages only",
                ));
            }
            other => {
                return Err(bad(
                    format!(
                        "messages[{index}].role must be system, developer, user or assistant, not {other:?}"
                    ),
                    "e.g. {\"role\": \"user\", \"content\": \"…\"}",
                ));
            }
        }
    }
    if messages.last().is_none_or(|m| m["role"] != "user") {
        return Err(bad(
            "the last message must be the user's",
            "end `messages` with {\"role\": \"user\", \"content\": \"…\"}",
        ));
    }
    Ok(Completion {
        model: body["model"].as_str().unwrap_or("oi").to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        messages,
        instructions,
    })
}

/// The completion's text for one LMC chunk: the reply as it is, code and
/// its output in fenced blocks.
fn text_of(chunk: &Value) -> Option<String> {
    let kind = chunk["type"].as_str()?;
    let format = chunk["format"].as_str().unwrap_or("");
    if chunk.get("start").is_some() {
        return match kind {
            "code" => Some(format!("\n\n```{format}\n")),
            "console" => Some("\n\n```text\n".to_owned()),
            _ => None,
        };
    }
    if chunk.get("end").is_some() {
        return match kind {
            "code" | "console" => Some("\n```\n\n".to_owned()),
            _ => None,
        };
    }
    match kind {
        "message" | "code" => chunk["content"].as_str().map(str::to_owned),
        "console" if format == "output" => chunk["content"].as_str().map(str::to_owned),
        "image" => Some(format!("\n[an image: {format}]\n")),
        _ => None,
    }
}

/// Stops the task when the client goes away before the end.
struct StopOnDrop {
    conversation: Arc<Conversation>,
    done: bool,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if !self.done {
            self.conversation.interrupt();
        }
    }
}

pub(crate) async fn completions(
    State(state): State<Arc<AppState>>,
    body: axum::body::Bytes,
) -> Response {
    let body = match json_body(&body) {
        Ok(body) => body,
        Err(refusal) => return refusal.into_response(),
    };
    let completion = match read(&body) {
        Ok(c) => c,
        Err(refusal) => return refusal.into_response(),
    };
    let id = crate::new_id();
    let mut request = match state.request(&id) {
        Ok(r) => r,
        Err(f) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                f.message,
                f.hint.as_deref(),
            );
        }
    };
    if !completion.instructions.is_empty() {
        request.settings.push(FlagSetting::new(
            "the system messages of the request",
            "custom_instructions",
            completion.instructions.join("\n\n"),
        ));
    }
    request.ephemeral = true;
    let conversation = match Conversation::start(id.clone(), request).await {
        Ok(c) => Arc::new(c),
        Err(f) => return error(StatusCode::BAD_GATEWAY, f.message, f.hint.as_deref()),
    };
    // The session's lines, pumped by a task that stops the work if the
    // client leaves.
    let (tx, rx) = mpsc::unbounded_channel::<Result<String, Failure>>();
    {
        let conversation = Arc::clone(&conversation);
        let messages = completion.messages.clone();
        tokio::spawn(async move {
            let mut guard = StopOnDrop {
                conversation: Arc::clone(&conversation),
                done: false,
            };
            guard.done = conversation
                .unattended(
                    &json!({ "op": "chat", "message": messages }),
                    // The client left (its stream was dropped): the guard
                    // stops the task.
                    tx.closed(),
                    |line| match line {
                        Ok(chunk) => text_of(&chunk).is_none_or(|text| tx.send(Ok(text)).is_ok()),
                        Err(failure) => tx.send(Err(failure)).is_ok(),
                    },
                )
                .await;
        });
    }
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let chat_id = format!("chatcmpl-oi-{id}");
    if completion.stream {
        stream(rx, chat_id, created, completion.model).into_response()
    } else {
        whole(rx, chat_id, created, completion.model).await
    }
}

async fn whole(
    mut rx: mpsc::UnboundedReceiver<Result<String, Failure>>,
    chat_id: String,
    created: u64,
    model: String,
) -> Response {
    let mut text = String::new();
    let mut failure = None;
    while let Some(item) = rx.recv().await {
        match item {
            Ok(piece) => text.push_str(&piece),
            Err(f) => failure = failure.or(Some(f)),
        }
    }
    if let Some(f) = failure
        && text.trim().is_empty()
    {
        return error(StatusCode::BAD_GATEWAY, f.message, f.hint.as_deref());
    }
    axum::Json(json!({
        "id": chat_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": text.trim(), "refusal": null },
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": { "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0 },
    }))
    .into_response()
}

fn stream(
    rx: mpsc::UnboundedReceiver<Result<String, Failure>>,
    chat_id: String,
    created: u64,
    model: String,
) -> Sse<impl futures::Stream<Item = Result<Event, std::convert::Infallible>>> {
    let chunk = move |delta: Value, finish: Option<&str>| {
        json!({
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        })
    };
    let first = chunk(json!({ "role": "assistant", "content": "" }), None);
    let body = futures::stream::unfold(
        (Some(rx), false, chunk),
        |(rx, finished, chunk)| async move {
            let mut rx = rx?;
            match rx.recv().await {
                Some(Ok(text)) => Some((
                    Event::default().data(chunk(json!({ "content": text }), None).to_string()),
                    (Some(rx), finished, chunk),
                )),
                Some(Err(f)) => Some((
                    Event::default().data(json!({ "error": { "message": f.message, "type": "server_error", "hint": f.hint } }).to_string()),
                    (Some(rx), finished, chunk),
                )),
                None if !finished => Some((
                    Event::default().data(chunk(json!({}), Some("stop")).to_string()),
                    (Some(rx), true, chunk),
                )),
                None => {
                    drop(rx);
                    None
                }
            }
        },
    );
    let done = futures::stream::once(async { Event::default().data("[DONE]") });
    let all = futures::StreamExt::chain(
        futures::StreamExt::chain(
            futures::stream::once(async move { Event::default().data(first.to_string()) }),
            body,
        ),
        done,
    );
    // A comment every second: a client that left is noticed by the failed
    // write even while nothing else is sent.
    Sse::new(futures::StreamExt::map(all, Ok))
        .keep_alive(KeepAlive::new().interval(std::time::Duration::from_secs(1)))
}
