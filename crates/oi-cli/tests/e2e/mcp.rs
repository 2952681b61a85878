//! `interpreter mcp-server`: the Model Context Protocol over stdio, driven
//! line by line against the mock model and real kernels — the tools and
//! their schemas, a task run to its answer, its session continued with
//! its variables, risky code held, bad input answered with errors while
//! the server keeps serving.

use std::process::Stdio;
use std::time::Duration;

use oi_testkit::Reply;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::support::TestEnv;

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

impl Client {
    async fn start(env: &TestEnv) -> Self {
        let mut cmd = env.command(&["mcp-server"]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut client = Self {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 0,
        };
        let init = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "e2e", "version": "1" }
                }),
            )
            .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "oi", "{init}");
        client
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await;
        client
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("no message within 60 s")
            .unwrap()
            .expect("the server closed stdout");
        serde_json::from_str(&line).unwrap()
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string(),
        )
        .await;
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self
            .request(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await;
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{answer}"))
    }

    async fn close(mut self) -> i32 {
        drop(self.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("the server did not end within 30 s of stdin closing")
            .unwrap();
        status.code().unwrap_or(-1)
    }
}

#[tokio::test]
async fn a_task_runs_to_its_answer_and_its_session_continues() {
    let env = TestEnv::new().await;
    let work = env.cwd.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut client = Client::start(&env).await;

    let tools = client.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["interpreter", "interpreter-reply"]);
    assert_eq!(
        tools["result"]["tools"][0]["inputSchema"]["required"],
        json!(["prompt"])
    );

    env.server
        .push(Reply::execute(
            "python",
            "x = 6 * 7\nopen('answer.txt', 'w').write(str(x))\nprint(x)",
        ))
        .push(Reply::text("The answer is 42."));
    let result = client
        .call(
            "interpreter",
            json!({ "prompt": "work out 6 times 7", "cwd": work.display().to_string() }),
        )
        .await;
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(result["content"][0]["text"], "The answer is 42.");
    let structured = &result["structuredContent"];
    assert_eq!(structured["stop"]["type"], "done");
    assert_eq!(structured["runs"][0]["language"], "python");
    assert_eq!(structured["runs"][0]["status"], "ok");
    assert_eq!(
        structured["runs"][0]["output"].as_str().unwrap().trim(),
        "42"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("answer.txt")).unwrap(),
        "42",
        "the code ran in the given cwd"
    );
    let session = structured["sessionId"].as_str().unwrap().to_owned();

    // The reply runs in the same kernel: x is still there.
    env.server
        .push(Reply::execute("python", "print(x + 1)"))
        .push(Reply::text("43."));
    let result = client
        .call(
            "interpreter-reply",
            json!({ "sessionId": session, "prompt": "and one more?" }),
        )
        .await;
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(
        result["structuredContent"]["runs"][0]["output"]
            .as_str()
            .unwrap()
            .trim(),
        "43"
    );
    // The model saw the first task's conversation.
    let requests = env.server.chat_requests();
    let last = requests.last().unwrap().messages();
    assert!(
        last.iter()
            .any(|m| m.to_string().contains("work out 6 times 7")),
        "{last:?}"
    );
    assert_eq!(client.close().await, 0);
}

#[tokio::test]
async fn risky_code_is_not_run_and_the_model_is_told() {
    let env = TestEnv::new().await;
    let mut client = Client::start(&env).await;
    env.server
        .push(Reply::execute("shell", "rm -rf ~"))
        .push(Reply::text("I could not do that."));
    let result = client
        .call("interpreter", json!({ "prompt": "clean my home" }))
        .await;
    let run = &result["structuredContent"]["runs"][0];
    assert_eq!(run["status"], "not_run", "{result:#}");
    assert!(
        run["output"].as_str().unwrap().contains("approval"),
        "{result:#}"
    );
    let requests = env.server.chat_requests();
    let told = requests[1].messages().last().unwrap().to_string();
    assert!(
        told.contains("not run") || told.contains("approv"),
        "{told}"
    );
    assert_eq!(client.close().await, 0);
}

#[tokio::test]
async fn bad_input_gets_errors_and_the_server_keeps_serving() {
    let env = TestEnv::new().await;
    let mut client = Client::start(&env).await;

    client.send("this is not json").await;
    let parse = client.next().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);

    let answer = client
        .request(
            "tools/call",
            json!({ "name": "interpreter", "arguments": { "prompt": "x", "cwd": "relative/dir" } }),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["field"], "cwd");

    let answer = client
        .request(
            "tools/call",
            json!({ "name": "interpreter-reply", "arguments": { "sessionId": "nope", "prompt": "x" } }),
        )
        .await;
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no session `nope`"),
        "{answer}"
    );

    // A configuration the session cannot start with: a tool error that
    // says what and where, and nothing sent to the model.
    let result = client
        .call(
            "interpreter",
            json!({ "prompt": "x", "config": { "max_turns": 0 } }),
        )
        .await;
    assert_eq!(result["isError"], true, "{result:#}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("config.max_turns"), "{text}");
    assert!(env.server.requests().is_empty());

    // Still serving.
    let tools = client.request("tools/list", json!({})).await;
    assert!(tools["result"]["tools"].is_array());
    assert_eq!(client.close().await, 0);
}

#[tokio::test]
async fn a_cancelled_call_interrupts_its_task() {
    let env = TestEnv::new().await;
    let work = env.cwd.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut client = Client::start(&env).await;
    env.server
        .push(Reply::execute(
            "python",
            "import time\nprint('started', flush=True)\ntime.sleep(8)\nopen('finished.txt', 'w').write('x')",
        ))
        .push(Reply::text("unused"));
    client.next_id += 1;
    let id = client.next_id;
    client
        .send(
            &json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "interpreter", "arguments": {
                    "prompt": "wait a while", "cwd": work.display().to_string() } }
            })
            .to_string(),
        )
        .await;
    // The run is under way once the model was asked and a moment passed.
    for _ in 0..100 {
        if !env.server.chat_requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    client
        .send(
            &json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": { "requestId": id, "reason": "the user changed their mind" }
            })
            .to_string(),
        )
        .await;
    // The server goes on serving at once; the run stopped: past the time
    // it would have taken, its file was never written and the model was
    // not asked again.
    let tools = client.request("tools/list", json!({})).await;
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(
        !work.join("finished.txt").exists(),
        "the run was interrupted"
    );
    assert_eq!(env.server.chat_requests().len(), 1, "the task ended");
    assert_eq!(client.close().await, 0);
}
