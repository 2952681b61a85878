//! Kernels in a container (`sandbox = "container"`): one long-lived
//! container per session, run by Docker or Podman on this machine.
//!
//! The container runs the image's `sh`, which waits on its standard input:
//! the engine's client that started it (`run -i --rm`) holds that input
//! open for as long as the session lives, so the container stops — and is
//! removed — when the session ends, however oi ends. Containers left by a
//! session that was killed before its engine client could say so are
//! labelled with their owner and removed at the next start.
//!
//! The workspace and the added folders are mounted at their own paths (so
//! paths in the conversation stay true) and are the only places code can
//! write, besides the container's own `/tmp`; the root file system is
//! read-only; the workspace's `.git` and `.openinterpreter` are mounted
//! read-only over their writable parent, and oi's own folder is hidden
//! behind an empty one. The network is off unless `[container] network`
//! names one.
//!
//! A kernel is the same interpreter and driver as on the host, started
//! with `exec`. The driver's control channel (fds 3 and 4 on the host) is
//! a pair of named pipes in the container's `/tmp`, each relayed to oi by
//! its own `exec … cat` — the engine's standard streams are the only
//! channel every engine offers, local or remote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

/// Which engine runs the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineKind {
    /// Podman if it is installed, else Docker.
    #[default]
    Auto,
    Docker,
    Podman,
}

impl std::str::FromStr for EngineKind {
    type Err = String;
    fn from_str(word: &str) -> Result<Self, Self::Err> {
        match word {
            "auto" => Ok(Self::Auto),
            "docker" => Ok(Self::Docker),
            "podman" => Ok(Self::Podman),
            other => Err(format!(
                "unknown container engine `{other}`: one of auto, docker, podman"
            )),
        }
    }
}

/// The container a session's code runs in (`[container]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSpec {
    pub engine: EngineKind,
    pub image: String,
    /// Another engine than the local default (`unix://`, `tcp://`,
    /// `ssh://`).
    pub host: Option<String>,
    /// Memory limit as the engines write it (`2g`).
    pub memory: Option<String>,
    pub cpus: Option<f64>,
    pub pids: Option<u32>,
    /// `none`, or a network of the engine's (`bridge`, `host` …).
    pub network: String,
    /// More mounts: `SOURCE:TARGET[:ro|rw]`, absolute paths.
    pub mounts: Vec<String>,
    /// Variables set in the container.
    pub env: BTreeMap<String, String>,
    /// With a remote engine: files larger than this (bytes) are not copied.
    pub sync_max_file: u64,
}

impl ContainerSpec {
    /// Files over 50 MB stay where they are.
    pub const DEFAULT_SYNC_MAX_FILE: u64 = 50 << 20;

    /// `image` on the default engine, with no network and no limits.
    pub fn new(image: impl Into<String>) -> Self {
        Self {
            engine: EngineKind::Auto,
            image: image.into(),
            host: None,
            memory: None,
            cpus: None,
            pids: None,
            network: "none".to_owned(),
            mounts: Vec::new(),
            env: BTreeMap::new(),
            sync_max_file: Self::DEFAULT_SYNC_MAX_FILE,
        }
    }
}

/// Why the container could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ContainerError {
    #[error(
        "no container engine found: install Podman or Docker, or set `[container] engine` to one that is installed"
    )]
    NoEngine,
    #[error("the container engine `{engine}` cannot be run: {problem}")]
    Engine { engine: String, problem: String },
    #[error("the image `{image}` is not here and could not be pulled: {problem}")]
    Pull { image: String, problem: String },
    #[error("the container (image `{image}`) did not start: {problem}")]
    Start { image: String, problem: String },
}

/// The engine's command line: its program and the arguments every call
/// takes.
#[derive(Debug, Clone)]
pub(crate) struct Engine {
    pub kind: EngineKind,
    program: PathBuf,
    /// Arguments before every command (`--remote --url …`).
    args: Vec<String>,
    /// Whether the engine runs on another machine (its paths are not
    /// this machine's: the workspace is copied, not mounted).
    pub remote: bool,
}

