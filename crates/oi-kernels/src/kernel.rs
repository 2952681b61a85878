//! One kernel process and the protocol spoken with it.
//!
//! A kernel is a long-lived interpreter running a small driver (see
//! `drivers/`). The parent sends requests on the child's fd 3 and reads
//! replies (JSON lines) from its fd 4; the child's stdout and stderr are pipes
//! read as raw bytes and forwarded live, and its stdin is a pipe the parent
//! writes to when a program asks for input. User code can print anything
//! without disturbing the protocol. Per run the driver says `started` when
//! the user's code begins, then writes a marker holding a random per-kernel
//! token and the run id to stdout and stderr, then sends `done`: a run is
//! over once `done` and both markers have arrived, so no output is lost or
//! attributed to the wrong run.
//!
//! Each kernel leads its own session (`setsid`): it has no controlling
//! terminal (a program that wants to prompt on `/dev/tty` fails instead of
//! hanging), Ctrl-C in the user's terminal does not reach it, and its whole
//! process group can be signalled at once. It also dies with its parent
//! (`PR_SET_PDEATHSIG`), even if the parent is killed outright; and so does
//! everything the code started in its group: a small *guard* process
//! (forked before the kernel's program starts, named `oi-kernel-guard`)
//! waits on a pipe whose other end only this process holds, and kills the
//! whole group when that end closes — when the kernel is dropped, or when
//! this process dies, however it dies. (Processes that left the group are
//! found by their `OI_KERNEL_OWNER` variable at the next start, see
//! [`crate::kill_leftovers`].)

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use command_fds::{CommandFdExt, FdMapping};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use oi_protocol::{OutputStream, RunStatus};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

use crate::container::{Container, ContainerSlot};
use crate::output::{MarkerScanner, Utf8Decoder};
use crate::process::{cloexec_pipe, describe_exit, prepare_child, waiting_for_input};
use crate::{KernelError, KernelKind, LanguageSpec, RunControl, RunEvent, RunOutcome};

/// How long a kernel may take to report that it is ready.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// After an interrupt, how long the code has to stop before the kernel is
/// killed and restarted.
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);
/// After an interrupt, when it is sent again if the code has not stopped (a
/// runtime may have swallowed the first, as Node's script watchdog can).
const INTERRUPT_AGAIN: Duration = Duration::from_secs(1);
/// Node first gets an `interrupt` line, and SIGINT only this much later if
/// the run goes on (synchronous code, which cannot read the line). A signal
/// sent at once could land while `vm`'s `breakOnSigint` swaps the SIGINT
/// handlers (when none is installed), and kill the kernel.
const NODE_SIGNAL_DELAY: Duration = Duration::from_millis(150);
/// After `done`, how long to wait for the end markers with no output arriving
/// (only reached when user code closed the kernel's own copies of stdout/stderr).
const MARKER_GRACE: Duration = Duration::from_secs(2);
/// How often a running kernel is checked for a program waiting for input.
const INPUT_POLL: Duration = Duration::from_millis(100);
/// The same for a kernel of a remote engine's container, where each look
/// is an `exec`.
const REMOTE_INPUT_POLL: Duration = Duration::from_secs(1);
const READ_BUF: usize = 64 * 1024;

const PYTHON_DRIVER: &str = include_str!("drivers/python_driver.py");
const BASH_DRIVER: &str = include_str!("drivers/bash_driver.sh");
const ZSH_DRIVER: &str = include_str!("drivers/zsh_driver.zsh");
const NODE_DRIVER: &str = include_str!("drivers/node_driver.js");
const RUBY_DRIVER: &str = include_str!("drivers/ruby_driver.rb");
const R_DRIVER: &str = include_str!("drivers/r_driver.R");
const PERL_DRIVER: &str = include_str!("drivers/perl_driver.pl");
const LUA_DRIVER: &str = include_str!("drivers/lua_driver.lua");
const PHP_DRIVER: &str = include_str!("drivers/php_driver.php");

/// How a driver reads its requests.
enum Framing {
    /// `{"type": "run", "id": N, "code": "…"}` lines.
    JsonLines,
    /// `N\0code\0` (bash and zsh `read -d ''`; NUL bytes cannot be in code).
    Nul,
    /// A line `N BYTES`, then the code (for languages without JSON built in).
    LengthPrefixed,
}

impl KernelKind {
    fn framing(self) -> Framing {
        match self {
            Self::Python | Self::Node | Self::Ruby | Self::Perl | Self::Php => Framing::JsonLines,
            Self::Bash | Self::Zsh => Framing::Nul,
            Self::R | Self::Lua => Framing::LengthPrefixed,
        }
    }

    /// The arguments that make the interpreter run oi's driver.
    fn driver_args(self) -> Vec<&'static str> {
        match self {
            Self::Python => vec!["-u", "-c", PYTHON_DRIVER],
            Self::Bash => vec!["--noprofile", "--norc", "-c", BASH_DRIVER, "bash"],
            Self::Zsh => vec!["-f", "-c", ZSH_DRIVER, "zsh"],
            Self::Node => vec!["--no-warnings", "-e", NODE_DRIVER],
            Self::Ruby => vec!["-e", RUBY_DRIVER],
            Self::R => vec!["--vanilla", "-e", R_DRIVER],
            Self::Perl => vec!["-e", PERL_DRIVER],
            Self::Lua => vec!["-e", LUA_DRIVER],
            Self::Php => vec!["-r", PHP_DRIVER],
        }
    }

    fn encode(self, id: u64, code: &str) -> Vec<u8> {
        match self.framing() {
            Framing::JsonLines => {
                let mut line =
                    serde_json::json!({"type": "run", "id": id, "code": code}).to_string();
                line.push('\n');
                line.into_bytes()
            }
            Framing::Nul => format!("{id}\0{}\0", code.replace('\0', "")).into_bytes(),
            Framing::LengthPrefixed => {
                let mut bytes = format!("{id} {}\n", code.len()).into_bytes();
                bytes.extend_from_slice(code.as_bytes());
                bytes
            }
        }
    }
}

