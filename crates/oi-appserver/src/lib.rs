//! `interpreter app-server`: Codex's app-server protocol — JSON-RPC 2.0 as
//! JSON lines over stdio — in front of oi's agent, so programs written for
//! Codex's app-server (its SDKs, editors) drive oi unchanged.
//!
//! A *thread* is an oi session (its id is the session's, so a recorded one
//! is taken up again with `thread/resume`), with its own agent and
//! kernels, set up by `oi_core::setup` as every front end's sessions are; a
//! *turn* is one task; its *items* (the user's message, the model's
//! replies and reasoning, each run of code, the files a run changed, the
//! images it made) start and complete as notifications. Code that needs
//! approval — all of it under `untrusted`, risky code always — is asked
//! about with `item/commandExecution/requestApproval`. Approvals, the
//! sandbox, limits and checkpoints are the core's; this crate only maps.

mod images;
pub mod protocol;
pub mod rpc;
mod server;
mod thread;

pub use protocol::ThreadItem;
pub use server::serve;
