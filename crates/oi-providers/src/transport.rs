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

/// An HTTP client for requests to `url`, built by `builder`. For a plain
/// `http://` server (a model on this machine, mostly) the system's TLS root
/// certificates are not loaded: reading and parsing them is most of the
/// client's cost (tens of milliseconds), and such a client never uses them.
pub(crate) fn client_for(url: &str, builder: reqwest::ClientBuilder) -> reqwest::Client {
    let builder = if url.starts_with("http://") {
        builder.tls_certs_only(Vec::<reqwest::Certificate>::new())
    } else {
        builder
    };
    builder.build().unwrap_or_default()
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
        let idle = config.stream_idle_timeout;
        loop {
            // The wait for the answer to start counts as idle time too: a
            // server that accepts the request and says nothing is stuck.
            let sent = tokio::time::timeout(idle, with_extras(build(), config).send()).await;
            let (reason, headers, error) = match sent {
                Err(_) => {
                    let error = ProviderError::StreamIdle {
                        provider: config.name.clone(),
                        ms: idle.as_millis() as u64,
                    };
                    (error.to_string(), None, error)
                }
                Ok(Ok(response)) if response.status().is_success() => {
                    yield Attempt::Done(check_stream(response, config, url, idle).await);
                    return;
                }
                Ok(Ok(response)) => {
                    let status = response.status();
                    let headers: HeaderMap = response.headers().clone();
                    let (message, code) = match read_body(response, idle).await {
                        Ok(body) => (error_message_from_body(&body), error_code_from_body(&body)),
                        Err(detail) => (detail, String::new()),
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
                Ok(Err(e)) => {
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

/// A success answer, if it is an event stream; a web page or a JSON
/// document instead is an error that says so (with the JSON's own error
/// message, when it carries one).
async fn check_stream(
    response: reqwest::Response,
    config: &ProviderConfig,
    url: &str,
    idle: std::time::Duration,
) -> Result<reqwest::Response, ProviderError> {
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let got = if content_type.starts_with("text/html") {
        "a web page (text/html)".to_owned()
    } else if content_type.starts_with("application/json") {
        let body = read_body(response, idle).await.unwrap_or_default();
        let message = error_message_from_body(&body);
        if message.is_empty() {
            "a JSON document".to_owned()
        } else {
            format!("a JSON document ({})", truncate_chars(&message, 200))
        }
    } else {
        return Ok(response);
    };
    Err(ProviderError::NotAnApi {
        provider: config.name.clone(),
        url: url.to_owned(),
        got,
    })
}

/// The body of a (short) answer, within the idle timeout and 1 MiB.
async fn read_body(
    response: reqwest::Response,
    idle: std::time::Duration,
) -> Result<String, String> {
    const LIMIT: usize = 1024 * 1024;
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    loop {
        match tokio::time::timeout(idle, chunks.next()).await {
            Err(_) => return Err(format!("its body stalled for {} ms", idle.as_millis())),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(describe_transport_error(&e)),
            Ok(Some(Ok(chunk))) => {
                body.extend_from_slice(&chunk);
                if body.len() >= LIMIT {
                    body.truncate(LIMIT);
                    break;
                }
            }
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// How long and how much one streamed reply may go on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamLimits {
    /// The longest silence.
    pub idle: std::time::Duration,
    /// The longest reply.
    pub max_duration: std::time::Duration,
    /// The most bytes of events.
    pub max_bytes: u64,
}

impl StreamLimits {
    pub(crate) fn of(config: &ProviderConfig) -> Self {
        Self {
            idle: config.stream_idle_timeout,
            max_duration: config.stream_max_duration,
            max_bytes: ProviderConfig::MAX_REPLY_BYTES,
        }
    }
}

/// The data of one server-sent event. (Every wire repeats the event name
/// inside the data as `type`, so the `event:` field is not needed.)
pub(crate) struct SseEvent {
    pub data: String,
}

/// The events of a streamed body. A stream silent for `limits.idle`, broken
/// off, or going past `limits.max_duration` or `limits.max_bytes`, ends in
/// an error naming `provider`.
pub(crate) fn sse_events<S, B, E>(
    bytes: S,
    provider: String,
    limits: StreamLimits,
) -> impl Stream<Item = Result<SseEvent, ProviderError>>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::error::Error + 'static,
{
    async_stream::stream! {
        let received = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = std::sync::Arc::clone(&received);
        let counted = bytes.inspect(move |chunk| {
            if let Ok(chunk) = chunk {
                counter.fetch_add(chunk.as_ref().len() as u64, std::sync::atomic::Ordering::Relaxed);
            }
        });
        let mut events = counted.eventsource();
        let end = tokio::time::Instant::now() + limits.max_duration;
        loop {
            let next = tokio::time::timeout(limits.idle, tokio::time::timeout_at(end, events.next())).await;
            let total = received.load(std::sync::atomic::Ordering::Relaxed);
            if total > limits.max_bytes {
                yield Err(ProviderError::ReplyCeiling {
                    provider: provider.clone(),
                    detail: format!(
                        "it sent more than {} MB without ending",
                        limits.max_bytes / (1024 * 1024)
                    ),
                });
                return;
            }
            match next {
                Err(_) => {
                    yield Err(ProviderError::StreamIdle {
                        provider: provider.clone(),
                        ms: limits.idle.as_millis() as u64,
                    });
                    return;
                }
                Ok(Err(_)) => {
                    yield Err(ProviderError::ReplyCeiling {
                        provider: provider.clone(),
                        detail: format!(
                            "it went on for more than {} without ending",
                            describe_duration(limits.max_duration)
                        ),
                    });
                    return;
                }
                Ok(Ok(None)) => return,
                Ok(Ok(Some(Err(EventStreamError::Transport(e))))) => {
                    yield Err(ProviderError::StreamCut {
                        provider: provider.clone(),
                        detail: describe_transport_error(&e),
                    });
                    return;
                }
                Ok(Ok(Some(Err(e)))) => {
                    yield Err(ProviderError::MalformedEvent {
                        provider: provider.clone(),
                        detail: e.to_string(),
                    });
                    return;
                }
                Ok(Ok(Some(Ok(event)))) => yield Ok(SseEvent { data: event.data }),
            }
        }
    }
}

/// `90 s`, `12 min`, `2 h`.
fn describe_duration(duration: std::time::Duration) -> String {
    let secs = duration.as_secs();
    if secs >= 7200 && secs.is_multiple_of(3600) {
        format!("{} h", secs / 3600)
    } else if secs >= 120 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
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
        StreamLimits::of(config),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_bytes: u64) -> StreamLimits {
        StreamLimits {
            idle: std::time::Duration::from_secs(5),
            max_duration: std::time::Duration::from_secs(5),
            max_bytes,
        }
    }

    #[tokio::test]
    async fn a_stream_past_its_byte_ceiling_is_given_up() {
        let event = bytes::Bytes::from_static(b"data: {\"x\": 1}\n\n");
        let endless = futures::stream::repeat(event).map(Ok::<_, std::io::Error>);
        let events = sse_events(endless, "srv".to_owned(), limits(1000));
        futures::pin_mut!(events);
        let mut seen = 0;
        let error = loop {
            match events.next().await {
                Some(Ok(_)) => seen += 1,
                Some(Err(e)) => break e,
                None => panic!("an endless stream ended"),
            }
        };
        assert!(seen < 1000 / 16 + 2, "{seen} events");
        assert!(
            matches!(error, ProviderError::ReplyCeiling { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("more than 0 MB"), "{error}");
    }

    #[tokio::test]
    async fn a_short_stream_passes_whole() {
        let body = bytes::Bytes::from_static(b"data: a\n\ndata: b\n\n");
        let events = sse_events(
            futures::stream::iter([Ok::<_, std::io::Error>(body)]),
            "srv".to_owned(),
            limits(1000),
        );
        let data: Vec<String> = events.map(|e| e.unwrap().data).collect().await;
        assert_eq!(data, ["a", "b"]);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(describe_duration(std::time::Duration::from_secs(1)), "1 s");
        assert_eq!(
            describe_duration(std::time::Duration::from_secs(600)),
            "10 min"
        );
        assert_eq!(
            describe_duration(std::time::Duration::from_secs(3600)),
            "60 min"
        );
        assert_eq!(
            describe_duration(std::time::Duration::from_secs(7200)),
            "2 h"
        );
    }
}
