//! One kernel process and the protocol spoken with it.
//!
//! A kernel is a long-lived interpreter running a small driver (see
//! `drivers/`). The parent sends requests on the child's fd 3 and reads
//! replies (JSON lines) from its fd 4; the child's stdout and stderr are pipes
//! read as raw bytes and forwarded live. User code can print anything without
//! disturbing the protocol. After each run the driver writes a marker holding
//! a random per-kernel token and the run id to stdout and stderr, then sends
//! `done`: a run is over once `done` and both markers have arrived, so no
//! output is lost or attributed to the wrong run.
//!
//! Each kernel leads its own session (`setsid`): it has no controlling
//! terminal (a program that wants to prompt on `/dev/tty` fails instead of
//! hanging), Ctrl-C in the user's terminal does not reach it, and its whole
//! process group can be signalled at once.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use command_fds::{CommandFdExt, FdMapping};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use oi_protocol::{OutputStream, RunStatus};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

use crate::output::{MarkerScanner, Utf8Decoder};
use crate::{KernelError, KernelKind, LanguageSpec};

/// How long a kernel may take to report that it is ready.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// After an interrupt, how long the code has to stop before the kernel is
/// killed and restarted.
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);
/// After `done`, how long to wait for the end markers with no output arriving
/// (only reached when user code closed the kernel's own copies of stdout/stderr).
const MARKER_GRACE: Duration = Duration::from_secs(2);
const READ_BUF: usize = 64 * 1024;

const PYTHON_DRIVER: &str = include_str!("drivers/python_driver.py");
const BASH_DRIVER: &str = include_str!("drivers/bash_driver.sh");

/// A reply line from the driver.
#[derive(Debug, Deserialize)]
struct Reply {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<u64>,
    /// Python: `ok`, `error` or `interrupted`.
    #[serde(default)]
    status: Option<String>,
    /// Python: the exception, e.g. `NameError: name 'x' is not defined`.
    #[serde(default)]
    error: Option<String>,
    /// Shell: the exit status of the run.
    #[serde(default)]
    exit_code: Option<i32>,
}

/// A running kernel process.
#[derive(Debug)]
pub(crate) struct Kernel {
    kind: KernelKind,
    child: Child,
    pgid: Pid,
    requests: Option<pipe::Sender>,
    replies: Lines<BufReader<pipe::Receiver>>,
    stdout: ChildStdout,
    stderr: ChildStderr,
    stdout_open: bool,
    stderr_open: bool,
    token: String,
    next_id: u64,
    dead: bool,
}

