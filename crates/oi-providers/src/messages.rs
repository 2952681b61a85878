//! The Anthropic Messages wire (`POST {root}/v1/messages`), streamed.
//!
//! The stable start of every request — the system prompt and the tools — is
//! marked for prompt caching, and so is the newest user turn, so a long
//! session pays full price only for what is new.

use std::sync::Arc;

use oi_protocol::{ContentPart, Message, ToolCall, Usage};
use serde_json::{Value, json};

use crate::attempt::{Assembled, ChunkError, Decoder};
use crate::error::truncate_chars;
use crate::models::ANTHROPIC_VERSION;
use crate::transport::{RetryBudget, with_restarts};
use crate::{
    BuiltinTool, EventStream, FinishReason, ModelClient, ModelRequest, ProviderConfig,
    messages_endpoint,
};

/// `max_tokens` is required by this API; used when none is configured.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A client for the Anthropic Messages wire.
#[derive(Debug, Clone)]
pub struct MessagesClient {
    http: reqwest::Client,
    config: Arc<ProviderConfig>,
}

impl MessagesClient {
    pub fn new(config: ProviderConfig) -> Self {
        Self {
            http: crate::transport::client_for(&config.base_url, reqwest::Client::builder()),
            config: Arc::new(config),
        }
    }
}

impl ModelClient for MessagesClient {
    fn request_body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn stream(&self, request: ModelRequest) -> EventStream {
        let this = self.clone();
        with_restarts(Arc::clone(&self.config), move |budget| {
            this.attempt(request.clone(), budget)
        })
    }
}

impl MessagesClient {
    /// One attempt at the request (itself retried until it gets a response).
    fn attempt(&self, request: ModelRequest, budget: Arc<RetryBudget>) -> EventStream {
        let url = messages_endpoint(&self.config.base_url, "messages");
        let body = request_body(&request);
        let beta = beta_header(&request);
        let key = self.config.api_key.clone();
        crate::attempt::stream::<MessagesAccumulator>(
            Arc::clone(&self.config),
            url,
            budget,
            move |builder| {
                let mut builder = builder
                    .header("anthropic-version", ANTHROPIC_VERSION)
                    .json(&body);
                if let Some(beta) = beta {
                    builder = builder.header("anthropic-beta", beta);
                }
                match &key {
                    Some(key) => builder.header("x-api-key", key),
                    None => builder,
                }
            },
            self.http.clone(),
        )
    }
}

/// The JSON body of a streamed Messages request.
fn request_body(request: &ModelRequest) -> Value {
    // Consecutive messages of one role are merged: the API wants user and
    // assistant turns to alternate, and tool results are user content.
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    };
    for message in &request.messages {
        match message {
            Message::User { content } => push("user", blocks(content)),
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                let mut blocks: Vec<Value> = reasoning.clone();
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({"unparsed_arguments": call.arguments}));
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": input,
                    }));
                }
                push("assistant", blocks);
            }
            Message::Tool { call_id, content } => {
                let content = blocks(content);
                push(
                    "user",
                    vec![
                        json!({"type": "tool_result", "tool_use_id": call_id, "content": content}),
                    ],
                );
            }
        }
    }
    let last_user = turns.iter().rposition(|(role, _)| *role == "user");
    let messages: Vec<Value> = turns
        .into_iter()
        .enumerate()
        .map(|(i, (role, mut content))| {
            if Some(i) == last_user
                && let Some(last) = content.last_mut()
            {
                last["cache_control"] = json!({"type": "ephemeral"});
            }
            json!({"role": role, "content": content})
        })
        .collect();
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": request.system,
            "cache_control": {"type": "ephemeral"},
        }]);
    }
    if !request.tools.is_empty() {
        let count = request.tools.len();
        body["tools"] = request
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut tool = match (t.builtin, computer_tool_version(&request.model)) {
                    (Some(BuiltinTool::Computer { width, height }), Some((kind, _))) => json!({
                        "type": kind,
                        "name": t.name,
                        "display_width_px": width,
                        "display_height_px": height,
                    }),
                    // Claude's own client tools (no beta header needed).
                    (Some(BuiltinTool::Bash), Some(_)) => json!({
                        "type": "bash_20250124",
                        "name": t.name,
                    }),
                    (Some(BuiltinTool::TextEditor), Some(_)) => json!({
                        "type": "text_editor_20250728",
                        "name": t.name,
                    }),
                    _ => json!({
                        "name": t.name,
                        "description": t.description,
                        "input_schema": t.parameters,
                    }),
                };
                if i + 1 == count {
                    tool["cache_control"] = json!({"type": "ephemeral"});
                }
                tool
            })
            .collect();
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    body
}

