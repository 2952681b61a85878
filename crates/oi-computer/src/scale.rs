//! Screenshots are shown to the model smaller than the screen; the points
//! it names on them are mapped back to real pixels here.

/// A width and height in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}", self.width, self.height)
    }
}

/// The largest screenshot models are shown: screens that fit are shown as
/// they are; larger ones are scaled down, keeping their aspect ratio.
pub const MAX_SHOWN: Size = Size {
    width: 1280,
    height: 800,
};

/// Maps points between the real screen and the screenshots the model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaler {
    real: Size,
    shown: Size,
}

impl Scaler {
    /// The mapping for a screen of `real` pixels shown at most `limit` large.
    pub fn new(real: Size, limit: Size) -> Self {
        let real = Size {
            width: real.width.max(1),
            height: real.height.max(1),
        };
        if real.width <= limit.width && real.height <= limit.height {
            return Self { real, shown: real };
        }
        // The smaller of the two factors, so both sides fit.
        let by_width = f64::from(limit.width) / f64::from(real.width);
        let by_height = f64::from(limit.height) / f64::from(real.height);
        let factor = by_width.min(by_height);
        let side = |n: u32, cap: u32| ((f64::from(n) * factor).round() as u32).clamp(1, cap);
        Self {
            real,
            shown: Size {
                width: side(real.width, limit.width),
                height: side(real.height, limit.height),
            },
        }
    }

    pub fn real(&self) -> Size {
        self.real
    }

    /// The size of the screenshots the model sees.
    pub fn shown(&self) -> Size {
        self.shown
    }

    /// Whether screenshots are scaled at all.
    pub fn scales(&self) -> bool {
        self.real != self.shown
    }

    /// The real pixel under a point of the shown screenshot (`None` when
    /// the point is outside it).
    pub fn to_real(&self, x: i64, y: i64) -> Option<(u32, u32)> {
        let inside = |v: i64, side: u32| v >= 0 && v < i64::from(side);
        if !inside(x, self.shown.width) || !inside(y, self.shown.height) {
            return None;
        }
        let map = |v: i64, shown: u32, real: u32| -> u32 {
            // The centre of the shown pixel, in real pixels.
            let centre = (v as f64 + 0.5) * f64::from(real) / f64::from(shown);
            (centre.floor() as u32).min(real - 1)
        };
        Some((
            map(x, self.shown.width, self.real.width),
            map(y, self.shown.height, self.real.height),
        ))
    }

    /// Where a real pixel appears on the shown screenshot.
    pub fn to_shown(&self, x: u32, y: u32) -> (u32, u32) {
        let map = |v: u32, shown: u32, real: u32| -> u32 {
            let centre = (f64::from(v) + 0.5) * f64::from(shown) / f64::from(real);
            (centre.floor() as u32).min(shown - 1)
        };
        (
            map(
                x.min(self.real.width - 1),
                self.shown.width,
                self.real.width,
            ),
            map(
                y.min(self.real.height - 1),
                self.shown.height,
                self.real.height,
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn size(width: u32, height: u32) -> Size {
        Size { width, height }
    }

    #[test]
    fn large_screens_are_scaled_to_fit_keeping_their_shape() {
        let cases = [
            (size(1920, 1080), size(1280, 720)),
            (size(2560, 1600), size(1280, 800)),
            (size(3840, 2160), size(1280, 720)),
            (size(1280, 1024), size(1000, 800)),
            (size(1024, 768), size(1024, 768)),
            (size(1280, 800), size(1280, 800)),
            (size(5120, 1440), size(1280, 360)),
        ];
        for (real, shown) in cases {
            let scaler = Scaler::new(real, MAX_SHOWN);
            assert_eq!(scaler.shown(), shown, "{real}");
            assert_eq!(scaler.scales(), real != shown);
        }
    }

    #[test]
    fn every_shown_point_round_trips_through_real_pixels() {
        for real in [
            size(1920, 1080),
            size(2560, 1600),
            size(1366, 768),
            size(800, 600),
        ] {
            let scaler = Scaler::new(real, MAX_SHOWN);
            let shown = scaler.shown();
            for x in 0..shown.width {
                let (rx, _) = scaler.to_real(i64::from(x), 0).unwrap();
                assert!(rx < real.width);
                assert_eq!(scaler.to_shown(rx, 0).0, x, "{real}: x {x} → {rx}");
            }
            for y in 0..shown.height {
                let (_, ry) = scaler.to_real(0, i64::from(y)).unwrap();
                assert_eq!(scaler.to_shown(0, ry).1, y, "{real}: y {y} → {ry}");
            }
        }
    }

    #[test]
    fn real_points_come_back_within_one_shown_pixel() {
        let scaler = Scaler::new(size(1920, 1080), MAX_SHOWN);
        for x in (0..1920).step_by(7) {
            let (sx, sy) = scaler.to_shown(x, x % 1080);
            let (rx, ry) = scaler.to_real(i64::from(sx), i64::from(sy)).unwrap();
            assert!(rx.abs_diff(x) <= 1, "{x} → {sx} → {rx}");
            assert!(ry.abs_diff(x % 1080) <= 1);
        }
        assert_eq!(scaler.to_real(640, 360), Some((960, 540)));
        assert_eq!(scaler.to_real(1279, 719), Some((1919, 1079)));
    }

    #[test]
    fn points_outside_the_screenshot_are_refused() {
        let scaler = Scaler::new(size(1920, 1080), MAX_SHOWN);
        for (x, y) in [(-1, 0), (0, -1), (1280, 0), (0, 720), (5000, 5000)] {
            assert_eq!(scaler.to_real(x, y), None, "({x}, {y})");
        }
    }
}
