//! The engine with real weights (`OI_BUILTIN_GGUF`, e.g. Qwen2.5-Coder
//! 0.5B): it answers through the provider interface, counts tokens,
//! keeps the shared prompt cached, honours the token limit and stops when
//! the stream is dropped.
#![expect(
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use futures::StreamExt;
use oi_builtin::{BuiltinClient, EngineOptions, Sampling};
use oi_protocol::Message;
use oi_providers::{FinishReason, ModelClient, ModelRequest, StreamEvent};

fn client() -> Option<BuiltinClient> {
    let path = oi_testkit::builtin_weights(oi_builtin::AVAILABLE)?;
    Some(BuiltinClient::new(EngineOptions {
        path,
        name: "test".into(),
        threads: 1,
        context: Some(2048),
        sampling: Sampling {
            temperature: 0.0,
            ..Sampling::default()
        },
    }))
}

fn request(messages: Vec<Message>, max_tokens: Option<u32>) -> ModelRequest {
    ModelRequest {
        model: "test".into(),
        system: "You are a helpful assistant. Answer briefly.".into(),
        messages,
        tools: vec![],
        max_tokens,
        temperature: None,
        cache_key: None,
        form: None,
    }
}

async fn answer(
    client: &BuiltinClient,
    request: ModelRequest,
) -> (String, FinishReason, oi_protocol::Usage) {
    let mut stream = client.stream(request);
    let mut text = String::new();
    let mut deltas = 0;
    while let Some(event) = stream.next().await {
        match event.expect("no error") {
            StreamEvent::TextDelta(t) => {
                deltas += 1;
                text.push_str(&t);
            }
            StreamEvent::Completed {
                finish_reason,
                usage,
            } => {
                assert!(deltas > 1 || text.len() < 8, "streamed in pieces: {deltas}");
                return (text, finish_reason, usage.expect("usage"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    panic!("the stream ended without Completed: {text:?}")
}

#[tokio::test]
async fn answers_counts_caches_limits_and_cancels() {
    let Some(client) = client() else { return };
    assert_eq!(client.context_window("test").await, Some(2048));

    let first = vec![Message::user("What is 2 + 3? Reply with the number only.")];
    let (text, finish, usage) = answer(&client, request(first.clone(), Some(32))).await;
    assert!(text.contains('5'), "{text:?}");
    assert_eq!(finish, FinishReason::Stop);
    assert!(
        usage.input_tokens > 10 && usage.output_tokens >= 1,
        "{usage:?}"
    );

    // The next turn shares the whole first exchange: it is not evaluated again.
    let mut second = first;
    second.push(Message::Assistant {
        text,
        tool_calls: vec![],
        reasoning: vec![],
    });
    second.push(Message::user(
        "Write a Python function that reverses a string.",
    ));
    let (_, finish, usage2) = answer(&client, request(second.clone(), Some(5))).await;
    assert_eq!(finish, FinishReason::Length, "stopped at the token limit");
    assert_eq!(usage2.output_tokens, 5);
    assert!(
        usage2.cached_input_tokens >= usage.input_tokens,
        "{usage2:?} after {usage:?}"
    );

    // Dropping the stream stops generation: the next request is answered.
    let mut stream = client.stream(request(second.clone(), Some(2000)));
    let _ = stream.next().await;
    drop(stream);
    let (text, _, _) = answer(&client, request(vec![Message::user("Say OK.")], Some(8))).await;
    assert!(!text.is_empty());

    // Another model than the one loaded is refused, not answered by these weights.
    let mut other = request(vec![Message::user("hi")], Some(8));
    other.model = "qwen2.5-coder-7b".into();
    let error = client.stream(other).next().await.unwrap().unwrap_err();
    assert!(error.to_string().contains("cannot switch"), "{error}");
    assert!(error.hint().unwrap().contains("--model qwen2.5-coder-7b"));
}

#[tokio::test]
async fn a_file_that_is_not_a_model_is_a_clear_error() {
    let Some(_) = client() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.gguf");
    fs_err::write(&path, b"GGUF not really").unwrap();
    let client = BuiltinClient::new(EngineOptions {
        path: path.clone(),
        name: "test".into(),
        threads: 1,
        context: None,
        sampling: Sampling::default(),
    });
    let mut stream = client.stream(request(vec![Message::user("hi")], None));
    let error = stream.next().await.unwrap().unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("cannot load") && text.contains("broken.gguf"),
        "{text}"
    );
    assert!(error.hint().is_some());
}

#[tokio::test]
async fn a_reply_held_to_one_code_block_ends_with_the_block() {
    let Some(client) = client() else { return };
    // A question small models answer with code and then an explanation.
    let ask = vec![Message::user(
        "Write a Python script that prints the squares of 1 to 5, and explain how it works.",
    )];
    let mut held = request(ask, Some(400));
    held.system = "To run code, write it in one fenced block with its language.".into();
    held.form = Some(oi_providers::ReplyForm::OneCodeBlock);
    let (text, finish, _) = answer(&client, held).await;
    assert_eq!(finish, FinishReason::Stop, "ended on its own: {text:?}");
    assert!(
        oi_providers::ReplyForm::OneCodeBlock.admits(&text),
        "{text:?}"
    );
    assert!(
        text.contains("```") && text.trim_end().ends_with("```"),
        "{text:?}"
    );
}
