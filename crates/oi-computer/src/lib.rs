//! OS mode: see the screen and use the mouse and keyboard.
//!
//! A [`Computer`] is one backend (X11 today) that captures the screen and
//! sends input in real pixels. A [`Desktop`] wraps it for a model: it reads
//! the model's [`Action`]s, maps the coordinates of the scaled screenshots it
//! shows back to real pixels, saves screenshots, and stops everything when
//! the user throws the mouse into a corner of the screen (the fail-safe).

mod action;
mod desktop;
mod image;
pub mod keys;
mod scale;
mod x11;

pub use action::{ACTIONS, Action, Point, ScrollDirection};
pub use desktop::{Desktop, Outcome, Perform, Screenshot, Space};
pub use image::{Frame, png_size};
pub use keys::UnknownKey;
pub use scale::{MAX_SHOWN, Scaler, Size};
pub use x11::X11;

/// A mouse button (the wheel's directions are buttons 4 to 7 in X11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    Left,
    Middle,
    Right,
    WheelUp,
    WheelDown,
    WheelLeft,
    WheelRight,
}

impl Button {
    fn x11_number(self) -> u8 {
        match self {
            Self::Left => 1,
            Self::Middle => 2,
            Self::Right => 3,
            Self::WheelUp => 4,
            Self::WheelDown => 5,
            Self::WheelLeft => 6,
            Self::WheelRight => 7,
        }
    }
}

/// One screen, mouse and keyboard, in real pixels.
pub trait Computer: Send + std::fmt::Debug {
    /// What is controlled, for messages (`X11 display :0`).
    fn name(&self) -> String;
    fn screen_size(&self) -> Size;
    /// The whole screen as it is now.
    fn capture(&mut self) -> Result<Frame, ComputerError>;
    /// Where the mouse pointer is.
    fn pointer(&mut self) -> Result<(u32, u32), ComputerError>;
    fn move_pointer(&mut self, x: u32, y: u32) -> Result<(), ComputerError>;
    fn button(&mut self, button: Button, press: bool) -> Result<(), ComputerError>;
    /// Presses or releases the key of an X keysym.
    fn key(&mut self, keysym: keys::Keysym, press: bool) -> Result<(), ComputerError>;
    /// Types one character (with Shift when the keyboard needs it).
    fn type_char(&mut self, c: char) -> Result<(), ComputerError>;
}

/// Why OS mode cannot work, or an action failed.
#[derive(Debug, thiserror::Error)]
pub enum ComputerError {
    #[error(
        "OS mode has no display to control: DISPLAY is not set (it needs a graphical X11 session; on a machine without a screen, start a virtual one with `Xvfb :99 &` and run `DISPLAY=:99 interpreter --os`)"
    )]
    NoDisplay,
    #[error(
        "OS mode is not supported yet on Wayland without XWayland: WAYLAND_DISPLAY is set but DISPLAY is not (start XWayland, or log in to an X11 session)"
    )]
    WaylandOnly,
    #[error("OS mode is not supported yet on {platform}; it works on Linux with X11 for now")]
    Unsupported { platform: &'static str },
    #[error("cannot connect to the X display `{display}`: {detail}")]
    Connect { display: String, detail: String },
    #[error(
        "the X display `{display}` lacks the {extension} extension, which OS mode needs to move the mouse and press keys"
    )]
    MissingExtension {
        display: String,
        extension: &'static str,
    },
    #[error("the X server refused a request: {0}")]
    Protocol(String),
    #[error("could not encode the screenshot: {0}")]
    Image(String),
    #[error("could not save the screenshot to {path}: {detail}")]
    Save { path: String, detail: String },
    #[error(transparent)]
    UnknownKey(#[from] UnknownKey),
    /// The action as given cannot be done (the model is told why).
    #[error("{0}")]
    Invalid(String),
    #[error(
        "fail-safe: the mouse was moved into a corner of the screen, so OS mode stopped (move it away from the corners to go on)"
    )]
    FailSafe,
    #[error("stopped by the user")]
    Stopped,
}

/// The computer this process can control: the X display named by
/// `DISPLAY`, or an error saying why there is none.
pub fn connect() -> Result<Box<dyn Computer>, ComputerError> {
    if cfg!(target_os = "macos") {
        return Err(ComputerError::Unsupported { platform: "macOS" });
    }
    if cfg!(windows) {
        return Err(ComputerError::Unsupported {
            platform: "Windows",
        });
    }
    connect_to(
        std::env::var("DISPLAY").ok().as_deref(),
        std::env::var_os("WAYLAND_DISPLAY").is_some(),
    )
}

/// [`connect`] with the environment given.
pub fn connect_to(
    display: Option<&str>,
    wayland: bool,
) -> Result<Box<dyn Computer>, ComputerError> {
    match display.map(str::trim).filter(|d| !d.is_empty()) {
        Some(display) => Ok(Box::new(X11::connect(display)?)),
        None if wayland => Err(ComputerError::WaylandOnly),
        None => Err(ComputerError::NoDisplay),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_display_is_a_clear_error() {
        let error = connect_to(None, false).unwrap_err();
        assert!(matches!(error, ComputerError::NoDisplay));
        assert!(error.to_string().contains("DISPLAY is not set"), "{error}");
        assert!(error.to_string().contains("Xvfb"), "{error}");
        assert!(matches!(
            connect_to(Some(" "), true).unwrap_err(),
            ComputerError::WaylandOnly
        ));
    }

    #[test]
    fn an_unreachable_display_names_it() {
        let error = connect_to(Some(":987"), false).unwrap_err();
        assert!(error.to_string().contains("`:987`"), "{error}");
    }
}
