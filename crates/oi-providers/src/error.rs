//! What can go wrong talking to a model server, with the hint a user needs.

/// A failed model request. Each variant names the server (`provider`) and the
/// URL so the message alone tells the user where to look.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// No connection could be made (refused, DNS failure, TLS failure, timeout),
    /// even after retrying.
    #[error("cannot reach {provider} at {url}: {reason}")]
    Unreachable {
        provider: String,
        url: String,
        reason: String,
        attempts: u32,
    },
    /// The server answered with an error status. `message` is the server's own
    /// explanation, taken from its error body.
    #[error("{provider} answered HTTP {status}{attempts_note} for {url}: {message}",
        attempts_note = attempts_note(*.attempts))]
    Http {
        provider: String,
        url: String,
        status: u16,
        message: String,
        attempts: u32,
    },
    /// The response stream ended before the reply was complete.
    #[error("{provider} closed the stream before the reply was complete ({detail})")]
    StreamCut { provider: String, detail: String },
    /// The server went silent: nothing arrived for the idle timeout, before
    /// its answer started or in the middle of it.
    #[error("{provider} sent nothing for {}; the request was given up", wait_text(*.ms))]
    StreamIdle { provider: String, ms: u64 },
    /// The server sent something that is not a valid event of this wire format.
    #[error("{provider} sent an event oi cannot read: {detail}")]
    MalformedEvent { provider: String, detail: String },
    /// The server reported an error inside the stream. `retryable` when the
    /// server says it was overloaded or failed on its side.
    #[error("{provider} reported an error: {message}")]
    Api {
        provider: String,
        message: String,
        retryable: bool,
    },
    /// A success answer that is not an LLM API's stream: a web page (the
    /// API base points at a website), or a JSON document where a stream was
    /// asked for.
    #[error("{provider} at {url} answered with {got}, not a model API's event stream")]
    NotAnApi {
        provider: String,
        url: String,
        got: String,
    },
    /// A reply went past oi's ceiling of time or size (a server that streams
    /// without end).
    #[error("{provider}'s reply was given up: {detail}")]
    ReplyCeiling { provider: String, detail: String },
    /// The request does not fit the model's context window.
    #[error(
        "{provider} refused the request: it is longer than the model's context window ({message})"
    )]
    ContextLength { provider: String, message: String },
    /// A model run in oi's own process failed (it could not be loaded, or
    /// this build has no engine).
    #[error("{provider}: {message}")]
    Engine {
        provider: String,
        message: String,
        hint: Option<String>,
    },
}

/// `300 ms`, `5 s`.
fn wait_text(ms: u64) -> String {
    if ms < 1000 || !ms.is_multiple_of(1000) {
        format!("{ms} ms")
    } else {
        format!("{} s", ms / 1000)
    }
}

fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    }
}

impl ProviderError {
    /// A one-line suggestion of what to do about the error.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Unreachable { url, .. } => format!(
                "is the model server running, and is the API base right? oi sent the request to `{url}`; set it with `--api-base`"
            ),
            Self::Http { status: 401, .. } => "the API key was rejected: check it, or pass another with `--api-key` (default: `$OPENAI_API_KEY`)".to_owned(),
            Self::Http { status: 403, .. } => "the key is valid but not allowed to do this: check the key's permissions and the model name".to_owned(),
            Self::Http { status: 404, url, .. } => {
                if url.contains("/v1/") {
                    "the server has no such endpoint or model: check `--model` and the API base".to_owned()
                } else {
                    "does the base URL need `/v1`? e.g. `--api-base http://localhost:8080/v1`".to_owned()
                }
            }
            Self::Http { status: 429, .. } => {
                "the server is rate-limiting requests: wait a little and try again, or use a model or key with a higher limit".to_owned()
            }
            Self::Http { status, .. } if *status >= 500 => {
                "the server failed on its side: try again later, or check its status page or logs".to_owned()
            }
            Self::Http { .. } => return None,
            Self::StreamCut { .. } | Self::StreamIdle { .. } => {
                "the connection broke mid-reply: try again; if it keeps happening, check the network or the server's logs".to_owned()
            }
            Self::MalformedEvent { .. } => {
                "the server does not speak the OpenAI streaming format correctly: check that the API base points at an OpenAI-compatible `/v1` endpoint".to_owned()
            }
            Self::Api { .. } => return None,
            Self::NotAnApi { url, .. } => format!(
                "check the API base: it must be the API's address (often ending in `/v1`), not a web site; oi sent the request to `{url}`"
            ),
            Self::ReplyCeiling { .. } => {
                "the server seems stuck in a loop: try again, or check the server; for a very slow server raise the provider's `stream_max_duration_ms`".to_owned()
            }
            Self::Engine { hint, .. } => return hint.clone(),
            Self::ContextLength { .. } => {
                "the conversation no longer fits the model's context window: start a new session, use a model with a larger window, or lower `max_output` so runs send less output".to_owned()
            }
        })
    }
}

