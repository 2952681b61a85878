//! The same scenarios on all three wires, against the mock server: text, tool
//! calls, usage, retries and every failure a user can meet.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a test failure"
)]

use std::time::Duration;

use futures::StreamExt;
use oi_protocol::{Message, ToolCall, Usage, WireApi};
use oi_providers::{
    FinishReason, ModelRequest, ProviderConfig, ProviderError, RetryPolicy, StreamEvent, ToolSpec,
    client, list_models,
};
use oi_testkit::{MockServer, MockToolCall, Reply};
use pretty_assertions::assert_eq;
use serde_json::json;

const WIRES: [WireApi; 3] = [WireApi::Chat, WireApi::Responses, WireApi::Messages];

fn config(server: &MockServer, wire: WireApi) -> ProviderConfig {
    // The messages wire takes the API root; the OpenAI wires end in /v1.
    let base = match wire {
        WireApi::Messages => server.root_url(),
        _ => server.base_url(),
    };
    let mut config = ProviderConfig::new("mock", base);
    config.api_key = Some("sk-test".into());
    config.retry = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(5),
    };
    // Long enough for a loaded machine to serve a stream in small pieces;
    // the stalled-stream test sets its own.
    config.stream_idle_timeout = Duration::from_secs(3);
    config
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
        cache_key: Some("session".into()),
        form: None,
    }
}

