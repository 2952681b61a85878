//! A computer as the model uses it: scaled screenshots saved to files,
//! actions in screenshot coordinates, and the corner fail-safe.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::action::{Action, Point};
use crate::keys::{self, Keysym};
use crate::{Button, Computer, ComputerError, MAX_SHOWN, Scaler, Size};

/// Which pixels an action's coordinates count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// The screenshots the model is shown (scaled).
    Shown,
    /// The real screen (scripts in the Python kernel).
    Real,
}

/// How to perform an action.
#[derive(Debug, Clone, Copy)]
pub struct Perform {
    pub space: Space,
    /// Take a screenshot after an action that may change the screen, once
    /// the screen had `settle` to react.
    pub screenshot_after: bool,
    pub settle: Duration,
}

impl Perform {
    /// For the model's `computer` tool.
    pub fn for_model() -> Self {
        Self {
            space: Space::Shown,
            screenshot_after: true,
            settle: Duration::from_millis(300),
        }
    }

    /// For scripts (real pixels, no screenshot unless asked).
    pub fn for_script() -> Self {
        Self {
            space: Space::Real,
            screenshot_after: false,
            settle: Duration::ZERO,
        }
    }
}

/// A saved screenshot.
#[derive(Debug, Clone)]
pub struct Screenshot {
    pub path: PathBuf,
    pub size: Size,
    pub png: Vec<u8>,
}

/// What an action did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// For the model: what happened (`cursor_position` gives the place).
    pub text: String,
    pub screenshot: Option<Screenshot>,
    /// Where the pointer is afterwards, in the action's space.
    pub pointer: (u32, u32),
}

/// Pauses that let applications see separate events as a person's.
const CLICK_GAP: Duration = Duration::from_millis(60);
const KEY_GAP: Duration = Duration::from_millis(8);
const DRAG_STEPS: u32 = 12;

/// A [`Computer`] for a model. See the crate docs.
#[derive(Debug)]
pub struct Desktop {
    computer: Box<dyn Computer>,
    scaler: Scaler,
    shots: PathBuf,
    taken: u32,
    /// Where the last action left the pointer (real pixels): a pointer in
    /// a corner that is not there was thrown there by the user.
    placed: Option<(u32, u32)>,
}

impl Desktop {
    /// Screenshots are saved in `shots` (made when the first is taken).
    pub fn new(computer: Box<dyn Computer>, shots: PathBuf) -> Self {
        let scaler = Scaler::new(computer.screen_size(), MAX_SHOWN);
        Self {
            computer,
            scaler,
            shots,
            taken: 0,
            placed: None,
        }
    }

    pub fn name(&self) -> String {
        self.computer.name()
    }

    pub fn scaler(&self) -> Scaler {
        self.scaler
    }

    /// The action in one line for the user: points in screenshot pixels
    /// with the real pixel they map to when the screen is scaled.
    pub fn describe(&self, action: &Action) -> String {
        let scaler = self.scaler;
        action.describe(&|p: Point| match scaler.to_real(p.x, p.y) {
            Some((x, y)) if scaler.scales() => format!("({}, {}) → screen ({x}, {y})", p.x, p.y),
            Some(_) => format!("({}, {})", p.x, p.y),
            None => format!("({}, {}) (off the screen)", p.x, p.y),
        })
    }

