//! MCP servers as tools of a session, against a real server written with
//! the official MCP Python SDK (`tests/mcp-sdk/server.py`, `mcp` from PyPI
//! as `.ci/pip` pins it): on stdio and on streamable HTTP, in the native
//! harness (tools beside `execute`) and the markdown one (the Python
//! `mcp_tools` module); approvals by the read-only annotation; results,
//! errors and images back to the model; a server that fails reported in one
//! line; files a tool changes checkpointed and undone.

use oi_testkit::{MockToolCall, Reply};
use serde_json::{Value, json};

use crate::support::{TestEnv, run_command};

const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp-sdk/server.py");

/// The user configuration with `[mcp_servers]` added to the mock model's.
fn configure(env: &TestEnv, servers: &str) {
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{}\"\n\n[models.\"mock-model\"]\nvision = true\n\n{servers}",
        env.server.base_url()
    ));
}

/// `[mcp_servers.NAME]` for the test server on stdio, run by `python`.
fn stdio_server(name: &str, python: &str) -> String {
    format!("[mcp_servers.{name}]\ncommand = \"{python}\"\nargs = [\"{SERVER}\"]\n")
}

/// The messages of the warning events.
fn warnings(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e["type"] == "warning")
        .filter_map(|e| e["message"].as_str())
        .collect()
}

fn call(name: &str, arguments: Value) -> Reply {
    Reply::tool_calls(vec![MockToolCall::new(name, arguments)])
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The text of the tool message answering the `n`th request's call.
fn tool_result(env: &TestEnv, request: usize) -> String {
    let requests = env.server.model_requests();
    let last = requests[request].messages().last().unwrap().clone();
    assert_eq!(last["role"], "tool", "{last:#}");
    requests[request].last_message_text()
}

#[tokio::test]
async fn stdio_server_tools_are_offered_called_and_gated_by_the_read_only_hint() {
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let env = TestEnv::new().await;
    configure(
        &env,
        &format!(
            "{}disabled_tools = [\"secret\", \"crash\"]\n\n[mcp_servers.broken]\ncommand = \"{python}\"\nargs = [\"{SERVER}\", \"--crash\"]\n\n[mcp_servers.off]\ncommand = \"/nonexistent/never-started\"\nenabled = false\n",
            stdio_server("tools", &python)
        ),
    );
    env.server
        .push(call("mcp__tools__add", json!({"a": 2, "b": 3})))
        .push(call("mcp__tools__dot", json!({})))
        .push(call("mcp__tools__fail", json!({})))
        .push(call(
            "mcp__tools__write_note",
            json!({"name": "todo", "text": "milk"}),
        ))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", "--oi-json", "use the tools"]).await;
    // 4: done, but a step needed an approval nobody could give.
    assert_eq!(out.code, 4, "{out:?}");
    let events = events(&out.stdout);

    // The tools sit beside `execute`, named for the providers; the disabled
    // one is not offered; the server that failed is reported in one line.
    let requests = env.server.model_requests();
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "execute",
            "mcp__tools__add",
            "mcp__tools__write_note",
            "mcp__tools__dot",
            "mcp__tools__fail"
        ]
    );
    let add = &requests[0].body["tools"][1]["function"];
    assert!(
        add["description"]
            .as_str()
            .unwrap()
            .contains("Adds two whole numbers"),
        "{add:#}"
    );
    assert_eq!(add["parameters"]["required"], json!(["a", "b"]));
    let warnings = warnings(&events);
    let broken: Vec<&&str> = warnings.iter().filter(|w| w.contains("`broken`")).collect();
    assert_eq!(broken.len(), 1, "{warnings:?}");
    assert!(
        broken[0].contains("did not start")
            && broken[0].contains("cannot open the database")
            && !broken[0].contains('\n'),
        "{broken:?}"
    );
    assert!(
        !warnings.iter().any(|w| w.contains("`off`")),
        "{warnings:?}"
    );

    // A read-only tool runs without asking under -y; its result goes back.
    let proposed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "code_proposed")
        .collect();
    assert_eq!(proposed[0]["language"], "mcp");
    assert_eq!(proposed[0]["code"], r#"tools.add {"a":2,"b":3}"#);
    assert_eq!(tool_result(&env, 1).trim(), "5");
    // An image goes back as an image.
    let dot = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        dot.to_string().contains("data:image/png;base64,iVBOR"),
        "{dot:#}"
    );
    // A tool's error is the model's to read.
    assert!(
        tool_result(&env, 3).contains("the archive is offline"),
        "{}",
        tool_result(&env, 3)
    );
    // A tool not marked read-only needs approval, which exec cannot ask for.
    let skipped: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "run_skipped")
        .collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0]["reason"]["type"], "no_approver");
    assert!(
        tool_result(&env, 4).contains("read-only"),
        "{}",
        tool_result(&env, 4)
    );
    assert!(!env.cwd.path().join("notes").exists());
}

