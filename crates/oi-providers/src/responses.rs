//! The OpenAI Responses wire (`POST {base_url}/responses`), streamed.
//!
//! Requests are stateless (`store: false`): the whole conversation is sent
//! each time, with reasoning items passed back encrypted
//! (`include: ["reasoning.encrypted_content"]`) so reasoning models keep
//! their train of thought across tool calls.

use std::sync::Arc;

use oi_protocol::{ContentPart, Message, ToolCall, Usage};
use serde_json::{Value, json};

use crate::attempt::{Assembled, ChunkError, Decoder};
use crate::error::truncate_chars;
use crate::transport::{RetryBudget, with_restarts};
use crate::{EventStream, FinishReason, ModelClient, ModelRequest, ProviderConfig};

/// A client for the Responses wire.
#[derive(Debug, Clone)]
pub struct ResponsesClient {
    http: reqwest::Client,
    config: Arc<ProviderConfig>,
}

impl ResponsesClient {
    pub fn new(config: ProviderConfig) -> Self {
        Self {
            http: crate::transport::client_for(&config.base_url, reqwest::Client::builder()),
            config: Arc::new(config),
        }
    }
}

impl ModelClient for ResponsesClient {
    fn context_window<'a>(&'a self, model: &'a str) -> futures::future::BoxFuture<'a, Option<u32>> {
        Box::pin(crate::discover::context_window(&self.config, model))
    }

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

impl ResponsesClient {
    /// One attempt at the request (itself retried until it gets a response).
    fn attempt(&self, request: ModelRequest, budget: Arc<RetryBudget>) -> EventStream {
        let url = self.config.endpoint("responses");
        let body = request_body(&request);
        let key = self.config.api_key.clone();
        crate::attempt::stream::<ResponsesAccumulator>(
            Arc::clone(&self.config),
            url,
            budget,
            move |builder| {
                let builder = builder.json(&body);
                match &key {
                    Some(key) => builder.bearer_auth(key),
                    None => builder,
                }
            },
            self.http.clone(),
        )
    }
}

/// The JSON body of a streamed Responses request.
fn request_body(request: &ModelRequest) -> Value {
    let mut input = Vec::new();
    for message in &request.messages {
        match message {
            Message::User { content } => {
                input.push(json!({"role": "user", "content": input_content(content)}));
            }
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                input.extend(reasoning.iter().cloned());
                if !text.is_empty() {
                    input.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    }));
                }
                for call in tool_calls {
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }));
                }
            }
            Message::Tool { call_id, content } => input.push(json!({
                "type": "function_call_output",
                "call_id": call_id,
                "output": input_content(content),
            })),
        }
    }
    let mut body = json!({
        "model": request.model,
        "instructions": request.system,
        "input": input,
        "stream": true,
        "store": false,
        "include": ["reasoning.encrypted_content"],
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": false,
                })
            })
            .collect();
    }
    if let Some(max) = request.max_tokens {
        body["max_output_tokens"] = json!(max);
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(key) = &request.cache_key {
        body["prompt_cache_key"] = json!(key);
    }
    body
}

/// Text as a plain string; text with images as `input_text`/`input_image` parts.
fn input_content(content: &[ContentPart]) -> Value {
    if content.iter().all(|p| p.as_text().is_some()) {
        return Value::String(join_text(content));
    }
    content
        .iter()
        .map(|part| match part {
            ContentPart::Text { text } => json!({"type": "input_text", "text": text}),
            ContentPart::Image { .. } => {
                json!({"type": "input_image", "image_url": part.image_data_url()})
            }
        })
        .collect()
}

fn join_text(content: &[ContentPart]) -> String {
    let texts: Vec<&str> = content.iter().filter_map(ContentPart::as_text).collect();
    texts.join("\n")
}

#[derive(Debug, Default)]
struct Call {
    item_id: String,
    call_id: String,
    name: String,
    arguments: String,
}

