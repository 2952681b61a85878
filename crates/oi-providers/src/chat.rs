//! The OpenAI Chat Completions wire (`POST {base_url}/chat/completions`), streamed.
//!
//! Spoken by OpenAI and by nearly every other server: Ollama, llama.cpp, vLLM,
//! LM Studio, OpenRouter, Groq, DeepSeek, Mistral, Together …

use std::sync::Arc;

use oi_protocol::{ContentPart, Message, ToolCall, Usage};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::attempt::{Assembled, ChunkError, Decoder};
use crate::error::truncate_chars;
use crate::transport::{RetryBudget, sse_events, with_restarts};
use crate::{EventStream, FinishReason, ModelClient, ModelRequest, ProviderConfig};

/// A client for the Chat Completions wire.
#[derive(Debug, Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    config: Arc<ProviderConfig>,
}

impl ChatClient {
    pub fn new(config: ProviderConfig) -> Self {
        Self {
            http: crate::transport::client_for(&config.base_url, reqwest::Client::builder()),
            config: Arc::new(config),
        }
    }
}

impl ModelClient for ChatClient {
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

impl ChatClient {
    /// One attempt at the request (itself retried until it gets a response).
    fn attempt(&self, request: ModelRequest, budget: Arc<RetryBudget>) -> EventStream {
        let url = self.config.endpoint("chat/completions");
        let body = request_body(&request);
        let key = self.config.api_key.clone();
        crate::attempt::stream::<ChatAccumulator>(
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

/// Decodes a recorded Chat Completions SSE body (given in pieces as it
/// arrived) into the events a client would yield.
pub fn replay_chat_stream(chunks: Vec<bytes::Bytes>) -> EventStream {
    let bytes = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    Box::pin(crate::attempt::decode::<ChatAccumulator, _>(
        sse_events(
            bytes,
            "the recording".to_owned(),
            crate::transport::StreamLimits {
                idle: std::time::Duration::from_secs(3600),
                max_duration: std::time::Duration::from_secs(3600),
                max_bytes: u64::MAX,
            },
        ),
        "the recording".to_owned(),
    ))
}

/// The JSON body of a streamed Chat Completions request.
fn request_body(request: &ModelRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    // Tool messages carry text only on this wire: images from tool results
    // follow them in a user message.
    let mut pending_images: Vec<Value> = Vec::new();
    for message in &request.messages {
        if !matches!(message, Message::Tool { .. }) && !pending_images.is_empty() {
            messages.push(images_message(std::mem::take(&mut pending_images)));
        }
        messages.push(match message {
            Message::User { content } => json!({"role": "user", "content": user_content(content)}),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut m = json!({"role": "assistant"});
                m["content"] = if text.is_empty() && !tool_calls.is_empty() {
                    Value::Null
                } else {
                    Value::String(text.clone())
                };
                if !tool_calls.is_empty() {
                    m["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments},
                            })
                        })
                        .collect();
                }
                m
            }
            Message::Tool { call_id, content } => {
                pending_images.extend(image_parts(content));
                json!({"role": "tool", "tool_call_id": call_id, "content": join_text(content)})
            }
        });
    }
    if !pending_images.is_empty() {
        messages.push(images_message(pending_images));
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                })
            })
            .collect();
    }
    if let Some(max) = request.max_tokens {
        body["max_tokens"] = json!(max);
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(key) = &request.cache_key {
        body["prompt_cache_key"] = json!(key);
    }
    // llama.cpp's server reads `grammar`; the others this is sent to
    // (local servers, for small models) leave a field they do not know.
    if let Some(form) = &request.form {
        body["grammar"] = json!(form.gbnf().as_ref());
    }
    body
}

/// A user message's content: a plain string, or parts when it has images.
fn user_content(content: &[ContentPart]) -> Value {
    if content.iter().all(|p| p.as_text().is_some()) {
        return Value::String(join_text(content));
    }
    content
        .iter()
        .map(|part| match part {
            ContentPart::Text { text } => json!({"type": "text", "text": text}),
            ContentPart::Image { .. } => {
                json!({"type": "image_url", "image_url": {"url": part.image_data_url()}})
            }
        })
        .collect()
}

fn image_parts(content: &[ContentPart]) -> Vec<Value> {
    content
        .iter()
        .filter_map(ContentPart::image_data_url)
        .map(|url| json!({"type": "image_url", "image_url": {"url": url}}))
        .collect()
}

fn images_message(images: Vec<Value>) -> Value {
    let mut content = vec![json!({"type": "text", "text": "Images from the tool results above:"})];
    content.extend(images);
    json!({"role": "user", "content": content})
}

