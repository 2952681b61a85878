//! Test support for oi.
//!
//! [`MockServer`] is an HTTP server on 127.0.0.1 that plays a script of
//! [`Reply`]s in the OpenAI Chat Completions streaming format, one per request,
//! and records every request it receives. Replies can stream text in small
//! pieces, make tool calls whose arguments arrive in fragments, print tool calls
//! as plain text the way small local models do, or fail: HTTP errors with JSON
//! bodies and `Retry-After`, streams cut off mid-way, malformed events.

mod reply;
mod server;

pub use reply::{MockToolCall, Reply};
pub use server::{MockServer, RecordedRequest};