/// The programs that may run `spec`'s language in a container, the first
/// the image has winning: the configured interpreter's name (its path is
/// this machine's), then the language's usual names (and `python`, which
/// images have where this machine looks only for `python3`).
fn container_programs(spec: &LanguageSpec) -> Vec<String> {
    let also: &[&str] = match spec.kind {
        KernelKind::Python => &["python"],
        _ => &[],
    };
    let mut programs: Vec<String> = spec
        .program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .into_iter()
        .collect();
    for name in crate::languages::programs_of(spec.kind).iter().chain(also) {
        if !programs.iter().any(|p| p == name) {
            programs.push((*name).to_owned());
        }
    }
    programs
}

/// Asks `handler` (on a blocking thread: it may block) to answer a
/// request of the running code, or says why nobody can.
async fn ask_handler(
    handler: Option<&crate::ComputerHandler>,
    request: serde_json::Value,
    cancel: &CancellationToken,
    missing: &str,
) -> serde_json::Value {
    match handler {
        Some(handler) => {
            let handler = std::sync::Arc::clone(handler);
            let cancel = cancel.clone();
            tokio::task::spawn_blocking(move || handler(request, cancel))
                .await
                .unwrap_or_else(|e| serde_json::json!({"ok": false, "error": e.to_string()}))
        }
        None => serde_json::json!({"ok": false, "error": missing}),
    }
}

/// A message of the driver on fd 4 (one JSON line each).
#[derive(Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum DriverMessage {
    /// The driver has started and waits for runs.
    Ready,
    /// Run `id`'s code itself begins (interrupts may be sent from now on).
    Started { id: u64 },
    /// The code saved an image (a plot).
    Image {
        path: PathBuf,
        #[serde(default = "png")]
        media_type: String,
    },
    /// Run `id` asks something of the screen (OS mode's `computer` module).
    Computer { id: u64, request: serde_json::Value },
    /// Run `id` calls a tool of an MCP server (the `mcp_tools` module).
    Tool { id: u64, request: serde_json::Value },
    /// Run `id` has ended.
    Done {
        id: u64,
        #[serde(default)]
        status: Option<DoneStatus>,
        /// The exception, e.g. `NameError: name 'x' is not defined`.
        #[serde(default)]
        error: Option<String>,
        /// Shells: the exit status of the run.
        #[serde(default)]
        exit_code: Option<i32>,
    },
    /// Anything else (a newer driver's message): ignored.
    #[serde(other)]
    Other,
}

/// How a run ended, as the language drivers say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum DoneStatus {
    Ok,
    Error,
    Interrupted,
}

fn png() -> String {
    "image/png".to_owned()
}

/// How a run's `done` message reads, once the run has ended.
#[derive(Debug, Default)]
struct Done {
    status: Option<DoneStatus>,
    error: Option<String>,
    exit_code: Option<i32>,
}

/// Where requests to the driver are written: its fd 3 on this machine, a
/// relay's input in a container.
type Requests = Box<dyn tokio::io::AsyncWrite + Unpin + Send + Sync>;
/// Where the driver's replies are read.
type Replies = Lines<BufReader<Box<dyn tokio::io::AsyncRead + Unpin + Send + Sync>>>;

/// How the kernel's process group is signalled.
#[derive(Debug, Clone)]
enum Signaller {
    /// A process group of this machine.
    Host(Pid),
    /// A process group in a container, by its id there.
    Container(Arc<Container>, i32),
}

impl Signaller {
    fn send(&self, signal: Signal) {
        match self {
            Self::Host(pgid) => {
                let _ = killpg(*pgid, signal);
            }
            Self::Container(container, pgid) => container.signal(*pgid, signal.as_str()),
        }
    }
}

/// A running kernel process.
pub(crate) struct Kernel {
    kind: KernelKind,
    /// The interpreter (on this machine), or the engine's `exec` client
    /// that runs it in the container.
    child: Child,
    /// The kernel's process group as this machine sees it, when it can
    /// (for input waits and the working directory): always on the host,
    /// in a container when the engine runs here.
    pgid: Option<Pid>,
    /// How interrupts reach the kernel's process group.
    signaller: Signaller,
    /// In a container: the kernel's group there (killed through the engine
    /// when the kernel dies), and the relays of its control channel.
    in_container: Option<(Arc<Container>, i32, [Child; 2])>,
    requests: Option<Requests>,
    replies: Replies,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    stderr: ChildStderr,
    stdout_open: bool,
    stderr_open: bool,
    token: String,
    next_id: u64,
    dead: bool,
    /// Whether the kernel process was reaped. Until then its (zombie)
    /// process keeps the process group id reserved, so signalling the group
    /// cannot reach an unrelated process that reused the id; after, the group
    /// is never signalled again.
    reaped: bool,
    /// The kernel's temporary folder, removed with the kernel (on the host).
    _temp: Option<tempfile::TempDir>,
    /// The end of the guard's pipe: when it closes, the guard kills the
    /// kernel's process group (on the host).
    _guard: Option<OwnedFd>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("kind", &self.kind)
            .field("signaller", &self.signaller)
            .field("dead", &self.dead)
            .finish_non_exhaustive()
    }
}

