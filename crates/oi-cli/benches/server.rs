//! `interpreter server` under load: the round trip of one conversation
//! through the OpenAI-compatible endpoint (a session started, the model
//! asked, the answer back), and 50 conversations at once, each running
//! Python — all must complete; printed: their latency (median, 95th
//! percentile, slowest), the wall time, and the peak memory of the server
//! and of the server with every kernel. The mock model answers on
//! 127.0.0.1; nothing else is reached.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "bench code: a panic is a failed benchmark; the figures are printed"
)]

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use oi_testkit::procs::{descendants, status_kib};
use oi_testkit::{MockServer, Reply};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const KEY: &str = "oi-bench-key";
const CONVERSATIONS: usize = 50;

struct Server {
    child: tokio::process::Child,
    url: String,
    _cwd: tempfile::TempDir,
    _home: tempfile::TempDir,
}

async fn start(mock: &MockServer) -> Server {
    let cwd = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .args([
            "--api-base",
            &mock.base_url(),
            "--model",
            "mock-model",
            "-y",
            "server",
            "--port",
            "0",
        ])
        .current_dir(cwd.path())
        .env("HOME", home.path())
        .env("INTERPRETER_API_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .env_remove("INTERPRETER_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("the server ended");
        if let Some(rest) = line.strip_prefix("oi server on ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Server {
        child,
        url,
        _cwd: cwd,
        _home: home,
    }
}

async fn complete(http: &reqwest::Client, url: &str, text: &str) -> Value {
    let response = http
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth(KEY)
        .json(&json!({"model": "oi", "messages": [{"role": "user", "content": text}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    response.json().await.unwrap()
}

fn round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt.block_on(MockServer::start()).unwrap();
    mock.repeat(Reply::text("ok"));
    let server = rt.block_on(start(&mock));
    let http = reqwest::Client::new();
    let mut group = c.benchmark_group("server");
    group.sample_size(20);
    group.bench_function("conversation_round_trip", |b| {
        b.to_async(&rt).iter(|| async {
            let answer = complete(&http, &server.url, "hi").await;
            assert_eq!(answer["choices"][0]["message"]["content"], "ok");
        })
    });
    group.finish();
    drop(server);
    rt.block_on(fifty_at_once());
}

/// 50 conversations at once, each running Python once.
async fn fifty_at_once() {
    let mock = MockServer::start().await.unwrap();
    // A request that carries a run's result is answered; the others run code.
    mock.answer_when("\"role\":\"tool\"", Reply::text("done"));
    mock.repeat(Reply::execute("python", "print(sum(range(1000)))"));
    let server = start(&mock).await;
    let pid = server.child.id().unwrap();
    let peak_server = Arc::new(AtomicU64::new(0));
    let peak_all = Arc::new(AtomicU64::new(0));
    let running = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (peak_server, peak_all, running) = (
            Arc::clone(&peak_server),
            Arc::clone(&peak_all),
            Arc::clone(&running),
        );
        tokio::spawn(async move {
            while running.load(Ordering::Relaxed) {
                let own = status_kib(pid, "VmRSS:");
                let all = own
                    + descendants(pid)
                        .iter()
                        .map(|p| status_kib(*p, "VmRSS:"))
                        .sum::<u64>();
                peak_server.fetch_max(own, Ordering::Relaxed);
                peak_all.fetch_max(all, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let http = reqwest::Client::new();
    let started = Instant::now();
    let tasks: Vec<_> = (0..CONVERSATIONS)
        .map(|n| {
            let (http, url) = (http.clone(), server.url.clone());
            tokio::spawn(async move {
                let at = Instant::now();
                let answer =
                    complete(&http, &url, &format!("conversation {n}: add up to 1000")).await;
                let text = answer["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                assert!(text.contains("499500") && text.ends_with("done"), "{text}");
                at.elapsed()
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.push(task.await.unwrap());
    }
    let wall = started.elapsed();
    running.store(false, Ordering::Relaxed);
    sampler.await.unwrap();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];
    eprintln!(
        "server: {CONVERSATIONS} conversations at once, each running Python: all completed in {:.2} s; latency median {:.0} ms, p95 {:.0} ms, slowest {:.0} ms; peak RSS: the server {:.1} MiB, with every kernel {:.1} MiB",
        wall.as_secs_f64(),
        at(0.5).as_secs_f64() * 1000.0,
        at(0.95).as_secs_f64() * 1000.0,
        latencies.last().unwrap().as_secs_f64() * 1000.0,
        peak_server.load(Ordering::Relaxed) as f64 / 1024.0,
        peak_all.load(Ordering::Relaxed) as f64 / 1024.0,
    );
    assert_eq!(mock.model_requests().len(), CONVERSATIONS * 2);
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
