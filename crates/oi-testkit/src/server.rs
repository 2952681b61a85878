//! The mock server: routing, recording, and streaming of scripted replies.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::reply::{Body as ReplyBody, Reply};
use oi_protocol::WireApi;

use crate::wire::{self, wire_of_path};

/// A request the mock server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// Header names are lower-case.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` if it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The wire of a model request.
    pub fn wire(&self) -> Option<WireApi> {
        wire_of_path(&self.path)
    }

    /// The conversation items: `messages` (chat, messages) or `input` (responses).
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .or_else(|| self.body.get("input"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The text of the last item of the conversation, whatever the wire: a
    /// chat message's content, a Responses `function_call_output` or user
    /// message, an Anthropic `tool_result` or text block.
    pub fn last_message_text(&self) -> String {
        let Some(last) = self.messages().last() else {
            return String::new();
        };
        if let Some(output) = last.get("output").and_then(Value::as_str) {
            return output.to_owned();
        }
        text_of(last.get("content"))
    }
}

/// The text of a content value: a string, or the text of its last block
/// (whose own `content` may again be a string or blocks).
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => match blocks.last() {
            Some(block) if block.get("content").is_some() => text_of(block.get("content")),
            Some(block) => block
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            None => String::new(),
        },
        _ => String::new(),
    }
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    fallback: Option<Reply>,
    api_key: Option<String>,
    models: Option<Value>,
    /// Replies for requests whose body contains a text, outside the script.
    rules: Vec<(String, Reply)>,
    /// Other JSON endpoints, by method and path (`GET /props` …).
    routes: std::collections::HashMap<(String, String), Value>,
    requests: Vec<RecordedRequest>,
    served: u64,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("scripted", &self.script.len())
            .field("requests", &self.requests.len())
            .finish()
    }
}

/// A scripted model server on 127.0.0.1 with a random port, speaking the
/// three wires at `/v1/chat/completions`, `/v1/responses` and
/// `/v1/messages`, and listing models at `GET /v1/models`. It stops when
/// dropped.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Starts the server on the current tokio runtime.
    pub async fn start() -> std::io::Result<Self> {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, shared, task })
    }

    /// The API base for the OpenAI wires: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The server root, without `/v1` (the Anthropic-style base).
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a reply; requests are answered in the order replies were queued.
    pub fn push(&self, reply: Reply) -> &Self {
        self.lock().script.push_back(reply);
        self
    }

    /// Answers with `reply` whenever the script is used up (by default the
    /// server then answers 500, naming the number of requests it got).
    pub fn repeat(&self, reply: Reply) -> &Self {
        self.lock().fallback = Some(reply);
        self
    }

    /// Requires the key (`Authorization: Bearer` on the OpenAI wires,
    /// `x-api-key` on the messages wire); other requests get a 401.
    pub fn require_api_key(&self, key: &str) -> &Self {
        self.lock().api_key = Some(key.to_owned());
        self
    }

    /// The body of `GET /v1/models` (default: an OpenAI list of two models).
    pub fn set_models(&self, body: Value) -> &Self {
        self.lock().models = Some(body);
        self
    }

    /// Answers `METHOD path` with `body` (status 200), to imitate a local
    /// server's own endpoints: llama.cpp's `GET /props`, Ollama's
    /// `POST /api/show` and `GET /api/tags`, LM Studio's `GET
    /// /api/v0/models` …
    pub fn set_route(&self, method: &str, path: &str, body: Value) -> &Self {
        self.lock()
            .routes
            .insert((method.to_ascii_uppercase(), path.to_owned()), body);
        self
    }

    /// Answers every model request whose JSON body contains `needle` with
    /// `reply`, without taking a reply from the script (e.g. the requests
    /// for a summary, which come whenever the agent needs one).
    pub fn answer_when(&self, needle: &str, reply: Reply) -> &Self {
        self.lock().rules.push((needle.to_owned(), reply));
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// The requests to any of the three model endpoints.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.wire().is_some())
            .collect()
    }

    /// The requests to the chat completions endpoint.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.wire() == Some(WireApi::Chat))
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn json_response(status: StatusCode, body: String) -> Response {
    (status, [("content-type", "application/json")], body).into_response()
}

