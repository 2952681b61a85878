//! The server's key: `X-API-KEY: KEY` or `Authorization: Bearer KEY` on
//! every request but the heartbeat (the WebSocket may send `{"auth": KEY}`
//! first instead).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use crate::AppState;

/// A new key: 32 random bytes, hex.
pub(crate) fn generate_key() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    Ok(format!(
        "oi-{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

/// Compares in time that does not depend on where the texts differ.
pub(crate) fn same_key(given: &str, key: &str) -> bool {
    let (a, b) = (given.as_bytes(), key.as_bytes());
    let mut diff = a.len() ^ b.len();
    for (i, byte) in b.iter().enumerate() {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ byte);
    }
    diff == 0
}

/// The key a request's headers carry.
pub(crate) fn key_of(headers: &HeaderMap) -> Option<&str> {
    if let Some(key) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(key.trim());
    }
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

pub(crate) async fn require(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    match key_of(request.headers()) {
        Some(key) if same_key(key, &state.api_key) => next.run(request).await,
        Some(_) => crate::error(
            StatusCode::UNAUTHORIZED,
            "the API key is wrong",
            Some(
                "send the server's key (INTERPRETER_API_KEY, or the one it printed at start) as `X-API-KEY` or `Authorization: Bearer`",
            ),
        ),
        None => crate::error(
            StatusCode::UNAUTHORIZED,
            "this server needs an API key",
            Some(
                "send it as `X-API-KEY: KEY` or `Authorization: Bearer KEY` (INTERPRETER_API_KEY, or the key printed at start)",
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_exactly() {
        assert!(same_key("oi-abc", "oi-abc"));
        assert!(!same_key("oi-ab", "oi-abc"));
        assert!(!same_key("oi-abcd", "oi-abc"));
        assert!(!same_key("", "oi-abc"));
        let key = generate_key().unwrap();
        assert_eq!(key.len(), 67);
        assert_ne!(key, generate_key().unwrap());
    }
}