fn join_text(content: &[ContentPart]) -> String {
    let texts: Vec<&str> = content.iter().filter_map(ContentPart::as_text).collect();
    texts.join("\n")
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// Reasoning text, as DeepSeek, llama.cpp and vLLM stream it.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// The same, as OpenRouter and newer vLLM name it.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, Default)]
struct PartialCall {
    index: u32,
    id: String,
    name: String,
    arguments: String,
}

/// Assembles a streamed reply from its chunks: text passes straight through,
/// tool calls are collected (their arguments arrive in pieces) until the end.
#[derive(Debug, Default)]
struct ChatAccumulator {
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// Whether `[DONE]` came.
    saw_done: bool,
    /// Reasoning text of the last chunk, not yet taken.
    thought: Option<String>,
}

impl ChatAccumulator {
    /// Takes the `data` of one event; returns the text it adds, if any.
    fn read_event(&mut self, data: &str) -> Result<Option<String>, ChunkError> {
        if data == "[DONE]" {
            self.saw_done = true;
            return Ok(None);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            ChunkError::Malformed(format!("{e} in `{}`", truncate_chars(data, 120)))
        })?;
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| error.to_string());
            let code = ["code", "type"]
                .iter()
                .find_map(|k| error.get(*k).and_then(Value::as_str))
                .unwrap_or("")
                .to_owned();
            return Err(ChunkError::Api(code, message));
        }
        if let Some(u) = chunk.usage {
            self.usage = Some(Usage {
                input_tokens: u.prompt_tokens,
                output_tokens: u.completion_tokens,
                cached_input_tokens: u
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .unwrap_or(0),
                cache_write_input_tokens: 0,
                reasoning_output_tokens: u
                    .completion_tokens_details
                    .and_then(|d| d.reasoning_tokens)
                    .unwrap_or(0),
            });
        }
        let mut text: Option<String> = None;
        // Only the first choice is used; oi never asks for more than one.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(thought) = delta
                .reasoning_content
                .or(delta.reasoning)
                .filter(|t| !t.is_empty())
            {
                self.thought.get_or_insert_default().push_str(&thought);
            }
            if let Some(content) = delta.content.filter(|c| !c.is_empty()) {
                match &mut text {
                    Some(t) => t.push_str(&content),
                    None => text = Some(content),
                }
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.push_call_delta(call);
            }
        }
        Ok(text)
    }

    fn push_call_delta(&mut self, delta: ToolCallDelta) {
        // Servers that omit `index` (some OpenAI-compatible ones) send each call
        // whole, or start a new call with a new id.
        let index = delta
            .index
            .unwrap_or_else(|| match (self.calls.last(), &delta.id) {
                (Some(last), Some(id)) if !last.id.is_empty() && &last.id != id => last.index + 1,
                (Some(last), _) => last.index,
                (None, _) => 0,
            });
        let slot = match self.calls.iter().position(|c| c.index == index) {
            Some(i) => i,
            None => {
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot];
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name {
                // The name arrives whole in the first delta; some servers repeat it.
                if !call.name.ends_with(&name) {
                    call.name.push_str(&name);
                }
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
    }

    fn assemble(mut self) -> (Vec<ToolCall>, FinishReason, Option<Usage>) {
        self.calls.sort_by_key(|c| c.index);
        let calls = self
            .calls
            .into_iter()
            .map(|c| ToolCall {
                id: if c.id.is_empty() {
                    format!("call_{}", c.index)
                } else {
                    c.id
                },
                name: c.name,
                arguments: c.arguments,
            })
            .collect::<Vec<_>>();
        let finish = match self.finish_reason.as_deref() {
            Some(reason) => FinishReason::from_wire(reason),
            None if calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        (calls, finish, self.usage)
    }
}

impl Decoder for ChatAccumulator {
    fn push(&mut self, data: &str) -> Result<Option<String>, ChunkError> {
        self.read_event(data)
    }

    fn take_thought(&mut self) -> Option<String> {
        self.thought.take()
    }

    fn ended(&self) -> bool {
        self.saw_done
    }

    fn finish(self) -> Result<Assembled, String> {
        // Some servers close the stream right after the finish reason
        // without `[DONE]`; that reply is complete. Without either it was
        // cut short.
        if !self.saw_done && self.finish_reason.is_none() {
            return Err("the stream ended without a finish reason or `[DONE]`".to_owned());
        }
        let (calls, finish_reason, usage) = self.assemble();
        Ok(Assembled {
            reasoning: Vec::new(),
            calls,
            finish_reason,
            usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSpec;
    use pretty_assertions::assert_eq;

    fn feed(chunks: &[&str]) -> (String, Vec<ToolCall>, FinishReason, Option<Usage>) {
        let mut acc = ChatAccumulator::default();
        let mut text = String::new();
        for chunk in chunks {
            if let Some(t) = acc.push(chunk).unwrap() {
                text.push_str(&t);
            }
        }
        let (calls, finish, usage) = acc.assemble();
        (text, calls, finish, usage)
    }

    #[test]
    fn assembles_text_and_usage() {
        let (text, calls, finish, usage) = feed(&[
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":4}}}"#,
        ]);
        assert_eq!(text, "Hello");
        assert!(calls.is_empty());
        assert_eq!(finish, FinishReason::Stop);
        assert_eq!(
            usage,
            Some(Usage {
                input_tokens: 9,
                output_tokens: 2,
                cached_input_tokens: 4,
                cache_write_input_tokens: 0,
                reasoning_output_tokens: 0,
            })
        );
    }

    #[test]
    fn reasoning_content_is_read_apart_from_the_text() {
        let mut acc = ChatAccumulator::default();
        let mut thoughts = Vec::new();
        let mut text = String::new();
        for chunk in [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"The user wants"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":" a sum."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":"OpenRouter's name."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"4"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ] {
            text.extend(acc.push(chunk).unwrap());
            thoughts.extend(acc.take_thought());
        }
        assert_eq!(
            thoughts,
            ["The user wants", " a sum.", "OpenRouter's name."]
        );
        assert_eq!(text, "4");
    }

    #[test]
    fn assembles_several_tool_calls_with_fragmented_arguments() {
        let (text, calls, finish, _) = feed(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"execute","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"lang"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"uage\": \"python\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"execute","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(text, "");
        assert_eq!(finish, FinishReason::ToolCalls);
        assert_eq!(
            calls,
            vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "execute".into(),
                    arguments: r#"{"language": "python"}"#.into()
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "execute".into(),
                    arguments: "{}".into()
                },
            ]
        );
    }

    #[test]
    fn tool_calls_without_index_or_id_still_assemble() {
        let (_, calls, finish, _) = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"x1","function":{"name":"execute","arguments":"{\"a\":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"x2","function":{"name":"execute","arguments":"{\"a\":2}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":5,"function":{"name":"execute","arguments":"{}"}}]}}]}"#,
        ]);
        assert_eq!(finish, FinishReason::ToolCalls);
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["x1", "x2", "call_5"]);
        assert_eq!(calls[1].arguments, r#"{"a":2}"#);
    }

    #[test]
    fn reports_malformed_chunks_and_stream_errors() {
        let mut acc = ChatAccumulator::default();
        assert!(matches!(
            acc.push("{not json"),
            Err(ChunkError::Malformed(_))
        ));
        assert_eq!(
            acc.push(r#"{"error":{"message":"context too long","type":"invalid_request_error"}}"#),
            Err(ChunkError::Api(
                "invalid_request_error".into(),
                "context too long".into()
            ))
        );
    }

    #[test]
    fn images_of_tool_results_follow_in_a_user_message() {
        let request = ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![
                Message::Tool {
                    call_id: "c1".into(),
                    content: vec![
                        ContentPart::text("saved plot.png"),
                        ContentPart::Image {
                            media_type: "image/png".into(),
                            data: "iVBO".into(),
                        },
                    ],
                },
                Message::user("next"),
            ],
            tools: Vec::new(),
            max_tokens: None,
            temperature: None,
            cache_key: None,
            form: None,
        };
        let body = request_body(&request);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "tool", "tool_call_id": "c1", "content": "saved plot.png"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images from the tool results above:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                ]},
                {"role": "user", "content": "next"},
            ])
        );
    }

    #[test]
    fn request_body_has_tools_history_and_usage_option() {
        let request = ModelRequest {
            model: "m".into(),
            system: "sys".into(),
            messages: vec![
                Message::user("hi"),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "execute".into(),
                        arguments: "{}".into(),
                    }],
                    reasoning: Vec::new(),
                },
                Message::tool("c1", "ok"),
            ],
            tools: vec![ToolSpec {
                name: "execute".into(),
                description: "run".into(),
                parameters: json!({"type": "object"}),
                builtin: None,
            }],
            max_tokens: Some(100),
            temperature: None,
            cache_key: Some("session-1".into()),
            form: None,
        };
        assert_eq!(
            request_body(&request),
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "execute", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "tools": [{"type": "function", "function": {"name": "execute", "description": "run", "parameters": {"type": "object"}}}],
                "max_tokens": 100,
                "prompt_cache_key": "session-1",
            })
        );
    }

    #[test]
    fn a_reply_form_is_sent_as_llama_cpp_grammar() {
        let mut request = ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message::user("hi")],
            tools: Vec::new(),
            max_tokens: None,
            temperature: None,
            cache_key: None,
            form: None,
        };
        assert!(request_body(&request).get("grammar").is_none());
        request.form = Some(crate::ReplyForm::OneCodeBlock);
        let body = request_body(&request);
        assert_eq!(
            body["grammar"],
            json!(crate::ReplyForm::OneCodeBlock.gbnf().as_ref())
        );
        assert!(
            body["grammar"]
                .as_str()
                .is_some_and(|g| g.starts_with("root ::= "))
        );
    }
}
