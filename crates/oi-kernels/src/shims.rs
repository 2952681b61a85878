//! Version-manager shims. With pyenv, `python3` on `PATH` is a script that
//! works out, on every start, which installed Python this folder uses, and
//! then runs it: 60–170 ms before Python itself even starts. A kernel
//! starts the interpreter the shim would have run instead. The shim is
//! asked once (`python3 -c 'import sys; print(sys.executable)'`) for each
//! *selection* — what pyenv decides from: `PYENV_VERSION`, else the nearest
//! `.python-version` file and what it says, else the global version file —
//! and the answer is remembered in oi's cache folder, until the selection
//! or the installed versions change.
//!
//! The kernel's `PATH` then starts with the interpreter's folder, as
//! `pyenv exec` would have set it, so `pip` and `python` in the code's
//! commands are that version's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file in the cache folder that remembers what shims ran.
const CACHE_FILE: &str = "interpreters.json";

/// The interpreter `program` stands for when it is a pyenv shim (the shim
/// itself when that cannot be worked out); any other program as it is.
pub(crate) async fn resolve(program: &Path, cwd: &Path, cache_dir: Option<&Path>) -> PathBuf {
    let Some(root) = pyenv_root(program) else {
        return program.to_path_buf();
    };
    let key = selection(program, &root, cwd);
    let cache = cache_dir.map(|dir| dir.join(CACHE_FILE));
    let mut known: BTreeMap<String, PathBuf> = cache
        .as_ref()
        .and_then(|file| fs_err::read_to_string(file).ok())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    if let Some(found) = known.get(&key).filter(|p| p.is_file()) {
        return found.clone();
    }
    let Some(found) = ask(program, cwd).await else {
        return program.to_path_buf();
    };
    if let Some(file) = cache {
        known.insert(key, found.clone());
        if let Ok(text) = serde_json::to_string_pretty(&known) {
            // Remembering is an optimisation: a failure costs the next
            // start the shim's time, nothing more.
            let _ = file
                .parent()
                .map_or(Ok(()), fs_err::create_dir_all)
                .and_then(|()| fs_err::write(&file, text));
        }
    }
    found
}

/// pyenv's root when `program` is one of its shims
/// (`$PYENV_ROOT/shims/NAME`, a script).
fn pyenv_root(program: &Path) -> Option<PathBuf> {
    let shims = program.parent()?;
    if shims.file_name()? != "shims" {
        return None;
    }
    let root = shims.parent()?;
    if !root.join("libexec").join("pyenv").is_file() {
        return None;
    }
    // A script, not an interpreter someone put there.
    let head = fs_err::read(program).ok()?;
    head.starts_with(b"#!").then(|| root.to_path_buf())
}

/// What pyenv chooses the version from, for `program` in `cwd`, as a key:
/// with the installed versions' folder's change time, so installing or
/// removing a version asks the shim again.
fn selection(program: &Path, root: &Path, cwd: &Path) -> String {
    let installed = fs_err::metadata(root.join("versions"))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let chosen = match std::env::var("PYENV_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(version) => format!("PYENV_VERSION={version}"),
        None => {
            let file = cwd
                .ancestors()
                .map(|dir| dir.join(".python-version"))
                .find(|f| f.is_file())
                .unwrap_or_else(|| root.join("version"));
            let said = fs_err::read_to_string(&file).unwrap_or_default();
            format!("{}={}", file.display(), said.trim())
        }
    };
    format!("{} {chosen} {installed}", program.display())
}

/// The interpreter the shim runs in `cwd`, asked of Python itself.
async fn ask(program: &Path, cwd: &Path) -> Option<PathBuf> {
    let output = tokio::process::Command::new(program)
        .args(["-c", "import sys; print(sys.executable)"])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // An abandoned start (the session ended first) leaves no shim.
        .kill_on_drop(true)
        .output()
        .await
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let path = PathBuf::from(text.trim());
    (output.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake pyenv: its root with `libexec/pyenv`, a shim that answers
    /// with `target` (counting its calls), and the global version file.
    fn fake_pyenv(dir: &Path, target: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let root = dir.join("pyenv");
        fs_err::create_dir_all(root.join("libexec")).unwrap();
        fs_err::create_dir_all(root.join("shims")).unwrap();
        fs_err::create_dir_all(root.join("versions")).unwrap();
        fs_err::write(root.join("libexec/pyenv"), "#!/bin/sh\n").unwrap();
        fs_err::write(root.join("version"), "3.11.7\n").unwrap();
        let shim = root.join("shims/python3");
        fs_err::write(
            &shim,
            format!(
                "#!/bin/sh\necho x >> '{}'\necho '{}'\n",
                dir.join("calls").display(),
                target.display()
            ),
        )
        .unwrap();
        fs_err::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
        shim
    }

    fn calls(dir: &Path) -> usize {
        fs_err::read_to_string(dir.join("calls"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn a_shim_is_asked_once_per_selection_and_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("python3.11");
        fs_err::write(&target, "").unwrap();
        let shim = fake_pyenv(dir.path(), &target);
        let cache = dir.path().join("cache");
        let work = dir.path().join("work");
        fs_err::create_dir_all(&work).unwrap();

        assert_eq!(resolve(&shim, &work, Some(&cache)).await, target);
        assert_eq!(resolve(&shim, &work, Some(&cache)).await, target);
        assert_eq!(
            calls(dir.path()),
            1,
            "the second start asked the shim again"
        );

        // Another selection (a project that names its own version) asks
        // again.
        fs_err::write(work.join(".python-version"), "3.12.1\n").unwrap();
        assert_eq!(resolve(&shim, &work, Some(&cache)).await, target);
        assert_eq!(calls(dir.path()), 2);
    }

    #[tokio::test]
    async fn anything_else_is_started_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("python3");
        fs_err::write(&plain, "#!/bin/sh\n").unwrap();
        assert_eq!(resolve(&plain, dir.path(), None).await, plain);
        // A shim whose answer is not an interpreter on disk: the shim.
        let shim = fake_pyenv(dir.path(), &dir.path().join("missing"));
        assert_eq!(resolve(&shim, dir.path(), None).await, shim);
    }
}
