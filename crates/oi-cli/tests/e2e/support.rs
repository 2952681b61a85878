//! Running the binary in an isolated environment against a mock server.

use std::process::Stdio;
use std::time::Duration;

use oi_testkit::MockServer;
use tokio::io::AsyncWriteExt;

/// A mock server, an empty working directory and an empty home.
pub(crate) struct TestEnv {
    pub(crate) server: MockServer,
    pub(crate) cwd: tempfile::TempDir,
    pub(crate) home: tempfile::TempDir,
}

/// What a finished process left behind.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl TestEnv {
    /// A mock server, and a user configuration that points at it:
    /// provider `mock` (chat wire, no key), model `mock-model`.
    pub(crate) async fn new() -> Self {
        let env = Self {
            server: MockServer::start().await.unwrap(),
            cwd: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        env.write_config(&format!(
            "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{}\"\n",
            env.server.base_url()
        ));
        env
    }

    /// oi's folder (`$INTERPRETER_HOME`) for the binary.
    pub(crate) fn oi_home(&self) -> std::path::PathBuf {
        self.home.path().join(".openinterpreter")
    }

    /// Replaces the user configuration file.
    pub(crate) fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.oi_home()).unwrap();
        std::fs::write(self.oi_home().join("config.toml"), text).unwrap();
    }

    /// The binary with a clean environment and the test's own home.
    pub(crate) fn command(&self, args: &[&str]) -> tokio::process::Command {
        self.command_wrapped(&[], args)
    }

    /// The binary run by `wrapper` (a program and its arguments, before the
    /// binary's path), with the same environment as [`Self::command`].
    pub(crate) fn command_wrapped(
        &self,
        wrapper: &[&str],
        args: &[&str],
    ) -> tokio::process::Command {
        let binary = env!("CARGO_BIN_EXE_interpreter");
        let mut cmd = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(rest).arg(binary);
                cmd
            }
            None => tokio::process::Command::new(binary),
        };
        cmd.args(args);
        self.environment(cmd)
    }

    /// Another program, with the same environment as [`Self::command`].
    pub(crate) fn program(&self, program: &str, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args);
        self.environment(cmd)
    }

    fn environment(&self, mut cmd: tokio::process::Command) -> tokio::process::Command {
        cmd.current_dir(self.cwd.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("INTERPRETER_HOME")
            .env_remove("OI_MODEL")
            .env_remove("VISUAL")
            .env_remove("EDITOR")
            // Open Interpreter's profiles are looked for under the test's home.
            .env_remove("XDG_CONFIG_HOME")
            // OS-mode tests name their own (virtual) display.
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("HOME", self.home.path())
            .env("NO_COLOR", "1")
            // Not the test runner's: a program reading it must see its end.
            .stdin(Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Runs `interpreter exec ARGS…` with no terminal and empty stdin.
    pub(crate) async fn exec(&self, args: &[&str]) -> Output {
        let mut all = vec!["exec"];
        all.extend_from_slice(args);
        self.run(&all, None).await
    }

    /// Runs the binary with `stdin` piped in (or empty).
    pub(crate) async fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        run_command(self.command(args), stdin).await
    }

    /// [`Self::run`] with environment variables set, empty stdin.
    pub(crate) async fn run_with_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(args);
        cmd.envs(vars.iter().copied());
        run_command(cmd, None).await
    }
}

pub(crate) async fn run_command(mut cmd: tokio::process::Command, stdin: Option<&str>) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).await.unwrap();
    }
    drop(pipe);
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("interpreter did not finish within 120 s")
        .unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The text the model was sent as the result of its last call or code block.
pub(crate) fn last_message_text(server: &MockServer, request: usize) -> String {
    server.model_requests()[request].last_message_text()
}

/// Starts `interpreter ARGS…`, waits until its stderr has the line `ready`, then
/// sends it `signal`; returns its exit code and all of its stderr.
pub(crate) async fn signal_when(
    env: &TestEnv,
    args: &[&str],
    ready: &str,
    signal: &str,
) -> (i32, String) {
    use tokio::io::AsyncBufReadExt;
    let mut cmd = env.command(args);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let pid = child.id().unwrap().to_string();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stderr = String::new();
    let wait_ready = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            stderr.push_str(&line);
            stderr.push('\n');
            if line == ready {
                return;
            }
        }
        panic!("interpreter ended before `{ready}`:\n{stderr}");
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), wait_ready)
        .await
        .expect("never ready");
    let status = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let rest = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            stderr.push_str(&line);
            stderr.push('\n');
        }
        child.wait().await.unwrap()
    };
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), rest)
        .await
        .expect("interpreter did not exit after the signal");
    (status.code().unwrap_or(-1), stderr)
}

pub(crate) fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}
