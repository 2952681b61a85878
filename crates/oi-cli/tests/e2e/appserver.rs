//! `interpreter app-server`: Codex's app-server protocol over stdio, driven
//! line by line against the mock model and real kernels — threads, turns,
//! items, approvals (risky code always asks), several threads at once,
//! malformed input answered with errors while the server keeps serving.

use std::process::Stdio;
use std::time::Duration;

use oi_testkit::Reply;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::support::TestEnv;

/// A client of the app-server: writes requests, reads every line.
struct Client {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
    /// Every message read, in order.
    seen: Vec<Value>,
}

impl Client {
    fn start(env: &TestEnv, args: &[&str]) -> Self {
        let mut all = args.to_vec();
        all.push("app-server");
        let mut cmd = env.command(&all);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 0,
            seen: Vec::new(),
        }
    }

    async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no message within 60 s; seen: {:#?}", self.seen))
            .unwrap()
            .unwrap_or_else(|| panic!("the server closed stdout; seen: {:#?}", self.seen));
        let message: Value = serde_json::from_str(&line).unwrap();
        assert!(message.get("jsonrpc").is_none(), "{message}");
        self.seen.push(message.clone());
        message
    }

    /// Sends a request and reads until its answer (what came before it
    /// stays in `seen`).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({ "id": id, "method": method, "params": params }).to_string();
        self.send_line(&line).await;
        self.answer(json!(id)).await
    }

    async fn answer(&mut self, id: Value) -> Value {
        loop {
            let message = self.next().await;
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Reads until a notification `method` (or a server request of that
    /// method) arrives, and returns it.
    async fn until(&mut self, method: &str) -> Value {
        loop {
            let message = self.next().await;
            if message["method"] == method {
                return message;
            }
        }
    }

    /// The first notification (or server request) `method` seen so far,
    /// which may have come while an answer was awaited; else the next.
    async fn seen_or_until(&mut self, method: &str) -> Value {
        match self.seen.iter().find(|m| m["method"] == method) {
            Some(message) => message.clone(),
            None => self.until(method).await,
        }
    }

    /// The notifications (and server requests) seen so far, by method.
    fn methods(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect()
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

fn text_input(text: &str) -> Value {
    json!([{ "type": "text", "text": text }])
}

#[tokio::test]
async fn a_thread_runs_turns_with_items_and_the_client_approves() {
    let env = TestEnv::new().await;
    let work = env.cwd.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut client = Client::start(&env, &[]);

    // Malformed input is answered, and the server goes on.
    client.send_line("{not json").await;
    let error = client.next().await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null);
    let early = client.request("thread/list", json!({})).await;
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("send `initialize` first"),
        "{early}"
    );

    let init = client
        .request(
            "initialize",
            json!({ "clientInfo": { "name": "test", "version": "1" } }),
        )
        .await;
    assert_eq!(init["result"]["serverInfo"]["name"], "oi", "{init}");
    assert!(
        init["result"]["userAgent"]
            .as_str()
            .unwrap()
            .starts_with("oi/")
    );
    client.send_line(r#"{"method": "initialized"}"#).await;

    let unknown = client.request("thread/fork", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let relative = client
        .request("thread/start", json!({ "cwd": "work" }))
        .await;
    assert_eq!(relative["error"]["data"]["field"], "cwd", "{relative}");

    let started = client
        .request(
            "thread/start",
            json!({ "cwd": work, "approvalPolicy": "untrusted", "sandbox": "workspace-write" }),
        )
        .await;
    let thread = &started["result"]["thread"];
    let thread_id = thread["id"].as_str().unwrap().to_owned();
    assert_eq!(started["result"]["model"], "mock-model", "{started}");
    assert_eq!(started["result"]["approvalPolicy"], "untrusted");
    assert_eq!(started["result"]["sandbox"]["type"], "workspaceWrite");
    assert_eq!(started["result"]["cwd"], work.display().to_string());
    assert_eq!(thread["status"]["type"], "idle");
    let notified = client.until("thread/started").await;
    assert_eq!(notified["params"]["thread"]["id"], thread_id.as_str());

    // Turn 1: code that the client approves.
    env.server
        .push(Reply::execute("python", "print(6 * 7)").usage(50, 5))
        .push(Reply::text("It is 42.").usage(60, 4));
    let turn = client
        .request(
            "turn/start",
            json!({ "threadId": thread_id, "input": text_input("what is 6*7?") }),
        )
        .await;
    let turn_id = turn["result"]["turn"]["id"].as_str().unwrap().to_owned();
    assert_eq!(turn["result"]["turn"]["status"], "inProgress", "{turn}");
    let busy = client
        .request(
            "turn/start",
            json!({ "threadId": thread_id, "input": text_input("and more") }),
        )
        .await;
    assert!(
        busy["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{busy}"
    );
    // The approval is asked as soon as the turn runs: it may come before
    // the answer to the second turn/start.
    let approval = client
        .seen_or_until("item/commandExecution/requestApproval")
        .await;
    assert_eq!(approval["params"]["threadId"], thread_id.as_str());
    assert_eq!(approval["params"]["turnId"], turn_id.as_str());
    assert_eq!(approval["params"]["command"], "print(6 * 7)");
    let run_item = approval["params"]["itemId"].clone();
    client
        .send_line(&json!({ "id": approval["id"], "result": { "decision": "accept" } }).to_string())
        .await;
    let completed = client.until("turn/completed").await;
    assert_eq!(completed["params"]["turn"]["id"], turn_id.as_str());
    assert_eq!(
        completed["params"]["turn"]["status"], "completed",
        "{completed}"
    );

    let items: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "item/completed")
        .map(|m| &m["params"]["item"])
        .collect();
    let user = items.iter().find(|i| i["type"] == "userMessage").unwrap();
    assert_eq!(user["content"][0]["text"], "what is 6*7?");
    let run = items
        .iter()
        .find(|i| i["type"] == "commandExecution")
        .unwrap();
    assert_eq!(run["id"], run_item);
    assert_eq!(run["command"], "print(6 * 7)");
    assert_eq!(run["aggregatedOutput"], "42\n");
    assert_eq!(run["exitCode"], 0);
    assert_eq!(run["status"], "completed");
    assert_eq!(run["language"], "python");
    let answer = items.iter().find(|i| i["type"] == "agentMessage").unwrap();
    assert_eq!(answer["text"], "It is 42.");
    // The answer streamed into the item it completed as.
    let deltas: String = client
        .seen
        .iter()
        .filter(|m| {
            m["method"] == "item/agentMessage/delta" && m["params"]["itemId"] == answer["id"]
        })
        .map(|m| m["params"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "It is 42.");
    let output: String = client
        .seen
        .iter()
        .filter(|m| m["method"] == "item/commandExecution/outputDelta")
        .map(|m| m["params"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(output, "42\n");
    let usage = client
        .seen
        .iter()
        .rfind(|m| m["method"] == "thread/tokenUsage/updated")
        .unwrap();
    assert_eq!(usage["params"]["tokenUsage"]["total"]["inputTokens"], 110);
    assert_eq!(usage["params"]["tokenUsage"]["last"]["outputTokens"], 4);
    // The order a client relies on: the turn starts, then its items, then
    // it completes.
    let methods = client.methods();
    let at = |m: &str| methods.iter().position(|x| x == m).unwrap();
    assert!(at("turn/started") < at("item/started"));
    assert!(at("item/completed") < at("turn/completed"));

    // Turn 2: the client declines; the turn goes on and completes.
    env.server
        .push(Reply::execute("shell", "echo unwanted > unwanted.txt"))
        .push(Reply::text("Fine, I did not."));
    client
        .request(
            "turn/start",
            json!({ "threadId": thread_id, "input": text_input("write a file") }),
        )
        .await;
    let approval = client.until("item/commandExecution/requestApproval").await;
    client
        .send_line(
            &json!({ "id": approval["id"], "result": { "decision": "decline" } }).to_string(),
        )
        .await;
    let declined = client.until("item/completed").await;
    assert_eq!(
        declined["params"]["item"]["status"], "declined",
        "{declined}"
    );
    let completed = client.until("turn/completed").await;
    assert_eq!(completed["params"]["turn"]["status"], "completed");
    assert!(!work.join("unwanted.txt").exists());

    // Every item that started completed, once.
    let ids = |method: &str| {
        let mut ids: Vec<String> = client
            .seen
            .iter()
            .filter(|m| m["method"] == method)
            .map(|m| m["params"]["item"]["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids("item/started"), ids("item/completed"));

    // The thread is listed, and read back with its turns.
    let list = client.request("thread/list", json!({ "cwd": work })).await;
    let data = list["result"]["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{list}");
    assert_eq!(data[0]["id"], thread_id.as_str());
    assert_eq!(data[0]["status"]["type"], "idle");
    assert_eq!(data[0]["preview"], "what is 6*7?");
    let read = client
        .request(
            "thread/read",
            json!({ "threadId": thread_id, "includeTurns": true }),
        )
        .await;
    let turns = read["result"]["thread"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{read}");
    assert_eq!(turns[0]["items"][0]["content"][0]["text"], "what is 6*7?");

    assert_eq!(client.close().await, 0);
}

#[tokio::test]
async fn risky_code_asks_even_on_request_and_never_means_not_run() {
    let env = TestEnv::new().await;
    let mut client = Client::start(&env, &[]);
    client
        .request("initialize", json!({ "clientInfo": { "name": "t" } }))
        .await;
    let cwd = env.cwd.path().display().to_string();
    let asks = client
        .request(
            "thread/start",
            json!({ "cwd": cwd, "approvalPolicy": "on-request" }),
        )
        .await["result"]["thread"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let never = client
        .request(
            "thread/start",
            json!({ "cwd": cwd, "approvalPolicy": "never" }),
        )
        .await["result"]["thread"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // on-request: harmless code runs without asking; risky code asks.
    env.server
        .push(Reply::execute("shell", "echo harmless"))
        .push(Reply::execute("shell", "rm -rf ~/precious"));
    client
        .request(
            "turn/start",
            json!({ "threadId": asks, "input": text_input("clean up") }),
        )
        .await;
    let approval = client.until("item/commandExecution/requestApproval").await;
    assert_eq!(approval["params"]["command"], "rm -rf ~/precious");
    assert!(
        approval["params"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("risky:"),
        "{approval}"
    );
    client
        .send_line(&json!({ "id": approval["id"], "result": { "decision": "cancel" } }).to_string())
        .await;
    let completed = client.until("turn/completed").await;
    assert_eq!(
        completed["params"]["turn"]["status"], "interrupted",
        "cancel declines and stops the turn: {completed}"
    );
    let asked: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "item/commandExecution/requestApproval")
        .collect();
    assert_eq!(asked.len(), 1, "only the risky command was asked about");

    // never: nobody is asked, the risky command is not run, the model is
    // told.
    let seen_before = client.seen.len();
    env.server
        .push(Reply::execute("shell", "rm -rf ~/precious"))
        .push(Reply::text("I could not."));
    client
        .request(
            "turn/start",
            json!({ "threadId": never, "input": text_input("clean up") }),
        )
        .await;
    let completed = client.until("turn/completed").await;
    assert_eq!(completed["params"]["threadId"], never.as_str());
    assert_eq!(completed["params"]["turn"]["status"], "completed");
    assert!(
        !client.seen[seen_before..]
            .iter()
            .any(|m| m["method"] == "item/commandExecution/requestApproval"),
        "nobody is asked under `never`"
    );
    let declined = client.seen[seen_before..]
        .iter()
        .find(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
        })
        .unwrap();
    assert_eq!(declined["params"]["item"]["status"], "declined");
    let told = env.server.model_requests().last().unwrap().body.to_string();
    assert!(told.contains("approval"), "the model is told why: {told}");
    assert_eq!(client.close().await, 0);
}

#[tokio::test]
async fn threads_run_at_once_with_their_own_kernels() {
    let env = TestEnv::new().await;
    let mut client = Client::start(&env, &["-c", "approval=\"auto\""]);
    client
        .request("initialize", json!({ "clientInfo": { "name": "t" } }))
        .await;
    let cwd = env.cwd.path().display().to_string();
    let mut threads = Vec::new();
    for _ in 0..2 {
        let started = client.request("thread/start", json!({ "cwd": cwd })).await;
        threads.push(
            started["result"]["thread"]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_ne!(threads[0], threads[1]);
    // Each thread sets a variable in its kernel, then reads it back: the
    // kernels are apart. The slow first run keeps both turns open at once.
    env.server
        .push(Reply::execute(
            "python",
            "import time; x = 'first'; time.sleep(1)",
        ))
        .push(Reply::execute("python", "x = 'second'"))
        .push(Reply::text("set"))
        .push(Reply::text("set"));
    for thread in &threads {
        client
            .request(
                "turn/start",
                json!({ "threadId": thread, "input": text_input("set x") }),
            )
            .await;
    }
    let mut done = 0;
    while done < 2 {
        client.until("turn/completed").await;
        done += 1;
    }
    // Which thread's kernel holds which value depends on which request
    // the mock answered first; that they differ shows they are apart.
    let mut values = Vec::new();
    for thread in &threads {
        env.server
            .push(Reply::execute("python", "print(x)"))
            .push(Reply::text("read"));
        let before = client.seen.len();
        client
            .request(
                "turn/start",
                json!({ "threadId": thread, "input": text_input("print x") }),
            )
            .await;
        client.until("turn/completed").await;
        let printed: String = client.seen[before..]
            .iter()
            .filter(|m| {
                m["method"] == "item/commandExecution/outputDelta"
                    && m["params"]["threadId"] == thread.as_str()
            })
            .map(|m| m["params"]["delta"].as_str().unwrap())
            .collect();
        values.push(printed);
    }
    values.sort();
    assert_eq!(
        values,
        ["first\n", "second\n"],
        "each thread kept its own x"
    );
    assert_eq!(client.close().await, 0);
}

#[tokio::test]
async fn turn_interrupt_stops_running_code() {
    let env = TestEnv::new().await;
    let mut client = Client::start(&env, &["-c", "approval=\"auto\""]);
    client
        .request("initialize", json!({ "clientInfo": { "name": "t" } }))
        .await;
    let cwd = env.cwd.path().display().to_string();
    let thread =
        client.request("thread/start", json!({ "cwd": cwd })).await["result"]["thread"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
    env.server.push(Reply::execute(
        "python",
        "import time\nprint('going', flush=True)\ntime.sleep(60)",
    ));
    let turn = client
        .request(
            "turn/start",
            json!({ "threadId": thread, "input": text_input("wait a minute") }),
        )
        .await["result"]["turn"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    client.until("item/commandExecution/outputDelta").await;
    let wrong = client
        .request(
            "turn/interrupt",
            json!({ "threadId": thread, "turnId": "turn_nope" }),
        )
        .await;
    assert_eq!(wrong["error"]["data"]["field"], "turnId", "{wrong}");
    let answer = client
        .request(
            "turn/interrupt",
            json!({ "threadId": thread, "turnId": turn }),
        )
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    let completed = client.until("turn/completed").await;
    assert_eq!(
        completed["params"]["turn"]["status"], "interrupted",
        "{completed}"
    );
    let run = client
        .seen
        .iter()
        .find(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
        })
        .unwrap();
    assert_eq!(run["params"]["item"]["status"], "failed");
    assert_eq!(run["params"]["item"]["exitCode"], 130);
    assert_eq!(client.close().await, 0);
}

/// Regression: a client that left while the server waited for its answer
/// to an approval kept the server running (the waiting request held the
/// way out open).
#[tokio::test]
async fn a_client_that_leaves_during_an_approval_ends_the_server() {
    let env = TestEnv::new().await;
    let mut client = Client::start(&env, &[]);
    client
        .request("initialize", json!({ "clientInfo": { "name": "t" } }))
        .await;
    let cwd = env.cwd.path().display().to_string();
    let thread = client
        .request(
            "thread/start",
            json!({ "cwd": cwd, "approvalPolicy": "untrusted" }),
        )
        .await["result"]["thread"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.server.push(Reply::execute("shell", "echo hi"));
    client
        .request(
            "turn/start",
            json!({ "threadId": thread, "input": text_input("say hi") }),
        )
        .await;
    client.until("item/commandExecution/requestApproval").await;
    assert_eq!(client.close().await, 0);
}

/// Regression: stdin closing while a thread was still being set up left
/// that thread running and the server with it.
#[tokio::test]
async fn stdin_closing_during_a_thread_start_still_ends_the_server() {
    let env = TestEnv::new().await;
    let mut client = Client::start(&env, &[]);
    // Sent back to back, as a client that does not wait may.
    client
        .send_line(concat!(
            r#"{"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t"}}}"#,
            "\n",
            r#"{"id": 2, "method": "thread/start", "params": {}}"#
        ))
        .await;
    // Closed at once, without waiting for the answers: they still come,
    // and then the server ends.
    drop(client.stdin.take());
    let started = client.answer(json!(2)).await;
    let thread = started["result"]["thread"]["id"].clone();
    assert!(thread.is_string(), "{started}");
    // The thread was shut down (its kernels stopped), not left behind.
    let closed = client.until("thread/closed").await;
    assert_eq!(closed["params"]["threadId"], thread);
    assert_eq!(client.close().await, 0);
}

#[tokio::test]
async fn a_thread_gets_the_agents_md_files_of_its_own_cwd() {
    let env = TestEnv::new().await;
    let root = env.cwd.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::create_dir(root.join("pkg")).unwrap();
    std::fs::write(root.join("AGENTS.md"), "Root rule: use uv.\n").unwrap();
    std::fs::write(root.join("pkg/AGENTS.md"), "Package rule: tests in t/.\n").unwrap();
    let mut client = Client::start(&env, &[]);
    client
        .request("initialize", json!({ "clientInfo": { "name": "t" } }))
        .await;
    for (i, dir) in [root.join("pkg"), root.to_owned()].iter().enumerate() {
        let started = client
            .request("thread/start", json!({ "cwd": dir.display().to_string() }))
            .await;
        let thread = started["result"]["thread"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        env.server.push(Reply::text("ok"));
        client
            .request(
                "turn/start",
                json!({ "threadId": thread, "input": text_input("hi") }),
            )
            .await;
        client.until("turn/completed").await;
        let system = env.server.chat_requests()[i].messages()[0]["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(system.contains("Root rule: use uv."), "{system}");
        assert_eq!(system.contains("Package rule"), i == 0, "{system}");
    }
    assert_eq!(client.close().await, 0);
}