impl Engine {
    /// The engine `kind` names (`Auto`: Podman, else Docker).
    /// `host` (or the engine's own variable, `CONTAINER_HOST` or
    /// `DOCKER_HOST`) points at another engine than this machine's default.
    pub(crate) fn find(kind: EngineKind, host: Option<&str>) -> Result<Self, ContainerError> {
        let find = |name: &str, kind| {
            which::which(name).ok().map(|program| Self {
                kind,
                program,
                args: Vec::new(),
                remote: false,
            })
        };
        let mut engine = match kind {
            EngineKind::Podman => find("podman", kind),
            EngineKind::Docker => find("docker", kind),
            EngineKind::Auto => {
                find("podman", EngineKind::Podman).or_else(|| find("docker", EngineKind::Docker))
            }
        }
        .ok_or(ContainerError::NoEngine)?;
        let variable = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let address = match (engine.kind, host) {
            (_, Some(host)) => Some(host.to_owned()),
            (EngineKind::Docker, None) => variable("DOCKER_HOST"),
            (_, None) => variable("CONTAINER_HOST"),
        };
        if let Some(address) = address {
            engine.args = match engine.kind {
                EngineKind::Docker => vec!["--host".to_owned(), address.clone()],
                _ => vec!["--remote".to_owned(), "--url".to_owned(), address.clone()],
            };
            // A socket of this machine is an engine of this machine.
            engine.remote = !address.starts_with("unix://");
        }
        Ok(engine)
    }

    /// `rm` at once, with the container's anonymous volumes (where a
    /// copied workspace lives). Docker's `rm` has no `--time`.
    fn remove(&self) -> &'static [&'static str] {
        match self.kind {
            EngineKind::Docker => &["rm", "--force", "--volumes"],
            _ => &["rm", "--force", "--volumes", "--time", "0"],
        }
    }

    fn name(&self) -> &'static str {
        match self.kind {
            EngineKind::Docker => "docker",
            _ => "podman",
        }
    }

    /// A command of the engine's, started in a session of its own (Ctrl-C
    /// in the user's terminal is oi's to handle) and killed with oi.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        crate::process::detach(&mut cmd);
        cmd
    }

    /// Starts `args` without waiting for it (from `Drop` and other places
    /// that cannot wait); it is reaped on a thread of its own.
    fn fire(&self, args: &[&str]) {
        let spawned = std::process::Command::new(&self.program)
            .args(&self.args)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Ok(mut child) = spawned {
            std::thread::spawn(move || child.wait());
        }
    }

    /// Runs `args` to the end; its standard output, or what went wrong.
    async fn output(&self, args: &[&str]) -> Result<String, String> {
        self.output_bytes(args)
            .await
            .map(|out| String::from_utf8_lossy(&out).into_owned())
    }

    /// [`Self::output`] as bytes.
    pub(crate) async fn output_bytes(&self, args: &[&str]) -> Result<Vec<u8>, String> {
        self.run(args, None).await
    }

    /// Runs `args` with `input` on its standard input, to the end.
    pub(crate) async fn output_with_input(
        &self,
        args: &[&str],
        input: Vec<u8>,
    ) -> Result<Vec<u8>, String> {
        self.run(args, Some(input)).await
    }

    async fn run(&self, args: &[&str], input: Option<Vec<u8>>) -> Result<Vec<u8>, String> {
        let spawn_error = |e: std::io::Error| format!("`{} {}`: {e}", self.name(), args.join(" "));
        let mut cmd = self.command();
        cmd.args(args);
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(spawn_error)?;
        let writer = child.stdin.take().zip(input).map(|(mut stdin, input)| {
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let _ = stdin.write_all(&input).await;
            })
        });
        let out = child.wait_with_output().await.map_err(spawn_error)?;
        if let Some(writer) = writer {
            let _ = writer.await;
        }
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(last_line(&out.stderr).unwrap_or_else(|| {
                format!(
                    "`{} {}` failed ({})",
                    self.name(),
                    args.join(" "),
                    crate::process::describe_exit(out.status)
                )
            }))
        }
    }
}

/// The last line a program printed, if any.
fn last_line(bytes: &[u8]) -> Option<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// The label every container of oi's carries: who owns it (this
/// process's mark, see `cleanup::owner_mark`).
const OWNER_LABEL: &str = "oi.owner";
/// The machine the owner runs on.
const HOST_LABEL: &str = "oi.host";
const READY: &str = "oi-container-ready";

