//! Kernel latency: the warm round trip of a trivial run (`print(1)`, `echo 1`)
//! and the cold start of a kernel. Target: warm Python round trip < 2 ms median.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use oi_kernels::{KernelManager, LanguageSpec, detect_languages};
use tokio_util::sync::CancellationToken;

fn spec(name: &str) -> LanguageSpec {
    detect_languages()
        .into_iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("{name} is not installed"))
}

fn warm_round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let cancel = CancellationToken::new();
    for (language, code) in [("python", "print(1)"), ("shell", "echo 1")] {
        let mut kernels = KernelManager::new(vec![spec(language)], std::env::temp_dir());
        let mut sink = |_: oi_protocol::OutputStream, _: String| {};
        rt.block_on(kernels.run(language, code, &mut sink, &cancel))
            .unwrap();
        c.bench_function(&format!("warm_round_trip/{language}"), |b| {
            b.iter(|| {
                let status = rt
                    .block_on(kernels.run(language, code, &mut sink, &cancel))
                    .unwrap();
                assert_eq!(status, oi_protocol::RunStatus::Ok);
            })
        });
        rt.block_on(kernels.shutdown());
    }
}

fn cold_start(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let cancel = CancellationToken::new();
    let mut group = c.benchmark_group("cold_start");
    group.sample_size(20);
    for (language, code) in [("python", "print(1)"), ("shell", "echo 1")] {
        group.bench_function(language, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut kernels =
                        KernelManager::new(vec![spec(language)], std::env::temp_dir());
                    let mut sink = |_: oi_protocol::OutputStream, _: String| {};
                    kernels
                        .run(language, code, &mut sink, &cancel)
                        .await
                        .unwrap();
                    kernels.shutdown().await;
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, warm_round_trip, cold_start);
criterion_main!(benches);
