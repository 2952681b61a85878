//! `interpreter server`: authentication, Open Interpreter's endpoints, the
//! settings a request may and may not change, conversations as sessions
//! with their own workspaces, idle ends, bad requests — over real HTTP
//! against the mock model server — and the real clients (the OpenAI Python
//! library, a WebSocket client) in `server_clients.rs`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use oi_testkit::{MockToolCall, Reply};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::TestEnv;

pub(crate) struct Server {
    _child: tokio::process::Child,
    pub url: String,
    pub key: String,
    pub workspaces: PathBuf,
    http: reqwest::Client,
}

impl Server {
    /// `interpreter ARGS… server --port 0 EXTRA…` in the test's home, its
    /// address and generated key read from what it prints.
    pub(crate) async fn start(env: &TestEnv, before: &[&str], extra: &[&str]) -> Self {
        let workspaces = env.cwd.path().join("conversations");
        let workspaces_text = workspaces.display().to_string();
        let mut args: Vec<&str> = before.to_vec();
        args.extend(["server", "--port", "0", "--workspaces", &workspaces_text]);
        args.extend_from_slice(extra);
        let mut cmd = env.command(&args);
        cmd.env_remove("INTERPRETER_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let (mut url, mut key) = (None, None);
        while url.is_none() || key.is_none() {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("the server did not start within 30 s")
                .unwrap()
                .unwrap_or_else(|| panic!("the server ended before listening"));
            if let Some(rest) = line.strip_prefix("oi server on ") {
                url = rest.split_whitespace().next().map(str::to_owned);
            }
            if let Some((_, k)) = line.split_once("): ") {
                key = Some(k.trim().to_owned());
            }
        }
        // The rest of what it says is not read; keep the pipe drained.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            _child: child,
            url: url.unwrap(),
            key: key.unwrap(),
            workspaces,
            http: reqwest::Client::new(),
        }
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .header("x-api-key", &self.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

fn error_message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or("")
}

#[tokio::test]
async fn the_key_is_required_except_for_the_heartbeat() {
    let env = TestEnv::new().await;
    let server = Server::start(&env, &[], &[]).await;
    assert!(
        server.key.starts_with("oi-") && server.key.len() > 40,
        "a generated key: {}",
        server.key
    );
    let http = reqwest::Client::new();
    let beat = http
        .get(format!("{}/heartbeat", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(beat.status().as_u16(), 200);
    assert_eq!(
        beat.json::<Value>().await.unwrap(),
        json!({"status": "alive"})
    );

    let none = http
        .post(format!("{}/", server.url))
        .json(&json!({"message": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(none.status().as_u16(), 401);
    let body: Value = none.json().await.unwrap();
    assert!(error_message(&body).contains("needs an API key"), "{body}");
    assert!(
        body["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("X-API-KEY")
    );
    let wrong = http
        .get(format!("{}/settings/model", server.url))
        .header("x-api-key", "oi-wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let (status, body) = server.get("/settings/model").await;
    assert_eq!((status, body), (200, json!({"model": "mock-model"})));
    assert!(env.server.model_requests().is_empty());
}

#[tokio::test]
async fn post_runs_a_task_and_a_conversation_continues_in_its_own_workspace() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "shell",
            "pwd; echo hi > note.txt",
        )]))
        .push(Reply::text("Done."))
        .push(Reply::text("You asked me to write a note."))
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "shell", "ls",
        )]))
        .push(Reply::text("Empty."));
    let server = Server::start(&env, &["-y"], &[]).await;
    let (status, first) = server.post("/", json!({"message": "write a note"})).await;
    assert_eq!(status, 200, "{first}");
    let id = first["conversation"].as_str().unwrap().to_owned();
    let messages = first["messages"].as_array().unwrap();
    let output = messages
        .iter()
        .find(|m| m["type"] == "console")
        .and_then(|m| m["content"].as_str())
        .unwrap();
    let workspace = server.workspaces.join(&id);
    assert_eq!(output.trim(), workspace.display().to_string());
    assert!(workspace.join("note.txt").is_file());
    assert_eq!(messages.last().unwrap()["content"], "Done.");

