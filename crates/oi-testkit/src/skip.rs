//! The one way a test skips: when something it needs is missing on this
//! machine, it says so on stderr and passes — unless the run demands that
//! need with its `OI_REQUIRE_*` variable (CI sets them all), and then it
//! fails, so a CI machine that lost a tool cannot pass by skipping.

use std::path::PathBuf;

/// Something a test needs from the machine, and the variable that demands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need<'a> {
    /// Landlock, seccomp, user namespaces and what they make possible
    /// (`OI_REQUIRE_SANDBOX` set).
    Sandbox,
    /// A virtual X display and the X tools (`OI_REQUIRE_XVFB=1`).
    Xvfb,
    /// A Python that imports matplotlib (`OI_REQUIRE_MATPLOTLIB` set).
    Matplotlib,
    /// A model server for the real-model tests (`OI_REQUIRE_LOCALMODEL` set).
    LocalModel,
    /// The built-in model's engine in this build, and GGUF weights to run
    /// (`OI_BUILTIN_GGUF`) — `OI_REQUIRE_BUILTIN` set.
    BuiltinModel,
    /// A language's interpreter, by oi's name for the language (listed in
    /// `OI_REQUIRE_LANGUAGES`, e.g. `javascript,ruby`).
    Language(&'a str),
    /// A program on `PATH` (listed in `OI_REQUIRE_PROGRAMS`, e.g. `git`).
    Program(&'a str),
    /// A client library from npm, installed for the compatibility tests
    /// (listed in `OI_REQUIRE_NPM`, e.g. `@openai/codex-sdk`).
    Npm(&'a str),
    /// A client library from PyPI, importable by the Python the
    /// compatibility tests use (listed in `OI_REQUIRE_PIP`, e.g.
    /// `openai-codex`).
    Pip(&'a str),
    /// A container engine (Podman or Docker) with the test image
    /// (`OI_REQUIRE_CONTAINER` set).
    Container,
}

impl Need<'_> {
    /// The variable that demands this need.
    pub fn variable(&self) -> &'static str {
        match self {
            Self::Sandbox => "OI_REQUIRE_SANDBOX",
            Self::Xvfb => "OI_REQUIRE_XVFB",
            Self::Matplotlib => "OI_REQUIRE_MATPLOTLIB",
            Self::LocalModel => "OI_REQUIRE_LOCALMODEL",
            Self::BuiltinModel => "OI_REQUIRE_BUILTIN",
            Self::Language(_) => "OI_REQUIRE_LANGUAGES",
            Self::Program(_) => "OI_REQUIRE_PROGRAMS",
            Self::Npm(_) => "OI_REQUIRE_NPM",
            Self::Pip(_) => "OI_REQUIRE_PIP",
            Self::Container => "OI_REQUIRE_CONTAINER",
        }
    }

    /// Whether this run demands it.
    pub fn required(&self) -> bool {
        let value = std::env::var(self.variable()).ok();
        let listed = |name: &str| {
            value
                .as_deref()
                .is_some_and(|v| v.split(',').any(|item| item.trim() == name))
        };
        match self {
            Self::Xvfb => value.as_deref() == Some("1"),
            Self::Language(name) | Self::Program(name) | Self::Npm(name) | Self::Pip(name) => {
                listed(name)
            }
            _ => value.is_some(),
        }
    }
}

/// Whether a test may go on: `true` when `present`. Otherwise it prints
/// `skipped: {missing}` and returns `false` — or panics when the run
/// requires `need`.
pub fn present_or_skip(need: Need<'_>, present: bool, missing: &str) -> bool {
    if present {
        return true;
    }
    assert!(
        !need.required(),
        "{} demands it, but {missing}",
        need.variable()
    );
    #[expect(
        clippy::print_stderr,
        reason = "a skipped test says why, on the test's stderr"
    )]
    {
        eprintln!("skipped: {missing}");
    }
    false
}

/// The GGUF weights the built-in model's tests run (`OI_BUILTIN_GGUF`,
/// e.g. the path `localmodel path 0.5b` prints), when `engine` (whether
/// the binary under test has the engine: `oi_builtin::AVAILABLE`) is
/// true; `None` (skipped) otherwise.
pub fn builtin_weights(engine: bool) -> Option<PathBuf> {
    let path = std::env::var_os("OI_BUILTIN_GGUF").map(PathBuf::from);
    let file = path.clone().filter(|p| p.is_file());
    let missing = match (&path, engine) {
        (_, false) => {
            "this build has no engine for the built-in model (build with `--features builtin`)"
                .to_owned()
        }
        (None, true) => "no GGUF weights (set OI_BUILTIN_GGUF to a GGUF file)".to_owned(),
        (Some(p), true) => format!("OI_BUILTIN_GGUF: {} is not a file", p.display()),
    };
    present_or_skip(Need::BuiltinModel, engine && file.is_some(), &missing)
        .then_some(file)
        .flatten()
}

