//! Kernel latency and throughput, for every language installed here:
//! the warm round trip of a trivial run (`print(1)`, `echo 1` …), the cold
//! start of a kernel, and streaming 100 MB of output through a kernel to
//! the run's event sink. Targets: warm Python round trip < 2 ms median;
//! throughput ≥ 100 MB/s.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oi_kernels::{KernelManager, LanguageSpec, RunControl, RunEvent, detect_languages};
use oi_protocol::RunStatus;
use tokio_util::sync::CancellationToken;

/// A trivial program per language.
const TRIVIAL: &[(&str, &str)] = &[
    ("python", "print(1)"),
    ("shell", "echo 1"),
    ("javascript", "console.log(1)"),
    ("ruby", "puts 1"),
    ("r", "cat(1, \"\\n\")"),
    ("perl", "print \"1\\n\";"),
    ("lua", "print(1)"),
    ("php", "echo 1, \"\\n\";"),
    ("zsh", "echo 1"),
];

/// The installed languages with their trivial program.
fn installed() -> Vec<(LanguageSpec, &'static str)> {
    let detected = detect_languages();
    TRIVIAL
        .iter()
        .filter_map(|(name, code)| {
            let spec = detected.iter().find(|l| l.name == *name)?;
            Some((spec.clone(), *code))
        })
        .collect()
}

fn run_ok(rt: &tokio::runtime::Runtime, kernels: &mut KernelManager, language: &str, code: &str) {
    let cancel = CancellationToken::new();
    let mut sink = |_: RunEvent| {};
    let outcome = rt
        .block_on(kernels.run(language, code, &mut sink, RunControl::cancel(&cancel)))
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Ok, "{language}: {code}");
}

fn warm_round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("warm_round_trip");
    for (spec, code) in installed() {
        let language = spec.name.clone();
        let mut kernels = KernelManager::new(vec![spec], std::env::temp_dir());
        run_ok(&rt, &mut kernels, &language, code);
        group.bench_function(&language, |b| {
            b.iter(|| run_ok(&rt, &mut kernels, &language, code))
        });
        rt.block_on(kernels.shutdown());
    }
    group.finish();
}

fn cold_start(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("cold_start");
    group.sample_size(10);
    for (spec, code) in installed() {
        let language = spec.name.clone();
        group.bench_function(&language, |b| {
            b.iter(|| {
                let mut kernels = KernelManager::new(vec![spec.clone()], std::env::temp_dir());
                run_ok(&rt, &mut kernels, &language, code);
                rt.block_on(kernels.shutdown());
            })
        });
    }
    group.finish();
}

/// 100 MB of output, as Python writes it in 1 MB pieces, through the kernel
/// to a sink that counts it.
fn output_throughput(c: &mut Criterion) {
    const SIZE: u64 = 100 * 1024 * 1024;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let python = detect_languages()
        .into_iter()
        .find(|l| l.name == "python")
        .expect("python3 is installed");
    let mut kernels = KernelManager::new(vec![python], std::env::temp_dir());
    let code = "import sys\nchunk = (b'x' * 1023 + b'\\n') * 1024\nfor _ in range(100):\n    sys.stdout.buffer.write(chunk)\nsys.stdout.flush()";
    run_ok(&rt, &mut kernels, "python", "1");
    let mut group = c.benchmark_group("output_throughput");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(SIZE));
    group.bench_function("python_100MB", |b| {
        b.iter(|| {
            let cancel = CancellationToken::new();
            let mut received = 0u64;
            let mut sink = |event: RunEvent| {
                if let RunEvent::Output { text, .. } = event {
                    received += text.len() as u64;
                }
            };
            let outcome = rt
                .block_on(kernels.run("python", code, &mut sink, RunControl::cancel(&cancel)))
                .unwrap();
            assert_eq!(outcome.status, RunStatus::Ok);
            assert_eq!(received, SIZE);
        })
    });
    group.finish();
    rt.block_on(kernels.shutdown());
}

criterion_group!(benches, warm_round_trip, cold_start, output_throughput);
criterion_main!(benches);