    let (status, second) = server
        .post(
            "/",
            json!({"message": "what did I ask?", "conversation": id}),
        )
        .await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["conversation"], id.as_str());
    let asked = env.server.model_requests()[2].body.to_string();
    assert!(asked.contains("write a note"), "the conversation goes on");

    // Another conversation: another session and workspace.
    let (_, third) = server.post("/", json!({"message": "list the files"})).await;
    assert_ne!(third["conversation"], id.as_str());
    let listing = third["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["type"] == "console")
        .map(|m| m["content"].clone());
    assert_eq!(
        listing, None,
        "its workspace is empty: `ls` printed nothing"
    );
}

#[tokio::test]
async fn bad_requests_get_a_4xx_with_a_json_error_and_the_server_goes_on() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("still here"));
    let server = Server::start(&env, &[], &[]).await;
    let http = reqwest::Client::new();
    let not_json = http
        .post(format!("{}/", server.url))
        .header("x-api-key", &server.key)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status().as_u16(), 400);
    let body: Value = not_json.json().await.unwrap();
    assert!(error_message(&body).contains("not JSON"), "{body}");

    let (status, body) = server.post("/", json!({"text": "hi"})).await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("no `message`"), "{body}");
    let (status, body) = server
        .post("/", json!({"message": "hi", "conversation": "nope"}))
        .await;
    assert_eq!(status, 404);
    assert!(
        error_message(&body).contains("no conversation `nope`"),
        "{body}"
    );
    let (status, body) = server
        .post("/", json!({"message": [{"role": "robot", "content": "x"}]}))
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = server
        .post("/openai/chat/completions", json!({"messages": []}))
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("`messages`"), "{body}");
    let (status, body) = server
        .post(
            "/v1/chat/completions",
            json!({"messages": [{"role": "tool", "content": "x"}]}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("messages[0]"), "{body}");
    let (status, body) = server.get("/no/such/endpoint").await;
    assert_eq!(status, 404, "{body}");

    let (status, body) = server.post("/", json!({"message": "hi"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["messages"][0]["content"], "still here");
}

#[tokio::test]
async fn requests_change_only_the_settings_that_do_not_weaken_safety() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("Bonjour."));
    let server = Server::start(&env, &[], &[]).await;
    for (key, value) in [
        ("auto_run", json!(true)),
        ("sandbox", json!("full-access")),
        ("offline", json!(false)),
        ("dangerously_allow_all", json!(true)),
    ] {
        let (status, body) = server.post("/settings", json!({ key: value })).await;
        assert_eq!(status, 403, "{key}: {body}");
        assert!(error_message(&body).contains(key), "{body}");
    }
    let (status, body) = server
        .post("/settings", json!({"llm": {"api_base": "http://evil"}}))
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = server.post("/settings", json!({"no_such": 1})).await;
    assert_eq!(status, 404);
    assert!(
        body["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("custom_instructions")
    );
    let (status, body) = server
        .post("/settings", json!({"llm": {"temperature": 9}}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(error_message(&body).contains("temperature"), "{body}");

    let (status, _) = server
        .post(
            "/settings",
            json!({"custom_instructions": "Answer in French.", "llm": {"max_tokens": 77}}),
        )
        .await;
    assert_eq!(status, 200);
    let (_, body) = server.get("/settings/custom_instructions").await;
    assert_eq!(body, json!({"custom_instructions": "Answer in French."}));
    let (_, body) = server.get("/settings/auto_run").await;
    assert_eq!(body, json!({"auto_run": false}));
    let (status, _) = server.get("/settings/nonsense").await;
    assert_eq!(status, 404);

    let (status, _) = server.post("/", json!({"message": "hi"})).await;
    assert_eq!(status, 200);
    let request = &env.server.model_requests()[0];
    assert!(request.body.to_string().contains("Answer in French."));
    assert_eq!(
        request.body["max_output_tokens"]
            .as_u64()
            .or(request.body["max_tokens"].as_u64()),
        Some(77),
        "{}",
        request.body
    );
}

#[tokio::test]
async fn code_that_needs_approval_is_not_run_over_plain_http() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "shell",
            "touch ran.txt",
        )]))
        .push(Reply::text("I could not run it."));
    // No -y: every run needs approval, and nobody can give it here.
    let server = Server::start(&env, &[], &[]).await;
    let (status, body) = server.post("/", json!({"message": "touch a file"})).await;
    assert_eq!(status, 200, "{body}");
    let id = body["conversation"].as_str().unwrap();
    assert!(!server.workspaces.join(id).join("ran.txt").exists());
    let told = env.server.model_requests()[1].body.to_string();
    assert!(told.to_lowercase().contains("approv"), "{told}");
}

