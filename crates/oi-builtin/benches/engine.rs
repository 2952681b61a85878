//! The built-in engine against llama.cpp's own server on the same GGUF
//! file and thread count: time to first token and generation speed.
//!
//! `OI_BUILTIN_GGUF=… OI_LOCALMODEL_URL=http://127.0.0.1:PORT cargo bench
//! -p oi-builtin --features llama --bench engine`, the server started with
//! the same weights and threads (`localmodel serve 0.5b PORT 2 4096`);
//! `OI_BENCH_THREADS` (default 2) sets the engine's threads. Each run asks
//! for 128 tokens of a greedy reply to a prompt that changes every run, so
//! neither side answers from a cached prompt. Without a server, only the
//! engine is measured.

#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark prints its table and fails loudly"
)]

use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_builtin::{BuiltinClient, EngineOptions, Sampling};
use oi_protocol::Message;
use oi_providers::{ModelClient, ModelRequest, StreamEvent};

const TOKENS: u32 = 128;
const RUNS: usize = 3;

#[derive(Debug, Default, Clone, Copy)]
struct Run {
    first_token: Duration,
    tokens: u64,
    generating: Duration,
}

impl Run {
    fn rate(&self) -> f64 {
        (self.tokens.saturating_sub(1)) as f64 / self.generating.as_secs_f64()
    }
}

fn prompt(run: usize) -> String {
    format!(
        "Essay number {run}: write a long, detailed essay about the history of computing, from the abacus to today's computers."
    )
}

async fn engine_run(client: &BuiltinClient, run: usize) -> Run {
    let request = ModelRequest {
        model: "bench".into(),
        system: "You are a helpful assistant.".into(),
        messages: vec![Message::user(prompt(run))],
        tools: vec![],
        max_tokens: Some(TOKENS),
        temperature: Some(0.0),
        cache_key: None,
        form: None,
    };
    let start = Instant::now();
    let mut first = None;
    let mut stream = client.stream(request);
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            StreamEvent::TextDelta(_) if first.is_none() => first = Some(Instant::now()),
            StreamEvent::Completed { usage, .. } => {
                let first = first.unwrap();
                return Run {
                    first_token: first - start,
                    tokens: usage.unwrap().output_tokens,
                    generating: first.elapsed(),
                };
            }
            _ => {}
        }
    }
    panic!("no Completed")
}

async fn server_run(http: &reqwest::Client, url: &str, run: usize) -> Run {
    let body = serde_json::json!({
        "model": "bench",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": prompt(run)},
        ],
        "max_tokens": TOKENS,
        "temperature": 0.0,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let start = Instant::now();
    let response = http
        .post(format!("{url}/v1/chat/completions"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let mut first = None;
    let mut tokens = 0u64;
    let mut last = Instant::now();
    while let Some(chunk) = stream.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find('\n') {
            let line = buffer[..end].trim().to_owned();
            buffer.drain(..=end);
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            if data == "[DONE]" {
                continue;
            }
            let event: serde_json::Value = serde_json::from_str(data).unwrap();
            let content = event["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap_or("");
            if !content.is_empty() {
                first.get_or_insert_with(Instant::now);
                last = Instant::now();
            }
            if let Some(n) = event["usage"]["completion_tokens"].as_u64() {
                tokens = n;
            }
        }
    }
    let first = first.unwrap();
    Run {
        first_token: first - start,
        tokens,
        generating: last - first,
    }
}

fn summary(name: &str, runs: &[Run]) -> f64 {
    let rates: Vec<f64> = runs.iter().map(Run::rate).collect();
    let ttft: Vec<f64> = runs
        .iter()
        .map(|r| r.first_token.as_secs_f64() * 1000.0)
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (lo, hi) = rates
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    println!(
        "{name:<28} {:>6.1} tok/s ({lo:.1}–{hi:.1})   first token {:>6.0} ms   tokens/run {}",
        mean(&rates),
        mean(&ttft),
        runs[0].tokens
    );
    mean(&rates)
}

#[tokio::main]
async fn main() {
    let Some(path) = std::env::var_os("OI_BUILTIN_GGUF") else {
        println!("engine bench: set OI_BUILTIN_GGUF to a GGUF file");
        return;
    };
    let threads: u32 = std::env::var("OI_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    let load = Instant::now();
    let client = BuiltinClient::new(EngineOptions {
        path: path.into(),
        name: "bench".into(),
        threads,
        context: Some(4096),
        sampling: Sampling::default(),
    });
    client
        .context_window("bench")
        .await
        .expect("the model loads");
    println!(
        "weights loaded in {:.0} ms; {threads} threads; {TOKENS} tokens per run, {RUNS} runs",
        load.elapsed().as_secs_f64() * 1000.0
    );
    let _ = engine_run(&client, 0).await;
    let mut engine = Vec::new();
    for run in 1..=RUNS {
        engine.push(engine_run(&client, run).await);
    }
    let ours = summary("built-in engine (in-process)", &engine);
    drop(client);
    let Ok(url) = std::env::var("OI_LOCALMODEL_URL") else {
        println!("(no OI_LOCALMODEL_URL: llama.cpp's server not measured)");
        return;
    };
    let http = reqwest::Client::new();
    let _ = server_run(&http, &url, 100).await;
    let mut server = Vec::new();
    for run in 101..=100 + RUNS {
        server.push(server_run(&http, &url, run).await);
    }
    let theirs = summary("llama.cpp server (HTTP)", &server);
    println!(
        "built-in / server generation speed: {:.0} %",
        ours / theirs * 100.0
    );
}
