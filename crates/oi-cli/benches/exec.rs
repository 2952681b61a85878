//! One whole scripted task through the binary: start `interpreter exec`, two
//! model requests to the mock server, one Python run, exit.
//! Target: under 150 ms on the reference machine (2 cores).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench code: a panic is a failed benchmark"
)]

use std::process::Stdio;

use criterion::{Criterion, criterion_group, criterion_main};
use oi_testkit::{MockServer, Reply};

fn whole_task(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(MockServer::start()).unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("exec");
    group.sample_size(30);
    group.bench_function("scripted_task_python", |b| {
        b.to_async(&rt).iter(|| async {
            server
                .push(Reply::execute("python", "print(6 * 7)"))
                .push(Reply::text("The answer is 42."));
            let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_interpreter"))
                .args([
                    "exec",
                    "--yes",
                    "--api-base",
                    &server.base_url(),
                    "--model",
                    "mock-model",
                    "what is 6*7?",
                ])
                .args(
                    std::env::var("OI_BENCH_EXTRA")
                        .map(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                        .unwrap_or_default(),
                )
                .current_dir(cwd.path())
                .env("HOME", home.path())
                .env_remove("OPENAI_API_KEY")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .await
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.stdout, b"The answer is 42.\n");
        })
    });
    group.finish();
}

criterion_group!(benches, whole_task);
criterion_main!(benches);