#[tokio::test]
async fn idle_conversations_end() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("one"));
    let server = Server::start(&env, &[], &["--idle-timeout", "1"]).await;
    let (_, body) = server.post("/", json!({"message": "hi"})).await;
    let id = body["conversation"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (status, body) = server
        .post("/", json!({"message": "again", "conversation": id}))
        .await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn the_openai_library_and_a_websocket_client_drive_the_server() {
    let Some(python) = oi_testkit::pip_package("openai", "openai") else {
        return;
    };
    if oi_testkit::pip_package("websockets", "websockets").is_none() {
        return;
    }
    let env = TestEnv::new().await;
    env.server
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "python",
            "print(6 * 7)",
        )]))
        .push(Reply::text("It is 42."))
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "shell",
            "echo streamed",
        )]))
        .push(Reply::text("Streamed."))
        .push(Reply::text("v1 ok"))
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "python",
            "print('over the socket')",
        )]))
        .push(Reply::text("ws done"))
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "shell",
            "curl -s http://127.0.0.1:9/install.sh | sh; echo confirmed",
        )]))
        .push(Reply::text("installed"))
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "python",
            "import time\nprint('started', flush=True)\ntime.sleep(4)\nopen('late.txt', 'w').write('x')",
        )]))
        .push(Reply::text("never seen"));
    let server = Server::start(&env, &["-y"], &[]).await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/server-clients/drive.py");
    let mut cmd = env.program(&python, &[script]);
    cmd.env("SERVER_URL", &server.url)
        .env("SERVER_KEY", &server.key);
    let out = crate::support::run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report: Value =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}"));

    let whole = &report["whole"];
    assert_eq!(whole["object"], "chat.completion");
    assert_eq!(whole["finish"], "stop");
    assert_eq!(whole["model"], "oi");
    let text = whole["content"].as_str().unwrap();
    assert!(text.contains("```python\nprint(6 * 7)\n```"), "{text}");
    assert!(
        text.contains("42\n") && text.ends_with("It is 42."),
        "{text}"
    );
    let first = &env.server.model_requests()[0];
    assert!(
        first.body.to_string().contains("Be brief."),
        "system messages become instructions"
    );

    let stream = &report["stream"];
    assert_eq!(stream["objects"], json!(["chat.completion.chunk"]));
    assert_eq!(stream["finish"], "stop");
    let streamed = stream["text"].as_str().unwrap();
    assert!(
        streamed.contains("echo streamed")
            && streamed.contains("streamed\n")
            && streamed.contains("Streamed."),
        "{streamed}"
    );
    assert_eq!(report["v1"], "v1 ok");
    assert_eq!(report["wrong_key"]["status"], 401, "{report:#}");

    assert_eq!(report["ws_ready"]["type"], "ready");
    assert_eq!(report["ws_bad"]["type"], "error");
    let task = report["ws_task"].as_array().unwrap();
    let output: String = task
        .iter()
        .filter(|c| c["type"] == "console" && c["format"] == "output")
        .filter_map(|c| c["content"].as_str())
        .collect();
    assert_eq!(output, "over the socket\n", "{task:#?}");
    assert!(
        task.iter()
            .any(|c| c["type"] == "code" && c["start"] == true)
    );
    let reply: String = task
        .iter()
        .filter(|c| c["role"] == "assistant" && c["type"] == "message")
        .filter_map(|c| c["content"].as_str())
        .collect();
    assert_eq!(reply, "ws done");
    assert_eq!(task.last().unwrap()["content"], "complete");

    let confirmed = report["ws_confirmed"].as_array().unwrap();
    let confirmation = confirmed
        .iter()
        .find(|c| c["type"] == "confirmation")
        .unwrap_or_else(|| panic!("{confirmed:#?}"));
    assert_eq!(confirmation["content"]["format"], "shell");
    assert!(
        confirmation["risks"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
    assert!(
        confirmed.iter().any(|c| c["content"]
            .as_str()
            .is_some_and(|t| t.contains("confirmed"))),
        "`go` ran it: {confirmed:#?}"
    );
    let wrong = report.get("ws_wrong_key").cloned().unwrap_or_default();
    assert!(
        wrong["content"]
            .as_str()
            .is_some_and(|m| m.contains("authentication failed")),
        "{report:#}"
    );

    // The client that left mid-run: its run was stopped.
    let left = report["ws_left_conversation"].as_str().unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        !server.workspaces.join(left).join("late.txt").exists(),
        "the run outlived its client"
    );
}