#[tokio::test]
async fn a_server_that_dies_is_reported_once_and_its_tools_are_gone() {
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let env = TestEnv::new().await;
    configure(&env, &stdio_server("tools", &python));
    env.server
        .push(call("mcp__tools__crash", json!({})))
        .push(call("mcp__tools__add", json!({"a": 1, "b": 1})))
        .push(Reply::text("The tool server is gone."));
    let out = env.exec(&["-y", "--oi-json", "crash it"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let events = events(&out.stdout);
    let stopped: Vec<&str> = warnings(&events)
        .into_iter()
        .filter(|m| m.contains("stopped"))
        .collect();
    assert_eq!(stopped.len(), 1, "{events:#?}");
    assert!(
        stopped[0].contains("`tools`") && stopped[0].contains("segfault in the index"),
        "{stopped:?}"
    );
    let requests = env.server.model_requests();
    let names = |n: usize| requests[n].body["tools"].to_string();
    assert!(names(0).contains("mcp__tools__crash"));
    assert!(!names(1).contains("mcp__tools__"), "{}", names(1));
    // A call the model made anyway is answered, not run.
    assert!(
        tool_result(&env, 2).contains("mcp__tools__add"),
        "{}",
        tool_result(&env, 2)
    );
}

#[tokio::test]
async fn a_tool_that_changes_files_is_checkpointed_and_undone() {
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let env = TestEnv::new().await;
    configure(&env, &stdio_server("tools", &python));
    env.server
        .push(call(
            "mcp__tools__write_note",
            json!({"name": "todo", "text": "milk"}),
        ))
        .push(Reply::text("Saved."))
        .push(Reply::text("It is gone."));
    let out = env
        .run(
            &["--dangerously-allow-all"],
            Some("write a note\n/undo\nwhere is the note?\n"),
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("tools.write_note"), "{}", out.stdout);
    assert!(
        out.stdout.contains("saved notes/todo.txt"),
        "{}",
        out.stdout
    );
    assert!(
        !env.cwd.path().join("notes/todo.txt").exists(),
        "undo removes what the tool wrote: {}",
        out.stdout
    );
    let last = crate::support::last_message_text(&env.server, 2);
    assert!(last.contains("undid"), "{last}");
}

#[tokio::test]
async fn markdown_harness_calls_tools_from_python_and_risky_ones_need_approval() {
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let env = TestEnv::new().await;
    configure(
        &env,
        &format!(
            "{}enabled_tools = [\"add\", \"write_note\", \"fail\"]\n",
            stdio_server("my-tools", &python)
        ),
    );
    env.server
        .push(Reply::text(
            "```python\nprint(mcp_tools.my_tools.add(a=2, b=40))\ntry:\n    mcp_tools.my_tools.fail()\nexcept mcp_tools.McpToolError as e:\n    print('failed:', e)\n```",
        ))
        .push(Reply::text(
            "```python\nmcp_tools.my_tools.write_note(name='x', text='y')\n```",
        ))
        .push(Reply::text(
            "```python\ntry:\n    getattr(mcp_tools.my_tools, 'write_' + 'note')(name='x', text='y')\nexcept mcp_tools.McpToolError as e:\n    print('refused:', e)\n```",
        ))
        .push(Reply::text("The sum is 42."));
    let out = env
        .exec(&["-y", "--harness", "markdown", "--oi-json", "add 2 and 40"])
        .await;
    assert_eq!(out.code, 4, "{out:?}");
    let requests = env.server.model_requests();
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("mcp_tools.my_tools.add(a: int, b: int): Adds two whole numbers"),
        "{system}"
    );
    assert!(!system.contains("dot("), "{system}");
    assert!(
        requests[0]
            .body
            .get("tools")
            .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty))
    );
    let first = crate::support::last_message_text(&env.server, 1);
    assert!(first.contains("42"), "{first}");
    assert!(
        first.contains("failed: ") && first.contains("the archive is offline"),
        "{first}"
    );
    // Code that calls a tool not marked read-only is risky: not run
    // without the user's approval.
    let events = events(&out.stdout);
    let skipped: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "run_skipped")
        .collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    let second = crate::support::last_message_text(&env.server, 2);
    assert!(second.contains("write_note"), "{second}");
    // Hiding the tool's name from the gate does not help: code that ran
    // without a person's approval may call only read-only tools.
    let third = crate::support::last_message_text(&env.server, 3);
    assert!(
        third.contains("refused:") && third.contains("not marked read-only"),
        "{third}"
    );
    assert!(!env.cwd.path().join("notes").exists());
}