/// What the container mounts from this machine.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mounts {
    pub workspace: PathBuf,
    /// Written to (the added folders, where plots are saved).
    pub writable: Vec<PathBuf>,
    /// Mounted read-only over a writable folder (`.git`).
    pub read_only: Vec<PathBuf>,
    /// Hidden behind an empty folder (oi's own).
    pub hidden: Vec<PathBuf>,
}

impl Mounts {
    /// The mounts `policy` asks for, plus `extra` writable folders.
    pub(crate) fn of(policy: &oi_sandbox::Policy, extra: &[PathBuf]) -> Self {
        let writable: Vec<PathBuf> = policy.writable_roots.iter().chain(extra).cloned().collect();
        let mut all = vec![policy.workspace.clone()];
        all.extend(writable.iter().cloned());
        let inside = |p: &Path| all.iter().any(|root| p.starts_with(root));
        let hidden: Vec<PathBuf> = policy
            .protected_roots
            .iter()
            .filter(|p| inside(p) && p.exists())
            .cloned()
            .collect();
        let read_only = policy
            .protected()
            .into_iter()
            .filter(|p| inside(p) && !hidden.iter().any(|h| p.starts_with(h)))
            .collect();
        Self {
            workspace: policy.workspace.clone(),
            writable,
            read_only,
            hidden,
        }
    }
}

/// A started container, and what its engine needs to reach it.
#[derive(Debug)]
pub(crate) struct Container {
    pub engine: Engine,
    pub name: String,
    pub image: String,
    /// The container's first process as this machine sees it (when the
    /// engine runs here): its processes can then be found in `/proc`.
    init_pid: Option<i32>,
    /// With an engine on another machine: the copies of the workspace.
    pub sync: Option<crate::sync::Sync>,
    /// The engine client that started the container: its standard input
    /// keeps the container alive.
    run: Mutex<Option<Child>>,
    next_kernel: AtomicU64,
}