    /// Performs `action`; `stop` is asked between steps and stops it early.
    pub fn perform(
        &mut self,
        action: &Action,
        how: Perform,
        stop: &dyn Fn() -> bool,
    ) -> Result<Outcome, ComputerError> {
        self.check(stop)?;
        let to_real = |p: Point| -> Result<(u32, u32), ComputerError> {
            match how.space {
                Space::Shown => self.scaler.to_real(p.x, p.y).ok_or_else(|| {
                    ComputerError::Invalid(format!(
                        "({}, {}) is outside the screenshot, which is {} pixels; use a point inside it",
                        p.x,
                        p.y,
                        self.scaler.shown()
                    ))
                }),
                Space::Real => {
                    let real = self.scaler.real();
                    let inside = |v: i64, side: u32| v >= 0 && v < i64::from(side);
                    if inside(p.x, real.width) && inside(p.y, real.height) {
                        Ok((p.x as u32, p.y as u32))
                    } else {
                        Err(ComputerError::Invalid(format!(
                            "({}, {}) is outside the screen, which is {real} pixels",
                            p.x, p.y
                        )))
                    }
                }
            }
        };
        let mut text = match action {
            Action::Screenshot => {
                let shot = self.screenshot(how.space)?;
                let pointer = self.pointer_in(how.space)?;
                return Ok(Outcome {
                    text: format!("Screenshot {} saved to {}.", shot.size, shot.path.display()),
                    screenshot: Some(shot),
                    pointer,
                });
            }
            Action::CursorPosition => {
                let pointer = self.pointer_in(how.space)?;
                return Ok(Outcome {
                    text: format!("The mouse pointer is at X={}, Y={}.", pointer.0, pointer.1),
                    screenshot: None,
                    pointer,
                });
            }
            Action::Wait { seconds } => {
                self.pause(Duration::from_secs_f64(*seconds), stop)?;
                format!("Waited {seconds} s.")
            }
            Action::Click {
                button,
                count,
                at,
                modifiers,
            } => {
                let target = at.map(to_real).transpose()?;
                let held = modifier_keys(modifiers.as_deref())?;
                if let Some((x, y)) = target {
                    self.move_to(x, y)?;
                }
                self.hold(&held, true)?;
                for i in 0..*count {
                    if i > 0 {
                        std::thread::sleep(CLICK_GAP);
                    }
                    self.computer.button(*button, true)?;
                    self.computer.button(*button, false)?;
                }
                self.hold(&held, false)?;
                "Done.".to_owned()
            }
            Action::MouseDown { at } | Action::MouseUp { at } => {
                if let Some(p) = at {
                    let (x, y) = to_real(*p)?;
                    self.move_to(x, y)?;
                }
                let press = matches!(action, Action::MouseDown { .. });
                self.computer.button(Button::Left, press)?;
                "Done.".to_owned()
            }
            Action::Move { to } => {
                let (x, y) = to_real(*to)?;
                self.move_to(x, y)?;
                "Done.".to_owned()
            }
            Action::Drag { from, to } => {
                let (x0, y0) = to_real(*from)?;
                let (x1, y1) = to_real(*to)?;
                self.move_to(x0, y0)?;
                self.computer.button(Button::Left, true)?;
                let result = (|| {
                    for step in 1..=DRAG_STEPS {
                        std::thread::sleep(Duration::from_millis(10));
                        let lerp = |a: u32, b: u32| {
                            (f64::from(a)
                                + (f64::from(b) - f64::from(a)) * f64::from(step)
                                    / f64::from(DRAG_STEPS))
                            .round() as u32
                        };
                        self.move_to(lerp(x0, x1), lerp(y0, y1))?;
                    }
                    Ok::<(), ComputerError>(())
                })();
                // The button is let go even when a step failed.
                self.computer.button(Button::Left, false)?;
                result?;
                "Done.".to_owned()
            }
            Action::Scroll {
                direction,
                amount,
                at,
                modifiers,
            } => {
                if let Some(p) = at {
                    let (x, y) = to_real(*p)?;
                    self.move_to(x, y)?;
                }
                let held = modifier_keys(modifiers.as_deref())?;
                self.hold(&held, true)?;
                let mut result = Ok(());
                for _ in 0..*amount {
                    if stop() {
                        result = Err(ComputerError::Stopped);
                        break;
                    }
                    self.computer.button(direction.button(), true)?;
                    self.computer.button(direction.button(), false)?;
                    std::thread::sleep(Duration::from_millis(15));
                }
                self.hold(&held, false)?;
                result?;
                "Done.".to_owned()
            }
            Action::Type { text: typed } => {
                for (i, c) in typed.chars().enumerate() {
                    // The user can take over at any moment while it types.
                    if i % 16 == 15 {
                        self.check(stop)?;
                    }
                    self.computer.type_char(c)?;
                    std::thread::sleep(KEY_GAP);
                }
                format!("Typed {} characters.", typed.chars().count())
            }
            Action::Key { keys } => {
                for combo in keys::parse_combos(keys)? {
                    self.press_combo(&combo)?;
                }
                "Done.".to_owned()
            }
            Action::HoldKey { keys, seconds } => {
                let combos = keys::parse_combos(keys)?;
                let all: Vec<Keysym> = combos.into_iter().flatten().collect();
                self.hold(&all, true)?;
                let waited = self.pause(Duration::from_secs_f64(*seconds), stop);
                self.hold(&all, false)?;
                waited?;
                "Done.".to_owned()
            }
        };
        let mut screenshot = None;
        if how.screenshot_after {
            self.pause(how.settle, stop)?;
            let shot = self.screenshot(how.space)?;
            text.push_str(&format!(
                " Screenshot {} after it: {}.",
                shot.size,
                shot.path.display()
            ));
            screenshot = Some(shot);
        }
        let pointer = self.pointer_in(how.space)?;
        Ok(Outcome {
            text,
            screenshot,
            pointer,
        })
    }