async fn collect(
    config: ProviderConfig,
    wire: WireApi,
    request: ModelRequest,
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut stream = client(config, wire).stream(request);
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

fn calls_of(events: &[StreamEvent]) -> Vec<ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

fn completed(events: &[StreamEvent]) -> (FinishReason, Option<Usage>) {
    match events.last() {
        Some(StreamEvent::Completed {
            finish_reason,
            usage,
        }) => (finish_reason.clone(), *usage),
        other => panic!("expected Completed last, got {other:?}"),
    }
}

#[tokio::test]
async fn text_streams_in_pieces_with_usage() {
    for wire in WIRES {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("Hello, wörld!").chunk_chars(3).usage(12, 4));
        let (events, error) = collect(config(&server, wire), wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        assert_eq!(text_of(&events), "Hello, wörld!", "{wire:?}");
        assert!(
            events.len() > 3,
            "{wire:?}: text must arrive in several deltas"
        );
        let (finish, usage) = completed(&events);
        assert_eq!(finish, FinishReason::Stop, "{wire:?}");
        assert_eq!(
            usage,
            Some(Usage {
                input_tokens: 12,
                output_tokens: 4,
                ..Usage::default()
            }),
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn several_fragmented_tool_calls_split_across_writes() {
    for wire in WIRES {
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
        let (events, error) = collect(config(&server, wire), wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        assert_eq!(text_of(&events), "Let me check.", "{wire:?}");
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 2, "{wire:?}");
        let args: Vec<serde_json::Value> = calls
            .iter()
            .map(|c| serde_json::from_str(&c.arguments).unwrap())
            .collect();
        assert_eq!(
            args,
            vec![
                json!({"language": "python", "code": "x = 'é' * 3\nprint(x)"}),
                json!({"language": "shell", "code": "ls -la"})
            ],
            "{wire:?}"
        );
        assert!(
            calls
                .iter()
                .all(|c| c.name == "execute" && !c.id.is_empty())
        );
        assert_eq!(completed(&events).0, FinishReason::ToolCalls, "{wire:?}");
    }
}

#[tokio::test]
async fn each_wire_sends_its_own_request_shape_and_auth() {
    for wire in WIRES {
        let server = MockServer::start().await.unwrap();
        server.require_api_key("sk-test").push(Reply::text("ok"));
        let (_, error) = collect(config(&server, wire), wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        let sent = &server.model_requests()[0];
        match wire {
            WireApi::Chat => {
                assert_eq!(sent.path, "/v1/chat/completions");
                assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
                assert_eq!(sent.body["tools"][0]["function"]["name"], "execute");
                assert_eq!(sent.body["prompt_cache_key"], "session");
            }
            WireApi::Responses => {
                assert_eq!(sent.path, "/v1/responses");
                assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
                assert_eq!(sent.body["instructions"], "be brief");
                assert_eq!(sent.body["tools"][0]["name"], "execute");
                assert_eq!(sent.body["store"], false);
                assert_eq!(sent.body["prompt_cache_key"], "session");
            }
            WireApi::Messages => {
                assert_eq!(sent.path, "/v1/messages");
                assert_eq!(sent.header("x-api-key"), Some("sk-test"));
                assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(
                    sent.body["system"][0]["cache_control"],
                    json!({"type": "ephemeral"})
                );
                assert_eq!(
                    sent.body["tools"][0]["input_schema"],
                    json!({"type": "object"})
                );
                assert_eq!(sent.body["max_tokens"], 4096);
            }
        }
    }
}

#[tokio::test]
async fn reasoning_items_come_back_to_be_passed_on() {
    for wire in [WireApi::Responses, WireApi::Messages] {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::execute("python", "1").with_reasoning("secret-42"));
        let (events, error) = collect(config(&server, wire), wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        let reasoning: Vec<&serde_json::Value> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Reasoning(item) => Some(item),
                _ => None,
            })
            .collect();
        assert_eq!(reasoning.len(), 1, "{wire:?}");
        assert!(
            reasoning[0].to_string().contains("secret-42"),
            "{wire:?}: {}",
            reasoning[0]
        );
    }
}

#[tokio::test]
async fn reasoning_in_words_streams_apart_from_the_text() {
    for wire in WIRES {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("The answer is 4.").with_thought("Two and two make four."));
        let (events, error) = collect(config(&server, wire), wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        let thought: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ReasoningDelta(piece) => Some(piece.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thought, "Two and two make four.", "{wire:?}");
        assert_eq!(text_of(&events), "The answer is 4.", "{wire:?}");
        // The reasoning comes before the text.
        let first_text = events
            .iter()
            .position(|e| matches!(e, StreamEvent::TextDelta(_)))
            .unwrap();
        let last_thought = events
            .iter()
            .rposition(|e| matches!(e, StreamEvent::ReasoningDelta(_)))
            .unwrap();
        assert!(last_thought < first_text, "{wire:?}: {events:?}");
    }
}

#[tokio::test]
async fn cache_tokens_are_counted() {
    let server = MockServer::start().await.unwrap();
    server.push(Reply::text("ok").usage(1000, 5).cached(800, 100));
    let (events, _) = collect(
        config(&server, WireApi::Messages),
        WireApi::Messages,
        request(),
    )
    .await;
    assert_eq!(
        completed(&events).1,
        Some(Usage {
            input_tokens: 1000,
            output_tokens: 5,
            cached_input_tokens: 800,
            cache_write_input_tokens: 100,
            reasoning_output_tokens: 0,
        })
    );
}

#[tokio::test]
async fn retryable_failures_are_retried_then_succeed() {
    for wire in WIRES {
        for status in [429, 500, 503, 529] {
            let server = MockServer::start().await.unwrap();
            server
                .push(Reply::error(status, "busy").header("retry-after-ms", "5"))
                .push(Reply::text("ok"));
            let (events, error) = collect(config(&server, wire), wire, request()).await;
            assert!(error.is_none(), "{wire:?} {status}: {error:?}");
            assert!(
                matches!(&events[0], StreamEvent::Retrying { reason, .. } if reason.contains(&status.to_string())),
                "{wire:?} {status}: {events:?}"
            );
            assert_eq!(text_of(&events), "ok");
        }
    }
}

#[tokio::test]
async fn final_failures_name_the_status_and_the_servers_message() {
    for wire in WIRES {
        for (status, retried) in [
            (401, false),
            (404, false),
            (400, false),
            (429, true),
            (529, true),
        ] {
            let server = MockServer::start().await.unwrap();
            server.repeat(
                Reply::error(status, "the server's own words").header("retry-after-ms", "1"),
            );
            let (_, error) = collect(config(&server, wire), wire, request()).await;
            match error {
                Some(ProviderError::Http {
                    status: s,
                    message,
                    attempts,
                    ..
                }) => {
                    assert_eq!(s, status, "{wire:?}");
                    assert_eq!(message, "the server's own words", "{wire:?} {status}");
                    assert_eq!(attempts, if retried { 3 } else { 1 }, "{wire:?} {status}");
                }
                other => panic!("{wire:?} {status}: {other:?}"),
            }
        }
    }
}

#[tokio::test]
async fn broken_streams_are_restarted_then_reported() {
    for wire in WIRES {
        // Broken once: the restart completes the reply, text shown once.
        let server = MockServer::start().await.unwrap();
        server
            .push(
                Reply::text("This reply restarts once")
                    .chunk_chars(4)
                    .cut_after_events(5),
            )
            .push(Reply::text("This reply restarts once").chunk_chars(4));
        let (events, error) = collect(config(&server, wire), wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        assert_eq!(text_of(&events), "This reply restarts once", "{wire:?}");

        // Broken every time: an error after the retry budget.
        let server = MockServer::start().await.unwrap();
        server.repeat(Reply::text("This reply will never finish").cut_after_events(3));
        let (events, error) = collect(config(&server, wire), wire, request()).await;
        assert!(
            matches!(error, Some(ProviderError::StreamCut { .. })),
            "{wire:?}: {error:?}"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, StreamEvent::Completed { .. }))
        );

        let server = MockServer::start().await.unwrap();
        server.repeat(Reply::text("stalls").hang_after_events(2));
        let mut stalling = config(&server, wire);
        stalling.stream_idle_timeout = Duration::from_millis(300);
        let (_, error) = collect(stalling, wire, request()).await;
        assert!(
            matches!(error, Some(ProviderError::StreamIdle { .. })),
            "{wire:?}: {error:?}"
        );

        let server = MockServer::start().await.unwrap();
        server.push(Reply::raw_sse("event: x\ndata: {\"type\": \n\n"));
        let (_, error) = collect(config(&server, wire), wire, request()).await;
        assert!(
            matches!(error, Some(ProviderError::MalformedEvent { .. })),
            "{wire:?}: {error:?}"
        );
    }
}

#[tokio::test]
async fn an_overloaded_stream_is_restarted_and_a_context_length_error_is_typed() {
    let overloaded = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
    let server = MockServer::start().await.unwrap();
    server
        .push(Reply::raw_sse(overloaded))
        .push(Reply::text("fine"));
    let (events, error) = collect(
        config(&server, WireApi::Messages),
        WireApi::Messages,
        request(),
    )
    .await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "fine");

    for wire in WIRES {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::error(
            400,
            "prompt is too long: 210000 tokens > 200000 maximum",
        ));
        let (_, error) = collect(config(&server, wire), wire, request()).await;
        assert!(
            matches!(error, Some(ProviderError::ContextLength { .. })),
            "{wire:?}: {error:?}"
        );
    }
}