impl Kernel {
    /// Starts the kernel for `spec` in `cwd` and waits until its driver is ready.
    pub(crate) async fn start(spec: &LanguageSpec, cwd: &Path) -> Result<Self, KernelError> {
        let spawn_error = |source: std::io::Error| KernelError::Spawn {
            language: spec.name.clone(),
            program: spec.program.display().to_string(),
            source,
        };
        let (request_read, request_write) = cloexec_pipe().map_err(spawn_error)?;
        let (reply_read, reply_write) = cloexec_pipe().map_err(spawn_error)?;
        let token = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));

        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args);
        match spec.kind {
            KernelKind::Python => cmd.args(["-u", "-c", PYTHON_DRIVER]),
            KernelKind::Bash => cmd.args(["--noprofile", "--norc", "-c", BASH_DRIVER, "bash"]),
        };
        cmd.current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("OI_KERNEL_TOKEN", &token)
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONIOENCODING", "utf-8")
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0")
            .kill_on_drop(true);
        cmd.fd_mappings(vec![
            FdMapping {
                parent_fd: request_read,
                child_fd: 3,
            },
            FdMapping {
                parent_fd: reply_write,
                child_fd: 4,
            },
        ])
        .map_err(|e| spawn_error(std::io::Error::other(e.to_string())))?;
        new_session(&mut cmd);
        let mut child = cmd.spawn().map_err(spawn_error)?;
        // The command owns the child's ends of the pipes: close them here, so
        // that the reply pipe reaches end-of-file when the kernel dies.
        drop(cmd);

        let pid = child
            .id()
            .ok_or_else(|| spawn_error(std::io::Error::other("the process exited at once")))?;
        let pgid = Pid::from_raw(pid as i32);
        let io = |source: std::io::Error| KernelError::Io {
            language: spec.name.clone(),
            source,
        };
        let requests = pipe::Sender::from_owned_fd(request_write).map_err(io)?;
        let replies =
            BufReader::new(pipe::Receiver::from_owned_fd(reply_read).map_err(io)?).lines();
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(io(std::io::Error::other(
                "the kernel's output pipes are missing",
            )));
        };
        let mut kernel = Self {
            kind: spec.kind,
            child,
            pgid,
            requests: Some(requests),
            replies,
            stdout,
            stderr,
            stdout_open: true,
            stderr_open: true,
            token,
            next_id: 1,
            dead: false,
        };
        let ready = tokio::time::timeout(STARTUP_TIMEOUT, kernel.replies.next_line()).await;
        match ready {
            Ok(Ok(Some(line)))
                if serde_json::from_str::<Reply>(&line).is_ok_and(|r| r.kind == "ready") =>
            {
                Ok(kernel)
            }
            other => {
                let problem = match other {
                    Err(_) => format!("it did not start within {} s", STARTUP_TIMEOUT.as_secs()),
                    Ok(Ok(Some(line))) => format!("it sent `{line}` instead of `ready`"),
                    Ok(Ok(None)) | Ok(Err(_)) => "it exited during start-up".to_owned(),
                };
                Err(kernel.startup_failure(spec, problem).await)
            }
        }
    }

    async fn startup_failure(&mut self, spec: &LanguageSpec, problem: String) -> KernelError {
        self.kill();
        let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        let mut stderr = Vec::new();
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            (&mut self.stderr).take(8192).read_to_end(&mut stderr),
        )
        .await;
        let status = match status {
            Ok(Ok(status)) => format!(" ({})", describe_exit(status)),
            _ => String::new(),
        };
        KernelError::StartupFailed {
            language: spec.name.clone(),
            program: spec.program.display().to_string(),
            problem: format!("{problem}{status}"),
            stderr: String::from_utf8_lossy(&stderr).trim().to_owned(),
        }
    }

    /// Whether the kernel has died (the next run needs a fresh one).
    pub(crate) fn is_dead(&self) -> bool {
        self.dead
    }

    /// Runs `code`, passing output to `sink` as it arrives, until the run ends.
    /// Cancelling `cancel` interrupts the run (SIGINT to the kernel's process
    /// group); code that ignores the interrupt is killed with its kernel and
    /// reported as `Crashed`.
    pub(crate) async fn run(
        &mut self,
        code: &str,
        sink: &mut (dyn FnMut(OutputStream, String) + Send),
        cancel: &CancellationToken,
    ) -> RunStatus {
        let id = self.next_id;
        self.next_id += 1;
        let request = match self.kind {
            KernelKind::Python => {
                let mut line =
                    serde_json::json!({"type": "run", "id": id, "code": code}).to_string();
                line.push('\n');
                line.into_bytes()
            }
            // Bash variables cannot hold NUL bytes, and NUL ends each field.
            KernelKind::Bash => format!("{id}\0{}\0", code.replace('\0', "")).into_bytes(),
        };
        let Some(requests) = self.requests.as_mut() else {
            return RunStatus::Crashed {
                reason: "the kernel was shut down".to_owned(),
            };
        };
        if requests.write_all(&request).await.is_err() {
            return self.crashed(sink).await;
        }

        let marker = format!("\x1b]oi;{};{id}\x07", self.token);
        let mut streams = [
            StreamState::new(OutputStream::Stdout, &marker, self.stdout_open),
            StreamState::new(OutputStream::Stderr, &marker, self.stderr_open),
        ];
        let mut out_buf = vec![0u8; READ_BUF];
        let mut err_buf = vec![0u8; READ_BUF];
        let mut done: Option<Reply> = None;
        // The driver says `started` when the code itself begins; SIGINT is
        // sent only after that, so it never hits the driver's own work.
        let mut started = false;
        let mut interrupted_at: Option<Instant> = None;
        let mut signalled = false;

        loop {
            if done.is_some() && streams.iter().all(|s| s.finished) {
                break;
            }
            let grace_end =
                interrupted_at.map(|t| tokio::time::Instant::from_std(t + INTERRUPT_GRACE));
            tokio::select! {
                line = self.replies.next_line(), if done.is_none() => match line {
                    Ok(Some(line)) => {
                        if let Ok(reply) = serde_json::from_str::<Reply>(&line)
                            && reply.id == Some(id)
                        {
                            match reply.kind.as_str() {
                                "started" => {
                                    started = true;
                                    if interrupted_at.is_some() && !signalled {
                                        signalled = true;
                                        let _ = killpg(self.pgid, Signal::SIGINT);
                                    }
                                }
                                "done" => done = Some(reply),
                                _ => {}
                            }
                        }
                    }
                    Ok(None) | Err(_) => {
                        for s in &mut streams {
                            s.flush(sink);
                        }
                        return self.crashed(sink).await;
                    }
                },
                read = self.stdout.read(&mut out_buf), if !streams[0].finished => {
                    let n = read.unwrap_or(0);
                    if n == 0 {
                        self.stdout_open = false;
                    }
                    streams[0].feed(&out_buf[..n], sink);
                }
                read = self.stderr.read(&mut err_buf), if !streams[1].finished => {
                    let n = read.unwrap_or(0);
                    if n == 0 {
                        self.stderr_open = false;
                    }
                    streams[1].feed(&err_buf[..n], sink);
                }
                () = cancel.cancelled(), if interrupted_at.is_none() && done.is_none() => {
                    interrupted_at = Some(Instant::now());
                    if started {
                        signalled = true;
                        let _ = killpg(self.pgid, Signal::SIGINT);
                    }
                }
                () = sleep_until_opt(grace_end), if grace_end.is_some() && done.is_none() => {
                    for s in &mut streams {
                        s.flush(sink);
                    }
                    self.kill();
                    self.dead = true;
                    let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
                    return RunStatus::Crashed {
                        reason: format!(
                            "the code did not stop within {} s of the interrupt, so the kernel was killed",
                            INTERRUPT_GRACE.as_secs()
                        ),
                    };
                }
                () = tokio::time::sleep(MARKER_GRACE), if done.is_some() => {
                    break;
                }
            }
        }
        for s in &mut streams {
            s.flush(sink);
        }
        let reply = done.unwrap_or(Reply {
            kind: "done".into(),
            id: Some(id),
            status: None,
            error: None,
            exit_code: None,
        });
        match (reply.status.as_deref(), reply.exit_code) {
            (Some("interrupted"), _) => RunStatus::Interrupted,
            (Some("error"), code) => RunStatus::Failed {
                exit_code: code,
                error: reply.error,
            },
            (_, Some(code)) if code != 0 => {
                if interrupted_at.is_some() && code == 130 {
                    RunStatus::Interrupted
                } else {
                    RunStatus::Failed {
                        exit_code: Some(code),
                        error: None,
                    }
                }
            }
            _ => RunStatus::Ok,
        }
    }

    /// The kernel died: reap it, kill what it left behind, forward the output
    /// that was still in the pipes, and say how it ended.
    async fn crashed(&mut self, sink: &mut (dyn FnMut(OutputStream, String) + Send)) -> RunStatus {
        self.dead = true;
        let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        // Background processes of the dead kernel would keep the pipes open.
        self.kill();
        for (stream, reader) in [
            (
                OutputStream::Stdout,
                &mut self.stdout as &mut (dyn tokio::io::AsyncRead + Unpin + Send),
            ),
            (OutputStream::Stderr, &mut self.stderr),
        ] {
            let mut rest = Vec::new();
            let _ = tokio::time::timeout(
                Duration::from_secs(1),
                reader.take(1 << 20).read_to_end(&mut rest),
            )
            .await;
            if !rest.is_empty() {
                sink(stream, String::from_utf8_lossy(&rest).into_owned());
            }
        }
        let reason = match status {
            Ok(Ok(status)) => format!("the kernel exited ({})", describe_exit(status)),
            _ => "the kernel stopped responding and was killed".to_owned(),
        };
        RunStatus::Crashed { reason }
    }

    /// Kills the kernel's whole process group: the interpreter and everything
    /// it started that did not leave the group.
    fn kill(&self) {
        let _ = killpg(self.pgid, Signal::SIGKILL);
    }

    /// Asks the kernel to exit (its driver ends when the request pipe closes),
    /// then kills whatever is left of its process group.
    pub(crate) async fn shutdown(mut self) {
        self.requests = None;
        let _ = tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await;
        self.kill();
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Per-stream state of a run: marker detection and UTF-8 decoding.
struct StreamState {
    stream: OutputStream,
    scanner: MarkerScanner,
    decoder: Utf8Decoder,
    finished: bool,
    bytes: Vec<u8>,
}

impl StreamState {
    fn new(stream: OutputStream, marker: &str, open: bool) -> Self {
        Self {
            stream,
            scanner: MarkerScanner::new(marker.as_bytes()),
            decoder: Utf8Decoder::default(),
            finished: !open,
            bytes: Vec::new(),
        }
    }

    /// Takes a read; an empty read means end-of-file.
    fn feed(&mut self, data: &[u8], sink: &mut (dyn FnMut(OutputStream, String) + Send)) {
        self.bytes.clear();
        if data.is_empty() {
            self.bytes.extend(self.scanner.take_held());
            self.finished = true;
        } else if self.scanner.feed(data, &mut self.bytes) {
            self.finished = true;
        }
        let text = self.decoder.decode(&self.bytes);
        if !text.is_empty() {
            sink(self.stream, text);
        }
    }

    fn flush(&mut self, sink: &mut (dyn FnMut(OutputStream, String) + Send)) {
        let mut rest = self.scanner.take_held();
        let mut text = self.decoder.decode(&std::mem::take(&mut rest));
        text.push_str(&self.decoder.finish());
        if !text.is_empty() {
            sink(self.stream, text);
        }
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn cloexec_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)
}

/// Makes the child the leader of a new session (and process group) with no
/// controlling terminal.
fn new_session(cmd: &mut Command) {
    #[expect(
        unsafe_code,
        reason = "pre_exec is unsafe; the closure only calls setsid(2), which is async-signal-safe"
    )]
    // SAFETY: runs in the forked child before exec; setsid allocates nothing and
    // takes no locks.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
}

/// How a process ended, in words: `exit code 3`, `killed by signal 11 (SIGSEGV)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    match status.signal() {
        Some(sig) => match Signal::try_from(sig) {
            Ok(name) => format!("killed by signal {sig} ({})", name.as_str()),
            Err(_) => format!("killed by signal {sig}"),
        },
        None => "ended for an unknown reason".to_owned(),
    }
}