/// The scripted reply a request gets, or the response it gets at once.
#[expect(
    clippy::result_large_err,
    reason = "the error is the HTTP response itself, built once per request"
)]
fn decide(
    shared: &Mutex<Shared>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<(Reply, WireApi, Value, u64), Response> {
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
        body: serde_json::from_slice(body).unwrap_or(Value::Null),
    };
    let request_body = recorded.body.clone();
    let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
    s.requests.push(recorded);

    if let Some(body) = s
        .routes
        .get(&(method.as_str().to_owned(), uri.path().to_owned()))
    {
        return Err(json_response(StatusCode::OK, body.to_string()));
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let wire = match (method.clone(), uri.path()) {
        (Method::POST, path) => wire_of_path(path),
        (Method::GET, "/v1/models") => {
            let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer "));
            let sent = bearer.or_else(|| header("x-api-key"));
            if let Some(key) = &s.api_key
                && sent != Some(key.as_str())
            {
                return Err(json_response(
                    StatusCode::UNAUTHORIZED,
                    wire::error_body(WireApi::Chat, 401, "Incorrect API key provided"),
                ));
            }
            let list = s.models.clone().unwrap_or_else(|| {
                json!({"object": "list", "data": [
                    {"id": "mock-large", "object": "model", "created": 1_700_000_000, "owned_by": "mock"},
                    {"id": "mock-small", "object": "model", "created": 1_700_000_000, "owned_by": "mock"},
                ]})
            });
            return Err(json_response(StatusCode::OK, list.to_string()));
        }
        _ => None,
    };
    let Some(wire) = wire else {
        return Err(json_response(
            StatusCode::NOT_FOUND,
            wire::error_body(
                WireApi::Chat,
                404,
                &format!("Invalid URL ({method} {})", uri.path()),
            ),
        ));
    };
    if wire == WireApi::Messages && header("anthropic-version").is_none() {
        return Err(json_response(
            StatusCode::BAD_REQUEST,
            wire::error_body(wire, 400, "anthropic-version: header is required"),
        ));
    }
    // Like the real API: a computer-use tool needs its beta header.
    if wire == WireApi::Messages
        && let Some(kind) = request_body["tools"].as_array().and_then(|tools| {
            tools
                .iter()
                .filter_map(|t| t["type"].as_str())
                .find(|t| t.starts_with("computer_"))
        })
        && !header("anthropic-beta").is_some_and(|b| b.contains("computer-use-"))
    {
        return Err(json_response(
            StatusCode::BAD_REQUEST,
            wire::error_body(
                wire,
                400,
                &format!(
                    "tools.0: Input tag '{kind}' found using 'type' does not match any of the expected tags (add the computer-use beta header)"
                ),
            ),
        ));
    }
    if let Some(key) = &s.api_key {
        let sent = match wire {
            WireApi::Messages => header("x-api-key"),
            WireApi::Chat | WireApi::Responses => {
                header("authorization").and_then(|v| v.strip_prefix("Bearer "))
            }
        };
        if sent != Some(key.as_str()) {
            let message = match wire {
                WireApi::Messages => "invalid x-api-key".to_owned(),
                _ => format!(
                    "Incorrect API key provided: {}. You can find your API key in your account settings.",
                    sent.unwrap_or("(none)")
                ),
            };
            return Err(json_response(
                StatusCode::UNAUTHORIZED,
                wire::error_body(wire, 401, &message),
            ));
        }
    }
    s.served += 1;
    let serial = s.served;
    let text = request_body.to_string();
    if let Some((_, reply)) = s
        .rules
        .iter()
        .find(|(needle, _)| text.contains(needle.as_str()))
    {
        return Ok((reply.clone(), wire, request_body, serial));
    }
    let reply = match s.script.pop_front() {
        Some(reply) => reply,
        None => match &s.fallback {
            Some(reply) => reply.clone(),
            None => {
                let received = s.requests.len();
                return Err(json_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    wire::error_body(
                        wire,
                        500,
                        &format!(
                            "mock script exhausted: request {serial} has no scripted reply ({received} requests received)"
                        ),
                    ),
                ));
            }
        },
    };
    Ok((reply, wire, request_body, serial))
}

