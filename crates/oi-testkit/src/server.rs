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

/// A request the mock server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
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

    /// The request's messages (chat wire), for assertions.
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The content of the last message, as text.
    pub fn last_message_text(&self) -> String {
        self.messages()
            .last()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    fallback: Option<Reply>,
    api_key: Option<String>,
    requests: Vec<RecordedRequest>,
    served: u64,
}

/// A scripted OpenAI-compatible server on 127.0.0.1 with a random port.
/// It stops when dropped.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("scripted", &self.script.len())
            .field("requests", &self.requests.len())
            .finish()
    }
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

    /// The API base to give a client: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The server root, without `/v1`.
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

    /// Requires `Authorization: Bearer <key>`; other requests get OpenAI's 401.
    pub fn require_api_key(&self, key: &str) -> &Self {
        self.lock().api_key = Some(key.to_owned());
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// The requests to the chat completions endpoint.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
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

async fn handle(
    State(shared): State<Arc<Mutex<Shared>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let request_body = recorded.body.clone();
    let (reply, serial) = {
        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
        s.requests.push(recorded);
        if method != Method::POST || uri.path() != "/v1/chat/completions" {
            return openai_error(
                StatusCode::NOT_FOUND,
                &format!("Invalid URL ({method} {})", uri.path()),
                "invalid_request_error",
                Value::Null,
            );
        }
        if let Some(key) = &s.api_key {
            let sent = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            if sent != Some(key.as_str()) {
                return openai_error(
                    StatusCode::UNAUTHORIZED,
                    &format!(
                        "Incorrect API key provided: {}. You can find your API key in your account settings.",
                        sent.unwrap_or("(none)")
                    ),
                    "invalid_request_error",
                    json!("invalid_api_key"),
                );
            }
        }
        s.served += 1;
        let serial = s.served;
        let reply = match s.script.pop_front() {
            Some(reply) => reply,
            None => match &s.fallback {
                Some(reply) => reply.clone(),
                None => {
                    let received = s.requests.len();
                    return openai_error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!(
                            "mock script exhausted: request {serial} has no scripted reply ({received} requests received)"
                        ),
                        "server_error",
                        Value::Null,
                    );
                }
            },
        };
        (reply, serial)
    };
    respond(reply, &request_body, serial)
}

fn openai_error(status: StatusCode, message: &str, kind: &str, code: Value) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn respond(reply: Reply, request: &Value, serial: u64) -> Response {
    let frames: Vec<String> = match &reply.body {
        ReplyBody::Error {
            status,
            body,
            headers,
        } => {
            let mut response = Response::new(Body::from(body.clone()));
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
        ReplyBody::Completion { .. } => reply.sse_events(request, serial),
    };
    let cut = reply.cut_after_events;
    let total = frames.len();
    let frames: Vec<String> = frames.into_iter().take(cut.unwrap_or(total)).collect();
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
    let aborted = cut.is_some_and(|n| n < total);
    let stream = futures::stream::iter(bytes.into_iter().map(Ok::<_, std::io::Error>))
        .then(move |item| async move {
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            item
        })
        .chain(
            futures::stream::iter(aborted.then_some(())).then(|()| async {
                // Pending once, so the server flushes what was sent before the
                // connection is dropped (as a real broken connection would).
                tokio::task::yield_now().await;
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "mock: stream cut off",
                ))
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

    #[tokio::test]
    async fn serves_script_in_order_and_records_requests() {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("one"));
        let client = reqwest::Client::new();
        let url = format!("{}/chat/completions", server.base_url());
        let body = client
            .post(&url)
            .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(body.contains(r#""content":"one""#), "{body}");
        assert!(body.ends_with("data: [DONE]\n\n"));
        let exhausted = client.post(&url).json(&json!({})).send().await.unwrap();
        assert_eq!(exhausted.status(), 500);
        assert!(
            exhausted
                .text()
                .await
                .unwrap()
                .contains("mock script exhausted")
        );
        let requests = server.chat_requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].last_message_text(), "hi");
    }

    #[tokio::test]
    async fn unknown_paths_get_404_and_bad_keys_get_401() {
        let server = MockServer::start().await.unwrap();
        server.require_api_key("sk-good");
        let client = reqwest::Client::new();
        let r = client
            .post(format!("{}/chat/completions", server.root_url()))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        let r = client
            .post(format!("{}/chat/completions", server.base_url()))
            .bearer_auth("sk-bad")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        assert!(r.text().await.unwrap().contains("invalid_api_key"));
    }

    #[tokio::test]
    async fn cut_streams_abort_the_connection() {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("a long reply").cut_after_events(2));
        let r = reqwest::Client::new()
            .post(format!("{}/chat/completions", server.base_url()))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert!(r.text().await.is_err(), "the body must end in an error");
    }
}
