//! Systems other than Linux: nothing can be enforced yet, and
//! [`shortfalls`] says so.

use std::path::{Path, PathBuf};

use crate::policy::Policy;
use oi_protocol::SandboxMode;

/// Why a confinement could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the sandbox is required (sandbox_required = true) but this system cannot enforce it: {0}"
    )]
    Required(String),
}

/// What this system can enforce: nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    pub landlock: bool,
    pub namespaces: bool,
    pub seccomp: bool,
}

pub fn support() -> Support {
    Support {
        landlock: false,
        namespaces: false,
        seccomp: false,
    }
}

pub fn shortfalls(policy: &Policy) -> Vec<String> {
    let mut problems = Vec::new();
    if policy.in_container() {
        return problems;
    }
    if policy.mode != SandboxMode::FullAccess {
        problems.push(format!(
            "the {} sandbox is not enforced on {} yet: code can change any file you can",
            policy.mode,
            std::env::consts::OS
        ));
    }
    if !policy.network {
        problems.push(format!(
            "network = false is not enforced on {} yet",
            std::env::consts::OS
        ));
    }
    problems
}

/// A stand-in that confines nothing (see [`shortfalls`]).
#[derive(Debug)]
pub struct Confinement;

impl Confinement {
    pub fn prepare(
        _policy: &Policy,
        _private: &[PathBuf],
        _cwd: &Path,
    ) -> Result<Self, SandboxError> {
        Ok(Self)
    }

    pub fn install(self, _command: &mut std::process::Command) {}

    pub fn apply(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