async fn handle(
    State(shared): State<Arc<Mutex<Shared>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(action) = uri.path().strip_prefix("/__mock/") {
        return control(&shared, &method, action, &body);
    }
    match decide(&shared, &method, &uri, &headers, &body) {
        Ok((reply, wire, request, serial)) => answer(reply, wire, &request, serial).await,
        Err(response) => response,
    }
}

/// The control API, for test drivers in other processes (the Python
/// package's tests): `POST /__mock/replies` queues replies given as
/// [`Reply::from_spec`] objects (a JSON list), `POST /__mock/reset` forgets
/// the script and the requests, `GET /__mock/requests` lists the model
/// requests received (`path`, `headers`, `body`).
fn control(shared: &Mutex<Shared>, method: &Method, action: &str, body: &Bytes) -> Response {
    let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
    let refuse = |message: String| {
        json_response(
            StatusCode::BAD_REQUEST,
            json!({ "error": message }).to_string(),
        )
    };
    match (method.as_str(), action) {
        ("POST", "replies") => {
            let specs: Vec<Value> = match serde_json::from_slice(body) {
                Ok(specs) => specs,
                Err(e) => return refuse(format!("the body must be a JSON list of replies: {e}")),
            };
            let mut replies = Vec::new();
            for (index, spec) in specs.iter().enumerate() {
                match Reply::from_spec(spec) {
                    Ok(reply) => replies.push(reply),
                    Err(problem) => return refuse(format!("reply {index}: {problem}")),
                }
            }
            s.script.extend(replies);
            json_response(StatusCode::OK, json!({ "queued": s.script.len() }).to_string())
        }
        ("POST", "reset") => {
            s.script.clear();
            s.rules.clear();
            s.fallback = None;
            s.requests.clear();
            json_response(StatusCode::OK, "{}".to_owned())
        }
        ("GET", "requests") => {
            let list: Vec<Value> = s
                .requests
                .iter()
                .filter(|r| r.wire().is_some())
                .map(|r| json!({ "path": r.path, "headers": r.headers.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(), "body": r.body }))
                .collect();
            json_response(StatusCode::OK, Value::Array(list).to_string())
        }
        _ => json_response(
            StatusCode::NOT_FOUND,
            json!({ "error": format!("no control action {method} /__mock/{action}: use POST replies, POST reset or GET requests") }).to_string(),
        ),
    }
}

/// The response to a request, or none ever for a silent reply.
async fn answer(reply: Reply, wire: WireApi, request: &Value, serial: u64) -> Response {
    if matches!(reply.body, ReplyBody::Silent) {
        std::future::pending::<()>().await;
    }
    respond(reply, wire, request, serial)
}