impl Container {
    /// Starts a container for `spec` with `mounts`, pulling the image first
    /// when it is not here (its progress goes to `progress`).
    pub(crate) async fn start(
        spec: &ContainerSpec,
        mounts: &Mounts,
        progress: &Progress,
    ) -> Result<Self, ContainerError> {
        let engine = Engine::find(spec.engine, spec.host.as_deref())?;
        let removed = remove_leftovers(&engine).await;
        if removed > 0 {
            progress.line(format!(
                "oi: removed {removed} container{} that an earlier session left behind",
                if removed == 1 { "" } else { "s" }
            ));
        }
        ensure_image(&engine, &spec.image, progress).await?;
        for dir in &mounts.writable {
            // Where plots go is made on first use; the engine wants it now.
            let _ = fs_err::create_dir_all(dir);
        }
        let name = format!("oi-{}-{:08x}", std::process::id(), fastrand::u32(..));
        let mut cmd = engine.command();
        cmd.args(run_args(spec, mounts, &name, engine.remote))
            .stdin(Stdio::piped());
        let start_error = |problem: String| ContainerError::Start {
            image: spec.image.clone(),
            problem,
        };
        let mut child = cmd.spawn().map_err(|e| ContainerError::Engine {
            engine: engine.name().to_owned(),
            problem: e.to_string(),
        })?;
        let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(start_error("the engine's output is missing".to_owned()));
        };
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(START_TIMEOUT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.trim() == READY {
                    return true;
                }
            }
            false
        })
        .await;
        match ready {
            Ok(true) => {}
            other => {
                let _ = child.start_kill();
                let mut err = Vec::new();
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(2),
                    stderr.read_to_end(&mut err),
                )
                .await;
                let problem = match (other, last_line(&err)) {
                    (_, Some(line)) => line,
                    (Err(_), None) => {
                        format!("it did not start within {} s", START_TIMEOUT.as_secs())
                    }
                    _ => "the engine exited without a word".to_owned(),
                };
                return Err(start_error(problem));
            }
        }
        let init_pid = if engine.remote {
            None
        } else {
            engine
                .output(&["inspect", "--format", "{{.State.Pid}}", &name])
                .await
                .ok()
                .and_then(|pid| pid.trim().parse::<i32>().ok())
                .filter(|pid| *pid > 0 && Path::new(&format!("/proc/{pid}")).exists())
        };
        let sync = engine.remote.then(|| {
            let mut roots = vec![mounts.workspace.clone()];
            roots.extend(mounts.writable.iter().cloned());
            crate::sync::Sync::new(
                roots,
                mounts.read_only.clone(),
                mounts.hidden.clone(),
                spec.sync_max_file,
            )
        });
        Ok(Self {
            engine,
            name,
            image: spec.image.clone(),
            init_pid,
            sync,
            run: Mutex::new(Some(child)),
            next_kernel: AtomicU64::new(1),
        })
    }

    /// Whether the container has stopped (its engine client, which lives
    /// as long as it does, has exited).
    pub(crate) fn ended(&self) -> bool {
        self.run
            .lock()
            .ok()
            .and_then(|mut run| run.as_mut().map(|c| c.try_wait().ok().flatten().is_some()))
            .unwrap_or(true)
    }

    /// Whether the container stops within `limit`.
    pub(crate) async fn wait_ended(&self, limit: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while !self.ended() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        true
    }

    /// A fresh folder name for a kernel's pipes (in the container's `/tmp`).
    pub(crate) fn kernel_dir(&self) -> String {
        format!(
            "/tmp/oi-kernel-{}",
            self.next_kernel.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// `ENGINE exec [-i] NAME …`.
    pub(crate) fn exec(&self, interactive: bool) -> Command {
        let mut cmd = self.engine.command();
        cmd.arg("exec");
        if interactive {
            cmd.arg("-i");
        }
        cmd
    }

    /// Runs `script` in the container's `sh` with `args` (`$0`, `$1` …), to
    /// the end.
    pub(crate) async fn sh(&self, script: &str, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["exec", self.name.as_str(), "sh", "-c", script];
        all.extend(args);
        self.engine.output(&all).await
    }

    /// The process `pid` of the container as this machine sees it, when
    /// the engine runs here (found in `/proc`: a process of the
    /// container's pid namespace whose innermost id is `pid`).
    pub(crate) fn host_pid(&self, pid: i32) -> Option<nix::unistd::Pid> {
        let init = self.init_pid?;
        let namespace = std::fs::read_link(format!("/proc/{init}/ns/pid")).ok()?;
        let entries = fs_err::read_dir("/proc").ok()?;
        entries.flatten().find_map(|entry| {
            let host: i32 = entry.file_name().to_str()?.parse().ok()?;
            let status = fs_err::read_to_string(format!("/proc/{host}/status")).ok()?;
            let ids = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
            let inner: i32 = ids.split_whitespace().last()?.parse().ok()?;
            (inner == pid && std::fs::read_link(format!("/proc/{host}/ns/pid")).ok()? == namespace)
                .then(|| nix::unistd::Pid::from_raw(host))
        })
    }

    /// Whether a process of the group `pgid` in the container is blocked
    /// reading the kernel's standard input (as `process::waiting_for_input`
    /// looks on this machine), asked of the container's own `/proc`.
    pub(crate) async fn waiting_for_input(&self, pgid: i32) -> bool {
        const LOOK: &str = r#"g=$0; s=$(readlink "/proc/$g/fd/0") || exit 1
for d in /proc/[0-9]*; do
  set -- $(cut -d')' -f2- "$d/stat" 2>/dev/null)
  [ "$3" = "$g" ] || continue
  [ "$(readlink "$d/fd/0" 2>/dev/null)" = "$s" ] || continue
  read -r a b rest < "$d/syscall" 2>/dev/null || continue
  [ "$a" = 0 ] && [ "$b" = 0x0 ] && exit 0
done
exit 1"#;
        self.sh(LOOK, &[&pgid.to_string()]).await.is_ok()
    }

    /// Sends `signal` (`SIGINT`) to the process group `pgid` in the
    /// container, without waiting for the engine.
    pub(crate) fn signal(&self, pgid: i32, signal: &str) {
        let signal = signal.strip_prefix("SIG").unwrap_or(signal);
        self.engine.fire(&[
            "exec",
            &self.name,
            "sh",
            "-c",
            "kill -s \"$0\" -- \"-$1\" 2>/dev/null",
            signal,
            &pgid.to_string(),
        ]);
    }

    /// Stops and removes the container.
    pub(crate) async fn stop(&self) {
        let run = self.run.lock().ok().and_then(|mut r| r.take());
        // `--volumes`: a copied workspace lives in an anonymous volume.
        let _ = self
            .engine
            .output(&[self.engine.remove(), &[&self.name]].concat())
            .await;
        if let Some(mut run) = run {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), run.wait()).await;
            let _ = run.start_kill();
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let run = self.run.lock().ok().and_then(|mut r| r.take());
        if run.is_some() {
            // Not stopped: removed without waiting (the engine client's own
            // end closes its input too, which ends the container).
            self.engine
                .fire(&[self.engine.remove(), &[&self.name]].concat());
        }
    }
}

