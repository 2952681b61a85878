//! Screenshot cost at 1920×1080: capture (Xvfb), scale to 1280×720, PNG.
//! Target: under 50 ms for all three.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "benchmark"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use oi_computer::{Frame, MAX_SHOWN, Scaler, Size, connect_to};

const FULL_HD: Size = Size {
    width: 1920,
    height: 1080,
};

/// A frame with the texture of a desktop: flat areas, gradients and
/// text-like noise (a blank frame would compress unrealistically well).
fn desktop_like() -> Frame {
    let mut frame = Frame::filled(FULL_HD, [236, 236, 236]);
    let mut seed = 0x2545_f491_u32;
    for y in 0..FULL_HD.height {
        for x in 0..FULL_HD.width {
            let i = ((y * FULL_HD.width + x) * 4) as usize;
            if y < 40 {
                frame.bgrx[i..i + 3].copy_from_slice(&[(x / 8) as u8, 60, 40]);
            } else if (x / 12) % 3 != 0 && (y / 18) % 2 == 0 && x > 200 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                if seed.is_multiple_of(3) {
                    frame.bgrx[i..i + 3].copy_from_slice(&[20, 20, 20]);
                }
            }
        }
    }
    frame
}

fn screenshot(c: &mut Criterion) {
    let shown = Scaler::new(FULL_HD, MAX_SHOWN).shown();
    let frame = desktop_like();
    c.bench_function("scale+png 1920x1080 -> 1280x720", |b| {
        b.iter(|| frame.to_png(shown).unwrap())
    });
    match oi_testkit::Xvfb::start(FULL_HD.width, FULL_HD.height) {
        Some(xvfb) => {
            let mut computer = connect_to(Some(xvfb.display()), false).unwrap();
            c.bench_function("capture 1920x1080 (X11 GetImage)", |b| {
                b.iter(|| computer.capture().unwrap())
            });
            c.bench_function("capture+scale+png 1920x1080 -> 1280x720", |b| {
                b.iter(|| computer.capture().unwrap().to_png(shown).unwrap())
            });
        }
        None => eprintln!("Xvfb is not installed: capture not measured"),
    }
}

criterion_group!(benches, screenshot);
criterion_main!(benches);
