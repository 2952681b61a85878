//! Keeping a model's code within bounds.
//!
//! - [`Policy`] says what a session's kernels may do: write where
//!   ([`oi_protocol::SandboxMode`]), and whether they may use the network.
//! - [`Confinement`] applies a policy to a kernel process and everything it
//!   starts (Linux: Landlock, seccomp, a read-only view of `.git`).
//! - [`assess`] recognises risky code (deleting outside the workspace,
//!   `sudo`, disk tools, force-pushes …) so it is always shown to the user.
//! - [`explain`] turns the errors a confined program prints into a plain
//!   "blocked by sandbox" note with what to do.

#[cfg(target_os = "linux")]
mod confine;
mod explain;
mod policy;
mod risk;
mod shell;
#[cfg(not(target_os = "linux"))]
mod unsupported;

#[cfg(target_os = "linux")]
pub use confine::{Confinement, SandboxError, Support, shortfalls, support};
pub use explain::{Denial, explain};
pub use policy::{PROTECTED_NAMES, Policy};
pub use risk::{RULES, Risk, RiskContext, assess};
#[cfg(not(target_os = "linux"))]
pub use unsupported::{Confinement, SandboxError, Support, shortfalls, support};
