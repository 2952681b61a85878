//! A virtual X display for OS-mode tests.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An `Xvfb` server on a display of its own, stopped when dropped.
#[derive(Debug)]
pub struct Xvfb {
    child: Child,
    display: String,
    helpers: Vec<Child>,
}

/// Whether tests must run OS mode for real (CI sets `OI_REQUIRE_XVFB=1`).
pub fn xvfb_required() -> bool {
    std::env::var_os("OI_REQUIRE_XVFB").is_some_and(|v| v == "1")
}

impl Xvfb {
    /// Starts a `width`×`height`×24 screen. `None` when `Xvfb` is not
    /// installed (a panic instead when [`xvfb_required`]).
    pub fn start(width: u32, height: u32) -> Option<Self> {
        if which("Xvfb").is_none() {
            assert!(
                !xvfb_required(),
                "OI_REQUIRE_XVFB=1 but Xvfb is not installed (apt-get install xvfb)"
            );
            return None;
        }
        let base = 100 + (std::process::id() % 500) * 4;
        for n in (base..base + 400).map(|n| n % 2000 + 100) {
            if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                || Path::new(&format!("/tmp/.X{n}-lock")).exists()
            {
                continue;
            }
            let display = format!(":{n}");
            let Ok(mut child) = Command::new("Xvfb")
                .args([
                    display.as_str(),
                    "-screen",
                    "0",
                    &format!("{width}x{height}x24"),
                    "-nolisten",
                    "tcp",
                    "-noreset",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
            else {
                return None;
            };
            let socket = format!("/tmp/.X11-unix/X{n}");
            let deadline = Instant::now() + Duration::from_secs(15);
            loop {
                if let Ok(Some(_)) = child.try_wait() {
                    // Lost a race for this display: try the next.
                    break;
                }
                if Path::new(&socket).exists() && xdpyinfo_ok(&display) {
                    return Some(Self {
                        child,
                        display,
                        helpers: Vec::new(),
                    });
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        assert!(!xvfb_required(), "could not start Xvfb on any display");
        None
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

fn xdpyinfo_ok(display: &str) -> bool {
    // Without xdpyinfo the socket's presence is taken as ready.
    match Command::new("xdpyinfo")
        .env("DISPLAY", display)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(status) => status.success(),
        Err(_) => true,
    }
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}
