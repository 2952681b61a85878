//! Test support for oi.
//!
//! [`MockServer`] is an HTTP server on 127.0.0.1 that plays a script of
//! [`Reply`]s, one per request, on whichever wire the request came in on —
//! OpenAI Chat Completions, OpenAI Responses or Anthropic Messages, each
//! streamed with its own event names and shapes — and records every request.
//! Replies can stream text in small pieces, make tool calls whose arguments
//! arrive in fragments, print tool calls as plain text the way small local
//! models do, or fail: HTTP errors with each wire's error body and
//! `Retry-After`, streams cut off mid-way or stalled, malformed events.
//!
//! [`present_or_skip`] is the one way a test skips for want of something on
//! the machine, honouring the `OI_REQUIRE_*` variables.

pub mod procs;
mod reply;
mod server;
mod skip;
mod wheel;
mod wire;
mod xvfb;

pub use reply::{MockToolCall, Reply};
pub use server::{MockServer, RecordedRequest};
pub use skip::{
    Need, PodmanService, builtin_weights, container_image, installed, matplotlib_python,
    npm_package, pip_package, present_or_skip, python3, which,
};
pub use wheel::{INSTALL_PROBE_WHEEL, MAKE_PROBE_WHEEL};
pub use xvfb::{XEvent, Xvfb, wait_until, xev_events};
