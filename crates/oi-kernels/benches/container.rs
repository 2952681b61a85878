//! Kernels in a container (`sandbox = "container"`): a session's start with
//! a warm image (the container, then the first Python run), and the warm
//! round trip of a trivial run inside, beside the same run on the host.
//! Target: the warm round trip within 2 ms of the host kernel's. Needs an
//! engine and the test image (see `oi_testkit::container_image`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use oi_kernels::{ContainerSpec, KernelManager, LanguageSpec, RunControl, RunEvent};
use oi_protocol::{RunStatus, SandboxMode};
use tokio_util::sync::CancellationToken;

fn run_ok(rt: &tokio::runtime::Runtime, kernels: &mut KernelManager, code: &str) {
    let cancel = CancellationToken::new();
    let mut sink = |_: RunEvent| {};
    let outcome = rt
        .block_on(kernels.run("python", code, &mut sink, RunControl::cancel(&cancel)))
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Ok, "{code}");
}

fn in_container(image: &str, workspace: &std::path::Path) -> KernelManager {
    KernelManager::new(vec![LanguageSpec::python("/usr/bin/python3")], workspace)
        .with_sandbox(oi_sandbox::Policy::new(SandboxMode::Container, workspace))
        .with_container(ContainerSpec::new(image))
}

fn container(c: &mut Criterion) {
    let Some(image) = oi_testkit::container_image() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = fs_err::canonicalize(dir.path()).unwrap();

    let mut group = c.benchmark_group("container");
    group.sample_size(10);
    group.bench_function("session_start", |b| {
        b.iter(|| {
            let mut kernels = in_container(&image, &workspace);
            run_ok(&rt, &mut kernels, "print(1)");
            rt.block_on(kernels.shutdown());
        })
    });
    group.finish();

    let mut group = c.benchmark_group("warm_round_trip_python");
    let mut kernels = in_container(&image, &workspace);
    run_ok(&rt, &mut kernels, "print(1)");
    group.bench_function("container", |b| {
        b.iter(|| run_ok(&rt, &mut kernels, "print(1)"))
    });
    rt.block_on(kernels.shutdown());
    let mut host = KernelManager::new(vec![LanguageSpec::python("/usr/bin/python3")], &workspace);
    run_ok(&rt, &mut host, "print(1)");
    group.bench_function("host", |b| b.iter(|| run_ok(&rt, &mut host, "print(1)")));
    rt.block_on(host.shutdown());
    group.finish();
}

criterion_group!(benches, container);
criterion_main!(benches);