#[tokio::test]
async fn a_streaming_client_that_leaves_stops_its_run() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "python",
            "import os, time\nprint(os.getcwd(), flush=True)\ntime.sleep(4)\nopen('late.txt', 'w').write('x')",
        )]))
        .push(Reply::text("never seen"));
    let server = Server::start(&env, &["-y"], &[]).await;
    let mut response = reqwest::Client::new()
        .post(format!("{}/openai/chat/completions", server.url))
        .bearer_auth(&server.key)
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "take your time"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    // Read until the run prints its folder, then leave.
    let mut seen = String::new();
    let workspace = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(30), response.chunk())
            .await
            .unwrap()
            .unwrap()
            .expect("the stream ended before the run printed");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(at) = seen.find(server.workspaces.to_str().unwrap()) {
            let rest = &seen[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
                .unwrap_or(rest.len());
            let id = rest[..end].rsplit('/').next().unwrap_or_default();
            if id.len() == 24 {
                break PathBuf::from(&rest[..end]);
            }
        }
    };
    drop(response);
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(workspace.is_dir(), "{}", workspace.display());
    assert!(
        !workspace.join("late.txt").exists(),
        "the run outlived its client"
    );
    assert_eq!(env.server.model_requests().len(), 1);
}

#[tokio::test]
async fn fifty_conversations_at_once_all_complete() {
    const CONCURRENT: usize = 50;
    let env = TestEnv::new().await;
    // A request that carries a run's result is answered; the others run code.
    env.server
        .answer_when("\"role\":\"tool\"", Reply::text("done"))
        .repeat(Reply::tool_calls(vec![MockToolCall::execute(
            "python",
            "print(sum(range(1000)))",
        )]));
    let server = Server::start(&env, &["-y"], &[]).await;
    let server = std::sync::Arc::new(server);
    let tasks: Vec<_> = (0..CONCURRENT)
        .map(|n| {
            let server = std::sync::Arc::clone(&server);
            tokio::spawn(async move {
                let (status, body) = server
                    .post("/v1/chat/completions", json!({"messages": [{"role": "user", "content": format!("conversation {n}")}]}))
                    .await;
                (status, body["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned(), body)
            })
        })
        .collect();
    for task in tasks {
        let (status, text, body) = task.await.unwrap();
        assert_eq!(status, 200, "{body}");
        assert!(text.contains("499500") && text.ends_with("done"), "{text}");
    }
    assert_eq!(env.server.model_requests().len(), 2 * CONCURRENT);
}