fn respond(reply: Reply, wire: WireApi, request: &Value, serial: u64) -> Response {
    let frames: Vec<String> = match &reply.body {
        ReplyBody::Error {
            status,
            message,
            raw,
            headers,
        } => {
            let body = raw
                .clone()
                .unwrap_or_else(|| wire::error_body(wire, *status, message));
            let mut response = Response::new(Body::from(body));
            *response.status_mut() =
                StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    axum::http::HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(value),
                ) {
                    response.headers_mut().insert(name, value);
                }
            }
            return response;
        }
        ReplyBody::RawSse(raw) => vec![raw.clone()],
        // `answer` never gets here with a silent reply.
        ReplyBody::Silent => return Response::new(Body::empty()),
        ReplyBody::Endless(text) => {
            return endless(text, wire, request, serial, reply.event_delay);
        }
        ReplyBody::Completion(c)
            if wire == WireApi::Chat
                && request.get("stream").and_then(Value::as_bool) != Some(true) =>
        {
            return json_response(
                StatusCode::OK,
                wire::chat_completion(c, request, serial).to_string(),
            );
        }
        ReplyBody::Completion(c) => match wire {
            WireApi::Chat => {
                wire::chat_frames(c, reply.chunk_chars, reply.send_done, request, serial)
            }
            WireApi::Responses => wire::responses_frames(c, reply.chunk_chars, request, serial),
            WireApi::Messages => wire::messages_frames(c, reply.chunk_chars, request, serial),
        },
    };
    let total = frames.len();
    let cut = reply.cut_after_events.filter(|n| *n < total);
    let hang = reply.hang_after_events.filter(|n| *n < total);
    let keep = cut.or(hang).unwrap_or(total);
    let frames: Vec<String> = frames.into_iter().take(keep).collect();
    let bytes: Vec<Bytes> = match reply.write_bytes {
        Some(n) => frames
            .concat()
            .into_bytes()
            .chunks(n)
            .map(Bytes::copy_from_slice)
            .collect(),
        None => frames.into_iter().map(Bytes::from).collect(),
    };
    let delay = reply.event_delay;
    let stream = futures::stream::iter(bytes.into_iter().map(Ok::<_, std::io::Error>))
        .then(move |item| async move {
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            item
        })
        .chain(futures::stream::iter(cut.map(|_| ())).then(|()| async {
            // Pending once, so the server flushes what was sent before the
            // connection is dropped (as a real broken connection would).
            tokio::task::yield_now().await;
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "mock: stream cut off",
            ))
        }))
        .chain(
            futures::stream::iter(hang.map(|_| ()))
                .then(|()| async { std::future::pending::<Result<Bytes, std::io::Error>>().await }),
        );
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    response
}

