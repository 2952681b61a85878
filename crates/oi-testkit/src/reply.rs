//! Scripted replies: what the mock model says, independent of the wire; see
//! `wire.rs` for how each API format streams it.

use std::time::Duration;

use serde_json::{Value, json};

/// A tool call the mock model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct MockToolCall {
    /// The call id; assigned per wire (`call_…`, `toolu_…`) when empty.
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

/// A successful reply: text, then tool calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct Completion {
    pub text: String,
    pub tool_calls: Vec<MockToolCall>,
    /// `stop`, `tool_calls` or `length` (rendered in each wire's own terms).
    pub finish_reason: Option<String>,
    pub usage: Option<(u64, u64)>,
    /// Prompt-cache tokens read and written (reported by the messages wire
    /// as such, by the OpenAI wires as cached tokens).
    pub cache: (u64, u64),
    /// An encrypted reasoning item (responses wire) or thinking block
    /// (messages wire) sent before the text.
    pub reasoning: Option<String>,
    /// Reasoning in words, streamed before the text: `reasoning_content`
    /// (chat), a reasoning summary (responses), thinking text (messages).
    pub thought: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Body {
    Completion(Completion),
    /// An HTTP error: the message goes into each wire's own error body,
    /// unless `raw` gives the exact body.
    Error {
        status: u16,
        message: String,
        raw: Option<String>,
        headers: Vec<(String, String)>,
    },
    /// The exact bytes of an SSE body, for malformed streams.
    RawSse(String),
    /// No answer at all: the request is read, and nothing is ever sent.
    Silent,
    /// A reply whose text never ends: `text` again and again.
    Endless(String),
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
    /// Chat wire: whether the stream ends with `data: [DONE]`.
    pub(crate) send_done: bool,
    /// Wait before each SSE event.
    pub(crate) event_delay: Option<Duration>,
    /// Stop sending (keeping the connection open) after this many events.
    pub(crate) hang_after_events: Option<usize>,
}

impl Reply {
    fn completion(text: &str, tool_calls: Vec<MockToolCall>) -> Self {
        Self {
            body: Body::Completion(Completion {
                text: text.to_owned(),
                tool_calls,
                ..Completion::default()
            }),
            chunk_chars: 4,
            write_bytes: None,
            cut_after_events: None,
            send_done: true,
            event_delay: None,
            hang_after_events: None,
        }
    }

    /// A reply described in JSON, for test drivers in other processes:
    /// `{"text": "…"}`, `{"execute": [["python", "print(1)"], …], "text"?:
    /// "…"}`, `{"error": {"status": 400, "message": "…"}}`, `{"endless":
    /// "ab"}`, each with optional `"usage": [input, output]` and
    /// `"event_delay_ms": N`.
    pub fn from_spec(spec: &serde_json::Value) -> Result<Self, String> {
        let text = spec.get("text").and_then(serde_json::Value::as_str);
        let mut reply = if let Some(calls) = spec.get("execute") {
            let calls = calls
                .as_array()
                .ok_or("`execute` is a list of [language, code] pairs")?
                .iter()
                .map(|pair| match pair.as_array().map(Vec::as_slice) {
                    Some([language, code]) => match (language.as_str(), code.as_str()) {
                        (Some(language), Some(code)) => Ok(MockToolCall::execute(language, code)),
                        _ => Err("each `execute` pair is two strings".to_owned()),
                    },
                    _ => Err("each `execute` entry is a [language, code] pair".to_owned()),
                })
                .collect::<Result<Vec<_>, String>>()?;
            let reply = Self::tool_calls(calls);
            match text {
                Some(text) => reply.with_text(text),
                None => reply,
            }
        } else if let Some(error) = spec.get("error") {
            let status = error
                .get("status")
                .and_then(serde_json::Value::as_u64)
                .and_then(|s| u16::try_from(s).ok())
                .ok_or("`error.status` is an HTTP status")?;
            let message = error
                .get("message")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("mock error");
            Self::error(status, message)
        } else if let Some(endless) = spec.get("endless").and_then(serde_json::Value::as_str) {
            Self::endless(endless)
        } else if let Some(text) = text {
            Self::text(text)
        } else {
            return Err("a reply has `text`, `execute`, `error` or `endless`".to_owned());
        };
        if let Some(usage) = spec.get("usage") {
            match usage.as_array().map(Vec::as_slice) {
                Some([input, output]) => {
                    reply = reply.usage(
                        input.as_u64().ok_or("`usage` holds two numbers")?,
                        output.as_u64().ok_or("`usage` holds two numbers")?,
                    );
                }
                _ => return Err("`usage` is [input_tokens, output_tokens]".to_owned()),
            }
        }
        if let Some(ms) = spec
            .get("event_delay_ms")
            .and_then(serde_json::Value::as_u64)
        {
            reply = reply.event_delay(Duration::from_millis(ms));
        }
        Ok(reply)
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

    fn completion_mut(&mut self) -> Option<&mut Completion> {
        match &mut self.body {
            Body::Completion(c) => Some(c),
            _ => None,
        }
    }

    /// Adds text before the tool calls.
    pub fn with_text(mut self, text: &str) -> Self {
        if let Some(c) = self.completion_mut() {
            c.text = text.to_owned();
        }
        self
    }

    /// Starts the reply with an opaque reasoning item holding `secret`
    /// (encrypted content on the responses wire, a signed thinking block on
    /// the messages wire; the chat wire has none).
    pub fn with_reasoning(mut self, secret: &str) -> Self {
        if let Some(c) = self.completion_mut() {
            c.reasoning = Some(secret.to_owned());
        }
        self
    }

    /// Starts the reply with reasoning in words, streamed as each wire
    /// streams it: `reasoning_content` deltas (chat, as DeepSeek, llama.cpp
    /// and vLLM send them), a reasoning summary (responses), a thinking
    /// block's text (messages).
    pub fn with_thought(mut self, text: &str) -> Self {
        if let Some(c) = self.completion_mut() {
            c.thought = Some(text.to_owned());
        }
        self
    }

    /// An HTTP error whose body is the wire's own error shape carrying
    /// `message` (OpenAI's `{"error": {…}}`, Anthropic's `{"type": "error", …}`).
    pub fn error(status: u16, message: &str) -> Self {
        Self {
            body: Body::Error {
                status,
                message: message.to_owned(),
                raw: None,
                headers: vec![("content-type".into(), "application/json".into())],
            },
            ..Self::text("")
        }
    }

    /// An HTTP error with exactly this body.
    pub fn raw_error(status: u16, body: &str) -> Self {
        Self {
            body: Body::Error {
                status,
                message: String::new(),
                raw: Some(body.to_owned()),
                headers: vec![("content-type".into(), "application/json".into())],
            },
            ..Self::text("")
        }
    }

    /// Any answer with exactly this status, content type and body (e.g. a
    /// web page where an API was expected).
    pub fn page(status: u16, content_type: &str, body: &str) -> Self {
        Self::raw_error(status, body).header("content-type", content_type)
    }

    /// A server that accepts the request and never sends a byte.
    pub fn silent() -> Self {
        Self {
            body: Body::Silent,
            ..Self::text("")
        }
    }

    /// A reply that streams `text` over and over and never ends (one piece
    /// per event, after the delay set with [`Reply::event_delay`]).
    pub fn endless(text: &str) -> Self {
        Self {
            body: Body::Endless(text.to_owned()),
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

    /// Sends `n` events, then nothing more while keeping the connection open.
    pub fn hang_after_events(mut self, n: usize) -> Self {
        self.hang_after_events = Some(n);
        self
    }

    /// Ends a chat-wire stream without `data: [DONE]`.
    pub fn without_done(mut self) -> Self {
        self.send_done = false;
        self
    }

    /// Sets the finish reason: `stop`, `tool_calls` or `length` (default:
    /// `tool_calls` when there are calls, else `stop`).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        if let Some(c) = self.completion_mut() {
            c.finish_reason = Some(reason.to_owned());
        }
        self
    }

    /// Reports this usage (default: estimated from the sizes of request and reply).
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        if let Some(c) = self.completion_mut() {
            c.usage = Some((input, output));
        }
        self
    }