/// Assembles a streamed Responses reply from its semantic events.
#[derive(Debug, Default)]
struct ResponsesAccumulator {
    calls: Vec<Call>,
    reasoning: Vec<Value>,
    /// Items whose text arrived as deltas (so the final item adds nothing).
    streamed_text: Vec<String>,
    usage: Option<Usage>,
    finished: Option<FinishReason>,
    /// Reasoning text (a summary, or the raw text some servers stream) of
    /// the last event, not yet taken.
    thought: Option<String>,
}

impl ResponsesAccumulator {
    /// Takes one event's data; returns text to show, if any.
    fn read_event(&mut self, data: &str) -> Result<Option<String>, ChunkError> {
        let event: Value = serde_json::from_str(data).map_err(|e| {
            ChunkError::Malformed(format!("{e} in `{}`", truncate_chars(data, 120)))
        })?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        let str_of =
            |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        match kind {
            "response.output_text.delta" => {
                let item_id = str_of(&event, "item_id");
                if !self.streamed_text.contains(&item_id) {
                    self.streamed_text.push(item_id);
                }
                let delta = str_of(&event, "delta");
                return Ok((!delta.is_empty()).then_some(delta));
            }
            "response.output_item.added" | "response.output_item.done" => {
                let Some(item) = event.get("item") else {
                    return Err(ChunkError::Malformed(format!("`{kind}` without an item")));
                };
                let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
                let item_id = str_of(item, "id");
                match item_type {
                    "function_call" => {
                        let call = match self.calls.iter_mut().position(|c| c.item_id == item_id) {
                            Some(i) => &mut self.calls[i],
                            None => {
                                self.calls.push(Call {
                                    item_id: item_id.clone(),
                                    ..Call::default()
                                });
                                let last = self.calls.len() - 1;
                                &mut self.calls[last]
                            }
                        };
                        call.call_id = str_of(item, "call_id");
                        call.name = str_of(item, "name");
                        // The finished item carries the whole arguments.
                        if kind == "response.output_item.done" || call.arguments.is_empty() {
                            call.arguments = str_of(item, "arguments");
                        }
                    }
                    "reasoning" if kind == "response.output_item.done" => {
                        self.reasoning.push(item.clone());
                    }
                    "message"
                        if kind == "response.output_item.done"
                            && !self.streamed_text.contains(&item_id) =>
                    {
                        // Some servers send the text only in the finished item.
                        let text: String = item
                            .get("content")
                            .and_then(Value::as_array)
                            .map(|parts| {
                                parts
                                    .iter()
                                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                                    .collect()
                            })
                            .unwrap_or_default();
                        return Ok((!text.is_empty()).then_some(text));
                    }
                    _ => {}
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = str_of(&event, "delta");
                if !delta.is_empty() {
                    self.thought = Some(delta);
                }
            }
            // A summary's later parts start on a paragraph of their own.
            "response.reasoning_summary_part.added"
                if event
                    .get("summary_index")
                    .and_then(Value::as_u64)
                    .is_some_and(|i| i > 0) =>
            {
                self.thought = Some("\n\n".to_owned());
            }
            "response.function_call_arguments.delta" => {
                let item_id = str_of(&event, "item_id");
                if let Some(call) = self.calls.iter_mut().find(|c| c.item_id == item_id) {
                    call.arguments.push_str(&str_of(&event, "delta"));
                }
            }
            "response.function_call_arguments.done" => {
                let item_id = str_of(&event, "item_id");
                if let Some(call) = self.calls.iter_mut().find(|c| c.item_id == item_id) {
                    call.arguments = str_of(&event, "arguments");
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = event.get("response").cloned().unwrap_or(Value::Null);
                if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
                    let n = |path: &str| u.pointer(path).and_then(Value::as_u64).unwrap_or(0);
                    self.usage = Some(Usage {
                        input_tokens: n("/input_tokens"),
                        output_tokens: n("/output_tokens"),
                        cached_input_tokens: n("/input_tokens_details/cached_tokens"),
                        cache_write_input_tokens: 0,
                        reasoning_output_tokens: n("/output_tokens_details/reasoning_tokens"),
                    });
                }
                self.finished = Some(if kind == "response.completed" {
                    FinishReason::Stop
                } else {
                    match response
                        .pointer("/incomplete_details/reason")
                        .and_then(Value::as_str)
                    {
                        Some("max_output_tokens") => FinishReason::Length,
                        Some("content_filter") => FinishReason::ContentFilter,
                        Some(other) => FinishReason::Other(other.to_owned()),
                        None => FinishReason::Other("incomplete".to_owned()),
                    }
                });
            }
            "response.failed" => {
                let text = |p: &str| {
                    event
                        .pointer(p)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                let message = Some(text("/response/error/message"))
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "the response failed".to_owned());
                return Err(ChunkError::Api(text("/response/error/code"), message));
            }
            "error" => {
                let text = |p: &str| event.pointer(p).and_then(Value::as_str).map(str::to_owned);
                let message = text("/message")
                    .or_else(|| text("/error/message"))
                    .unwrap_or_else(|| "unknown error".to_owned());
                let code = text("/code")
                    .or_else(|| text("/error/code"))
                    .or_else(|| text("/error/type"))
                    .unwrap_or_default();
                return Err(ChunkError::Api(code, message));
            }
            _ => {}
        }
        Ok(None)
    }

    fn calls(&mut self) -> Vec<ToolCall> {
        std::mem::take(&mut self.calls)
            .into_iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: if c.call_id.is_empty() {
                    format!("call_{i}")
                } else {
                    c.call_id
                },
                name: c.name,
                arguments: if c.arguments.is_empty() {
                    "{}".to_owned()
                } else {
                    c.arguments
                },
            })
            .collect()
    }
}

