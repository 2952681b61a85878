//! The chat wire client against the mock server: streaming, tool calls,
//! retries and every failure a user can meet.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use std::time::Duration;

use futures::StreamExt;
use oi_protocol::{Message, ToolCall, Usage};
use oi_providers::{
    ChatClient, FinishReason, ModelClient, ModelRequest, ProviderConfig, ProviderError,
    RetryPolicy, StreamEvent, ToolSpec,
};
use oi_testkit::{MockServer, MockToolCall, Reply};
use pretty_assertions::assert_eq;
use serde_json::json;

fn client(base_url: &str) -> ChatClient {
    let mut config = ProviderConfig::new("mock server", base_url);
    config.api_key = Some("sk-test".into());
    config.retry = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(5),
    };
    ChatClient::new(config)
}

fn request() -> ModelRequest {
    ModelRequest {
        model: "mock-model".into(),
        system: "be brief".into(),
        messages: vec![Message::user("hi")],
        tools: vec![ToolSpec {
            name: "execute".into(),
            description: "Run code".into(),
            parameters: json!({"type": "object"}),
            builtin: None,
        }],
        max_tokens: None,
        temperature: None,
        cache_key: None,
        form: None,
    }
}

async fn collect(client: &ChatClient) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut stream = client.stream(request());
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streams_text_and_reports_usage() {
    let server = MockServer::start().await.unwrap();
    server.push(Reply::text("Hello, wörld!").chunk_chars(3).usage(12, 4));
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "Hello, wörld!");
    assert!(events.len() > 3, "text must arrive in several deltas");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Completed {
            finish_reason: FinishReason::Stop,
            usage: Some(Usage {
                input_tokens: 12,
                output_tokens: 4,
                ..Usage::default()
            }),
        })
    );
    let sent = &server.chat_requests()[0];
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.body["stream"], json!(true));
    assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        sent.messages()[0],
        json!({"role": "system", "content": "be brief"})
    );
}

#[tokio::test]
async fn assembles_several_fragmented_tool_calls_split_across_writes() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Reply::tool_calls(vec![
            MockToolCall::execute("python", "x = 'é' * 3\nprint(x)"),
            MockToolCall::execute("shell", "ls -la"),
        ])
        .with_text("Let me check.")
        .chunk_chars(2)
        .write_bytes(7),
    );
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "Let me check.");
    let calls: Vec<&ToolCall> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "call_mock1_0");
    let args: serde_json::Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(
        args,
        json!({"language": "python", "code": "x = 'é' * 3\nprint(x)"})
    );
    let args: serde_json::Value = serde_json::from_str(&calls[1].arguments).unwrap();
    assert_eq!(args, json!({"language": "shell", "code": "ls -la"}));
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Completed {
            finish_reason: FinishReason::ToolCalls,
            ..
        })
    ));
}

#[tokio::test]
async fn retries_5xx_then_succeeds_honouring_retry_after_ms() {
    let server = MockServer::start().await.unwrap();
    server
        .push(Reply::error(503, "The server is overloaded").header("retry-after-ms", "20"))
        .push(Reply::text("ok"));
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(error.is_none(), "{error:?}");
    match &events[0] {
        StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        } => {
            assert_eq!((*attempt, *max_attempts), (2, 3));
            assert_eq!(*delay, Duration::from_millis(20));
            assert!(reason.contains("503"), "{reason}");
        }
        other => panic!("expected a retry first, got {other:?}"),
    }
    assert_eq!(text_of(&events), "ok");
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn honours_retry_after_seconds_on_429() {
    let server = MockServer::start().await.unwrap();
    server
        .push(Reply::error(429, "Rate limit reached").header("retry-after", "1"))
        .push(Reply::text("ok"));
    let started = std::time::Instant::now();
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        matches!(&events[0], StreamEvent::Retrying { delay, .. } if *delay == Duration::from_secs(1))
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "must wait as asked"
    );
}

#[tokio::test]
async fn gives_up_after_max_retries_with_the_servers_message() {
    let server = MockServer::start().await.unwrap();
    server.repeat(Reply::error(
        500,
        "The server had an error while processing your request.",
    ));
    let (events, error) = collect(&client(&server.base_url())).await;
    let retries = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
        .count();
    assert_eq!(retries, 2);
    match error {
        Some(ProviderError::Http {
            status,
            message,
            attempts,
            ..
        }) => {
            assert_eq!((status, attempts), (500, 3));
            assert_eq!(
                message,
                "The server had an error while processing your request."
            );
        }
        other => panic!("expected an HTTP error, got {other:?}"),
    }
    assert_eq!(server.chat_requests().len(), 3);
}