#[tokio::test]
async fn replies_cut_at_the_token_limit_say_so() {
    for wire in WIRES {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("Once upon a").finish_reason("length"));
        let (events, error) = collect(config(&server, wire), wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        assert_eq!(completed(&events).0, FinishReason::Length, "{wire:?}");
    }
}

#[tokio::test]
async fn models_are_listed_on_every_wire() {
    for wire in WIRES {
        let server = MockServer::start().await.unwrap();
        server.require_api_key("sk-test");
        let models = list_models(&config(&server, wire), wire).await.unwrap();
        assert_eq!(models, ["mock-large", "mock-small"], "{wire:?}");
    }
    let server = MockServer::start().await.unwrap();
    server.set_models(json!({"models": [{"name": "qwen2.5-coder:7b"}, {"name": "llama3.2:3b"}]}));
    let models = list_models(&config(&server, WireApi::Chat), WireApi::Chat)
        .await
        .unwrap();
    assert_eq!(models, ["llama3.2:3b", "qwen2.5-coder:7b"]);
}

#[tokio::test]
async fn extra_headers_and_query_parameters_are_sent() {
    for wire in WIRES {
        let server = MockServer::start().await.unwrap();
        server.push(Reply::text("ok"));
        let mut config = config(&server, wire);
        config.headers = vec![("X-Team".into(), "core".into())];
        config.query_params = vec![("api-version".into(), "2025-01-01".into())];
        let (_, error) = collect(config, wire, request()).await;
        assert!(error.is_none(), "{wire:?}: {error:?}");
        let sent = &server.model_requests()[0];
        assert_eq!(sent.header("x-team"), Some("core"), "{wire:?}");
        assert_eq!(
            sent.query.as_deref(),
            Some("api-version=2025-01-01"),
            "{wire:?}"
        );
    }
}
