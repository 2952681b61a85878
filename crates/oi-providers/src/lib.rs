//! Clients for the language-model APIs oi talks to, behind one trait.
//!
//! A [`ModelClient`] turns a wire-neutral [`ModelRequest`] into a stream of
//! [`StreamEvent`]s: text as it arrives, complete tool calls, and a final
//! `Completed` with the finish reason and token usage. Retries of failed
//! requests happen inside the client and are reported as `Retrying` events, so
//! the agent never needs to know which wire format it is talking to.

mod attempt;
mod catalog;
mod chat;
pub mod discover;
mod error;
mod form;
mod messages;
mod models;
mod responses;
mod retry;
mod transport;

use std::pin::Pin;
use std::time::Duration;

use futures::Stream;
use oi_protocol::{Message, ToolCall, Usage, WireApi};
use serde::Serialize;

pub use catalog::{Catalog, ModelInfo, Pricing};
pub use chat::{ChatClient, replay_chat_stream};
pub use error::ProviderError;
pub use form::ReplyForm;
pub use messages::{DEFAULT_MAX_TOKENS, MessagesClient};
pub use models::list_models;
pub use responses::ResponsesClient;
pub use retry::RetryPolicy;

/// A request to the model, independent of the wire format.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub model: String,
    /// The system prompt, sent first (or in the wire's own system field).
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// A key that stays the same for a whole session, so the provider can
    /// route requests to the same prompt cache (OpenAI `prompt_cache_key`).
    pub cache_key: Option<String>,
    /// The form the reply must take, where the server can hold the model
    /// to it (llama.cpp's `grammar` on the chat wire, the built-in engine);
    /// other servers are not asked.
    pub form: Option<ReplyForm>,
}

/// A function tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
    /// A tool the provider defines itself, sent in its own form where the
    /// wire and model have it (the function form above elsewhere).
    #[serde(skip)]
    pub builtin: Option<BuiltinTool>,
}

impl ToolSpec {
    /// A plain function tool.
    pub fn function(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            builtin: None,
        }
    }
}

/// Tools some providers define themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinTool {
    /// Screen, mouse and keyboard (Anthropic's computer-use tool on the
    /// Messages wire with a Claude model), for a display of this size.
    Computer { width: u32, height: u32 },
    /// A persistent shell (Anthropic's bash tool, `bash_20250124`).
    Bash,
    /// View, create and edit files (Anthropic's text editor tool,
    /// `text_editor_20250728`, named `str_replace_based_edit_tool`).
    TextEditor,
}

/// One step of a streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The request failed in a retryable way; the client waits, then retries.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
    /// A piece of the reply text.
    TextDelta(String),
    /// A piece of the model's reasoning, as it can be read (thinking text,
    /// a reasoning summary); shown, never sent back.
    ReasoningDelta(String),
    /// A complete tool call; emitted once its arguments have fully arrived.
    ToolCall(ToolCall),
    /// An opaque item the provider wants sent back with the rest of the
    /// reply on later requests (a reasoning item, a thinking block).
    Reasoning(serde_json::Value),
    /// The reply started over after a broken stream, and says something
    /// else than before: drop the text received so far.
    Restart,
    /// The reply is complete. Always the last event of a successful stream.
    Completed {
        finish_reason: FinishReason,
        usage: Option<Usage>,
    },
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// The reply hit the output token limit and is cut short.
    Length,
    ContentFilter,
    Other(String),
}