#[tokio::test]
async fn does_not_retry_401_or_404() {
    let server = MockServer::start().await.unwrap();
    server.require_api_key("sk-other");
    let (_, error) = collect(&client(&server.base_url())).await;
    let error = error.expect("must fail");
    assert!(
        matches!(
            error,
            ProviderError::Http {
                status: 401,
                attempts: 1,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("Incorrect API key"), "{error}");
    assert!(error.hint().unwrap().contains("--api-key"));

    let (_, error) = collect(&client(&server.root_url())).await;
    let error = error.expect("must fail");
    assert!(
        matches!(error, ProviderError::Http { status: 404, .. }),
        "{error:?}"
    );
    assert!(error.hint().unwrap().contains("/v1"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_that_keeps_breaking_is_an_error_not_a_short_reply() {
    let server = MockServer::start().await.unwrap();
    server.repeat(Reply::text("This reply will never finish").cut_after_events(3));
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(
        matches!(error, Some(ProviderError::StreamCut { .. })),
        "{error:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Completed { .. }))
    );
    assert_eq!(
        server.chat_requests().len(),
        3,
        "restarted up to the retry budget"
    );
    assert_eq!(
        text_of(&events),
        "This rep",
        "the repeated start is shown once"
    );
}

#[tokio::test]
async fn a_broken_reply_restarts_without_showing_text_twice() {
    let server = MockServer::start().await.unwrap();
    server
        .push(
            Reply::text("The answer is 42, because")
                .chunk_chars(4)
                .cut_after_events(4),
        )
        .push(Reply::text("The answer is 42, because six times seven.").chunk_chars(4));
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        text_of(&events),
        "The answer is 42, because six times seven."
    );
    assert!(events.iter().any(
        |e| matches!(e, StreamEvent::Retrying { reason, .. } if reason.contains("broke off"))
    ));
    assert!(!events.contains(&StreamEvent::Restart));
}

#[tokio::test]
async fn a_restarted_reply_that_says_something_else_replaces_the_first() {
    let server = MockServer::start().await.unwrap();
    server
        .push(
            Reply::text("First try that")
                .chunk_chars(5)
                .cut_after_events(3),
        )
        .push(Reply::text("Second wording.").chunk_chars(5));
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(error.is_none(), "{error:?}");
    let restart = events
        .iter()
        .position(|e| *e == StreamEvent::Restart)
        .expect("a restart");
    assert_eq!(text_of(&events[..restart]), "First try ");
    assert_eq!(text_of(&events[restart..]), "Second wording.");
}

#[tokio::test]
async fn a_stream_closed_cleanly_without_finish_is_cut() {
    let server = MockServer::start().await.unwrap();
    server.repeat(Reply::raw_sse(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n",
    ));
    let (_, error) = collect(&client(&server.base_url())).await;
    assert!(
        matches!(error, Some(ProviderError::StreamCut { .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_finished_stream_without_done_is_complete() {
    let server = MockServer::start().await.unwrap();
    server.push(Reply::text("fine").without_done());
    let (events, error) = collect(&client(&server.base_url())).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "fine");
}

#[tokio::test]
async fn comments_and_unknown_fields_are_ignored_but_bad_json_is_reported() {
    let server = MockServer::start().await.unwrap();
    server.push(Reply::raw_sse(concat!(
        ": keep-alive\n\n",
        "event: ping\ndata: \n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}],\"x_extra\":1}\r\n\r\n",
        "data: [DONE]\n\n",
    )));
    server.push(Reply::raw_sse("data: {\"choices\": [\n\n"));
    let c = client(&server.base_url());
    let (events, error) = collect(&c).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "ok");
    let (_, error) = collect(&c).await;
    let error = error.expect("must fail");
    assert!(
        matches!(error, ProviderError::MalformedEvent { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("{\"choices\": ["), "{error}");
}

#[tokio::test]
async fn errors_inside_the_stream_are_typed() {
    let server = MockServer::start().await.unwrap();
    server.push(Reply::raw_sse(
        "data: {\"error\":{\"message\":\"This model's maximum context length is 8192 tokens.\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}\n\n",
    ));
    server.push(Reply::raw_sse(
        "data: {\"error\":{\"message\":\"Invalid tool schema\",\"type\":\"invalid_request_error\"}}\n\n",
    ));
    let c = client(&server.base_url());
    let (_, error) = collect(&c).await;
    match error {
        Some(e @ ProviderError::ContextLength { .. }) => {
            assert!(
                e.to_string()
                    .contains("longer than the model's context window"),
                "{e}"
            );
            assert!(e.hint().unwrap().contains("new session"));
        }
        other => panic!("{other:?}"),
    }
    let (_, error) = collect(&c).await;
    assert!(
        matches!(error, Some(ProviderError::Api { ref message, retryable: false, .. }) if message == "Invalid tool schema"),
        "{error:?}"
    );
    assert_eq!(server.chat_requests().len(), 2, "neither is retried");
}

#[tokio::test]
async fn a_context_length_400_is_typed() {
    let server = MockServer::start().await.unwrap();
    server.push(Reply::raw_error(
        400,
        r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
    ));
    let (_, error) = collect(&client(&server.base_url())).await;
    assert!(
        matches!(error, Some(ProviderError::ContextLength { .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported() {
    // Bind then drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (events, error) = collect(&client(&format!("http://127.0.0.1:{port}/v1"))).await;
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
            .count(),
        2
    );
    let error = error.expect("must fail");
    assert!(
        matches!(error, ProviderError::Unreachable { attempts: 3, .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().to_lowercase().contains("refused"),
        "{error}"
    );
    assert!(error.hint().unwrap().contains("--api-base"));
}