/// A stream that starts as a reply of `text` would, then repeats the event
/// carrying `text` forever.
fn endless(
    text: &str,
    wire: WireApi,
    request: &Value,
    serial: u64,
    delay: Option<std::time::Duration>,
) -> Response {
    let completion = crate::reply::Completion {
        text: text.to_owned(),
        ..crate::reply::Completion::default()
    };
    let chunk = text.chars().count().max(1);
    let frames = match wire {
        WireApi::Chat => wire::chat_frames(&completion, chunk, true, request, serial),
        WireApi::Responses => wire::responses_frames(&completion, chunk, request, serial),
        WireApi::Messages => wire::messages_frames(&completion, chunk, request, serial),
    };
    let escaped = Value::String(text.to_owned()).to_string();
    let escaped = escaped.trim_matches('"');
    let at = frames.iter().position(|f| f.contains(escaped)).unwrap_or(0);
    let start: Vec<Bytes> = frames[..at].iter().cloned().map(Bytes::from).collect();
    let again = Bytes::from(frames.get(at).cloned().unwrap_or_default());
    let stream = futures::stream::iter(start.into_iter().map(Ok::<_, std::io::Error>)).chain(
        futures::stream::repeat(again).then(move |frame| async move {
            tokio::time::sleep(delay.unwrap_or(std::time::Duration::from_millis(5))).await;
            Ok(frame)
        }),
    );
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MockToolCall;

    async fn post(
        server: &MockServer,
        path: &str,
        body: Value,
        headers: &[(&str, &str)],
    ) -> (u16, String) {
        let mut request = reqwest::Client::new()
            .post(format!("{}{path}", server.root_url()))
            .json(&body);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    fn data_lines(body: &str) -> Vec<Value> {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn serves_script_in_order_and_records_requests() {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("one"));
        let body =
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true});
        let (status, text) = post(&server, "/v1/chat/completions", body.clone(), &[]).await;
        assert_eq!(status, 200);
        assert!(text.contains(r#""content":"one""#), "{text}");
        assert!(text.ends_with("data: [DONE]\n\n"));
        let (status, text) = post(&server, "/v1/chat/completions", body, &[]).await;
        assert_eq!(status, 500);
        assert!(text.contains("mock script exhausted"));
        let requests = server.chat_requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].last_message_text(), "hi");
    }

    #[tokio::test]
    async fn the_same_script_plays_on_every_wire() {
        let server = MockServer::start().await.unwrap();
        let reply = Reply::execute("python", "print(1)").with_text("Running.");
        server.repeat(reply);
        let (_, chat) = post(
            &server,
            "/v1/chat/completions",
            json!({"stream": true}),
            &[],
        )
        .await;
        assert!(
            data_lines(&chat)
                .iter()
                .any(
                    |e| e["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "execute"
                )
        );

        let (_, responses) = post(&server, "/v1/responses", json!({}), &[]).await;
        let events = data_lines(&responses);
        assert!(
            responses.starts_with("event: response.created\n"),
            "{responses}"
        );
        assert_eq!(events.last().unwrap()["type"], "response.completed");
        let seq: Vec<u64> = events
            .iter()
            .map(|e| e["sequence_number"].as_u64().unwrap())
            .collect();
        assert_eq!(seq, (0..seq.len() as u64).collect::<Vec<_>>());
        assert!(
            events
                .iter()
                .any(|e| e["type"] == "response.function_call_arguments.delta")
        );

        let (status, _) = post(&server, "/v1/messages", json!({}), &[]).await;
        assert_eq!(status, 400, "anthropic-version is required");
        let (_, messages) = post(
            &server,
            "/v1/messages",
            json!({}),
            &[("anthropic-version", "2023-06-01")],
        )
        .await;
        let kinds: Vec<String> = data_lines(&messages)
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(kinds.first().map(String::as_str), Some("message_start"));
        assert_eq!(kinds.last().map(String::as_str), Some("message_stop"));
        assert!(kinds.contains(&"ping".to_owned()));
        assert!(messages.contains("\"stop_reason\":\"tool_use\""));
    }

    #[tokio::test]
    async fn errors_take_each_wires_shape_and_keys_are_checked_per_wire() {
        let server = MockServer::start().await.unwrap();
        server.repeat(Reply::error(529, "Overloaded"));
        let (status, body) = post(
            &server,
            "/v1/messages",
            json!({}),
            &[("anthropic-version", "2023-06-01")],
        )
        .await;
        assert_eq!(status, 529);
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        );
        let (_, body) = post(&server, "/v1/responses", json!({}), &[]).await;
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap()["error"]["message"],
            "Overloaded"
        );

        server.require_api_key("sk-good");
        let (status, _) = post(
            &server,
            "/v1/messages",
            json!({}),
            &[
                ("anthropic-version", "2023-06-01"),
                ("authorization", "Bearer sk-good"),
            ],
        )
        .await;
        assert_eq!(status, 401, "the messages wire wants x-api-key");
        let (status, _) = post(
            &server,
            "/v1/chat/completions",
            json!({}),
            &[("authorization", "Bearer sk-bad")],
        )
        .await;
        assert_eq!(status, 401);
        let (status, _) = post(&server, "/chat/completions", json!({}), &[]).await;
        assert_eq!(status, 404);
    }

    #[tokio::test]
    async fn without_stream_true_a_chat_request_gets_one_completion_object() {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::execute("python", "print(1)").with_text("Running."));
        let (status, text) =
            post(&server, "/v1/chat/completions", json!({"model": "m"}), &[]).await;
        assert_eq!(status, 200);
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["choices"][0]["message"]["content"], "Running.");
        assert_eq!(
            body["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
            "execute"
        );
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    }

    #[tokio::test]
    async fn cut_streams_abort_the_connection() {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("a long reply").cut_after_events(2));
        let r = reqwest::Client::new()
            .post(format!("{}/chat/completions", server.base_url()))
            .json(&json!({"stream": true}))
            .send()
            .await
            .unwrap();
        assert!(r.text().await.is_err(), "the body must end in an error");
    }

    #[tokio::test]
    async fn lists_models() {
        let server = MockServer::start().await.unwrap();
        let body = reqwest::get(format!("{}/models", server.base_url()))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(body.contains("mock-large"));
        server.set_models(json!({"models": [{"name": "llama3.2:3b"}]}));
        let body = reqwest::get(format!("{}/models", server.base_url()))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(body.contains("llama3.2:3b"));
        let _ = MockToolCall::execute("python", "1");
    }
}