/// Where and how kernels are started.
#[derive(Debug, Clone, Default)]
pub(crate) struct Launch {
    pub cwd: PathBuf,
    pub image_dir: Option<PathBuf>,
    pub sandbox: Option<oi_sandbox::Policy>,
    /// A folder for tools' caches that stays writable under the sandbox.
    pub cache_dir: Option<PathBuf>,
    /// Environment variables the kernel must not inherit (API keys).
    pub hidden_env: Vec<String>,
    /// The session's mark (`OI_KERNEL_SESSION`).
    pub session: String,
    /// The session's container, when kernels run in one.
    pub container: Option<Arc<ContainerSlot>>,
}

/// Why a run is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Interrupt,
    Timeout,
}

impl Kernel {
    /// Starts the kernel for `spec` in `cwd` and waits until its driver is ready.
    pub(crate) async fn start(spec: &LanguageSpec, launch: &Launch) -> Result<Self, KernelError> {
        if let Some(slot) = &launch.container {
            return Self::start_in_container(spec, launch, slot).await;
        }
        let spawn_error = |source: std::io::Error| KernelError::Spawn {
            language: spec.name.clone(),
            program: spec.program.display().to_string(),
            source,
        };
        // The kernel's own temporary folder: always writable, even in a
        // read-only sandbox.
        let temp = tempfile::Builder::new()
            .prefix("oi-kernel-")
            .tempdir()
            .map_err(spawn_error)?;
        let (request_read, request_write) = cloexec_pipe().map_err(spawn_error)?;
        let (reply_read, reply_write) = cloexec_pipe().map_err(spawn_error)?;
        let (guard_read, guard_write) = cloexec_pipe().map_err(spawn_error)?;
        let token = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));

        let program =
            crate::shims::resolve(&spec.program, &launch.cwd, launch.cache_dir.as_deref()).await;
        let mut cmd = Command::new(&program);
        if program != spec.program
            && let Some(bin) = program.parent()
        {
            // As the shim's `exec` would: this version's programs first.
            let path = std::env::var_os("PATH").unwrap_or_default();
            let dirs = std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path));
            if let Ok(joined) = std::env::join_paths(dirs) {
                cmd.env("PATH", joined);
            }
        }
        cmd.args(&spec.args)
            .args(spec.kind.driver_args())
            .current_dir(&launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("OI_KERNEL_TOKEN", &token)
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONIOENCODING", "utf-8")
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("TMPDIR", temp.path())
            .env(crate::cleanup::OWNER_VAR, crate::cleanup::owner_mark())
            .env(crate::cleanup::SESSION_VAR, &launch.session)
            .kill_on_drop(true);
        for name in &launch.hidden_env {
            cmd.env_remove(name);
        }
        let mut private = vec![temp.path().to_path_buf()];
        if let Some(dir) = &launch.image_dir {
            cmd.env("OI_IMAGE_DIR", dir);
            // The folder may not exist yet; its parent must, for the rule.
            let _ = fs_err::create_dir_all(dir);
            private.push(dir.to_path_buf());
        }
        let confinement = match &launch.sandbox {
            Some(policy) if policy.confines() => {
                if let Some(cache) = &launch.cache_dir
                    && std::env::var_os("MPLCONFIGDIR").is_none()
                {
                    // matplotlib wants a writable settings folder; the
                    // user's own is out of reach.
                    let dir = cache.join("matplotlib");
                    let _ = fs_err::create_dir_all(&dir);
                    cmd.env("MPLCONFIGDIR", &dir);
                    private.push(dir);
                }
                if let Some(cache) = &launch.cache_dir
                    && std::env::var_os("PYTHONUSERBASE").is_none()
                {
                    // `pip install` puts packages in the user's folder when
                    // Python's own is not writable, and the sandbox keeps
                    // both out of reach: it gets one of oi's instead (kept
                    // between sessions), whose programs are on PATH. The
                    // Python driver makes it importable at once and keeps
                    // the user's own packages in reach.
                    let base = cache.join("python-user");
                    let _ = fs_err::create_dir_all(&base);
                    let path = std::env::var_os("PATH").unwrap_or_default();
                    let current = cmd
                        .as_std()
                        .get_envs()
                        .find(|(k, _)| *k == "PATH")
                        .and_then(|(_, v)| v.map(std::ffi::OsStr::to_os_string))
                        .unwrap_or(path);
                    let dirs = std::env::split_paths(&current).chain([base.join("bin")]);
                    if let Ok(joined) = std::env::join_paths(dirs) {
                        cmd.env("PATH", joined);
                    }
                    cmd.env("PYTHONUSERBASE", &base)
                        .env("OI_PYTHON_USER_BASE", "1");
                    private.push(base);
                }
                Some(
                    oi_sandbox::Confinement::prepare(policy, &private, &launch.cwd)
                        .map_err(|e| spawn_error(std::io::Error::other(e.to_string())))?,
                )
            }
            _ => None,
        };
        // Before the control pipes are moved to fds 3 and 4: the guard's
        // pipe and the sandbox's Landlock ruleset are used by number in the
        // child, and either may be 3 or 4 in this process — the mapping
        // would have replaced it (the kernel then failed to start, EBADFD).
        prepare_child(&mut cmd, confinement, guard_read);
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
        let child = cmd.spawn().map_err(spawn_error)?;
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
        let requests: Requests = Box::new(pipe::Sender::from_owned_fd(request_write).map_err(io)?);
        let replies: Box<dyn tokio::io::AsyncRead + Unpin + Send + Sync> =
            Box::new(pipe::Receiver::from_owned_fd(reply_read).map_err(io)?);
        let mut kernel = Self::new(spec, child, token, Signaller::Host(pgid), requests, replies)?;
        kernel.pgid = Some(pgid);
        kernel._temp = Some(temp);
        kernel._guard = Some(guard_write);
        kernel.ready(spec).await
    }

    /// The kernel `child` is, speaking through `requests` and `replies`.
    fn new(
        spec: &LanguageSpec,
        mut child: Child,
        token: String,
        signaller: Signaller,
        requests: Requests,
        replies: Box<dyn tokio::io::AsyncRead + Unpin + Send + Sync>,
    ) -> Result<Self, KernelError> {
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(KernelError::Io {
                language: spec.name.clone(),
                source: std::io::Error::other("the kernel's standard streams are missing"),
            });
        };
        Ok(Self {
            kind: spec.kind,
            child,
            pgid: None,
            signaller,
            in_container: None,
            requests: Some(requests),
            replies: BufReader::new(replies).lines(),
            stdin: Some(stdin),
            stdout,
            stderr,
            stdout_open: true,
            stderr_open: true,
            token,
            next_id: 1,
            dead: false,
            reaped: false,
            _temp: None,
            _guard: None,
        })
    }

    /// Starts the kernel in the session's container: the interpreter from
    /// the image, oi's driver given on its command line, the control
    /// channel through two named pipes and their relays (see
    /// `container.rs`).
    async fn start_in_container(
        spec: &LanguageSpec,
        launch: &Launch,
        slot: &ContainerSlot,
    ) -> Result<Self, KernelError> {
        let container_error = |source| KernelError::Container {
            language: spec.name.clone(),
            source,
        };
        let spawn_error = |source: std::io::Error| KernelError::Spawn {
            language: spec.name.clone(),
            program: spec.program.display().to_string(),
            source,
        };
        let make_pipes = "mkdir -p \"$0\" && mkfifo \"$0/req\" \"$0/rep\"";
        let mut container = slot.get().await.map_err(container_error)?;
        let mut dir = container.kernel_dir();
        if let Err(problem) = container.sh(make_pipes, &[&dir]).await {
            // The container may have just stopped, its engine client not
            // yet gone: then a new one is started.
            if !container.wait_ended(Duration::from_secs(5)).await {
                return Err(spawn_error(std::io::Error::other(problem)));
            }
            container = slot.get().await.map_err(container_error)?;
            dir = container.kernel_dir();
            container
                .sh(make_pipes, &[&dir])
                .await
                .map_err(|e| spawn_error(std::io::Error::other(e)))?;
        }
        let programs = container_programs(spec);
        let token = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let mut cmd = container.exec(true);
        cmd.arg("--workdir").arg(&launch.cwd);
        let mut env = vec![
            ("OI_KERNEL_TOKEN", token.clone()),
            ("PYTHONUNBUFFERED", "1".to_owned()),
            ("PYTHONIOENCODING", "utf-8".to_owned()),
            ("PAGER", "cat".to_owned()),
            ("GIT_PAGER", "cat".to_owned()),
            ("GIT_TERMINAL_PROMPT", "0".to_owned()),
            ("TMPDIR", dir.clone()),
        ];
        if let Some(images) = &launch.image_dir {
            let _ = fs_err::create_dir_all(images);
            env.push(("OI_IMAGE_DIR", images.display().to_string()));
        }
        for (key, value) in env {
            cmd.arg("--env").arg(format!("{key}={value}"));
        }
        // The pid goes in a file first: the relay of the replies passes it
        // on once the driver's end of the pipe is open.
        cmd.arg(&container.name)
            .args([
                "sh",
                "-c",
                // The first of the programs the image has (`$1`: how many
                // there are), then the interpreter's arguments. Without
                // one, the pipes are opened all the same (the relays wait
                // on them) and the shell exits 127.
                "echo $$ > \"$0/pid\"; n=$1; shift; p=''\n\
                 while [ \"$n\" -gt 0 ]; do\n\
                   [ -z \"$p\" ] && command -v \"$1\" >/dev/null 2>&1 && p=$1\n\
                   shift; n=$((n - 1))\n\
                 done\n\
                 if [ -z \"$p\" ]; then exec 3<\"$0/req\" 4>\"$0/rep\"; exit 127; fi\n\
                 exec \"$p\" \"$@\" 3<\"$0/req\" 4>\"$0/rep\"",
                &dir,
            ])
            .arg(programs.len().to_string())
            .args(&programs)
            .args(&spec.args)
            .args(spec.kind.driver_args())
            .stdin(Stdio::piped());
        let child = cmd.spawn().map_err(spawn_error)?;
        let mut feed = container.exec(true);
        feed.args([&container.name, "sh", "-c", "exec cat > \"$0/req\"", &dir])
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        let mut feed = feed.spawn().map_err(spawn_error)?;
        let mut read = container.exec(false);
        read.args([
            &container.name,
            "sh",
            "-c",
            "exec 5<\"$0/rep\" && cat \"$0/pid\" && exec cat <&5",
            &dir,
        ]);
        let mut read = read.spawn().map_err(spawn_error)?;
        let (Some(requests), Some(replies)) = (feed.stdin.take(), read.stdout.take()) else {
            return Err(spawn_error(std::io::Error::other(
                "the relays' streams are missing",
            )));
        };
        let mut kernel = Self::new(
            spec,
            child,
            token,
            Signaller::Container(Arc::clone(&container), 0),
            Box::new(requests),
            Box::new(replies),
        )?;
        kernel.in_container = Some((Arc::clone(&container), 0, [feed, read]));
        let pid = tokio::time::timeout(STARTUP_TIMEOUT, kernel.replies.next_line()).await;
        let Ok(Ok(Some(pid))) = pid else {
            let problem = "it exited during start-up".to_owned();
            return Err(kernel.startup_failure(spec, problem).await);
        };
        let Ok(pid) = pid.trim().parse::<i32>() else {
            let problem = format!("its relay sent `{pid}` instead of its process id");
            return Err(kernel.startup_failure(spec, problem).await);
        };
        let host_pid = container.host_pid(pid);
        kernel.signaller = match host_pid {
            Some(host) => Signaller::Host(host),
            None => Signaller::Container(Arc::clone(&container), pid),
        };
        kernel.pgid = host_pid;
        if let Some(inside) = kernel.in_container.as_mut() {
            inside.1 = pid;
        }
        kernel.ready(spec).await
    }

    /// Waits for the driver's `ready`.
    async fn ready(mut self, spec: &LanguageSpec) -> Result<Self, KernelError> {
        let ready = tokio::time::timeout(STARTUP_TIMEOUT, self.replies.next_line()).await;
        let kernel = &mut self;
        match ready {
            Ok(Ok(Some(line)))
                if serde_json::from_str::<DriverMessage>(&line)
                    .is_ok_and(|m| m == DriverMessage::Ready) =>
            {
                Ok(self)
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
        let status = self.reap().await;
        if let Some((container, ..)) = &self.in_container
            && status.and_then(|s| s.code()) == Some(127)
        {
            // The container's shell found none of the programs.
            let programs = container_programs(spec);
            let names: Vec<String> = programs.iter().map(|p| format!("`{p}`")).collect();
            return KernelError::StartupFailed {
                language: spec.name.clone(),
                program: programs.first().cloned().unwrap_or_default(),
                problem: format!(
                    "the image `{}` has no {}: use an image that has it (`[container] image`), or another language",
                    container.image,
                    names.join(" or ")
                ),
                stderr: String::new(),
            };
        }
        let mut stderr = Vec::new();
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            (&mut self.stderr).take(8192).read_to_end(&mut stderr),
        )
        .await;
        let status = match status {
            Some(status) => format!(" ({})", describe_exit(status)),
            None => String::new(),
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

    /// Runs `code`, passing events to `sink` as they happen, until the run
    /// ends. Cancelling `control.cancel` interrupts the run (SIGINT to the
    /// kernel's process group) and so does reaching `control.timeout`; code
    /// that ignores the interrupt is killed with its kernel.
    /// Answers a request of the running code (`computer_result`,
    /// `tool_result`) on the request channel.
    async fn answer(&mut self, kind: &str, reply: serde_json::Value) {
        let mut line = serde_json::json!({"type": kind, "reply": reply}).to_string();
        line.push('\n');
        if let Some(requests) = self.requests.as_mut() {
            let _ = requests.write_all(line.as_bytes()).await;
        }
    }

    pub(crate) async fn run(
        &mut self,
        code: &str,
        sink: &mut (dyn FnMut(RunEvent) + Send),
        control: RunControl<'_>,
        handlers: &crate::Handlers,
    ) -> RunOutcome {
        let RunControl {
            cancel,
            timeout,
            mut input,
        } = control;
        let id = self.next_id;
        self.next_id += 1;
        let request = self.kind.encode(id, code);
        let mut streams = [
            StreamState::new(OutputStream::Stdout, "", self.stdout_open),
            StreamState::new(OutputStream::Stderr, "", self.stderr_open),
        ];
        let Some(requests) = self.requests.as_mut() else {
            return outcome(
                RunStatus::Crashed {
                    reason: "the kernel was shut down".to_owned(),
                },
                &streams,
            );
        };
        if requests.write_all(&request).await.is_err() {
            let status = self.crashed(sink, &mut streams).await;
            return outcome(status, &streams);
        }

        let marker = format!("\x1b]oi;{};{id}\x07", self.token);
        for s in &mut streams {
            s.scanner = MarkerScanner::new(marker.as_bytes());
        }
        let mut out_buf = vec![0u8; READ_BUF];
        let mut err_buf = vec![0u8; READ_BUF];
        let mut done: Option<Done> = None;
        // The driver says `started` when the code itself begins; SIGINT is
        // sent only after that, so it never hits the driver's own work.
        let mut started = false;
        let mut stop: Option<(Stop, Instant)> = None;
        let mut signalled = false;
        let mut signalled_again = false;
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let signaller = self.signaller.clone();
        // Whether the current wait for input was reported already.
        let mut waiting_reported = false;
        let mut input_open = input.is_some();
        // A remote engine's kernel is looked at through the engine: the
        // look runs beside the run, its answer arrives as a branch below.
        let remote = match (&self.pgid, &self.in_container) {
            (None, Some((container, pid, _))) if *pid > 0 => Some((Arc::clone(container), *pid)),
            _ => None,
        };
        let poll = if remote.is_some() {
            REMOTE_INPUT_POLL
        } else {
            INPUT_POLL
        };
        let mut look: Option<tokio::task::JoinHandle<bool>> = None;

        // Node gets an `interrupt` line naming the run first (a promise the
        // code awaits is not stopped by the signal alone), then SIGINT.
        let node = self.kind == KernelKind::Node;
        let mut interrupt_line_sent = false;
        loop {
            if done.is_some() && streams.iter().all(|s| s.finished) {
                break;
            }
            if node && started && stop.is_some() && !interrupt_line_sent && done.is_none() {
                interrupt_line_sent = true;
                let line = format!("{{\"type\":\"interrupt\",\"id\":{id}}}\n");
                if let Some(requests) = self.requests.as_mut() {
                    let _ = requests.write_all(line.as_bytes()).await;
                }
            }
            let grace_end = stop.map(|(_, t)| tokio::time::Instant::from_std(t + INTERRUPT_GRACE));
            let again_at = stop
                .filter(|_| signalled && !signalled_again)
                .map(|(_, t)| tokio::time::Instant::from_std(t + INTERRUPT_AGAIN));
            let signal_at = stop
                .filter(|_| node && started && !signalled)
                .map(|(_, t)| tokio::time::Instant::from_std(t + NODE_SIGNAL_DELAY));
            let stop_now = |why: Stop, started: bool, signalled: &mut bool| {
                if started && !*signalled && !node {
                    *signalled = true;
                    signaller.send(Signal::SIGINT);
                }
                Some((why, Instant::now()))
            };
            // Replies first: a `done` already waiting must be seen before a
            // timer sends another interrupt, which would otherwise land in
            // the next run.
            tokio::select! {
                biased;
                line = self.replies.next_line(), if done.is_none() => match line {
                    Ok(Some(line)) => {
                        let Ok(message) = serde_json::from_str::<DriverMessage>(&line) else { continue };
                        match message {
                            // Messages of an earlier run (its late reply).
                            DriverMessage::Started { id: run }
                            | DriverMessage::Done { id: run, .. }
                            | DriverMessage::Computer { id: run, .. }
                            | DriverMessage::Tool { id: run, .. } if run != id => {}
                            DriverMessage::Started { .. } => {
                                started = true;
                                if stop.is_some() && !signalled && !node {
                                    signalled = true;
                                    self.signaller.send(Signal::SIGINT);
                                }
                            }
                            DriverMessage::Image { path, media_type } => {
                                sink(RunEvent::Image { path, media_type });
                            }
                            DriverMessage::Done { status, error, exit_code, .. } => {
                                done = Some(Done { status, error, exit_code });
                            }
                            DriverMessage::Computer { request, .. } => {
                                let answer = ask_handler(handlers.computer.as_ref(), request, cancel, "OS mode is off: start oi with --os (or set `os = true`) to use the screen").await;
                                self.answer("computer_result", answer).await;
                            }
                            DriverMessage::Tool { request, .. } => {
                                let answer = ask_handler(handlers.tools.as_ref(), request, cancel, "this session has no MCP servers: configure them with [mcp_servers.NAME] or `interpreter mcp add`").await;
                                self.answer("tool_result", answer).await;
                            }
                            DriverMessage::Ready | DriverMessage::Other => {}
                        }
                    }
                    Ok(None) | Err(_) => {
                        for s in &mut streams {
                            s.flush(sink);
                        }
                        let status = self.crashed(sink, &mut streams).await;
                        return outcome(status, &streams);
                    }
                },
                () = cancel.cancelled(), if stop.is_none() && done.is_none() => {
                    stop = stop_now(Stop::Interrupt, started, &mut signalled);
                }
                () = sleep_until_opt(deadline), if deadline.is_some() && stop.is_none() && done.is_none() => {
                    stop = stop_now(Stop::Timeout, started, &mut signalled);
                }
                () = sleep_until_opt(signal_at), if signal_at.is_some() && done.is_none() => {
                    signalled = true;
                    self.signaller.send(Signal::SIGINT);
                }
                () = sleep_until_opt(again_at), if again_at.is_some() && done.is_none() => {
                    signalled_again = true;
                    self.signaller.send(Signal::SIGINT);
                }
                () = sleep_until_opt(grace_end), if grace_end.is_some() && done.is_none() => {
                    for s in &mut streams {
                        s.flush(sink);
                    }
                    self.kill();
                    self.dead = true;
                    let _ = self.reap().await;
                    let status = match stop {
                        Some((Stop::Timeout, _)) => RunStatus::TimedOut {
                            seconds: timeout.map_or(0, |t| t.as_secs()),
                            kernel_restarted: true,
                        },
                        _ => RunStatus::Crashed {
                            reason: format!(
                                "the code did not stop within {} s of the interrupt, so the kernel was killed",
                                INTERRUPT_GRACE.as_secs()
                            ),
                        },
                    };
                    return outcome(status, &streams);
                }
                read = self.stdout.read(&mut out_buf), if !streams[0].finished => {
                    let n = read.unwrap_or(0);
                    if n == 0 {
                        self.stdout_open = false;
                    }
                    waiting_reported = false;
                    streams[0].feed(&out_buf[..n], sink);
                }
                read = self.stderr.read(&mut err_buf), if !streams[1].finished => {
                    let n = read.unwrap_or(0);
                    if n == 0 {
                        self.stderr_open = false;
                    }
                    waiting_reported = false;
                    streams[1].feed(&err_buf[..n], sink);
                }
                text = recv_input(&mut input), if input_open && done.is_none() => match text {
                    Some(text) => {
                        waiting_reported = false;
                        if let Some(stdin) = self.stdin.as_mut() {
                            let _ = stdin.write_all(text.as_bytes()).await;
                            let _ = stdin.flush().await;
                        }
                        sink(RunEvent::InputWritten { text });
                    }
                    None => input_open = false,
                },
                () = tokio::time::sleep(poll), if started && done.is_none() && !waiting_reported && stop.is_none() && look.is_none() => {
                    if let Some((container, pid)) = &remote {
                        let (container, pid) = (Arc::clone(container), *pid);
                        look = Some(tokio::spawn(async move { container.waiting_for_input(pid).await }));
                    } else if self.pgid.is_some_and(waiting_for_input) {
                        waiting_reported = true;
                        sink(RunEvent::WaitingForInput {
                            prompt: streams[0].last_line(),
                        });
                    }
                }
                waiting = async {
                    match look.as_mut() {
                        Some(look) => look.await,
                        None => Ok(false),
                    }
                }, if look.is_some() => {
                    look = None;
                    if waiting.unwrap_or(false) && done.is_none() && !waiting_reported && stop.is_none() {
                        waiting_reported = true;
                        sink(RunEvent::WaitingForInput {
                            prompt: streams[0].last_line(),
                        });
                    }
                }
                () = tokio::time::sleep(MARKER_GRACE), if done.is_some() => {
                    break;
                }
            }
        }
        for s in &mut streams {
            s.flush(sink);
        }
        let reply = done.unwrap_or_default();
        let stopped_by = stop.map(|(why, _)| why);
        let status = match (reply.status, reply.exit_code) {
            (Some(DoneStatus::Interrupted), _) => interrupted_status(stopped_by, timeout),
            (_, Some(130)) if stopped_by.is_some() => interrupted_status(stopped_by, timeout),
            (Some(DoneStatus::Error), code) => RunStatus::Failed {
                exit_code: code,
                error: reply.error,
            },
            (_, Some(code)) if code != 0 => RunStatus::Failed {
                exit_code: Some(code),
                error: None,
            },
            _ => RunStatus::Ok,
        };
        outcome(status, &streams)
    }

    /// The kernel's current working directory (Linux), if it is alive.
    pub(crate) fn current_dir(&self) -> Option<PathBuf> {
        if self.dead || self.reaped {
            return None;
        }
        let pgid = self.pgid?;
        std::fs::read_link(format!("/proc/{pgid}/cwd")).ok()
    }

    /// The kernel died: reap it, kill what it left behind, forward the output
    /// that was still in the pipes, and say how it ended.
    async fn crashed(
        &mut self,
        sink: &mut (dyn FnMut(RunEvent) + Send),
        streams: &mut [StreamState; 2],
    ) -> RunStatus {
        self.dead = true;
        // Background processes of the dead kernel would keep the pipes open.
        // (The kernel is not reaped yet, so its group id is still its own.)
        self.kill();
        let status = self.reap().await;
        for (state, reader) in streams.iter_mut().zip([
            &mut self.stdout as &mut (dyn tokio::io::AsyncRead + Unpin + Send),
            &mut self.stderr,
        ]) {
            let mut rest = Vec::new();
            let _ = tokio::time::timeout(
                Duration::from_secs(1),
                reader.take(1 << 20).read_to_end(&mut rest),
            )
            .await;
            if !rest.is_empty() {
                state.bytes_seen += rest.len() as u64;
                sink(RunEvent::Output {
                    stream: state.stream,
                    text: String::from_utf8_lossy(&rest).into_owned(),
                });
            }
        }
        let reason = match status {
            Some(status) => format!("the kernel exited ({})", describe_exit(status)),
            None => "the kernel stopped responding and was killed".to_owned(),
        };
        RunStatus::Crashed { reason }
    }

    /// Kills the kernel's whole process group: the interpreter and everything
    /// it started that did not leave the group. Never after it was reaped.
    fn kill(&self) {
        if let Some((container, pgid, _)) = &self.in_container {
            // By its id in the container (it cannot name a process of this
            // machine); once, until the engine's client is reaped.
            if *pgid > 0 && !self.reaped {
                container.signal(*pgid, Signal::SIGKILL.as_str());
            }
        } else if !self.reaped
            && let Signaller::Host(pgid) = &self.signaller
        {
            let _ = killpg(*pgid, Signal::SIGKILL);
        }
    }

    /// Waits (briefly) for the kernel process to end and collects its status.
    async fn reap(&mut self) -> Option<ExitStatus> {
        if self.reaped {
            return None;
        }
        let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        match status {
            Ok(Ok(status)) => {
                self.reaped = true;
                Some(status)
            }
            _ => None,
        }
    }

    /// Asks the kernel to exit (its driver ends when the request pipe
    /// closes), waits briefly for it to close its reply pipe, then kills
    /// whatever is left of its process group and reaps it.
    pub(crate) async fn shutdown(mut self) {
        self.requests = None;
        self.stdin = None;
        let exited = async { while let Ok(Some(_)) = self.replies.next_line().await {} };
        let _ = tokio::time::timeout(Duration::from_millis(500), exited).await;
        self.kill();
        let _ = self.reap().await;
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.kill();
    }
}

fn interrupted_status(stopped_by: Option<Stop>, timeout: Option<Duration>) -> RunStatus {
    match stopped_by {
        Some(Stop::Timeout) => RunStatus::TimedOut {
            seconds: timeout.map_or(0, |t| t.as_secs()),
            kernel_restarted: false,
        },
        _ => RunStatus::Interrupted,
    }
}

fn outcome(status: RunStatus, streams: &[StreamState; 2]) -> RunOutcome {
    RunOutcome {
        status,
        output_bytes: streams.iter().map(|s| s.bytes_seen).sum(),
    }
}

async fn recv_input(
    input: &mut Option<&mut tokio::sync::mpsc::UnboundedReceiver<String>>,
) -> Option<String> {
    match input {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Per-stream state of a run: marker detection and UTF-8 decoding.
struct StreamState {
    stream: OutputStream,
    scanner: MarkerScanner,
    decoder: Utf8Decoder,
    finished: bool,
    bytes: Vec<u8>,
    bytes_seen: u64,
    /// The end of the output so far (for the prompt of a program waiting
    /// for input).
    recent: String,
}

impl StreamState {
    fn new(stream: OutputStream, marker: &str, open: bool) -> Self {
        Self {
            stream,
            scanner: MarkerScanner::new(marker.as_bytes()),
            decoder: Utf8Decoder::default(),
            finished: !open,
            bytes: Vec::new(),
            bytes_seen: 0,
            recent: String::new(),
        }
    }

    /// Takes a read; an empty read means end-of-file.
    fn feed(&mut self, data: &[u8], sink: &mut (dyn FnMut(RunEvent) + Send)) {
        self.bytes.clear();
        if data.is_empty() {
            self.bytes.extend(self.scanner.take_held());
            self.finished = true;
        } else if self.scanner.feed(data, &mut self.bytes) {
            self.finished = true;
        }
        self.bytes_seen += self.bytes.len() as u64;
        let text = self.decoder.decode(&self.bytes);
        self.emit(text, sink);
    }

    fn emit(&mut self, text: String, sink: &mut (dyn FnMut(RunEvent) + Send)) {
        if text.is_empty() {
            return;
        }
        self.recent.push_str(&text);
        if self.recent.len() > 4096 {
            let cut = self.recent.len() - 2048;
            let cut = (cut..self.recent.len())
                .find(|i| self.recent.is_char_boundary(*i))
                .unwrap_or(self.recent.len());
            self.recent.drain(..cut);
        }
        sink(RunEvent::Output {
            stream: self.stream,
            text,
        });
    }

    fn flush(&mut self, sink: &mut (dyn FnMut(RunEvent) + Send)) {
        let rest = self.scanner.take_held();
        self.bytes_seen += rest.len() as u64;
        let mut text = self.decoder.decode(&rest);
        text.push_str(&self.decoder.finish());
        self.emit(text, sink);
    }

    /// The last line of output (without its line break), e.g. a prompt.
    fn last_line(&self) -> String {
        let trimmed = self.recent.trim_end_matches(['\n', '\r']);
        trimmed
            .rsplit(['\n', '\r'])
            .next()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect()
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_container_tries_the_configured_name_then_the_usual_ones() {
        let spec = |name: &str, program: &str| LanguageSpec::known(name, program).unwrap();
        assert_eq!(
            container_programs(&spec("python", "/home/u/venv/bin/python")),
            ["python", "python3"]
        );
        assert_eq!(
            container_programs(&spec("python", "/usr/bin/python3")),
            ["python3", "python"]
        );
        assert_eq!(
            container_programs(&spec("javascript", "/usr/bin/node")),
            ["node", "nodejs"]
        );
    }

    #[test]
    fn driver_messages_read_as_their_kinds() {
        let read = |line: &str| serde_json::from_str::<DriverMessage>(line).unwrap();
        assert_eq!(read(r#"{"type":"ready","pid":12}"#), DriverMessage::Ready);
        assert_eq!(
            read(r#"{"type":"started","id":3}"#),
            DriverMessage::Started { id: 3 }
        );
        assert_eq!(
            read(r#"{"type":"image","path":"/tmp/a.png"}"#),
            DriverMessage::Image {
                path: PathBuf::from("/tmp/a.png"),
                media_type: "image/png".to_owned()
            }
        );
        assert_eq!(
            read(r#"{"type":"done","id":3,"status":"error","error":"NameError: x"}"#),
            DriverMessage::Done {
                id: 3,
                status: Some(DoneStatus::Error),
                error: Some("NameError: x".to_owned()),
                exit_code: None
            }
        );
        assert_eq!(
            read(r#"{"type":"done","id":4,"exit_code":2}"#),
            DriverMessage::Done {
                id: 4,
                status: None,
                error: None,
                exit_code: Some(2)
            }
        );
        // A message this version does not know is passed over.
        assert_eq!(read(r#"{"type":"progress","id":4}"#), DriverMessage::Other);
        assert!(serde_json::from_str::<DriverMessage>(r#"{"type":"image"}"#).is_err());
    }
}