    /// Reports prompt-cache tokens read and written (part of the input).
    pub fn cached(mut self, read: u64, write: u64) -> Self {
        if let Some(c) = self.completion_mut() {
            c.cache = (read, write);
        }
        self
    }

    /// Waits this long before each event.
    pub fn event_delay(mut self, delay: Duration) -> Self {
        self.event_delay = Some(delay);
        self
    }
}

/// Splits text into pieces of `n` characters (never inside a character).
pub(crate) fn split_chars(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{chat_frames, messages_frames, responses_frames};

    fn data(frame: &str) -> Value {
        let line = frame
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap();
        serde_json::from_str(line).unwrap()
    }

    fn completion(reply: &Reply) -> &Completion {
        match &reply.body {
            Body::Completion(c) => c,
            _ => panic!("not a completion"),
        }
    }

    #[test]
    fn chat_text_streams_role_content_finish_usage_done() {
        let request = json!({"model": "m", "stream_options": {"include_usage": true}});
        let reply = Reply::text("héllo!").chunk_chars(2).usage(7, 3);
        let frames = chat_frames(completion(&reply), 2, true, &request, 1);
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
    fn tool_call_arguments_arrive_in_fragments_on_every_wire() {
        let request = json!({"model": "m"});
        let reply = Reply::execute("python", "print(1)");
        let c = completion(&reply);
        let expected = json!({"language": "python", "code": "print(1)"});

        let frames = chat_frames(c, 5, true, &request, 2);
        assert_eq!(
            data(&frames[0])["choices"][0]["delta"]["tool_calls"][0]["id"],
            "call_mock2_0"
        );
        assert!(
            data(&frames[0]).get("usage").is_none(),
            "no usage unless asked for"
        );
        let args: String = frames[1..frames.len() - 2]
            .iter()
            .map(|f| {
                data(f)["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(serde_json::from_str::<Value>(&args).unwrap(), expected);

        let args: String = responses_frames(c, 5, &request, 3)
            .iter()
            .map(|f| data(f))
            .filter(|e| e["type"] == "response.function_call_arguments.delta")
            .map(|e| e["delta"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(serde_json::from_str::<Value>(&args).unwrap(), expected);

        let args: String = messages_frames(c, 5, &request, 4)
            .iter()
            .map(|f| data(f))
            .filter(|e| e["delta"]["type"] == "input_json_delta")
            .map(|e| e["delta"]["partial_json"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(serde_json::from_str::<Value>(&args).unwrap(), expected);
    }

    #[test]
    fn responses_frames_carry_event_names_and_reasoning() {
        let reply = Reply::text("ok").with_reasoning("enc-123");
        let frames = responses_frames(completion(&reply), 4, &json!({}), 1);
        for frame in &frames {
            let name = frame
                .lines()
                .next()
                .unwrap()
                .strip_prefix("event: ")
                .unwrap();
            assert_eq!(data(frame)["type"], name);
        }
        assert!(
            frames
                .iter()
                .any(|f| data(f)["item"]["encrypted_content"] == "enc-123")
        );
    }
}