    /// Captures the screen (scaled for the model) and saves it as PNG.
    pub fn screenshot(&mut self, space: Space) -> Result<Screenshot, ComputerError> {
        let frame = self.computer.capture()?;
        let size = match space {
            Space::Shown => self.scaler.shown(),
            Space::Real => frame.size,
        };
        let png = frame.to_png(size)?;
        self.taken += 1;
        let path = self.shots.join(format!("screen-{:04}.png", self.taken));
        let failed = |e: std::io::Error| ComputerError::Save {
            path: path.display().to_string(),
            detail: e.to_string(),
        };
        fs_err::create_dir_all(&self.shots).map_err(failed)?;
        fs_err::write(&path, &png).map_err(failed)?;
        Ok(Screenshot { path, size, png })
    }

    fn pointer_in(&mut self, space: Space) -> Result<(u32, u32), ComputerError> {
        let (x, y) = self.computer.pointer()?;
        Ok(match space {
            Space::Shown => self.scaler.to_shown(x, y),
            Space::Real => (x, y),
        })
    }

    /// The fail-safe and the user's stop, checked before each step.
    fn check(&mut self, stop: &dyn Fn() -> bool) -> Result<(), ComputerError> {
        if stop() {
            return Err(ComputerError::Stopped);
        }
        let here = self.computer.pointer()?;
        if in_corner(here, self.scaler.real()) && self.placed != Some(here) {
            return Err(ComputerError::FailSafe);
        }
        Ok(())
    }

    fn move_to(&mut self, x: u32, y: u32) -> Result<(), ComputerError> {
        self.computer.move_pointer(x, y)?;
        self.placed = Some((x, y));
        Ok(())
    }

    fn hold(&mut self, keys: &[Keysym], press: bool) -> Result<(), ComputerError> {
        if press {
            for &k in keys {
                self.computer.key(k, true)?;
            }
        } else {
            for &k in keys.iter().rev() {
                self.computer.key(k, false)?;
            }
        }
        Ok(())
    }

    fn press_combo(&mut self, combo: &[Keysym]) -> Result<(), ComputerError> {
        self.hold(combo, true)?;
        std::thread::sleep(KEY_GAP);
        self.hold(combo, false)?;
        std::thread::sleep(KEY_GAP);
        Ok(())
    }

    /// Sleeps in short steps, watching for the stop and the fail-safe.
    fn pause(&mut self, total: Duration, stop: &dyn Fn() -> bool) -> Result<(), ComputerError> {
        let end = Instant::now() + total;
        loop {
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(Duration::from_millis(50)));
            self.check(stop)?;
        }
    }
}

