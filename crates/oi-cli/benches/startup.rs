//! From starting `interpreter` in a terminal to its prompt being ready for
//! typing: the binary runs in a pseudo-terminal, and the time is taken when
//! the prompt (`› `) reaches the screen. The terminal answers the line
//! editor's queries (cursor position, device attributes) at once, as a
//! real one does.
//! Target: under 50 ms on the reference machine (2 cores).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench code: a panic is a failed benchmark"
)]

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// Starts the binary and returns the time until its prompt shows.
fn to_first_prompt(home: &std::path::Path, cwd: &std::path::Path) -> Duration {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_interpreter"));
    cmd.cwd(cwd);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", home);
    cmd.env("TERM", "xterm-256color");
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let started = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let elapsed = loop {
        let n = reader.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the binary ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
        if buf[..n].windows(4).any(|w| w == b"\x1b[6n") {
            writer.write_all(b"\x1b[3;1R").unwrap();
            writer.flush().unwrap();
        }
        if buf[..n].windows(3).any(|w| w == b"\x1b[c") {
            writer.write_all(b"\x1b[?62;22c").unwrap();
            writer.flush().unwrap();
        }
        if seen.windows("› ".len()).any(|w| w == "› ".as_bytes()) {
            break started.elapsed();
        }
    };
    // Ctrl-D leaves; wait so the next start does not compete with this exit.
    writer.write_all(b"\x04").unwrap();
    writer.flush().unwrap();
    let _ = child.wait();
    elapsed
}

fn startup(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let dir = home.path().join(".openinterpreter");
    fs_err::create_dir_all(&dir).unwrap();
    // A provider that is never contacted before the first task.
    fs_err::write(
        dir.join("config.toml"),
        "model_provider = \"local\"\nmodel = \"some-model\"\n\n[model_providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let mut group = c.benchmark_group("startup");
    group.sample_size(20);
    group.bench_function("first_prompt", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| to_first_prompt(home.path(), cwd.path()))
                .sum()
        });
    });
    group.finish();
}

criterion_group!(benches, startup);
criterion_main!(benches);
