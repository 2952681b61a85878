//! One streaming attempt, the same for every wire: send the request (with
//! retries), read the server-sent events through the wire's [`Decoder`],
//! and turn what it assembled into reply events.

use std::sync::Arc;

use futures::StreamExt;
use oi_protocol::{ToolCall, Usage};
use reqwest::header::ACCEPT;
use serde_json::Value;

use crate::error::api_error;
use crate::transport::{Attempt, RetryBudget, SseEvent, response_events, send_with_retries};
use crate::{EventStream, FinishReason, ProviderConfig, ProviderError, StreamEvent};

/// What is wrong with one event of a stream.
#[derive(Debug, PartialEq)]
pub(crate) enum ChunkError {
    /// Not an event of this wire format.
    Malformed(String),
    /// The server reported an error in the stream: its code (or type) and
    /// message.
    Api(String, String),
}

/// What a complete reply came to, beyond its text.
#[derive(Debug)]
pub(crate) struct Assembled {
    /// Opaque reasoning items to send back on later requests.
    pub reasoning: Vec<Value>,
    pub calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Option<Usage>,
}

/// How a wire reads its stream: event by event, then what the reply came
/// to.
pub(crate) trait Decoder: Default + Send {
    /// Takes the `data` of one event; returns the text it adds, if any.
    fn push(&mut self, data: &str) -> Result<Option<String>, ChunkError>;

    /// The readable reasoning the last event added, if any (a thinking
    /// block's text, a reasoning summary, `reasoning_content`).
    fn take_thought(&mut self) -> Option<String> {
        None
    }

    /// Whether the wire said the reply is over (nothing after it is read).
    fn ended(&self) -> bool;

    /// What the reply came to once the stream ended; what was missing when
    /// the stream ended before the reply was complete.
    fn finish(self) -> Result<Assembled, String>;
}

/// One attempt at a reply: `request` (a POST to `url` accepting an event
/// stream; the wire adds its headers and body) sent with retries, its
/// events read with `D`.
pub(crate) fn stream<D: Decoder + 'static>(
    config: Arc<ProviderConfig>,
    url: String,
    budget: Arc<RetryBudget>,
    request: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder + Send + Sync + 'static,
    http: reqwest::Client,
) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let response = send_with_retries(&config, &url, &budget, || {
            request(http.post(&url).header(ACCEPT, "text/event-stream"))
        });
        futures::pin_mut!(response);
        let response = loop {
            match response.next().await {
                Some(Attempt::Retrying(event)) => yield event,
                Some(Attempt::Done(result)) => break result?,
                None => Err(ProviderError::StreamCut {
                    provider: config.name.clone(),
                    detail: "no response".to_owned(),
                })?,
            }
        };
        let events = decode::<D, _>(response_events(response, &config), config.name.clone());
        futures::pin_mut!(events);
        while let Some(event) = events.next().await {
            yield event?;
        }
    })
}

/// The reply events of a stream of server-sent `events`, read with `D`:
/// text and readable reasoning as they come, then reasoning items, tool
/// calls and the completion.
pub(crate) fn decode<D, S>(
    events: S,
    provider: String,
) -> impl futures::Stream<Item = Result<StreamEvent, ProviderError>>
where
    D: Decoder,
    S: futures::Stream<Item = Result<SseEvent, ProviderError>>,
{
    async_stream::try_stream! {
        futures::pin_mut!(events);
        let mut decoder = D::default();
        while let Some(event) = events.next().await {
            let event = event?;
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            let pushed = decoder.push(data);
            if let Some(thought) = decoder.take_thought() {
                yield StreamEvent::ReasoningDelta(thought);
            }
            match pushed {
                Ok(Some(text)) => yield StreamEvent::TextDelta(text),
                Ok(None) => {}
                Err(ChunkError::Malformed(detail)) => Err(ProviderError::MalformedEvent {
                    provider: provider.clone(),
                    detail,
                })?,
                Err(ChunkError::Api(code, message)) => Err(api_error(&provider, &code, message))?,
            }
            if decoder.ended() {
                break;
            }
        }
        let reply = decoder.finish().map_err(|detail| ProviderError::StreamCut {
            provider: provider.clone(),
            detail,
        })?;
        for item in reply.reasoning {
            yield StreamEvent::Reasoning(item);
        }
        for call in reply.calls {
            yield StreamEvent::ToolCall(call);
        }
        yield StreamEvent::Completed {
            finish_reason: reply.finish_reason,
            usage: reply.usage,
        };
    }
}