/// How long a container may take to start (a warm image: about a second).
const START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The engine's arguments that start the container.
fn run_args(spec: &ContainerSpec, mounts: &Mounts, name: &str, remote: bool) -> Vec<String> {
    let script = format!("echo {READY}; read _ignored");
    let mut args = container_args(spec, mounts, name, remote);
    args.extend(
        ["--entrypoint", "sh", &spec.image, "-c", &script]
            .iter()
            .map(|s| (*s).to_owned()),
    );
    args
}

/// Runs `command` (a program and its arguments) once in a container like
/// a session's — the same mounts (or, with a remote engine, copies of the
/// workspace there and back), limits and network — removed when it ends,
/// with this process's standard streams (`terminal`: a terminal too).
/// What oi has to say on the way (a pull, copies) goes to `note`.
pub async fn run_once(
    spec: &ContainerSpec,
    policy: &oi_sandbox::Policy,
    command: &[String],
    terminal: bool,
    note: &mut (dyn FnMut(String) + Send),
) -> Result<std::process::ExitStatus, ContainerError> {
    let engine = Engine::find(spec.engine, spec.host.as_deref())?;
    let spawn_error = |e: std::io::Error| ContainerError::Engine {
        engine: engine.name().to_owned(),
        problem: e.to_string(),
    };
    let (program, rest) = command.split_first().ok_or_else(|| ContainerError::Start {
        image: spec.image.clone(),
        problem: "no command given".to_owned(),
    })?;
    let mut args = engine.args.clone();
    let container = if engine.remote {
        // The workspace must be copied there and back around the command:
        // a container like a session's, the command run in it.
        let progress = Progress::default();
        let started = Container::start(spec, &Mounts::of(policy, &[]), &progress).await;
        progress.since(0).0.into_iter().for_each(&mut *note);
        let container = started?;
        if let Some(sync) = &container.sync {
            let copied = sync
                .push(&container)
                .await
                .map_err(|problem| ContainerError::Start {
                    image: spec.image.clone(),
                    problem: format!("the workspace could not be copied there: {problem}"),
                })?;
            copied.into_iter().for_each(&mut *note);
        }
        args.extend(["exec".to_owned(), "--interactive".to_owned()]);
        if terminal {
            args.push("--tty".to_owned());
        }
        args.extend([
            "--workdir".to_owned(),
            policy.workspace.display().to_string(),
            container.name.clone(),
            program.clone(),
        ]);
        Some(container)
    } else {
        let name = format!("oi-{}-{:08x}", std::process::id(), fastrand::u32(..));
        args.extend(container_args(spec, &Mounts::of(policy, &[]), &name, false));
        if terminal {
            args.push("--tty".to_owned());
        }
        args.extend([
            "--entrypoint".to_owned(),
            program.clone(),
            spec.image.clone(),
        ]);
        None
    };
    args.extend(rest.iter().cloned());
    let status = Command::new(&engine.program)
        .args(args)
        .status()
        .await
        .map_err(spawn_error);
    if let Some(container) = container {
        if let Some(sync) = &container.sync {
            match sync.pull(&container).await {
                Ok(notes) => notes.into_iter().for_each(&mut *note),
                Err(problem) => note(format!(
                    "oi: the command's changes could not be copied back from the container: {problem}"
                )),
            }
        }
        container.stop().await;
    }
    status
}