impl ProviderError {
    /// The error with every secret replaced (a server's error body may
    /// quote the key it was sent).
    pub fn redacted(self, secrets: &oi_protocol::Secrets) -> Self {
        if secrets.is_empty() {
            return self;
        }
        let r = |text: String| secrets.redact(&text).into_owned();
        match self {
            Self::Unreachable {
                provider,
                url,
                reason,
                attempts,
            } => Self::Unreachable {
                provider,
                url: r(url),
                reason: r(reason),
                attempts,
            },
            Self::Http {
                provider,
                url,
                status,
                message,
                attempts,
            } => Self::Http {
                provider,
                url: r(url),
                status,
                message: r(message),
                attempts,
            },
            Self::StreamCut { provider, detail } => Self::StreamCut {
                provider,
                detail: r(detail),
            },
            Self::StreamIdle { provider, ms } => Self::StreamIdle { provider, ms },
            Self::NotAnApi { provider, url, got } => Self::NotAnApi {
                provider,
                url: r(url),
                got: r(got),
            },
            Self::ReplyCeiling { provider, detail } => Self::ReplyCeiling {
                provider,
                detail: r(detail),
            },
            Self::MalformedEvent { provider, detail } => Self::MalformedEvent {
                provider,
                detail: r(detail),
            },
            Self::Api {
                provider,
                message,
                retryable,
            } => Self::Api {
                provider,
                message: r(message),
                retryable,
            },
            Self::ContextLength { provider, message } => Self::ContextLength {
                provider,
                message: r(message),
            },
            Self::Engine {
                provider,
                message,
                hint,
            } => Self::Engine {
                provider,
                message: r(message),
                hint,
            },
        }
    }

    /// Whether retrying the whole request may help: the stream broke or
    /// stalled, or the server said it was overloaded or failed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::StreamCut { .. }
                | Self::StreamIdle { .. }
                | Self::Api {
                    retryable: true,
                    ..
                }
        )
    }
}

/// What an error reported by a server means, from its code or type and
/// message (each API words it differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorMeaning {
    ContextLength,
    Transient,
    Other,
}

pub(crate) fn classify(code: &str, message: &str) -> ErrorMeaning {
    let code = code.to_ascii_lowercase();
    let message = message.to_ascii_lowercase();
    let context_phrases = [
        "context length",
        "context_length",
        "context window",
        "maximum context",
        "prompt is too long",
        "too many tokens",
        "exceeds the available context",
        "exceed_context_size",
        "input is too long",
    ];
    if code.contains("context_length")
        || code.contains("exceed_context")
        || context_phrases.iter().any(|p| message.contains(p))
    {
        return ErrorMeaning::ContextLength;
    }
    let transient = [
        "overloaded_error",
        "overloaded",
        "api_error",
        "server_error",
        "internal_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "service_unavailable",
        "timeout",
    ];
    if transient.contains(&code.as_str()) {
        ErrorMeaning::Transient
    } else {
        ErrorMeaning::Other
    }
}