impl Decoder for ResponsesAccumulator {
    fn push(&mut self, data: &str) -> Result<Option<String>, ChunkError> {
        self.read_event(data)
    }

    fn take_thought(&mut self) -> Option<String> {
        self.thought.take()
    }

    fn ended(&self) -> bool {
        self.finished.is_some()
    }

    fn finish(mut self) -> Result<Assembled, String> {
        let Some(finish) = self.finished.take() else {
            return Err("the stream ended before `response.completed`".to_owned());
        };
        let calls = self.calls();
        let finish_reason = match finish {
            FinishReason::Stop if !calls.is_empty() => FinishReason::ToolCalls,
            other => other,
        };
        Ok(Assembled {
            reasoning: std::mem::take(&mut self.reasoning),
            calls,
            finish_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSpec;
    use pretty_assertions::assert_eq;

    fn feed(events: &[Value]) -> (String, ResponsesAccumulator) {
        let mut acc = ResponsesAccumulator::default();
        let mut text = String::new();
        for e in events {
            if let Some(t) = acc.push(&e.to_string()).unwrap() {
                text.push_str(&t);
            }
        }
        (text, acc)
    }

    #[test]
    fn assembles_text_calls_reasoning_and_usage() {
        let (text, mut acc) = feed(&[
            json!({"type": "response.created", "sequence_number": 0, "response": {"status": "in_progress"}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Let me "}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "look."}),
            json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": "Let me look."}]}}),
            json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "execute", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"language\":"}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "\"python\",\"code\":\"1\"}"}),
            json!({"type": "response.output_item.done", "output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "execute", "arguments": "{\"language\":\"python\",\"code\":\"1\"}"}}),
            json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 9}}}),
        ]);
        assert_eq!(text, "Let me look.");
        assert_eq!(acc.finished, Some(FinishReason::Stop));
        assert_eq!(
            acc.reasoning,
            vec![
                json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"})
            ]
        );
        assert_eq!(
            acc.calls(),
            vec![ToolCall {
                id: "call_a".into(),
                name: "execute".into(),
                arguments: "{\"language\":\"python\",\"code\":\"1\"}".into()
            }]
        );
        assert_eq!(
            acc.usage,
            Some(Usage {
                input_tokens: 50,
                output_tokens: 9,
                cached_input_tokens: 20,
                cache_write_input_tokens: 0,
                reasoning_output_tokens: 0,
            })
        );
    }

    #[test]
    fn reasoning_summaries_are_readable_as_they_stream() {
        let mut acc = ResponsesAccumulator::default();
        let mut thoughts = Vec::new();
        for event in [
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "**Planning**"}),
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "part": {"type": "summary_text", "text": ""}}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "delta": "Then run it."}),
            json!({"type": "response.reasoning_text.delta", "item_id": "rs_1", "output_index": 0, "content_index": 0, "delta": "raw"}),
        ] {
            assert_eq!(acc.push(&event.to_string()).unwrap(), None);
            thoughts.extend(acc.take_thought());
        }
        assert_eq!(thoughts, ["**Planning**", "\n\n", "Then run it.", "raw"]);
    }

    #[test]
    fn text_sent_only_in_the_finished_item_is_not_lost() {
        let (text, _) = feed(&[
            json!({"type": "response.output_item.done", "item": {"type": "message", "id": "m", "content": [{"type": "output_text", "text": "whole"}]}}),
        ]);
        assert_eq!(text, "whole");
    }

    #[test]
    fn failures_and_incomplete_replies_are_reported() {
        let mut acc = ResponsesAccumulator::default();
        assert_eq!(
            acc.push(&json!({"type": "response.failed", "response": {"status": "failed", "error": {"code": "server_error", "message": "boom"}}}).to_string()),
            Err(ChunkError::Api("server_error".into(), "boom".into()))
        );
        assert_eq!(
            acc.push(
                &json!({"type": "error", "code": "context_length_exceeded", "message": "too long"})
                    .to_string()
            ),
            Err(ChunkError::Api(
                "context_length_exceeded".into(),
                "too long".into()
            ))
        );
        let (_, acc) = feed(&[
            json!({"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}}),
        ]);
        assert_eq!(acc.finished, Some(FinishReason::Length));
    }

    #[test]
    fn images_go_in_as_input_images() {
        let content = vec![
            ContentPart::text("plot"),
            ContentPart::Image {
                media_type: "image/png".into(),
                data: "iVBO".into(),
            },
        ];
        assert_eq!(
            input_content(&content),
            json!([
                {"type": "input_text", "text": "plot"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBO"},
            ])
        );
        assert_eq!(input_content(&[ContentPart::text("a")]), json!("a"));
    }

    #[test]
    fn request_body_sends_history_as_items() {
        let request = ModelRequest {
            model: "gpt-5".into(),
            system: "sys".into(),
            messages: vec![
                Message::user("hi"),
                Message::Assistant {
                    text: "Running.".into(),
                    tool_calls: vec![ToolCall {
                        id: "call_a".into(),
                        name: "execute".into(),
                        arguments: "{}".into(),
                    }],
                    reasoning: vec![
                        json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "x", "summary": []}),
                    ],
                },
                Message::tool("call_a", "42"),
            ],
            tools: vec![ToolSpec {
                name: "execute".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
                builtin: None,
            }],
            max_tokens: Some(500),
            temperature: None,
            cache_key: Some("k".into()),
            form: None,
        };
        assert_eq!(
            request_body(&request),
            json!({
                "model": "gpt-5",
                "instructions": "sys",
                "input": [
                    {"role": "user", "content": "hi"},
                    {"type": "reasoning", "id": "rs_1", "encrypted_content": "x", "summary": []},
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Running."}]},
                    {"type": "function_call", "call_id": "call_a", "name": "execute", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "call_a", "output": "42"},
                ],
                "stream": true,
                "store": false,
                "include": ["reasoning.encrypted_content"],
                "tools": [{"type": "function", "name": "execute", "description": "d", "parameters": {"type": "object"}, "strict": false}],
                "max_output_tokens": 500,
                "prompt_cache_key": "k",
            })
        );
    }
}
