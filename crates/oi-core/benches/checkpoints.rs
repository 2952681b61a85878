//! Checkpoints of a 10,000-file workspace: a snapshot when nothing changed
//! (taken before every run; target: well under 100 ms), and when one file
//! changed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "benchmark code: a panic is a failure"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use oi_core::Checkpoints;

fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for d in 0..100 {
        let dir = ws.path().join(format!("dir{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(
                dir.join(format!("file{f}.txt")),
                format!("{d} {f}\n").repeat(20),
            )
            .unwrap();
        }
    }
    (home, ws)
}

fn snapshots(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (home, ws) = workspace();
    let checkpoints = Checkpoints::new(home.path(), ws.path(), 50 << 20);
    rt.block_on(checkpoints.snapshot("before run 1: first"))
        .unwrap();
    let mut group = c.benchmark_group("checkpoint_10k_files");
    group.sample_size(20);
    group.bench_function("unchanged", |b| {
        b.iter(|| {
            let s = rt
                .block_on(checkpoints.snapshot("before run 2: x"))
                .unwrap();
            assert!(!s.created);
        })
    });
    let mut n = 0u64;
    group.bench_function("one_file_changed", |b| {
        b.iter(|| {
            n += 1;
            std::fs::write(ws.path().join("dir7/file7.txt"), format!("{n}\n")).unwrap();
            let s = rt
                .block_on(checkpoints.snapshot("before run 3: y"))
                .unwrap();
            assert!(s.created);
        })
    });
    group.finish();
}

criterion_group!(benches, snapshots);
criterion_main!(benches);
