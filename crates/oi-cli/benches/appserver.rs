//! Programs driving oi: the time from spawning the binary to its first
//! event (`exec --json`'s `thread.started`; the app-server's
//! `thread/started` after `initialize` and `thread/start`), and the memory
//! of one app-server serving 10 threads at once, each having run Python
//! (printed once: the server's peak RSS, and with its kernels).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "bench code: a panic is a failed benchmark; the memory figure is printed"
)]

use std::process::Stdio;

use criterion::{Criterion, criterion_group, criterion_main};
use oi_testkit::procs::{descendants, status_kib};
use oi_testkit::{MockServer, Reply};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Env {
    server: MockServer,
    cwd: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Env {
    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_interpreter"));
        cmd.args([
            "--api-base",
            &self.server.base_url(),
            "--model",
            "mock-model",
        ])
        .args(args)
        .current_dir(self.cwd.path())
        .env("HOME", self.home.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("INTERPRETER_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
        cmd
    }
}

/// Reads lines until one whose `key` is `value`.
async fn until<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut tokio::io::Lines<R>,
    key: &str,
    value: &str,
) -> Value {
    loop {
        let line = lines.next_line().await.unwrap().expect("the stream ended");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message[key] == value {
            return message;
        }
    }
}

async fn send(stdin: &mut tokio::process::ChildStdin, message: Value) {
    let mut line = message.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await.unwrap();
}

fn first_event(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let env = Env {
        server: rt.block_on(MockServer::start()).unwrap(),
        cwd: tempfile::tempdir().unwrap(),
        home: tempfile::tempdir().unwrap(),
    };
    let mut group = c.benchmark_group("first_event");
    group.sample_size(20);
    group.bench_function("exec_json_thread_started", |b| {
        b.to_async(&rt).iter(|| async {
            env.server.push(Reply::text("ok"));
            let mut child = env.command(&["exec", "--json", "-"]).spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(b"hello").await.unwrap();
            drop(stdin);
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            until(&mut lines, "type", "thread.started").await;
            // The rest of the turn is not what is measured, but it ends.
            until(&mut lines, "type", "turn.completed").await;
            child.wait().await.unwrap();
        })
    });
    group.bench_function("app_server_thread_started", |b| {
        b.to_async(&rt).iter(|| async {
            let mut child = env.command(&["app-server"]).spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            send(&mut stdin, json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "bench"}}})).await;
            send(&mut stdin, json!({"id": 2, "method": "thread/start", "params": {}})).await;
            until(&mut lines, "method", "thread/started").await;
            drop(stdin);
            child.wait().await.unwrap();
        })
    });
    group.finish();
    rt.block_on(ten_threads(&env));
}

/// The server's and its kernels' memory with 10 threads that each ran
/// Python.
async fn ten_threads(env: &Env) {
    let mut child = env
        .command(&["-c", "approval=\"auto\"", "app-server"])
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    send(
        &mut stdin,
        json!({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "bench"}}}),
    )
    .await;
    let mut threads = Vec::new();
    for id in 1..=10 {
        send(
            &mut stdin,
            json!({"id": id, "method": "thread/start", "params": {}}),
        )
        .await;
        let started = until(&mut lines, "method", "thread/started").await;
        threads.push(
            started["params"]["thread"]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for _ in &threads {
        env.server
            .push(Reply::execute(
                "python",
                "x = list(range(1000)); print(len(x))",
            ))
            .push(Reply::text("done"));
    }
    for (n, thread) in threads.iter().enumerate() {
        send(
            &mut stdin,
            json!({"id": 100 + n, "method": "turn/start", "params": {"threadId": thread, "input": [{"type": "text", "text": "go"}]}}),
        )
        .await;
    }
    for _ in &threads {
        until(&mut lines, "method", "turn/completed").await;
    }
    let own = status_kib(pid, "VmHWM:");
    let kernels: u64 = descendants(pid)
        .iter()
        .map(|p| status_kib(*p, "VmRSS:"))
        .sum();
    eprintln!(
        "app-server with 10 threads, each after a Python run: the server's peak RSS {:.1} MiB; its kernels' RSS {:.1} MiB in all ({} processes)",
        own as f64 / 1024.0,
        kernels as f64 / 1024.0,
        descendants(pid).len()
    );
    drop(stdin);
    child.wait().await.unwrap();
}

criterion_group!(benches, first_event);
criterion_main!(benches);