#[tokio::test]
async fn streamable_http_server_with_a_bearer_token_and_headers() {
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let env = TestEnv::new().await;
    let mut server = env.program(&python, &[SERVER, "--http", &port.to_string()]);
    server.kill_on_drop(true);
    let _server = server.spawn().unwrap();
    oi_testkit::wait_until("the MCP server to listen", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    configure(
        &env,
        &format!(
            "[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nbearer_token_env_var = \"WEB_TOKEN\"\nhttp_headers = {{ X-Team = \"core\" }}\n\n[mcp_servers.nokey]\nurl = \"http://127.0.0.1:{port}/mcp\"\nstartup_timeout_sec = 5\n"
        ),
    );
    env.server
        .push(call("mcp__web__add", json!({"a": 20, "b": 22})))
        .push(Reply::text("42"));
    let mut cmd = env.command(&["exec", "-y", "--json", "add"]);
    cmd.env("WEB_TOKEN", "test-token");
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(tool_result(&env, 1).trim(), "42");
    // Codex's stream: the call is an `mcp_tool_call` item.
    let lines = events(&out.stdout);
    let call = lines
        .iter()
        .find(|e| e["type"] == "item.completed" && e["item"]["type"] == "mcp_tool_call")
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert_eq!(call["item"]["server"], "web");
    assert_eq!(call["item"]["tool"], "add");
    assert_eq!(call["item"]["arguments"], json!({"a": 20, "b": 22}));
    assert_eq!(call["item"]["status"], "completed");
    assert_eq!(call["item"]["result"]["content"][0]["text"], "42");
    // Without the token the server refuses: reported, the session goes on.
    let nokey: Vec<&Value> = lines
        .iter()
        .filter(|e| {
            e["item"]["type"] == "error"
                && e["item"]["message"].as_str().unwrap().contains("`nokey`")
        })
        .collect();
    assert_eq!(nokey.len(), 1, "{lines:#?}");
}

#[tokio::test]
async fn mcp_add_list_get_remove_edit_the_user_configuration() {
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let env = TestEnv::new().await;
    let out = env
        .run(
            &[
                "mcp",
                "add",
                "tools",
                "--env",
                "TOKEN=s3cret",
                "--",
                &python,
                SERVER,
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.starts_with("Added MCP server `tools`"),
        "{out:?}"
    );
    let out = env
        .run(
            &[
                "mcp",
                "add",
                "web",
                "--url",
                "http://127.0.0.1:9/mcp",
                "--bearer-token-env-var",
                "WEB_TOKEN",
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let file = std::fs::read_to_string(env.oi_home().join("config.toml")).unwrap();
    assert!(file.contains("[mcp_servers.tools]\n"), "{file}");
    assert!(!file.contains("[mcp_servers]\n"), "{file}");
    assert!(
        file.contains("bearer_token_env_var = \"WEB_TOKEN\""),
        "{file}"
    );

    let out = env.run(&["mcp", "list"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(
        lines[1].starts_with("tools") && lines[1].contains("server.py"),
        "{lines:?}"
    );
    assert!(lines[2].contains("http://127.0.0.1:9/mcp"), "{lines:?}");
    let out = env.run(&["mcp", "list", "--json"], None).await;
    let listed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(listed[0]["transport"]["env"], json!({"TOKEN": "…"}));
    assert!(!out.stdout.contains("s3cret"));

    // `get` starts the server and lists its tools, read-only ones marked.
    let out = env.run(&["mcp", "get", "tools"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("add [read-only]  Adds two whole numbers."),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("write_note  Writes"), "{}", out.stdout);
    assert!(!out.stdout.contains("s3cret"));
    // A server that cannot start says why, and the exit code says so.
    let out = env.run(&["mcp", "get", "web", "--json"], None).await;
    assert_eq!(out.code, 1, "{out:?}");
    let got: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        got["error"].as_str().unwrap().contains("WEB_TOKEN"),
        "{got:#}"
    );

    let out = env.run(&["mcp", "remove", "web"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let out = env.run(&["mcp", "remove", "web"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("no MCP server `web`") && out.stderr.contains("tools"),
        "{out:?}"
    );
    let out = env.run(&["mcp", "add", "bad name", "--", "ls"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("letters, digits"), "{out:?}");
    let out = env.run(&["mcp", "add", "nothing"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("needs a command or a URL"), "{out:?}");
}
