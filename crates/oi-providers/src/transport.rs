//! What every wire shares: sending a request with retries, and reading a
//! server-sent-events stream with an idle timeout. Each failure becomes a
//! typed [`ProviderError`] naming the provider and the URL.

use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::RequestBuilder;
use reqwest::header::HeaderMap;

use crate::error::{
    ErrorMeaning, classify, describe_transport_error, error_code_from_body,
    error_message_from_body, truncate_chars,
};
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

/// The retries one request may still make, shared between failed sends and
/// broken streams so that together they stay within `request_max_retries`.
#[derive(Debug)]
pub(crate) struct RetryBudget {
    used: std::sync::atomic::AtomicU32,
    max: u32,
}

impl RetryBudget {
    pub(crate) fn new(max: u32) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Self {
            used: std::sync::atomic::AtomicU32::new(0),
            max,
        })
    }

    /// Takes one retry; the 1-based number of the attempt it allows.
    fn take(&self) -> Option<u32> {
        use std::sync::atomic::Ordering;
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|before| before + 2)
    }

    fn max_attempts(&self) -> u32 {
        self.max + 1
    }
}

/// Sends the request built by `build`, retrying connection failures and
/// retryable statuses while `budget` allows; yields a `Retrying` event
/// before each wait. `build` is called once per attempt.
pub(crate) fn send_with_retries<'a>(
    config: &'a ProviderConfig,
    url: &'a str,
    budget: &'a RetryBudget,
    build: impl Fn() -> RequestBuilder + 'a,
) -> impl Stream<Item = Attempt> + 'a {
    async_stream::stream! {
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
                    let (message, code) = match response.text().await {
                        Ok(body) => (error_message_from_body(&body), error_code_from_body(&body)),
                        Err(e) => (describe_transport_error(&e), String::new()),
                    };
                    if matches!(status.as_u16(), 400 | 413)
                        && classify(&code, &message) == ErrorMeaning::ContextLength
                    {
                        yield Attempt::Done(Err(ProviderError::ContextLength {
                            provider: config.name.clone(),
                            message,
                        }));
                        return;
                    }
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
            let Some(next) = budget.take() else {
                yield Attempt::Done(Err(error));
                return;
            };
            let delay = config.retry.delay(attempt, headers.as_ref());
            yield Attempt::Retrying(StreamEvent::Retrying {
                attempt: next,
                max_attempts: budget.max_attempts(),
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

/// The events of a streamed body. A stream silent for `idle`, or broken
/// off, ends in an error naming `provider`.
pub(crate) fn sse_events<S, B, E>(
    bytes: S,
    provider: String,
    idle: std::time::Duration,
) -> impl Stream<Item = Result<SseEvent, ProviderError>>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::error::Error + 'static,
{
    async_stream::stream! {
        let mut events = bytes.eventsource();
        loop {
            let next = tokio::time::timeout(idle, events.next()).await;
            match next {
                Err(_) => {
                    yield Err(ProviderError::StreamIdle {
                        provider: provider.clone(),
                        secs: idle.as_secs(),
                    });
                    return;
                }
                Ok(None) => return,
                Ok(Some(Err(EventStreamError::Transport(e)))) => {
                    yield Err(ProviderError::StreamCut {
                        provider: provider.clone(),
                        detail: describe_transport_error(&e),
                    });
                    return;
                }
                Ok(Some(Err(e))) => {
                    yield Err(ProviderError::MalformedEvent {
                        provider: provider.clone(),
                        detail: e.to_string(),
                    });
                    return;
                }
                Ok(Some(Ok(event))) => yield Ok(SseEvent { data: event.data }),
            }
        }
    }
}

/// The events of a streamed HTTP response.
pub(crate) fn response_events(
    response: reqwest::Response,
    config: &ProviderConfig,
) -> impl Stream<Item = Result<SseEvent, ProviderError>> + use<> {
    sse_events(
        response.bytes_stream(),
        config.name.clone(),
        config.stream_idle_timeout,
    )
}

/// Restarts a reply whose stream broke or stalled, or that the server
/// aborted as overloaded, up to the provider's retry budget. Text the user
/// already saw is not shown twice: while the new attempt repeats it, its
/// text is held back; if the new attempt says something else, a
/// `Restart` event tells the consumer to drop what it showed.
pub(crate) fn with_restarts<F>(
    config: std::sync::Arc<ProviderConfig>,
    make: F,
) -> crate::EventStream
where
    F: Fn(std::sync::Arc<RetryBudget>) -> crate::EventStream + Send + 'static,
{
    let secrets = config.secrets();
    let events = Box::pin(async_stream::stream! {
        let budget = RetryBudget::new(config.retry.max_retries);
        // Text passed on in the current version of the reply.
        let mut shown = String::new();
        let mut restarts = 0;
        'attempts: loop {
            let mut attempt_text = String::new();
            // How much of `attempt_text` repeats `shown` (while in step).
            let mut matched = 0usize;
            let mut stream = make(std::sync::Arc::clone(&budget));
            while let Some(item) = stream.next().await {
                match item {
                    Ok(StreamEvent::TextDelta(delta)) => {
                        attempt_text.push_str(&delta);
                        let overlap = delta.len().min(shown.len() - matched);
                        if delta.as_bytes()[..overlap] == shown.as_bytes()[matched..matched + overlap] {
                            matched += overlap;
                            let rest = &delta[overlap..];
                            if !rest.is_empty() {
                                shown.push_str(rest);
                                matched += rest.len();
                                yield Ok(StreamEvent::TextDelta(rest.to_owned()));
                            }
                        } else {
                            yield Ok(StreamEvent::Restart);
                            shown = attempt_text.clone();
                            matched = shown.len();
                            yield Ok(StreamEvent::TextDelta(attempt_text.clone()));
                        }
                    }
                    Err(error) if error.is_transient() => {
                        let Some(next) = budget.take() else {
                            yield Err(error);
                            return;
                        };
                        restarts += 1;
                        let delay = config.retry.delay(restarts, None);
                        yield Ok(StreamEvent::Retrying {
                            attempt: next,
                            max_attempts: budget.max_attempts(),
                            delay,
                            reason: format!("the reply broke off: {error}"),
                        });
                        tokio::time::sleep(delay).await;
                        continue 'attempts;
                    }
                    Ok(StreamEvent::Completed { finish_reason, usage }) => {
                        // A retried reply that ended shorter than what was shown.
                        if matched < shown.len() {
                            yield Ok(StreamEvent::Restart);
                            yield Ok(StreamEvent::TextDelta(attempt_text.clone()));
                        }
                        yield Ok(StreamEvent::Completed { finish_reason, usage });
                        return;
                    }
                    other => yield other,
                }
            }
            return;
        }
    });
    // Whatever a server said goes on with the key taken out.
    Box::pin(events.map(move |item| match item {
        Err(error) => Err(error.redacted(&secrets)),
        Ok(StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        }) => Ok(StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason: secrets.redact(&reason).into_owned(),
        }),
        other => other,
    }))
}
