//! Scripted replies and their rendering as a Chat Completions SSE stream.

use std::time::Duration;

use serde_json::{Value, json};

/// A tool call the mock model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct MockToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model writes them: usually JSON text, but a test
    /// may script malformed arguments too.
    pub arguments: String,
}

impl MockToolCall {
    /// A call of the `execute` tool, as a capable model makes it.
    pub fn execute(language: &str, code: &str) -> Self {
        Self::new("execute", json!({"language": language, "code": code}))
    }

    pub fn new(name: &str, arguments: Value) -> Self {
        Self {
            id: String::new(),
            name: name.to_owned(),
            arguments: arguments.to_string(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// A streamed completion.
    Completion {
        text: String,
        tool_calls: Vec<MockToolCall>,
        finish_reason: Option<String>,
        usage: Option<(u64, u64)>,
    },
    /// An HTTP error with a body and headers.
    Error {
        status: u16,
        body: String,
        headers: Vec<(String, String)>,
    },
    /// The exact bytes of an SSE body, for malformed streams.
    RawSse(String),
}

/// One scripted answer of the mock server.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(crate) body: Body,
    /// Characters of text (and of tool arguments) per chunk.
    pub(crate) chunk_chars: usize,
    /// Split the SSE byte stream into writes of this many bytes (may cut UTF-8
    /// characters and events in half, as TCP may).
    pub(crate) write_bytes: Option<usize>,
    /// Abort the connection after this many SSE events.
    pub(crate) cut_after_events: Option<usize>,
    /// Whether the stream ends with `data: [DONE]`.
    pub(crate) send_done: bool,
    /// Wait between SSE events.
    pub(crate) event_delay: Option<Duration>,
}

impl Reply {
    fn completion(text: &str, tool_calls: Vec<MockToolCall>) -> Self {
        Self {
            body: Body::Completion {
                text: text.to_owned(),
                tool_calls,
                finish_reason: None,
                usage: None,
            },
            chunk_chars: 4,
            write_bytes: None,
            cut_after_events: None,
            send_done: true,
            event_delay: None,
        }
    }

    /// A reply of text only.
    pub fn text(text: &str) -> Self {
        Self::completion(text, Vec::new())
    }

    /// A reply that calls `execute` once.
    pub fn execute(language: &str, code: &str) -> Self {
        Self::completion("", vec![MockToolCall::execute(language, code)])
    }

    /// A reply with these tool calls (ids are assigned if left empty).
    pub fn tool_calls(calls: Vec<MockToolCall>) -> Self {
        Self::completion("", calls)
    }

    /// Adds text before the tool calls.
    pub fn with_text(mut self, text: &str) -> Self {
        if let Body::Completion { text: t, .. } = &mut self.body {
            *t = text.to_owned();
        }
        self
    }

    /// An HTTP error with an OpenAI-shaped body:
    /// `{"error": {"message", "type", "param", "code"}}`.
    pub fn error(status: u16, message: &str) -> Self {
        let (kind, code) = match status {
            401 => ("invalid_request_error", json!("invalid_api_key")),
            404 => ("invalid_request_error", json!("model_not_found")),
            429 => ("requests", json!("rate_limit_exceeded")),
            s if s >= 500 => ("server_error", Value::Null),
            _ => ("invalid_request_error", Value::Null),
        };
        let body =
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
        Self::raw_error(status, &body.to_string())
    }

    /// An HTTP error with exactly this body.
    pub fn raw_error(status: u16, body: &str) -> Self {
        Self {
            body: Body::Error {
                status,
                body: body.to_owned(),
                headers: vec![("content-type".into(), "application/json".into())],
            },
            ..Self::text("")
        }
    }

    /// Adds a response header (e.g. `retry-after`) to an error reply.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Body::Error { headers, .. } = &mut self.body {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// A `text/event-stream` body of exactly these bytes.
    pub fn raw_sse(body: &str) -> Self {
        Self {
            body: Body::RawSse(body.to_owned()),
            ..Self::text("")
        }
    }

    /// Streams text and arguments `n` characters per chunk (default 4).
    pub fn chunk_chars(mut self, n: usize) -> Self {
        self.chunk_chars = n.max(1);
        self
    }

    /// Writes the SSE bytes `n` at a time, splitting events and characters.
    pub fn write_bytes(mut self, n: usize) -> Self {
        self.write_bytes = Some(n.max(1));
        self
    }

    /// Aborts the connection after `n` events, as a dropped connection would.
    pub fn cut_after_events(mut self, n: usize) -> Self {
        self.cut_after_events = Some(n);
        self
    }

    /// Ends the stream without `data: [DONE]`.
    pub fn without_done(mut self) -> Self {
        self.send_done = false;
        self
    }

    /// Sets the finish reason (default: `tool_calls` when there are calls, else `stop`).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        if let Body::Completion { finish_reason, .. } = &mut self.body {
            *finish_reason = Some(reason.to_owned());
        }
        self
    }

