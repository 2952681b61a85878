//! Throughput of decoding a streamed reply: a large recorded Chat
//! Completions SSE body (text chunks, then a tool call with fragmented
//! arguments) split into network-sized pieces, decoded into reply events.
//! Target: at least 200 MB/s, so that parsing is never the bottleneck.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench code: a panic is a failed benchmark"
)]

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use oi_providers::{StreamEvent, replay_chat_stream};
use serde_json::json;

/// About `target` bytes of a realistic stream, in 16 KiB pieces.
fn recording(target: usize) -> Vec<Bytes> {
    let mut body = String::new();
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        format!(
            "data: {}\n\n",
            json!({
                "id": "chatcmpl-rec",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000u64,
                "model": "gpt-5-mini",
                "system_fingerprint": "fp_rec",
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                "obfuscation": "Zk3q",
            })
        )
    };
    let words = [
        "The ",
        "quick ",
        "brown ",
        "fox ",
        "jumps ",
        "over ",
        "the ",
        "lazy ",
        "dog. ",
        "Ünïcödé ",
    ];
    let mut i = 0;
    while body.len() < target * 9 / 10 {
        body.push_str(&chunk(
            json!({"content": words[i % words.len()]}),
            json!(null),
        ));
        i += 1;
    }
    body.push_str(&chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "execute", "arguments": ""}}]}),
        json!(null),
    ));
    let code = "print('x')\\n".repeat(5);
    while body.len() < target {
        body.push_str(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": format!("{{\"code\": \"{code}\"}}")}}]}),
            json!(null),
        ));
    }
    body.push_str(&chunk(json!({}), json!("tool_calls")));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
        .chunks(16 * 1024)
        .map(Bytes::copy_from_slice)
        .collect()
}

fn decode(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let chunks = recording(32 << 20);
    let total: usize = chunks.iter().map(Bytes::len).sum();
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(total as u64));
    group.sample_size(10);
    group.bench_function("chat_stream_32MiB", |b| {
        b.to_async(&rt).iter(|| {
            let chunks = chunks.clone();
            async move {
                let mut stream = replay_chat_stream(chunks);
                let mut events = 0usize;
                while let Some(event) = stream.next().await {
                    if let StreamEvent::Completed { .. } = event.unwrap() {
                        return events;
                    }
                    events += 1;
                }
                panic!("the recording did not complete");
            }
        })
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