/// Anthropic's computer-use tool type for `model`, and the beta header
/// value it needs; `None` for models that are not Claude (they get the
/// function form).
fn computer_tool_version(model: &str) -> Option<(&'static str, &'static str)> {
    let model = model.to_ascii_lowercase();
    if !model.contains("claude") {
        return None;
    }
    // The newest tool version is for the newest Opus models only.
    let newest = ["opus-4-5", "opus-4-6", "opus-4-7", "opus-5"]
        .iter()
        .any(|m| model.contains(m));
    Some(if newest {
        ("computer_20251124", "computer-use-2025-11-24")
    } else if model.contains("claude-3-5-sonnet") || model.contains("claude-3.5-sonnet") {
        ("computer_20241022", "computer-use-2024-10-22")
    } else {
        ("computer_20250124", "computer-use-2025-01-24")
    })
}

/// The `anthropic-beta` header a request needs, if any.
fn beta_header(request: &ModelRequest) -> Option<&'static str> {
    request
        .tools
        .iter()
        .any(|t| matches!(t.builtin, Some(BuiltinTool::Computer { .. })))
        .then(|| computer_tool_version(&request.model).map(|(_, beta)| beta))
        .flatten()
}

/// Text and image blocks (empty text is left out: the API refuses it).
fn blocks(content: &[ContentPart]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if text.is_empty() => None,
            ContentPart::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentPart::Image { media_type, data } => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            })),
        })
        .collect()
}

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// A thinking (or redacted thinking) block, kept whole to send back.
    Thinking(Value),
    Other,
}

/// Assembles a streamed Messages reply from its events.
#[derive(Debug, Default)]
struct MessagesAccumulator {
    blocks: Vec<(u64, Block)>,
    usage: Usage,
    stop_reason: Option<String>,
    stopped: bool,
    /// Thinking text of the last event, not yet taken.
    thought: Option<String>,
}