/// The image the container tests run (`$OI_TEST_IMAGE`, default
/// `localhost/oi-test:bookworm`: a Debian root file system with Python,
/// which `.ci/run` builds), when Podman or Docker is installed and has it;
/// `None` (skipped) otherwise.
pub fn container_image() -> Option<String> {
    let image =
        std::env::var("OI_TEST_IMAGE").unwrap_or_else(|_| "localhost/oi-test:bookworm".into());
    let engine = ["podman", "docker"].into_iter().find(|e| installed(e));
    let missing = match engine {
        None => "no container engine (install podman or docker)".to_owned(),
        Some(engine) => {
            let has = std::process::Command::new(engine)
                .args(["image", "inspect", &image])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if has {
                return Some(image);
            }
            format!(
                "{engine} has no image {image} (build it as .ci/run does, or set OI_TEST_IMAGE)"
            )
        }
    };
    present_or_skip(Need::Container, false, &missing);
    None
}

/// A second Podman serving its API on a free TCP port of 127.0.0.1 (`url`,
/// `tcp://127.0.0.1:PORT`): a container engine oi takes for another
/// machine's. Stopped when dropped.
#[derive(Debug)]
pub struct PodmanService {
    child: std::process::Child,
    pub url: String,
}

impl PodmanService {
    /// Started and answering, with the test image ([`container_image`]);
    /// `None` (skipped) without Podman or the image.
    pub fn start() -> Option<(Self, String)> {
        let image = container_image()?;
        if !present_or_skip(
            Need::Container,
            installed("podman"),
            "the remote-engine tests need Podman (`podman system service`)",
        ) {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port());
        let Ok(port) = port else {
            present_or_skip(Need::Container, false, "no free port on 127.0.0.1");
            return None;
        };
        let url = format!("tcp://127.0.0.1:{port}");
        let Ok(child) = std::process::Command::new("podman")
            .args(["system", "service", "--time=0", &url])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        else {
            present_or_skip(
                Need::Container,
                false,
                "podman system service could not be started",
            );
            return None;
        };
        let service = Self { child, url };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !std::process::Command::new("podman")
            .args(["--remote", "--url", &service.url, "version"])
            .output()
            .is_ok_and(|o| o.status.success())
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the Podman service did not answer within 30 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        Some((service, image))
    }
}

impl Drop for PodmanService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Python that imports matplotlib: `$OI_TEST_MATPLOTLIB_PYTHON` (CI sets
/// it), else `python3` if it has matplotlib; `None` (skipped) otherwise.
pub fn matplotlib_python() -> Option<String> {
    let candidate = std::env::var("OI_TEST_MATPLOTLIB_PYTHON").unwrap_or_else(|_| "python3".into());
    let works = std::process::Command::new(&candidate)
        .args(["-c", "import matplotlib"])
        .output()
        .is_ok_and(|o| o.status.success());
    present_or_skip(
        Need::Matplotlib,
        works,
        &format!("`{candidate}` cannot import matplotlib (set OI_TEST_MATPLOTLIB_PYTHON)"),
    )
    .then_some(candidate)
}

/// `python3`, when it runs (`python3 -c pass`); `None` (skipped)
/// otherwise. For tests that run the Python code oi gives a model.
pub fn python3() -> Option<&'static str> {
    let works = std::process::Command::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    present_or_skip(Need::Program("python3"), works, "python3 is not on PATH").then_some("python3")
}

/// The npm prefix holding `package` (`OI_NPM_PREFIX`, where `.ci/run`
/// installs the clients the compatibility tests drive), with `node` on
/// `PATH`; `None` (skipped) otherwise.
pub fn npm_package(package: &str) -> Option<PathBuf> {
    let prefix = std::env::var_os("OI_NPM_PREFIX").map(PathBuf::from);
    let found = prefix.clone().filter(|p| {
        p.join("node_modules")
            .join(package)
            .join("package.json")
            .is_file()
    });
    let node = installed("node");
    let missing = match (&prefix, &found, node) {
        (_, _, false) => "`node` is not on PATH".to_owned(),
        (None, _, _) => format!(
            "{package} is not installed for the tests (set OI_NPM_PREFIX to an npm prefix holding it)"
        ),
        (Some(p), None, _) => format!("{package} is not installed in {}", p.display()),
        (Some(_), Some(_), true) => String::new(),
    };
    present_or_skip(Need::Npm(package), found.is_some() && node, &missing)
        .then_some(found)
        .flatten()
}

/// A Python that imports `module` of the PyPI `package`:
/// `$OI_PIP_PYTHON` (where `.ci/run` installs the clients the
/// compatibility tests drive), else `python3`; `None` (skipped) otherwise.
pub fn pip_package(package: &str, module: &str) -> Option<String> {
    let python = std::env::var("OI_PIP_PYTHON").unwrap_or_else(|_| "python3".into());
    let works = std::process::Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    present_or_skip(
        Need::Pip(package),
        works,
        &format!("`{python}` cannot import {module} (install {package}, or set OI_PIP_PYTHON to a Python that has it)"),
    )
    .then_some(python)
}

/// Where `program` is on `PATH`, if it is.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}

/// Whether `program` is on `PATH`.
pub fn installed(program: &str) -> bool {
    which(program).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_need_has_its_variable() {
        assert_eq!(Need::Sandbox.variable(), "OI_REQUIRE_SANDBOX");
        assert_eq!(Need::Language("ruby").variable(), "OI_REQUIRE_LANGUAGES");
        assert_eq!(Need::Program("git").variable(), "OI_REQUIRE_PROGRAMS");
        assert_eq!(Need::Pip("openai-codex").variable(), "OI_REQUIRE_PIP");
    }

    #[test]
    fn what_is_present_never_skips() {
        assert!(present_or_skip(Need::Sandbox, true, "nothing"));
    }
}