/// The engine `spec` would use (its name, and where: this machine or the
/// address of a remote one) and its server's version — whether a session's
/// containers can start — or why not.
pub async fn engine_version(spec: &ContainerSpec) -> Result<(String, String), ContainerError> {
    let engine = Engine::find(spec.engine, spec.host.as_deref())?;
    let name = match engine.args.last() {
        Some(address) => format!("{} at {address}", engine.name()),
        None => engine.name().to_owned(),
    };
    let version = engine
        .output(&["version", "--format", "{{.Server.Version}}"])
        .await
        .map_err(|problem| ContainerError::Engine {
            engine: engine.name().to_owned(),
            problem,
        })?;
    Ok((name, version.trim().to_owned()))
}

/// What every container of oi's is started with, up to the image.
/// With `remote`, the folders of this machine are volumes of the
/// container's own, filled and emptied by copies (see `sync.rs`).
fn container_args(spec: &ContainerSpec, mounts: &Mounts, name: &str, remote: bool) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "-i",
        "--rm",
        "--name",
        name,
        "--label",
        &format!("{OWNER_LABEL}={}", crate::cleanup::owner_mark()),
        "--label",
        &format!("{HOST_LABEL}={}", host_name()),
        "--network",
        &spec.network,
        "--read-only",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // The container's own /tmp, unless a folder of this machine is mounted
    // there (a workspace in /tmp itself).
    let tmp = Path::new("/tmp");
    if mounts.workspace != tmp && !mounts.writable.iter().any(|w| w == tmp) {
        args.extend(["--tmpfs".to_owned(), "/tmp:rw,exec,mode=1777".to_owned()]);
    }
    args.extend([
        "--workdir".to_owned(),
        mounts.workspace.display().to_string(),
    ]);
    args.extend(["--env".to_owned(), "HOME=/tmp".to_owned()]);
    if remote {
        // Empty volumes at the same paths, which the copies fill; the
        // image's user owns them (files come back as this user's here).
        for dir in std::iter::once(&mounts.workspace).chain(&mounts.writable) {
            args.extend(["--volume".to_owned(), dir.display().to_string()]);
        }
    } else {
        let uid = nix::unistd::getuid();
        let gid = nix::unistd::getgid();
        // Files the code writes in the workspace are the user's, as on the
        // host.
        args.extend(["--user".to_owned(), format!("{uid}:{gid}")]);
        let volume = |source: &Path, target: &Path, mode: &str| {
            vec![
                "--volume".to_owned(),
                format!("{}:{}:{mode}", source.display(), target.display()),
            ]
        };
        args.extend(volume(&mounts.workspace, &mounts.workspace, "rw"));
        for dir in &mounts.writable {
            args.extend(volume(dir, dir, "rw"));
        }
        for dir in &mounts.read_only {
            args.extend(volume(dir, dir, "ro"));
        }
        for dir in &mounts.hidden {
            args.extend([
                "--tmpfs".to_owned(),
                format!("{}:ro,size=4k", dir.display()),
            ]);
        }
    }
    for mount in &spec.mounts {
        args.extend(["--volume".to_owned(), mount.clone()]);
    }
    if let Some(memory) = &spec.memory {
        args.extend(["--memory".to_owned(), memory.clone()]);
    }
    if let Some(cpus) = spec.cpus {
        args.extend(["--cpus".to_owned(), cpus.to_string()]);
    }
    if let Some(pids) = spec.pids {
        args.extend(["--pids-limit".to_owned(), pids.to_string()]);
    }
    for (key, value) in &spec.env {
        args.extend(["--env".to_owned(), format!("{key}={value}")]);
    }
    args
}

fn host_name() -> String {
    fs_err::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

/// Removes the containers that sessions on this machine left behind when
/// they were killed; says how many.
async fn remove_leftovers(engine: &Engine) -> usize {
    let Ok(ids) = engine
        .output(&[
            "ps",
            "-a",
            "-q",
            "--filter",
            &format!("label={OWNER_LABEL}"),
        ])
        .await
    else {
        return 0;
    };
    let ids: Vec<&str> = ids.split_whitespace().collect();
    if ids.is_empty() {
        return 0;
    }
    let format = format!(
        "{{{{.Id}}}} {{{{index .Config.Labels \"{HOST_LABEL}\"}}}} {{{{index .Config.Labels \"{OWNER_LABEL}\"}}}}"
    );
    let mut args = vec!["inspect", "--format", &format];
    args.extend(ids);
    let Ok(described) = engine.output(&args).await else {
        return 0;
    };
    let here = host_name();
    let dead: Vec<&str> = described
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (id, host, owner) = (words.next()?, words.next()?, words.next()?);
            (host == here && !crate::cleanup::owner_alive(owner)).then_some(id)
        })
        .collect();
    if dead.is_empty() {
        return 0;
    }
    let mut args = engine.remove().to_vec();
    args.extend(&dead);
    match engine.output(&args).await {
        Ok(_) => dead.len(),
        Err(_) => 0,
    }
}