impl MessagesAccumulator {
    fn read_event(&mut self, data: &str) -> Result<Option<String>, ChunkError> {
        let event: Value = serde_json::from_str(data).map_err(|e| {
            ChunkError::Malformed(format!("{e} in `{}`", truncate_chars(data, 120)))
        })?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(u) = event.pointer("/message/usage") {
                    self.read_usage(u);
                }
            }
            "content_block_start" => {
                let block = event.get("content_block").cloned().unwrap_or(Value::Null);
                let text = |k: &str| {
                    block
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                let parsed = match block.get("type").and_then(Value::as_str) {
                    Some("text") => Block::Text,
                    Some("tool_use") => Block::ToolUse {
                        id: text("id"),
                        name: text("name"),
                        json: String::new(),
                    },
                    Some("thinking" | "redacted_thinking") => Block::Thinking(block.clone()),
                    _ => Block::Other,
                };
                let initial = match &parsed {
                    Block::Text => Some(text("text")).filter(|t| !t.is_empty()),
                    _ => None,
                };
                self.blocks.push((index, parsed));
                return Ok(initial);
            }
            "content_block_delta" => {
                let delta = event.get("delta").cloned().unwrap_or(Value::Null);
                let text = |k: &str| {
                    delta
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                let block = self
                    .blocks
                    .iter_mut()
                    .rev()
                    .find(|(i, _)| *i == index)
                    .map(|(_, b)| b);
                match (delta.get("type").and_then(Value::as_str), block) {
                    (Some("text_delta"), _) => {
                        let t = text("text");
                        return Ok((!t.is_empty()).then_some(t));
                    }
                    (Some("input_json_delta"), Some(Block::ToolUse { json, .. })) => {
                        json.push_str(&text("partial_json"));
                    }
                    (Some("thinking_delta"), Some(Block::Thinking(block))) => {
                        let mut thinking = block
                            .get("thinking")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned();
                        let piece = text("thinking");
                        thinking.push_str(&piece);
                        block["thinking"] = json!(thinking);
                        if !piece.is_empty() {
                            self.thought = Some(piece);
                        }
                    }
                    (Some("signature_delta"), Some(Block::Thinking(block))) => {
                        block["signature"] = json!(text("signature"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(u) = event.get("usage") {
                    self.read_usage(u);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let message = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                let kind = event
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                return Err(ChunkError::Api(
                    kind.to_owned(),
                    format!("{message} ({kind})"),
                ));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Usage arrives in `message_start` and, cumulatively, in `message_delta`.
    fn read_usage(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let plain = n("input_tokens");
        let read = n("cache_read_input_tokens");
        let write = n("cache_creation_input_tokens");
        if plain.is_some() || read.is_some() || write.is_some() {
            let (plain, read, write) = (plain.unwrap_or(0), read.unwrap_or(0), write.unwrap_or(0));
            self.usage.input_tokens = plain + read + write;
            self.usage.cached_input_tokens = read;
            self.usage.cache_write_input_tokens = write;
        }
        if let Some(out) = n("output_tokens") {
            self.usage.output_tokens = out;
        }
    }

    fn assemble(self) -> (Vec<ToolCall>, Vec<Value>, FinishReason, Usage) {
        let mut calls = Vec::new();
        let mut reasoning = Vec::new();
        for (_, block) in self.blocks {
            match block {
                Block::ToolUse { id, name, json } => calls.push(ToolCall {
                    id,
                    name,
                    arguments: if json.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        json
                    },
                }),
                Block::Thinking(block) => reasoning.push(block),
                Block::Text | Block::Other => {}
            }
        }
        let finish = match self.stop_reason.as_deref() {
            Some("refusal") => FinishReason::ContentFilter,
            Some(reason) => FinishReason::from_wire(reason),
            None if calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        (calls, reasoning, finish, self.usage)
    }
}

impl Decoder for MessagesAccumulator {
    fn push(&mut self, data: &str) -> Result<Option<String>, ChunkError> {
        self.read_event(data)
    }

    fn take_thought(&mut self) -> Option<String> {
        self.thought.take()
    }

    fn ended(&self) -> bool {
        self.stopped
    }

    fn finish(self) -> Result<Assembled, String> {
        if !self.stopped {
            return Err("the stream ended before `message_stop`".to_owned());
        }
        let (calls, reasoning, finish_reason, usage) = self.assemble();
        Ok(Assembled {
            reasoning,
            calls,
            finish_reason,
            usage: Some(usage),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSpec;
    use pretty_assertions::assert_eq;

    #[test]
    fn assembles_text_tool_use_and_usage_with_cache_tokens() {
        let mut acc = MessagesAccumulator::default();
        let mut text = String::new();
        for event in [
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 10, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 1000, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "execute", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"language\": \"shell\","}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": " \"code\": \"ls\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 42}}),
            json!({"type": "message_stop"}),
        ] {
            if let Some(t) = acc.push(&event.to_string()).unwrap() {
                text.push_str(&t);
            }
        }
        assert!(acc.stopped);
        assert_eq!(text, "Checking");
        let (calls, reasoning, finish, usage) = acc.assemble();
        assert!(reasoning.is_empty());
        assert_eq!(finish, FinishReason::ToolCalls);
        assert_eq!(
            calls,
            vec![ToolCall {
                id: "toolu_1".into(),
                name: "execute".into(),
                arguments: "{\"language\": \"shell\", \"code\": \"ls\"}".into()
            }]
        );
        assert_eq!(
            usage,
            Usage {
                input_tokens: 1210,
                output_tokens: 42,
                cached_input_tokens: 1000,
                cache_write_input_tokens: 200,
                reasoning_output_tokens: 0,
            }
        );
    }

    #[test]
    fn thinking_blocks_are_kept_whole() {
        let mut acc = MessagesAccumulator::default();
        for event in [
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me think"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
            json!({"type": "message_stop"}),
        ] {
            acc.push(&event.to_string()).unwrap();
        }
        let (_, reasoning, finish, _) = acc.assemble();
        assert_eq!(
            reasoning,
            vec![json!({"type": "thinking", "thinking": "Let me think", "signature": "sig"})]
        );
        assert_eq!(finish, FinishReason::Stop);
    }

    #[test]
    fn thinking_text_is_readable_as_it_streams() {
        let mut acc = MessagesAccumulator::default();
        let mut thoughts = Vec::new();
        for event in [
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "think"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Done."}}),
        ] {
            acc.push(&event.to_string()).unwrap();
            thoughts.extend(acc.take_thought());
        }
        assert_eq!(thoughts, ["Let me ", "think"]);
    }

    #[test]
    fn stream_errors_are_reported() {
        let mut acc = MessagesAccumulator::default();
        assert_eq!(
            acc.push(&json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string()),
            Err(ChunkError::Api(
                "overloaded_error".into(),
                "Overloaded (overloaded_error)".into()
            ))
        );
    }

    #[test]
    fn claude_gets_the_computer_use_tool_type_and_its_beta_header() {
        let computer = ToolSpec {
            builtin: Some(BuiltinTool::Computer {
                width: 1280,
                height: 720,
            }),
            ..ToolSpec::function("computer", "screen", json!({"type": "object"}))
        };
        let request = |model: &str| ModelRequest {
            model: model.into(),
            system: String::new(),
            messages: vec![Message::user("hi")],
            tools: vec![computer.clone()],
            max_tokens: None,
            temperature: None,
            cache_key: None,
            form: None,
        };
        let claude = request("claude-sonnet-4-5");
        assert_eq!(
            request_body(&claude)["tools"],
            json!([{"type": "computer_20250124", "name": "computer", "display_width_px": 1280, "display_height_px": 720, "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(beta_header(&claude), Some("computer-use-2025-01-24"));
        let opus = request("claude-opus-4-5-20251101");
        assert_eq!(request_body(&opus)["tools"][0]["type"], "computer_20251124");
        assert_eq!(beta_header(&opus), Some("computer-use-2025-11-24"));
        // Another model on this wire gets the function form.
        let other = request("minimax-m2");
        assert_eq!(
            request_body(&other)["tools"][0]["input_schema"],
            json!({"type": "object"})
        );
        assert_eq!(beta_header(&other), None);
    }

    #[test]
    fn request_body_alternates_roles_and_marks_the_cache() {
        let request = ModelRequest {
            model: "claude".into(),
            system: "sys".into(),
            messages: vec![
                Message::user("hi"),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![
                        ToolCall {
                            id: "t1".into(),
                            name: "execute".into(),
                            arguments: "{\"code\":\"1\"}".into(),
                        },
                        ToolCall {
                            id: "t2".into(),
                            name: "execute".into(),
                            arguments: "{broken".into(),
                        },
                    ],
                    reasoning: Vec::new(),
                },
                Message::tool("t1", "one"),
                Message::Tool {
                    call_id: "t2".into(),
                    content: vec![
                        ContentPart::text("two"),
                        ContentPart::Image {
                            media_type: "image/png".into(),
                            data: "iVBO".into(),
                        },
                    ],
                },
            ],
            tools: vec![ToolSpec {
                name: "execute".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
                builtin: None,
            }],
            max_tokens: None,
            temperature: Some(0.2),
            cache_key: Some("ignored".into()),
            form: None,
        };
        assert_eq!(
            request_body(&request),
            json!({
                "model": "claude",
                "max_tokens": 4096,
                "stream": true,
                "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": "t1", "name": "execute", "input": {"code": "1"}},
                        {"type": "tool_use", "id": "t2", "name": "execute", "input": {"unparsed_arguments": "{broken"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "one"}]},
                        {"type": "tool_result", "tool_use_id": "t2", "content": [
                            {"type": "text", "text": "two"},
                            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                        ], "cache_control": {"type": "ephemeral"}},
                    ]},
                ],
                "tools": [{"name": "execute", "description": "d", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
                "temperature": 0.2,
            })
        );
    }
}