    /// Reports this usage (default: estimated from the sizes of request and reply).
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        if let Body::Completion { usage, .. } = &mut self.body {
            *usage = Some((input, output));
        }
        self
    }

    /// Waits this long before each event.
    pub fn event_delay(mut self, delay: Duration) -> Self {
        self.event_delay = Some(delay);
        self
    }

    /// The SSE events (each a complete `data: …\n\n` frame) for a completion,
    /// the way OpenAI streams them: a role chunk, content chunks, tool call
    /// chunks (id and name first, then argument fragments), a finish chunk,
    /// the usage chunk when asked for, then `[DONE]`.
    pub(crate) fn sse_events(&self, request: &Value, serial: u64) -> Vec<String> {
        let Body::Completion {
            text,
            tool_calls,
            finish_reason,
            usage,
        } = &self.body
        else {
            return Vec::new();
        };
        let model = request
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("mock-model");
        let include_usage = request
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let id = format!("chatcmpl-mock{serial}");
        let chunk = |delta: Value, finish: Value| {
            let mut c = json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": 1_700_000_000u64 + serial,
                "model": model,
                "system_fingerprint": "fp_mock",
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                // OpenAI pads chunks with a random field unless asked not to;
                // clients must ignore fields they do not know.
                "obfuscation": "q3Rk",
            });
            if include_usage {
                c["usage"] = Value::Null;
            }
            c
        };
        let mut events = Vec::new();
        if tool_calls.is_empty() || !text.is_empty() {
            events.push(chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            ));
            for piece in split_chars(text, self.chunk_chars) {
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
        }
        for (index, call) in tool_calls.iter().enumerate() {
            let call_id = if call.id.is_empty() {
                format!("call_mock{serial}_{index}")
            } else {
                call.id.clone()
            };
            let mut first = json!({"tool_calls": [{
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }]});
            if index == 0 && text.is_empty() {
                first["role"] = json!("assistant");
                first["content"] = Value::Null;
                first["refusal"] = Value::Null;
            }
            events.push(chunk(first, Value::Null));
            for piece in split_chars(&call.arguments, self.chunk_chars) {
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
        }
        let finish = finish_reason.clone().unwrap_or_else(|| {
            if tool_calls.is_empty() {
                "stop".to_owned()
            } else {
                "tool_calls".to_owned()
            }
        });
        events.push(chunk(json!({}), json!(finish)));
        if include_usage {
            let (input, output) = usage.unwrap_or_else(|| {
                let out_chars =
                    text.len() + tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>();
                (
                    (request.to_string().len() / 4) as u64,
                    (out_chars / 4).max(1) as u64,
                )
            });
            events.push(json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": 1_700_000_000u64 + serial,
                "model": model,
                "system_fingerprint": "fp_mock",
                "choices": [],
                "usage": {
                    "prompt_tokens": input,
                    "completion_tokens": output,
                    "total_tokens": input + output,
                    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
                },
                "obfuscation": "x",
            }));
        }
        let mut frames: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        if self.send_done {
            frames.push("data: [DONE]\n\n".to_owned());
        }
        frames
    }
}

/// Splits text into pieces of `n` characters (never inside a character).
fn split_chars(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(frame: &str) -> Value {
        serde_json::from_str(frame.strip_prefix("data: ").unwrap().trim_end()).unwrap()
    }

    #[test]
    fn text_reply_streams_role_content_finish_usage_done() {
        let request = json!({"model": "m", "stream_options": {"include_usage": true}});
        let frames = Reply::text("héllo!")
            .chunk_chars(2)
            .usage(7, 3)
            .sse_events(&request, 1);
        assert_eq!(frames.len(), 1 + 3 + 1 + 1 + 1);
        assert_eq!(data(&frames[0])["choices"][0]["delta"]["role"], "assistant");
        let text: String = frames[1..4]
            .iter()
            .map(|f| {
                data(f)["choices"][0]["delta"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(text, "héllo!");
        assert_eq!(data(&frames[4])["choices"][0]["finish_reason"], "stop");
        assert_eq!(data(&frames[5])["usage"]["prompt_tokens"], 7);
        assert_eq!(data(&frames[5])["choices"], json!([]));
        assert_eq!(frames[6], "data: [DONE]\n\n");
    }

    #[test]
    fn tool_call_arguments_arrive_in_fragments() {
        let request = json!({"model": "m"});
        let frames = Reply::execute("python", "print(1)")
            .chunk_chars(5)
            .sse_events(&request, 2);
        let first = data(&frames[0]);
        assert_eq!(
            first["choices"][0]["delta"]["tool_calls"][0]["id"],
            "call_mock2_0"
        );
        assert_eq!(
            first["choices"][0]["delta"]["tool_calls"][0]["function"]["name"],
            "execute"
        );
        assert!(first.get("usage").is_none(), "no usage unless asked for");
        let args: String = frames[1..frames.len() - 2]
            .iter()
            .map(|f| {
                data(f)["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let parsed: Value = serde_json::from_str(&args).unwrap();
        assert_eq!(parsed, json!({"language": "python", "code": "print(1)"}));
        assert_eq!(
            data(&frames[frames.len() - 2])["choices"][0]["finish_reason"],
            "tool_calls"
        );
    }
}