impl FinishReason {
    fn from_wire(reason: &str) -> Self {
        match reason {
            "stop" | "end_turn" | "eos" => Self::Stop,
            "tool_calls" | "function_call" | "tool_use" => Self::ToolCalls,
            "length" | "max_tokens" => Self::Length,
            "content_filter" => Self::ContentFilter,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// The stream a client returns; it ends after `Completed` or an error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// A language-model API.
pub trait ModelClient: Send + Sync + std::fmt::Debug {
    /// Send `request` and stream the reply. Nothing is sent until the stream is
    /// polled; dropping the stream cancels the request.
    fn stream(&self, request: ModelRequest) -> EventStream;

    /// The JSON body `request` is sent as (for showing it to the user).
    fn request_body(&self, request: &ModelRequest) -> serde_json::Value;

    /// The context window the server says it serves `model` with (see
    /// [`discover::context_window`]); `None` when it does not say.
    fn context_window<'a>(&'a self, model: &'a str) -> futures::future::BoxFuture<'a, Option<u32>> {
        let _ = model;
        Box::pin(async { None })
    }
}

/// A client for `wire` with `config`.
pub fn client(config: ProviderConfig, wire: WireApi) -> std::sync::Arc<dyn ModelClient> {
    match wire {
        WireApi::Chat => std::sync::Arc::new(ChatClient::new(config)),
        WireApi::Responses => std::sync::Arc::new(ResponsesClient::new(config)),
        WireApi::Messages => std::sync::Arc::new(MessagesClient::new(config)),
    }
}

/// Where and how to reach a model server.
#[derive(Clone)]
pub struct ProviderConfig {
    /// A name for messages, e.g. `OpenAI` or `the model server`.
    pub name: String,
    /// The API base, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The API key, if the server needs one.
    pub api_key: Option<String>,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Extra query parameters added to every request URL.
    pub query_params: Vec<(String, String)>,
    pub retry: RetryPolicy,
    /// A server that sends nothing for this long (before its answer
    /// starts, or in the middle of a stream) is treated as broken.
    pub stream_idle_timeout: Duration,
    /// The longest one reply may stream (a server that never ends).
    pub stream_max_duration: Duration,
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<hidden>"))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("query_params", &self.query_params)
            .field("retry", &self.retry)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("stream_max_duration", &self.stream_max_duration)
            .finish()
    }
}

impl ProviderConfig {
    /// One hour: no model's reply legitimately streams longer.
    pub const DEFAULT_STREAM_MAX_DURATION: Duration = Duration::from_secs(3600);
    /// The most one reply may send (64 MiB of events): far above the longest
    /// reply any model writes, far below what would strain memory.
    pub const MAX_REPLY_BYTES: u64 = 64 * 1024 * 1024;

    pub fn new(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            base_url: base_url.into(),
            api_key: None,
            headers: Vec::new(),
            query_params: Vec::new(),
            retry: RetryPolicy::default(),
            stream_idle_timeout: Duration::from_secs(300),
            stream_max_duration: Self::DEFAULT_STREAM_MAX_DURATION,
        }
    }

    /// What must never be shown: the key and the headers' values.
    pub fn secrets(&self) -> oi_protocol::Secrets {
        oi_protocol::Secrets::new(
            self.api_key
                .iter()
                .cloned()
                .chain(self.headers.iter().map(|(_, v)| v.clone())),
        )
    }

    /// `base_url` joined with `path`, with exactly one `/` between them.
    pub fn endpoint(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}

/// An Anthropic-style endpoint under `base`, which may be the API root
/// (`https://api.anthropic.com`) or end in `/v1`: `/v1` is never doubled.
pub(crate) fn messages_endpoint(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{base}/v1/{}", path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_endpoints_never_double_v1() {
        for base in [
            "https://api.anthropic.com",
            "https://api.anthropic.com/",
            "https://api.anthropic.com/v1",
            "https://api.anthropic.com/v1/",
        ] {
            assert_eq!(
                messages_endpoint(base, "messages"),
                "https://api.anthropic.com/v1/messages"
            );
        }
    }

    #[test]
    fn endpoint_joins_with_one_slash() {
        for base in ["http://h/v1", "http://h/v1/", "http://h/v1//"] {
            assert_eq!(
                ProviderConfig::new("x", base).endpoint("/chat/completions"),
                "http://h/v1/chat/completions"
            );
        }
    }
}