/// The keys a click or scroll holds (`shift`, `ctrl+alt`); only modifiers.
fn modifier_keys(text: Option<&str>) -> Result<Vec<Keysym>, ComputerError> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let keys: Vec<Keysym> = keys::parse_combos(text)?.into_iter().flatten().collect();
    if keys.iter().any(|&k| !keys::is_modifier(k)) {
        return Err(ComputerError::Invalid(format!(
            "`text` of a click or scroll names keys to hold, which must be modifiers such as `shift`, `ctrl` or `alt` (got `{text}`)"
        )));
    }
    Ok(keys)
}

/// Whether a point is in (within a pixel of) a corner of the screen.
fn in_corner((x, y): (u32, u32), size: Size) -> bool {
    let near = |v: u32, side: u32| v <= 1 || v + 2 >= side;
    near(x, size.width) && near(y, size.height)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A screen that records what it is asked to do.
    #[derive(Debug, Clone, Default)]
    struct Fake {
        log: Arc<Mutex<Vec<String>>>,
        pointer: Arc<Mutex<(u32, u32)>>,
    }

    impl Computer for Fake {
        fn name(&self) -> String {
            "fake".into()
        }
        fn screen_size(&self) -> Size {
            Size {
                width: 1920,
                height: 1080,
            }
        }
        fn capture(&mut self) -> Result<crate::Frame, ComputerError> {
            Ok(crate::Frame::filled(self.screen_size(), [1, 2, 3]))
        }
        fn pointer(&mut self) -> Result<(u32, u32), ComputerError> {
            Ok(*self.pointer.lock().unwrap())
        }
        fn move_pointer(&mut self, x: u32, y: u32) -> Result<(), ComputerError> {
            *self.pointer.lock().unwrap() = (x, y);
            self.log.lock().unwrap().push(format!("move {x} {y}"));
            Ok(())
        }
        fn button(&mut self, button: Button, press: bool) -> Result<(), ComputerError> {
            self.log
                .lock()
                .unwrap()
                .push(format!("{button:?} {}", if press { "down" } else { "up" }));
            Ok(())
        }
        fn key(&mut self, keysym: Keysym, press: bool) -> Result<(), ComputerError> {
            self.log.lock().unwrap().push(format!(
                "key {keysym:#x} {}",
                if press { "down" } else { "up" }
            ));
            Ok(())
        }
        fn type_char(&mut self, c: char) -> Result<(), ComputerError> {
            self.log.lock().unwrap().push(format!("char {c}"));
            Ok(())
        }
    }

    fn desktop() -> (Desktop, Fake, tempfile::TempDir) {
        let fake = Fake::default();
        *fake.pointer.lock().unwrap() = (500, 500);
        let dir = tempfile::tempdir().unwrap();
        (
            Desktop::new(Box::new(fake.clone()), dir.path().join("shots")),
            fake,
            dir,
        )
    }

    const QUICK: Perform = Perform {
        space: Space::Shown,
        screenshot_after: false,
        settle: Duration::ZERO,
    };

    fn act(d: &mut Desktop, args: serde_json::Value) -> Result<Outcome, ComputerError> {
        d.perform(&Action::from_json(&args).unwrap(), QUICK, &|| false)
    }

    #[test]
    fn clicks_land_on_the_real_pixel_under_the_shown_one() {
        let (mut d, fake, _dir) = desktop();
        let outcome = act(
            &mut d,
            serde_json::json!({"action": "left_click", "coordinate": [640, 360]}),
        )
        .unwrap();
        assert_eq!(
            *fake.log.lock().unwrap(),
            ["move 960 540", "Left down", "Left up"]
        );
        assert_eq!(outcome.pointer, (640, 360), "reported in shown pixels");
        assert_eq!(
            d.describe(
                &Action::from_json(
                    &serde_json::json!({"action": "left_click", "coordinate": [640, 360]})
                )
                .unwrap()
            ),
            "left_click at (640, 360) → screen (960, 540)"
        );
    }

    #[test]
    fn drags_press_move_in_steps_and_release() {
        let (mut d, fake, _dir) = desktop();
        act(
            &mut d,
            serde_json::json!({"action": "left_click_drag", "start_coordinate": [100, 100], "coordinate": [200, 100]}),
        )
        .unwrap();
        let log = fake.log.lock().unwrap().clone();
        assert_eq!(log[0], "move 150 150");
        assert_eq!(log[1], "Left down");
        assert_eq!(log[log.len() - 2], "move 300 150");
        assert_eq!(log[log.len() - 1], "Left up");
        assert_eq!(log.len(), 2 + DRAG_STEPS as usize + 1);
    }

    #[test]
    fn clicks_hold_modifiers_and_refuse_other_keys() {
        let (mut d, fake, _dir) = desktop();
        act(
            &mut d,
            serde_json::json!({"action": "left_click", "text": "shift"}),
        )
        .unwrap();
        assert_eq!(
            *fake.log.lock().unwrap(),
            ["key 0xffe1 down", "Left down", "Left up", "key 0xffe1 up"]
        );
        let error = act(
            &mut d,
            serde_json::json!({"action": "left_click", "text": "a"}),
        )
        .unwrap_err();
        assert!(error.to_string().contains("must be modifiers"), "{error}");
    }

    #[test]
    fn the_pointer_thrown_into_a_corner_stops_everything() {
        let (mut d, fake, _dir) = desktop();
        *fake.pointer.lock().unwrap() = (0, 1079);
        let error = act(&mut d, serde_json::json!({"action": "type", "text": "x"})).unwrap_err();
        assert!(matches!(error, ComputerError::FailSafe), "{error}");
        assert!(fake.log.lock().unwrap().is_empty(), "nothing was typed");
        // A corner the model itself moved to is not the user's signal.
        *fake.pointer.lock().unwrap() = (500, 500);
        act(
            &mut d,
            serde_json::json!({"action": "mouse_move", "coordinate": [1279, 0]}),
        )
        .unwrap();
        assert_eq!(*fake.pointer.lock().unwrap(), (1919, 0));
        act(&mut d, serde_json::json!({"action": "type", "text": "y"})).unwrap();
    }

    #[test]
    fn the_users_stop_is_seen_before_acting() {
        let (mut d, fake, _dir) = desktop();
        let action =
            Action::from_json(&serde_json::json!({"action": "key", "text": "Return"})).unwrap();
        let error = d.perform(&action, QUICK, &|| true).unwrap_err();
        assert!(matches!(error, ComputerError::Stopped));
        assert!(fake.log.lock().unwrap().is_empty());
    }

    #[test]
    fn points_off_the_screenshot_are_refused_with_its_size() {
        let (mut d, fake, _dir) = desktop();
        let error = act(
            &mut d,
            serde_json::json!({"action": "left_click", "coordinate": [1900, 10]}),
        )
        .unwrap_err();
        assert!(error.to_string().contains("1280×720"), "{error}");
        assert!(fake.log.lock().unwrap().is_empty());
    }

    #[test]
    fn screenshots_are_scaled_saved_and_numbered() {
        let (mut d, _fake, dir) = desktop();
        let outcome = act(&mut d, serde_json::json!({"action": "screenshot"})).unwrap();
        let shot = outcome.screenshot.unwrap();
        assert_eq!(shot.path, dir.path().join("shots/screen-0001.png"));
        assert_eq!(
            crate::png_size(&fs_err::read(&shot.path).unwrap()),
            Some(Size {
                width: 1280,
                height: 720
            })
        );
        let after = d
            .perform(
                &Action::Key { keys: "a".into() },
                Perform {
                    screenshot_after: true,
                    ..QUICK
                },
                &|| false,
            )
            .unwrap();
        assert!(after.text.contains("screen-0002.png"), "{}", after.text);
    }
}
