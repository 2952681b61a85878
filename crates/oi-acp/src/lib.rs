//! `interpreter acp`: the Agent Client Protocol (v1) on stdio, for editors
//! such as Zed, with the official `agent-client-protocol` crate.
//!
//! An ACP *session* is an oi session, set up by `oi_core::setup` like every
//! front end's (its id is the session's, so `session/load` takes a recorded
//! one up again). A prompt is a task: the model's text streams as
//! `agent_message_chunk`, its reasoning as `agent_thought_chunk`, each run
//! of code is a `tool_call` of kind `execute` (the code as its content, the
//! output streamed in `tool_call_update`s), and code that needs approval is
//! asked about with `session/request_permission`. The session's mode is
//! oi's approval policy (`ask` or `auto`); risky code always asks.

mod session;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{Agent, Error, Stdio};
use oi_core::SessionRequest;

pub use session::modes;
use session::{AcpSession, Sessions};

/// Serves ACP on stdin and stdout until the client closes stdin. `base` is
/// the session the command line asks for; each ACP session starts from it.
pub async fn serve(base: SessionRequest) -> Result<(), Error> {
    let sessions: Sessions = Arc::new(Mutex::new(HashMap::new()));
    let base = Arc::new(base);
    let new_sessions = sessions.clone();
    let new_base = base.clone();
    let load_sessions = sessions.clone();
    let load_base = base.clone();
    let prompt_sessions = sessions.clone();
    let cancel_sessions = sessions.clone();
    let mode_sessions = sessions.clone();
    let option_sessions = sessions.clone();
    let result = Agent
        .v1()
        .name("oi")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                responder.respond(
                    InitializeResponse::new(request.protocol_version)
                        .agent_capabilities(
                            AgentCapabilities::new()
                                .load_session(true)
                                .mcp_capabilities(McpCapabilities::new().http(true))
                                .prompt_capabilities(
                                    PromptCapabilities::new().image(true).embedded_context(true),
                                ),
                        )
                        .agent_info(Implementation::new("oi", env!("CARGO_PKG_VERSION"))),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthenticateRequest, responder, _cx| {
                // oi takes its keys from its configuration: nothing to do.
                responder.respond(AuthenticateResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                let sessions = new_sessions.clone();
                let base = new_base.clone();
                cx.clone().spawn(async move {
                    match AcpSession::start(&base, &request.cwd, &request.mcp_servers, None).await {
                        Ok((session, notes)) => {
                            keep(&sessions, &session);
                            responder.respond(
                                NewSessionResponse::new(session.id.clone())
                                    .modes(session.mode_state())
                                    .config_options(session.config_options()),
                            )?;
                            session.announce(&cx, &notes)
                        }
                        Err(error) => responder.respond_with_error(error),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let sessions = load_sessions.clone();
                let base = load_base.clone();
                cx.clone().spawn(async move {
                    let id = request.session_id.0.to_string();
                    match AcpSession::start(&base, &request.cwd, &request.mcp_servers, Some(&id))
                        .await
                    {
                        Ok((session, notes)) => {
                            // The conversation so far is replayed first.
                            session.replay(&cx)?;
                            keep(&sessions, &session);
                            responder.respond(
                                LoadSessionResponse::new()
                                    .modes(session.mode_state())
                                    .config_options(session.config_options()),
                            )?;
                            session.announce(&cx, &notes)
                        }
                        Err(error) => responder.respond_with_error(error),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                let session = session::find(&prompt_sessions, &request.session_id)?;
                cx.clone().spawn(async move {
                    match session.prompt(&cx, request.prompt).await {
                        Ok(response) => responder.respond(response),
                        Err(error) => responder.respond_with_error(error),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Ok(session) = session::find(&cancel_sessions, &notification.session_id) {
                    session.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, cx| {
                let session = session::find(&mode_sessions, &request.session_id)?;
                match session.set_mode(&request.mode_id.0) {
                    Ok(()) => {
                        responder.respond(SetSessionModeResponse::new())?;
                        session.mode_changed(&cx)
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                let session = session::find(&option_sessions, &request.session_id)?;
                match session.set_option(&request.config_id.0, &request.value) {
                    Ok(()) => responder.respond(SetSessionConfigOptionResponse::new(
                        session.config_options(),
                    )),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await;
    // The client has gone: every session stops, its kernels with it.
    let all: Vec<Arc<AcpSession>> = sessions
        .lock()
        .map(|mut s| s.drain().map(|(_, v)| v).collect())
        .unwrap_or_default();
    for session in all {
        session.shut_down().await;
    }
    result
}

/// Keeps a session that has started, so later requests find it.
fn keep(sessions: &Sessions, session: &Arc<AcpSession>) {
    if let Ok(mut all) = sessions.lock() {
        all.insert(session.id.clone(), session.clone());
    }
}