/// Pulls `image` unless the engine has it.
async fn ensure_image(
    engine: &Engine,
    image: &str,
    progress: &Progress,
) -> Result<(), ContainerError> {
    if engine.output(&["image", "inspect", image]).await.is_ok() {
        return Ok(());
    }
    progress.line(format!(
        "oi: pulling the image {image} (it is not here yet)"
    ));
    let pull_error = |problem: String| ContainerError::Pull {
        image: image.to_owned(),
        problem,
    };
    let mut child = engine
        .command()
        .args(["pull", image])
        .spawn()
        .map_err(|e| pull_error(e.to_string()))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(pull_error("the engine's output is missing".to_owned()));
    };
    let last = Arc::new(Mutex::new(String::new()));
    let forward = |reader: Box<dyn tokio::io::AsyncRead + Unpin + Send>| {
        let progress = progress.clone();
        let last = Arc::clone(&last);
        async move {
            let mut lines = BufReader::new(reader).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = line.trim().to_owned();
                if line.is_empty() {
                    continue;
                }
                if let Ok(mut last) = last.lock() {
                    last.clone_from(&line);
                }
                progress.line(line);
            }
        }
    };
    tokio::join!(forward(Box::new(stdout)), forward(Box::new(stderr)));
    let status = child.wait().await.map_err(|e| pull_error(e.to_string()))?;
    if status.success() {
        Ok(())
    } else {
        let last = last.lock().map(|l| l.clone()).unwrap_or_default();
        Err(pull_error(if last.is_empty() {
            crate::process::describe_exit(status)
        } else {
            last
        }))
    }
}

/// Lines saying how the container's start is going (an image pull), kept
/// for whoever waits on it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Progress {
    lines: Arc<Mutex<Vec<String>>>,
    changed: Arc<tokio::sync::Notify>,
}

impl Progress {
    fn line(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line);
        }
        self.changed.notify_waiters();
    }

    /// The lines after the first `seen`, and how many there are now.
    pub(crate) fn since(&self, seen: usize) -> (Vec<String>, usize) {
        let lines = self.lines.lock().map(|l| l.clone()).unwrap_or_default();
        let count = lines.len();
        (lines.into_iter().skip(seen).collect(), count)
    }

    pub(crate) async fn changed(&self) {
        self.changed.notified().await;
    }
}

/// The session's container, started by the first kernel that needs it.
#[derive(Debug)]
pub(crate) struct ContainerSlot {
    pub spec: ContainerSpec,
    pub mounts: Mounts,
    pub progress: Progress,
    /// The start's outcome (a failed start is not tried again: the session
    /// reports the same error).
    state: tokio::sync::Mutex<Option<Result<Arc<Container>, ContainerError>>>,
    /// The container now, for whoever cannot wait.
    current: Mutex<Option<Arc<Container>>>,
}

impl ContainerSlot {
    pub(crate) fn new(spec: ContainerSpec, mounts: Mounts) -> Self {
        Self {
            spec,
            mounts,
            progress: Progress::default(),
            state: tokio::sync::Mutex::new(None),
            current: Mutex::new(None),
        }
    }

    /// The container, started if it is not yet, or again if it stopped
    /// (its kernels went with it and start again in the new one).
    pub(crate) async fn get(&self) -> Result<Arc<Container>, ContainerError> {
        let mut state = self.state.lock().await;
        match state.as_ref() {
            Some(Ok(container)) if !container.ended() => return Ok(Arc::clone(container)),
            Some(Err(e)) => return Err(e.clone()),
            Some(Ok(_)) => self.progress.line(
                "oi: the session's container stopped (its files outside the workspace are gone); starting a new one"
                    .to_owned(),
            ),
            None => {}
        }
        let started = Container::start(&self.spec, &self.mounts, &self.progress)
            .await
            .map(Arc::new);
        if let Ok(mut current) = self.current.lock() {
            *current = started.as_ref().ok().cloned();
        }
        *state = Some(started.clone());
        started
    }

