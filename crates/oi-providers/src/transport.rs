//! What every wire shares: sending a request with retries, and reading a
//! server-sent-events stream with an idle timeout. Each failure becomes a
//! typed [`ProviderError`] naming the provider and the URL.

use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::RequestBuilder;
use reqwest::header::HeaderMap;

use crate::error::{describe_transport_error, error_message_from_body, truncate_chars};
use crate::retry::is_retryable_status;
use crate::{ProviderConfig, ProviderError, StreamEvent};

/// One step of sending: a retry about to happen, or the final outcome.
pub(crate) enum Attempt {
    Retrying(StreamEvent),
    Done(Result<reqwest::Response, ProviderError>),
}

/// Adds the provider's extra headers and query parameters.
pub(crate) fn with_extras(builder: RequestBuilder, config: &ProviderConfig) -> RequestBuilder {
    let mut builder = builder;
    for (name, value) in &config.headers {
        builder = builder.header(name, value);
    }
    if !config.query_params.is_empty() {
        builder = builder.query(&config.query_params);
    }
    builder
}

/// Sends the request built by `build`, retrying connection failures and
/// retryable statuses as the provider's policy allows; yields a `Retrying`
/// event before each wait. `build` is called once per attempt.
pub(crate) fn send_with_retries<'a>(
    config: &'a ProviderConfig,
    url: &'a str,
    build: impl Fn() -> RequestBuilder + 'a,
) -> impl Stream<Item = Attempt> + 'a {
    async_stream::stream! {
        let max_attempts = config.retry.max_retries + 1;
        let mut attempt = 1;
        loop {
            let (reason, headers, error) = match with_extras(build(), config).send().await {
                Ok(response) if response.status().is_success() => {
                    yield Attempt::Done(Ok(response));
                    return;
                }
                Ok(response) => {
                    let status = response.status();
                    let headers: HeaderMap = response.headers().clone();
                    let message = match response.text().await {
                        Ok(body) => error_message_from_body(&body),
                        Err(e) => describe_transport_error(&e),
                    };
                    let error = ProviderError::Http {
                        provider: config.name.clone(),
                        url: url.to_owned(),
                        status: status.as_u16(),
                        message: message.clone(),
                        attempts: attempt,
                    };
                    if !is_retryable_status(status) {
                        yield Attempt::Done(Err(error));
                        return;
                    }
                    (
                        format!("HTTP {}: {}", status.as_u16(), truncate_chars(&message, 120)),
                        Some(headers),
                        error,
                    )
                }
                Err(e) => {
                    let reason = describe_transport_error(&e);
                    let error = ProviderError::Unreachable {
                        provider: config.name.clone(),
                        url: url.to_owned(),
                        reason: reason.clone(),
                        attempts: attempt,
                    };
                    if e.is_builder() {
                        yield Attempt::Done(Err(error));
                        return;
                    }
                    (reason, None, error)
                }
            };
            if attempt >= max_attempts {
                yield Attempt::Done(Err(error));
                return;
            }
            let delay = config.retry.delay(attempt, headers.as_ref());
            yield Attempt::Retrying(StreamEvent::Retrying {
                attempt: attempt + 1,
                max_attempts,
                delay,
                reason,
            });
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }
}

/// The data of one server-sent event. (Every wire repeats the event name
/// inside the data as `type`, so the `event:` field is not needed.)
pub(crate) struct SseEvent {
    pub data: String,
}

/// The events of a streamed response. A stream silent for the provider's
/// idle timeout, or broken off, ends in an error.
pub(crate) fn sse_events(
    response: reqwest::Response,
    config: &ProviderConfig,
) -> impl Stream<Item = Result<SseEvent, ProviderError>> + '_ {
    async_stream::stream! {
        let mut events = response.bytes_stream().eventsource();
        loop {
            let next = tokio::time::timeout(config.stream_idle_timeout, events.next()).await;
            match next {
                Err(_) => {
                    yield Err(ProviderError::StreamIdle {
                        provider: config.name.clone(),
                        secs: config.stream_idle_timeout.as_secs(),
                    });
                    return;
                }
                Ok(None) => return,
                Ok(Some(Err(EventStreamError::Transport(e)))) => {
                    yield Err(ProviderError::StreamCut {
                        provider: config.name.clone(),
                        detail: describe_transport_error(&e),
                    });
                    return;
                }
                Ok(Some(Err(e))) => {
                    yield Err(ProviderError::MalformedEvent {
                        provider: config.name.clone(),
                        detail: e.to_string(),
                    });
                    return;
                }
                Ok(Some(Ok(event))) => yield Ok(SseEvent { data: event.data }),
            }
        }
    }
}
