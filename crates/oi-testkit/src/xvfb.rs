//! A virtual X display for OS-mode tests.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::skip::{Need, installed, present_or_skip};

/// An `Xvfb` server on a display of its own, stopped when dropped.
#[derive(Debug)]
pub struct Xvfb {
    child: Child,
    display: String,
    helpers: Vec<Child>,
}

impl Xvfb {
    /// Starts a `width`×`height`×24 screen. `None` (skipped) when `Xvfb` is
    /// not installed or does not start; a failure instead when the run
    /// demands it ([`Need::Xvfb`]).
    pub fn start(width: u32, height: u32) -> Option<Self> {
        Self::start_with(width, height, &[])
    }

    /// [`Self::start`], also skipping when one of `programs` (the X tools a
    /// test drives: `xterm`, `xev` …) is not installed.
    pub fn start_with(width: u32, height: u32, programs: &[&str]) -> Option<Self> {
        if !present_or_skip(
            Need::Xvfb,
            installed("Xvfb"),
            "Xvfb is not installed (apt-get install xvfb)",
        ) {
            return None;
        }
        for program in programs {
            if !present_or_skip(
                Need::Xvfb,
                installed(program),
                &format!("`{program}` is not installed"),
            ) {
                return None;
            }
        }
        // Xvfb picks a free display itself and names it on stdout once it
        // accepts connections (`-displayfd`), so parallel tests never race.
        let Ok(mut child) = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                &format!("{width}x{height}x24"),
                "-nolisten",
                "tcp",
                "-noreset",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        else {
            present_or_skip(Need::Xvfb, false, "Xvfb could not be started");
            return None;
        };
        let stdout = child.stdout.take()?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.trim().parse::<u32>().is_ok() => {
                let display = format!(":{}", line.trim());
                Some(Self {
                    child,
                    display,
                    helpers: Vec::new(),
                })
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                present_or_skip(Need::Xvfb, false, "Xvfb did not start within 30 s");
                None
            }
        }
    }

    /// The `DISPLAY` value, e.g. `:123`.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// Starts a program on this display, stopped with the server.
    pub fn spawn(&mut self, program: &str, args: &[&str]) -> std::io::Result<()> {
        let child = Command::new(program)
            .args(args)
            .env("DISPLAY", &self.display)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        self.helpers.push(child);
        Ok(())
    }

    /// Starts a program whose standard output goes to `log`.
    pub fn spawn_logged(
        &mut self,
        program: &str,
        args: &[&str],
        log: &Path,
    ) -> std::io::Result<()> {
        let file = fs_err::File::create(log)?.into_parts().0;
        let child = Command::new(program)
            .args(args)
            .env("DISPLAY", &self.display)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(Stdio::null())
            .spawn()?;
        self.helpers.push(child);
        Ok(())
    }

    /// Starts `xev` in a 600×400 window at the top left, writing the
    /// `events` it is asked for (`button`, `keyboard` …; `mouse` always) to
    /// `log`, and waits until the window is up. The pointer must start
    /// inside the window (as on a 1024×768 screen, where it starts in the
    /// middle): xev writes nothing before its first event.
    pub fn spawn_xev(&mut self, events: &[&str], log: &Path) -> std::io::Result<()> {
        let mut args = vec!["-geometry", "600x400+0+0", "-event", "mouse"];
        for event in events {
            args.extend(["-event", event]);
        }
        self.spawn_logged("xev", &args, log)?;
        wait_until("the xev window", || {
            fs_err::read_to_string(log)
                .unwrap_or_default()
                .contains("Outer window is")
        });
        Ok(())
    }

    /// Runs `xdotool` with `args` on this display and returns its output
    /// (used only to check what happened).
    pub fn xdotool(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Waits until a window named `name` is mapped; its id.
    pub fn wait_for_window(&self, name: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(out) = self.xdotool(&["search", "--onlyvisible", "--name", name])
                && let Some(id) = out.lines().next()
            {
                return Some(id.trim().to_owned());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        for helper in &mut self.helpers {
            let _ = helper.kill();
            let _ = helper.wait();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits up to 20 s for `check` to hold; panics naming `what` if it does not.
pub fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One event from `xev`'s output: its name, the button (0 if none) and
/// where it happened on the screen (root coordinates; -1 if not given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XEvent {
    pub name: String,
    pub button: u32,
    pub x: i32,
    pub y: i32,
}

/// The events of `xev`'s output, in order.
pub fn xev_events(text: &str) -> Vec<XEvent> {
    let mut events = Vec::new();
    let mut current: Option<XEvent> = None;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            events.extend(current.take());
            current = Some(XEvent {
                name: line.split_whitespace().next().unwrap_or("").to_owned(),
                button: 0,
                x: -1,
                y: -1,
            });
        } else if let Some(event) = current.as_mut() {
            if let Some(at) = line.find("root:(")
                && let Some((xs, rest)) = line[at + 6..].split_once(',')
                && let Some(ys) = rest.split(')').next()
            {
                event.x = xs.trim().parse().unwrap_or(-1);
                event.y = ys.trim().parse().unwrap_or(-1);
            }
            if let Some(at) = line.find("button ") {
                event.button = line[at + 7..]
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
            }
        }
    }
    events.extend(current);
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xev_output_is_read_into_events() {
        let text = "Outer window is 0x200001, inner window is 0x200002\n\nButtonPress event, serial 25, synthetic NO, window 0x200001,\n    root 0x50d, subw 0x0, time 1, (98,98), root:(100,100),\n    state 0x0, button 5, same_screen YES\n\nMotionNotify event, serial 25, synthetic NO, window 0x200001,\n    root 0x50d, subw 0x0, time 2, (8,9), root:(10,11),\n";
        let events = xev_events(text);
        assert_eq!(
            events[1..],
            [
                XEvent {
                    name: "ButtonPress".into(),
                    button: 5,
                    x: 100,
                    y: 100
                },
                XEvent {
                    name: "MotionNotify".into(),
                    button: 0,
                    x: 10,
                    y: 11
                },
            ]
        );
    }
}
