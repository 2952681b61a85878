//! Driving the real binary in a pseudo-terminal and reading its screen
//! through a terminal emulator (vt100).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::support::TestEnv;

pub(crate) struct Pty {
    master: Box<dyn portable_pty::MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser>>,
    /// Everything the binary wrote, for failure messages.
    raw: Arc<Mutex<Vec<u8>>>,
}

fn size(cols: u16, rows: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

impl Pty {
    /// `interpreter ARGS…` in a `cols`×`rows` terminal, with the test's
    /// home, working directory and configuration.
    pub(crate) fn spawn(env: &TestEnv, args: &[&str], cols: u16, rows: u16) -> Self {
        Self::spawn_with(env, args, cols, rows, false)
    }

    /// [`Self::spawn`] on the X display `display` (OS mode).
    pub(crate) fn spawn_on_display(
        env: &TestEnv,
        args: &[&str],
        cols: u16,
        rows: u16,
        display: &str,
    ) -> Self {
        Self::spawn_env(env, args, cols, rows, &[("DISPLAY", display)])
    }

    /// [`Self::spawn`], with `NO_COLOR=1` when `no_color`.
    pub(crate) fn spawn_with(
        env: &TestEnv,
        args: &[&str],
        cols: u16,
        rows: u16,
        no_color: bool,
    ) -> Self {
        let extra: &[(&str, &str)] = if no_color { &[("NO_COLOR", "1")] } else { &[] };
        Self::spawn_env(env, args, cols, rows, extra)
    }

    /// [`Self::spawn`] with more environment variables.
    pub(crate) fn spawn_env(
        env: &TestEnv,
        args: &[&str],
        cols: u16,
        rows: u16,
        extra: &[(&str, &str)],
    ) -> Self {
        let pair = native_pty_system().openpty(size(cols, rows)).unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_interpreter"));
        cmd.args(args);
        cmd.cwd(env.cwd.path());
        cmd.env_clear();
        for var in ["PATH", "LANG", "LC_ALL"] {
            if let Ok(value) = std::env::var(var) {
                cmd.env(var, value);
            }
        }
        cmd.env("HOME", env.home.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env("EDITOR", "true");
        for (name, value) in extra {
            cmd.env(name, value);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(nz(rows), nz(cols), 1000)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        let (p, r, w) = (Arc::clone(&parser), Arc::clone(&raw), Arc::clone(&writer));
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut parser = p.lock().unwrap();
                // Answer cursor-position queries as a terminal does, after
                // what precedes them has moved the cursor.
                let mut rest = &buf[..n];
                while let Some(at) = find(rest, b"\x1b[6n") {
                    parser.process(&rest[..at]);
                    let (row, col) = parser.screen().cursor_position();
                    let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                    let mut w = w.lock().unwrap();
                    let _ = w.write_all(answer.as_bytes());
                    let _ = w.flush();
                    rest = &rest[at + 4..];
                }
                // Device attributes (asked with the keyboard-protocol query,
                // which this terminal does not answer: it has no such
                // protocol).
                if find(rest, b"\x1b[c").is_some() {
                    let mut w = w.lock().unwrap();
                    let _ = w.write_all(b"\x1b[?62;22c");
                    let _ = w.flush();
                }
                parser.process(rest);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self {
            master: pair.master,
            writer,
            child,
            parser,
            raw,
        }
    }

    /// The visible screen's text.
    pub(crate) fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Rows the terminal wrapped because more was written to them than
    /// fits the width.
    pub(crate) fn wrapped_rows(&self) -> Vec<u16> {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (rows, _) = screen.size();
        (0..rows.get()).filter(|r| screen.row_wrapped(*r)).collect()
    }

    pub(crate) fn raw(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// Waits until the screen shows `needle` (within 60 s).
    pub(crate) fn wait_for(&self, needle: &str) -> String {
        self.wait_until(&format!("`{needle}` shown"), |screen| {
            screen.contains(needle)
        })
    }

    /// Waits until the screen no longer shows `needle`.
    pub(crate) fn wait_gone(&self, needle: &str) -> String {
        self.wait_until(&format!("`{needle}` gone"), |screen| {
            !screen.contains(needle)
        })
    }

    /// Waits until `done` holds for the whole screen (within 60 s). A
    /// screen read while the program redraws can show half of the new
    /// state, so a test that checks more than one thing waits for all of
    /// them at once.
    pub(crate) fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            if started.elapsed() > Duration::from_secs(60) {
                panic!("never {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn send(&mut self, text: &str) {
        let mut writer = self.writer.lock().unwrap();
        writer.write_all(text.as_bytes()).unwrap();
        writer.flush().unwrap();
    }

    /// Types a line and presses Enter.
    pub(crate) fn type_line(&mut self, text: &str) {
        self.send(text);
        std::thread::sleep(Duration::from_millis(50));
        self.send("\r");
    }

    pub(crate) fn resize(&self, cols: u16, rows: u16) {
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        self.master.resize(size(cols, rows)).unwrap();
        self.parser
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(nz(rows), nz(cols));
    }

    /// Waits for the binary to exit (within 30 s) and returns its code.
    pub(crate) fn wait_exit(&mut self) -> u32 {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.exit_code();
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("the binary did not exit; the screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
