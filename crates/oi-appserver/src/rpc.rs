//! JSON-RPC 2.0 as the app-server speaks it: one JSON object per line, the
//! `"jsonrpc"` member optional on input and left out on output (as Codex
//! does). Both sides send requests: the client asks for threads and turns,
//! the server asks the client to approve code.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

/// The standard error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// An error answer: what was wrong, and where (`data.field`, when one
/// request field is to blame).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    /// `field` of the request's params is wrong.
    pub fn invalid_params(field: &str, message: impl Into<String>) -> Self {
        Self {
            code: code::INVALID_PARAMS,
            message: message.into(),
            data: Some(json!({ "field": field })),
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }
}

/// One line from the client, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The answer to a request of the server's.
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
}

/// A line that is not a JSON-RPC message: the error to send back, with
/// the request's id when it had a readable one (else `null`).
pub type Unreadable = Box<(Value, RpcError)>;

/// Reads one line.
pub fn parse(line: &str) -> Result<Incoming, Unreadable> {
    let bad = |id: Value, error: RpcError| -> Unreadable { Box::new((id, error)) };
    let value: Value = serde_json::from_str(line).map_err(|e| {
        bad(
            Value::Null,
            RpcError::new(
                code::PARSE_ERROR,
                format!("the line is not JSON ({e}); send one JSON-RPC message per line"),
            ),
        )
    })?;
    let Value::Object(mut message) = value else {
        return Err(bad(
            Value::Null,
            RpcError::invalid_request("a message must be a JSON object"),
        ));
    };
    let id = message.remove("id");
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return Err(bad(
            Value::Null,
            RpcError::invalid_request("`id` must be a string or an integer"),
        ));
    }
    let params = message.remove("params").unwrap_or(Value::Null);
    match (message.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(_), id) => Err(bad(
            id.unwrap_or(Value::Null),
            RpcError::invalid_request("`method` must be a string"),
        )),
        (None, Some(id)) => {
            let result = match (message.remove("result"), message.remove("error")) {
                (Some(result), None) => Ok(result),
                (None, Some(error)) => Err(error),
                _ => {
                    return Err(bad(
                        id,
                        RpcError::invalid_request(
                            "a response must have exactly one of `result` and `error`",
                        ),
                    ));
                }
            };
            Ok(Incoming::Response { id, result })
        }
        (None, None) => Err(bad(
            Value::Null,
            RpcError::invalid_request("a message needs a `method` (or an `id` and a `result`)"),
        )),
    }
}

/// The answers to the server's own requests, by id.
type Pending = HashMap<String, oneshot::Sender<Result<Value, Value>>>;

/// The way out to the client: every message goes through one writer, in
/// the order sent. Cheap to clone; shared by every thread.
#[derive(Debug, Clone)]
pub struct Outgoing {
    lines: mpsc::UnboundedSender<Value>,
    pending: Arc<Mutex<Pending>>,
    next_id: Arc<AtomicI64>,
}

impl Outgoing {
    /// An outgoing side, and the messages to write (one per line).
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Value>) {
        let (lines, rx) = mpsc::unbounded_channel();
        (
            Self {
                lines,
                pending: Arc::default(),
                next_id: Arc::new(AtomicI64::new(0)),
            },
            rx,
        )
    }

    fn send(&self, message: Value) {
        // The writer is gone only when the client has gone: nothing to do.
        let _ = self.lines.send(message);
    }

    pub fn respond(&self, id: Value, result: Value) {
        self.send(json!({ "id": id, "result": result }));
    }

    pub fn error(&self, id: Value, error: RpcError) {
        self.send(json!({ "id": id, "error": error }));
    }

    pub fn notify(&self, method: &str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Object(Map::new()));
        self.send(json!({ "method": method, "params": params }));
    }

    /// Sends a request to the client; the answer (its `result`, or its
    /// `error`) arrives on the receiver, which is closed if the client
    /// leaves without answering.
    pub fn request(
        &self,
        method: &str,
        params: impl Serialize,
    ) -> (Value, oneshot::Receiver<Result<Value, Value>>) {
        let id = Value::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id.to_string(), tx);
        }
        let params = serde_json::to_value(params).unwrap_or(Value::Object(Map::new()));
        self.send(json!({ "id": id, "method": method, "params": params }));
        (id, rx)
    }

    /// Drops every request still waiting for the client's answer (the
    /// client has gone): each waiter sees its receiver closed.
    pub fn cancel_pending(&self) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.clear();
        }
    }

    /// Hands the client's answer to the request waiting for it; `false`
    /// when no request of the server's has this id.
    pub fn resolve(&self, id: &Value, result: Result<Value, Value>) -> bool {
        let waiting = self
            .pending
            .lock()
            .ok()
            .and_then(|mut pending| pending.remove(&id.to_string()));
        match waiting {
            Some(tx) => {
                let _ = tx.send(result);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn messages_of_each_kind_are_read() {
        assert_eq!(
            parse(r#"{"id": 1, "method": "thread/start", "params": {"cwd": "/w"}}"#),
            Ok(Incoming::Request {
                id: json!(1),
                method: "thread/start".into(),
                params: json!({"cwd": "/w"}),
            })
        );
        assert_eq!(
            parse(r#"{"jsonrpc": "2.0", "method": "initialized"}"#),
            Ok(Incoming::Notification {
                method: "initialized".into(),
                params: Value::Null,
            })
        );
        assert_eq!(
            parse(r#"{"id": "a", "result": {"decision": "accept"}}"#),
            Ok(Incoming::Response {
                id: json!("a"),
                result: Ok(json!({"decision": "accept"})),
            })
        );
    }

    #[test]
    fn malformed_lines_are_errors_that_say_why() {
        let (id, e) = *parse("{not json").unwrap_err();
        assert_eq!((id, e.code), (Value::Null, code::PARSE_ERROR));
        assert!(e.message.contains("not JSON"), "{}", e.message);
        let (_, e) = *parse("[1, 2]").unwrap_err();
        assert_eq!(e.code, code::INVALID_REQUEST);
        let (id, e) = *parse(r#"{"id": 7, "method": 3}"#).unwrap_err();
        assert_eq!((id, e.code), (json!(7), code::INVALID_REQUEST));
        let (_, e) = *parse(r#"{"id": {"x": 1}, "method": "m"}"#).unwrap_err();
        assert!(e.message.contains("`id`"), "{}", e.message);
        let (_, e) = *parse(r#"{"params": {}}"#).unwrap_err();
        assert!(e.message.contains("`method`"), "{}", e.message);
    }

    #[tokio::test]
    async fn a_request_of_the_server_gets_its_answer() {
        let (out, mut lines) = Outgoing::new();
        let (id, answer) = out.request("item/commandExecution/requestApproval", json!({}));
        let sent = lines.recv().await.unwrap();
        assert_eq!(sent["method"], "item/commandExecution/requestApproval");
        assert_eq!(sent["id"], id);
        assert!(!out.resolve(&json!(99), Ok(json!({}))));
        assert!(out.resolve(&id, Ok(json!({"decision": "decline"}))));
        assert_eq!(answer.await.unwrap(), Ok(json!({"decision": "decline"})));
    }
}
