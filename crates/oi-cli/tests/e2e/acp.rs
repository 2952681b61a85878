//! `interpreter acp`, driven by the official ACP TypeScript library
//! (`@agentclientprotocol/sdk` from npm, the version `.ci/run` pins) as an
//! editor drives it, against the mock model and real kernels: a session,
//! a prompt whose code is allowed once and runs (its output streamed in
//! the tool call), one whose code is rejected, a mode change, the session
//! loaded again with its conversation replayed, a failing prompt.

use oi_testkit::{MockToolCall, Reply};
use serde_json::Value;

use crate::support::{TestEnv, run_command};

/// The texts of the updates of `kind` in `updates`, joined.
fn texts(updates: &Value, kind: &str) -> String {
    updates
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == kind)
        .filter_map(|u| u["update"]["content"]["text"].as_str())
        .collect()
}

fn of_kind<'a>(updates: &'a Value, kind: &str) -> Vec<&'a Value> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == kind)
        .map(|u| &u["update"])
        .collect()
}

#[tokio::test]
async fn an_editor_drives_oi_over_acp() {
    let Some(prefix) = oi_testkit::npm_package("@agentclientprotocol/sdk") else {
        return;
    };
    let env = TestEnv::new().await;
    let work = env.cwd.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
    env.server
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "shell",
            "wc -l < data.csv",
        )]))
        .push(Reply::text("data.csv has 3 lines.").usage(120, 8))
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "python",
            "import os; os.remove('data.csv')",
        )]))
        .push(Reply::text("I left it alone."))
        .push(Reply::text("The second one."))
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "python",
            "import time\ntime.sleep(60)",
        )]))
        .push(Reply::error(400, "quota exceeded for this key"));

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp/drive.mjs");
    // Every prompt is asked about: the editor answers.
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\napproval = \"ask\"\ncontext_window = 32000\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    let mut cmd = env.command_wrapped(&["node", script], &[]);
    cmd.env("OI_ACP_SDK_DIR", &prefix)
        .env("OI_BIN", env!("CARGO_BIN_EXE_interpreter"))
        .env("WORK", &work);
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!("{e}: {out:?}");
    });

    assert_eq!(report["init"]["protocolVersion"], 1, "{report:#}");
    assert_eq!(report["init"]["agentInfo"]["name"], "oi");
    assert_eq!(report["init"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(report["modes"]["currentModeId"], "ask");
    let session = report["sessionId"].as_str().unwrap();
    assert!(
        env.oi_home().join("sessions").join(session).is_dir(),
        "the session is oi's recorded session {session}"
    );

    // The first prompt: allowed once, the code ran, its output streamed
    // into the tool call, the answer streamed as message chunks.
    let first = &report["first"];
    assert_eq!(first["stopReason"], "end_turn", "{first:#}");
    assert_eq!(
        texts(&first["updates"], "agent_message_chunk"),
        "data.csv has 3 lines."
    );
    let call = of_kind(&first["updates"], "tool_call");
    assert_eq!(call.len(), 1, "{first:#}");
    assert_eq!(call[0]["kind"], "execute");
    assert_eq!(call[0]["rawInput"]["code"], "wc -l < data.csv");
    assert_eq!(call[0]["toolCallId"], "run-1");
    let updates = of_kind(&first["updates"], "tool_call_update");
    let last = updates.last().unwrap();
    assert_eq!(last["status"], "completed", "{first:#}");
    assert_eq!(last["rawOutput"]["exit_code"], 0);
    assert_eq!(last["rawOutput"]["output"].as_str().unwrap().trim(), "3");
    assert!(
        last["content"].to_string().contains("wc -l < data.csv"),
        "the code is the tool call's content: {last}"
    );
    assert!(
        updates.iter().any(|u| u["status"] == "in_progress"),
        "{first:#}"
    );
    let usage = of_kind(&first["updates"], "usage_update");
    assert_eq!(usage.last().unwrap()["used"], 128, "{first:#}");
    assert_eq!(usage.last().unwrap()["size"], 32000);

    // The permissions asked: the code, with the four kinds of answer.
    let permissions = report["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 2, "{report:#}");
    assert_eq!(permissions[0]["sessionId"], session);
    assert_eq!(permissions[0]["toolCall"]["toolCallId"], "run-1");
    let kinds: Vec<&str> = permissions[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );

    // The second prompt: rejected, not run, the model told.
    let second = &report["second"];
    assert_eq!(second["stopReason"], "end_turn");
    let last = of_kind(&second["updates"], "tool_call_update");
    assert_eq!(last.last().unwrap()["status"], "failed", "{second:#}");
    assert!(work.join("data.csv").exists(), "rejected code did not run");
    let told = env.server.model_requests()[3].body.to_string();
    assert!(told.contains("declined"), "{told}");

    // Modes: a change is confirmed; an unknown one is an error that names it.
    assert_eq!(
        of_kind(&report["modeUpdates"], "current_mode_update")[0]["currentModeId"],
        "ask"
    );
    assert_eq!(report["badMode"]["code"], -32602, "{report:#}");
    assert!(report["badMode"].to_string().contains("yolo"));

    // The model is a setting the editor can change: the next request asks
    // the new one.
    assert_eq!(report["configOptions"][0]["id"], "model", "{report:#}");
    assert_eq!(report["configOptions"][0]["category"], "model");
    assert_eq!(report["configOptions"][0]["currentValue"], "mock-model");
    assert_eq!(
        report["setModel"]["configOptions"][0]["currentValue"],
        "mock-model-2"
    );
    assert_eq!(
        texts(&report["third"]["updates"], "agent_message_chunk"),
        "The second one."
    );
    let requests = env.server.model_requests();
    assert_eq!(requests[4].body["model"], "mock-model-2");
    assert_eq!(requests[3].body["model"], "mock-model");

    // Cancelled while its code ran: the run stopped, the prompt too.
    let cancelled = &report["cancelled"];
    assert_eq!(cancelled["stopReason"], "cancelled", "{cancelled:#}");
    let last = of_kind(&cancelled["updates"], "tool_call_update");
    assert_eq!(last.last().unwrap()["status"], "failed", "{cancelled:#}");
    assert_eq!(last.last().unwrap()["rawOutput"]["exit_code"], 130);

    // Loaded again: the conversation replayed, then a prompt that fails
    // with the server's words.
    let replayed = &report["replayed"];
    assert!(
        texts(replayed, "user_message_chunk").contains("How many lines does data.csv have?"),
        "{replayed:#}"
    );
    assert!(texts(replayed, "agent_message_chunk").contains("data.csv has 3 lines."));
    assert!(
        report["failed"]
            .to_string()
            .contains("quota exceeded for this key"),
        "{report:#}"
    );
}

/// Malformed input gets a JSON-RPC error and the server goes on serving
/// (no client library needed: lines written by hand).
#[tokio::test]
async fn malformed_acp_input_is_answered_and_the_server_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let env = TestEnv::new().await;
    let mut cmd = env.command(&["acp"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    stdin.write_all(b"{this is not json\n").await.unwrap();
    let error = next().await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let mut send = async |line: &str| {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
    };
    let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}"#;
    send(prompt).await;
    let early = next().await;
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(early.to_string().contains("initialization"), "{early}");
    send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}"#).await;
    let init = next().await;
    assert_eq!(init["id"], 2);
    assert_eq!(init["result"]["agentInfo"]["name"], "oi", "{init}");
    send(&prompt.replace("\"id\":1", "\"id\":3")).await;
    let unknown = next().await;
    assert_eq!(unknown["id"], 3);
    assert!(
        unknown["error"].to_string().contains("no session `nope`"),
        "{unknown}"
    );
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

/// An editor's `mcpServers` (here: a stdio server written with the
/// official MCP Python SDK, and an SSE one oi does not speak) are started
/// with the session, and their tools are the model's.
#[tokio::test]
async fn an_editors_mcp_servers_are_started_with_the_session() {
    let Some(prefix) = oi_testkit::npm_package("@agentclientprotocol/sdk") else {
        return;
    };
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let env = TestEnv::new().await;
    let work = env.cwd.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    env.server
        .push(Reply::tool_calls(vec![MockToolCall::new(
            "mcp__tools__add",
            serde_json::json!({"a": 2, "b": 3}),
        )]))
        .push(Reply::text("2 + 3 = 5."));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp/drive.mjs");
    let mut cmd = env.command_wrapped(&["node", script], &[]);
    cmd.env("OI_ACP_SDK_DIR", &prefix)
        .env("OI_BIN", env!("CARGO_BIN_EXE_interpreter"))
        .env("WORK", &work)
        .env("OI_ACP_SCENARIO", "mcp")
        .env("MCP_PYTHON", &python)
        .env(
            "MCP_SERVER",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp-sdk/server.py"),
        );
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!("{e}: {out:?}");
    });
    assert_eq!(
        report["init"]["agentCapabilities"]["mcpCapabilities"]["http"], true,
        "{report:#}"
    );
    assert!(
        report["notes"]
            .to_string()
            .contains("`old` was not started"),
        "{report:#}"
    );
    let mcp = &report["mcp"];
    assert_eq!(mcp["stopReason"], "end_turn", "{mcp:#}");
    let requests = env.server.model_requests();
    let tools = requests[0].body["tools"].to_string();
    assert!(tools.contains("mcp__tools__add"), "{tools}");
    let updates = of_kind(&mcp["updates"], "tool_call_update");
    let last = updates.last().unwrap();
    assert_eq!(last["status"], "completed", "{mcp:#}");
    assert_eq!(last["rawOutput"]["output"].as_str().unwrap().trim(), "5");
    assert_eq!(texts(&mcp["updates"], "agent_message_chunk"), "2 + 3 = 5.");
}