    /// The container if it was started.
    pub(crate) fn started(&self) -> Option<Arc<Container>> {
        self.current.lock().ok().and_then(|c| c.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_container_mounts_only_what_the_policy_lets_code_write() {
        let ws = tempfile::tempdir().unwrap();
        let home = ws.path().join(".oi-home");
        fs_err::create_dir_all(ws.path().join(".git")).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        let mut policy = oi_sandbox::Policy::new(oi_protocol::SandboxMode::Container, ws.path());
        policy.protected_roots.push(home.clone());
        let images = home.join("sessions/x/images");
        let mounts = Mounts::of(&policy, std::slice::from_ref(&images));
        assert_eq!(mounts.workspace, ws.path());
        assert_eq!(mounts.writable, vec![images.clone()]);
        assert_eq!(mounts.read_only, vec![ws.path().join(".git")]);
        assert_eq!(mounts.hidden, vec![home]);

        let mut spec = ContainerSpec::new("img:1");
        spec.memory = Some("512m".into());
        spec.pids = Some(64);
        spec.env.insert("LANG".into(), "C.UTF-8".into());
        let args = run_args(&spec, &mounts, "oi-1", false);
        let joined = args.join(" ");
        for part in [
            "run -i --rm --name oi-1",
            "--network none",
            "--read-only",
            "--tmpfs /tmp:rw,exec,mode=1777",
            &format!("--workdir {}", ws.path().display()),
            &format!("--volume {0}:{0}:rw", ws.path().display()),
            &format!("--volume {0}/.git:{0}/.git:ro", ws.path().display()),
            &format!("--volume {0}:{0}:rw", images.display()),
            "--memory 512m",
            "--pids-limit 64",
            "--env LANG=C.UTF-8",
            "--entrypoint sh img:1 -c",
        ] {
            assert!(joined.contains(part), "{part} not in {joined}");
        }
        assert!(joined.contains(&format!("--tmpfs {}/.oi-home:ro", ws.path().display())));
        assert!(!joined.contains("--cpus"));
        // A workspace that is /tmp itself is not hidden by the container's own.
        let mounts = Mounts {
            workspace: PathBuf::from("/tmp"),
            ..Mounts::default()
        };
        let joined = run_args(&spec, &mounts, "oi-2", false).join(" ");
        assert!(!joined.contains("--tmpfs /tmp"), "{joined}");
        assert!(
            joined.contains("--workdir /tmp --env HOME=/tmp --user"),
            "{joined}"
        );
    }

    #[test]
    fn a_remote_engine_copies_the_workspace_instead_of_mounting_it() {
        let mounts = Mounts {
            workspace: PathBuf::from("/work/ws"),
            writable: vec![PathBuf::from("/work/added")],
            read_only: vec![PathBuf::from("/work/ws/.git")],
            hidden: Vec::new(),
        };
        let joined = run_args(&ContainerSpec::new("img"), &mounts, "oi-3", true).join(" ");
        assert!(
            joined.contains("--volume /work/ws --volume /work/added"),
            "{joined}"
        );
        assert!(!joined.contains("/work/ws:/work/ws"), "{joined}");
        assert!(!joined.contains("--user"), "{joined}");
    }

    #[test]
    fn each_engine_removes_at_once_in_its_own_words() {
        let engine = |kind| Engine {
            kind,
            program: PathBuf::from("engine"),
            args: Vec::new(),
            remote: false,
        };
        assert_eq!(
            engine(EngineKind::Podman).remove(),
            ["rm", "--force", "--volumes", "--time", "0"]
        );
        // Docker's `rm` has no `--time` (and stops at once with --force).
        assert_eq!(
            engine(EngineKind::Docker).remove(),
            ["rm", "--force", "--volumes"]
        );
    }

    #[test]
    fn engines_are_named_by_their_words() {
        assert_eq!("podman".parse(), Ok(EngineKind::Podman));
        assert_eq!("docker".parse(), Ok(EngineKind::Docker));
        assert_eq!("auto".parse(), Ok(EngineKind::Auto));
        assert!(
            "lxc"
                .parse::<EngineKind>()
                .unwrap_err()
                .contains("auto, docker, podman")
        );
    }
}
