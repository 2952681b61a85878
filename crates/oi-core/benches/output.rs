//! Streaming a run's output through the whole agent: 100 MB printed by
//! Python, through the kernel, the model's head-and-tail and the display
//! pacing, to the session's event stream. Target: ≥ 100 MB/s.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oi_core::{Agent, AgentConfig};
use oi_kernels::{KernelManager, detect_languages};
use oi_protocol::{ApprovalPolicy, Event, Op, RunStatus};
use oi_providers::{ChatClient, ProviderConfig};
use oi_testkit::{MockServer, Reply};

const SIZE: u64 = 100 * 1024 * 1024;
const CODE: &str = "import sys\nchunk = (b'x' * 1023 + b'\\n') * 1024\nfor _ in range(100):\n    sys.stdout.buffer.write(chunk)\nsys.stdout.flush()";

fn agent_output_throughput(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(MockServer::start()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = AgentConfig::new("mock");
    config.approval = ApprovalPolicy::Auto;
    let client = ChatClient::new(ProviderConfig::new("mock", server.base_url()));
    let kernels = KernelManager::new(detect_languages(), dir.path());
    let (ops, mut events) = rt.block_on(async {
        let (ops, mut events) = Agent::spawn(config, Arc::new(client), kernels);
        // Warm the Python kernel up.
        server
            .push(Reply::execute("python", "1"))
            .push(Reply::text("ok"));
        ops.send(Op::input("warm")).unwrap();
        while let Some(event) = events.recv().await {
            if matches!(event, Event::TaskComplete { .. }) {
                break;
            }
        }
        (ops, events)
    });

    let mut group = c.benchmark_group("agent_output_throughput");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(SIZE));
    group.bench_function("python_100MB", |b| {
        b.iter(|| {
            server
                .push(Reply::execute("python", CODE))
                .push(Reply::text("ok"));
            ops.send(Op::input("go")).unwrap();
            rt.block_on(async {
                let mut bytes = 0;
                while let Some(event) = events.recv().await {
                    match event {
                        Event::RunFinished {
                            status,
                            output_bytes,
                            ..
                        } => {
                            assert_eq!(status, RunStatus::Ok);
                            bytes = output_bytes;
                        }
                        Event::TaskComplete { .. } => break,
                        _ => {}
                    }
                }
                assert_eq!(bytes, SIZE);
            })
        })
    });
    group.finish();
    ops.send(Op::Shutdown).unwrap();
}

criterion_group!(benches, agent_output_throughput);
criterion_main!(benches);