/// The error an API reported, typed by what it means.
pub(crate) fn api_error(provider: &str, code: &str, message: String) -> ProviderError {
    match classify(code, &message) {
        ErrorMeaning::ContextLength => ProviderError::ContextLength {
            provider: provider.to_owned(),
            message,
        },
        meaning => ProviderError::Api {
            provider: provider.to_owned(),
            message,
            retryable: meaning == ErrorMeaning::Transient,
        },
    }
}

/// The code (or type) in an error body, for `classify`.
pub(crate) fn error_code_from_body(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|json| {
            ["/error/code", "/error/type", "/code", "/type"]
                .iter()
                .find_map(|p| json.pointer(p).and_then(|v| v.as_str()).map(str::to_owned))
        })
        .unwrap_or_default()
}

/// The most useful text of an error body: `{"error": {"message": …}}` (OpenAI and
/// most compatible servers), `{"error": "…"}`, `{"message": …}` or `{"detail": …}`;
/// else the raw body, shortened.
pub(crate) fn error_message_from_body(body: &str) -> String {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let candidates = [
            json.pointer("/error/message"),
            json.get("error"),
            json.get("message"),
            json.get("detail"),
        ];
        for value in candidates.into_iter().flatten() {
            if let Some(text) = value.as_str() {
                return text.to_owned();
            }
        }
    }
    let body = body.trim();
    if body.is_empty() {
        return "(empty response body)".to_owned();
    }
    truncate_chars(body, 300)
}

pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The innermost useful description of a `reqwest` error, e.g.
/// `Connection refused (os error 111)`.
pub(crate) fn describe_transport_error(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(err);
    while let Some(e) = current {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    // The outermost layers of reqwest/hyper say things like "error sending
    // request for url (…)"; the root cause is the informative part.
    parts
        .into_iter()
        .rev()
        .find(|p| !p.is_empty())
        .unwrap_or_else(|| "unknown error".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_error_bodies_of_many_servers() {
        assert_eq!(
            error_message_from_body(
                r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#
            ),
            "Incorrect API key provided"
        );
        assert_eq!(
            error_message_from_body(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(
            error_message_from_body(r#"{"detail":"Not Found"}"#),
            "Not Found"
        );
        assert_eq!(
            error_message_from_body("  <html>oops</html> "),
            "<html>oops</html>"
        );
        assert_eq!(error_message_from_body(""), "(empty response body)");
        assert_eq!(
            error_message_from_body(&"x".repeat(400)).chars().count(),
            301
        );
    }

    #[test]
    fn context_length_errors_are_recognised_in_every_wording() {
        let cases = [
            (
                "context_length_exceeded",
                "This model's maximum context length is 128000 tokens.",
            ),
            (
                "invalid_request_error",
                "prompt is too long: 208000 tokens > 200000 maximum",
            ),
            (
                "exceed_context_size_error",
                "the request exceeds the available context size",
            ),
            ("", "Input is too long for requested model."),
        ];
        for (code, message) in cases {
            assert_eq!(
                classify(code, message),
                ErrorMeaning::ContextLength,
                "{message}"
            );
        }
        assert_eq!(
            classify("overloaded_error", "Overloaded"),
            ErrorMeaning::Transient
        );
        assert_eq!(
            classify("invalid_request_error", "bad tool schema"),
            ErrorMeaning::Other
        );
    }

    #[test]
    fn hints_for_404_depend_on_the_base_url() {
        let err = |url: &str| ProviderError::Http {
            provider: "model server".into(),
            url: url.into(),
            status: 404,
            message: "not found".into(),
            attempts: 1,
        };
        assert!(
            err("http://h:1/chat/completions")
                .hint()
                .unwrap()
                .contains("`/v1`")
        );
        assert!(
            err("http://h:1/v1/chat/completions")
                .hint()
                .unwrap()
                .contains("--model")
        );
    }

    #[test]
    fn messages_mention_attempts_only_after_retries() {
        let err = ProviderError::Http {
            provider: "model server".into(),
            url: "http://h/v1/chat/completions".into(),
            status: 503,
            message: "overloaded".into(),
            attempts: 5,
        };
        assert_eq!(
            err.to_string(),
            "model server answered HTTP 503 (after 5 attempts) for http://h/v1/chat/completions: overloaded"
        );
    }
}
