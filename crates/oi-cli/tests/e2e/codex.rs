//! `interpreter exec --json`: Codex's event stream, Codex's flags and
//! configuration keys, `exec resume`, structured answers.

use oi_testkit::{MockToolCall, Reply};
use serde_json::{Value, json};

use crate::support::{TestEnv, last_message_text};

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().unwrap().to_owned();
            match e["item"]["type"].as_str() {
                Some(item) => format!("{kind}:{item}"),
                None => kind,
            }
        })
        .collect()
}

fn completed<'a>(events: &'a [Value], item: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == item)
        .map(|e| &e["item"])
        .collect()
}

#[tokio::test]
async fn a_turn_prints_codex_events_and_code_runs_without_asking() {
    let env = TestEnv::new().await;
    env.server
        .push(
            Reply::execute("python", "open('out.txt', 'w').write('hi')\nprint(6 * 7)")
                .with_text("Let me compute.")
                .with_thought("Multiply, then save.")
                .usage(100, 10),
        )
        .push(Reply::text("It is 42.").usage(150, 5));
    // No `--yes`: the reading program cannot answer approvals.
    let out = env.exec(&["--json", "what is 6 * 7?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let events = lines(&out.stdout);
    assert_eq!(
        kinds(&events),
        [
            "thread.started",
            "turn.started",
            "item.completed:reasoning",
            "item.completed:agent_message",
            "item.started:command_execution",
            "item.completed:command_execution",
            "item.completed:file_change",
            "item.completed:agent_message",
            "turn.completed",
        ],
        "{}",
        out.stdout
    );
    let thread = events[0]["thread_id"].as_str().unwrap();
    assert!(!thread.is_empty());
    assert!(
        env.oi_home().join("sessions").join(thread).is_dir(),
        "the thread is a recorded session"
    );
    assert_eq!(
        completed(&events, "reasoning")[0]["text"],
        "Multiply, then save."
    );
    let run = completed(&events, "command_execution")[0];
    assert_eq!(run["aggregated_output"], "42\n");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(run["status"], "completed");
    assert_eq!(run["language"], "python");
    assert!(run["duration_ms"].is_u64());
    assert!(run["checkpoint"].is_string(), "{run}");
    assert_eq!(
        completed(&events, "file_change")[0]["changes"],
        json!([{"path": "out.txt", "kind": "add"}])
    );
    assert_eq!(completed(&events, "agent_message")[1]["text"], "It is 42.");
    assert_eq!(
        events.last().unwrap()["usage"],
        json!({"input_tokens": 250, "cached_input_tokens": 0, "output_tokens": 15, "cache_write_input_tokens": 0, "reasoning_output_tokens": 0, "cost_usd": 0.0})
    );
}

#[tokio::test]
async fn risky_code_is_held_and_the_turn_still_completes() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("shell", "rm -rf ~/Documents"))
        .push(Reply::text("I did not delete anything."));
    let out = env.exec(&["--experimental-json", "clean up"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let events = lines(&out.stdout);
    let run = completed(&events, "command_execution")[0];
    assert_eq!(run["status"], "declined");
    assert!(run.get("exit_code").is_none(), "{run}");
    assert!(
        run["notes"][0].as_str().unwrap().contains("approval"),
        "{run}"
    );
    assert!(last_message_text(&env.server, 1).contains("looks risky"));
    assert_eq!(events.last().unwrap()["type"], "turn.completed");
}

#[tokio::test]
async fn an_approval_setting_is_kept_and_a_failed_turn_exits_1() {
    let env = TestEnv::new().await;
    // The user's own setting wins over the `--json` default.
    env.write_config(&format!(
        "approval = \"ask\"\nmodel_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    env.server
        .push(Reply::execute("python", "print(1)"))
        .push(Reply::text("Not run."))
        .push(Reply::error(400, "the server said no"));
    let out = env.exec(&["--json", "go"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let events = lines(&out.stdout);
    assert_eq!(
        completed(&events, "command_execution")[0]["status"],
        "declined"
    );
    let out = env.exec(&["--json", "again"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    let events = lines(&out.stdout);
    let failed = events.last().unwrap();
    assert_eq!(failed["type"], "turn.failed", "{}", out.stdout);
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the server said no"),
        "{failed}"
    );
}

#[tokio::test]
async fn exec_resume_continues_the_recorded_session() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text("Noted: the number is 7."))
        .push(Reply::text("It was 7."));
    let first = env.exec(&["--json", "remember the number 7"]).await;
    assert_eq!(first.code, 0, "{first:?}");
    let thread = lines(&first.stdout)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // As the Codex SDK runs it: options, `resume ID`, then more options;
    // the task on stdin.
    let second = env
        .run(
            &["exec", "--json", "resume", &thread, "--skip-git-repo-check"],
            Some("which number?"),
        )
        .await;
    assert_eq!(second.code, 0, "{second:?}");
    let events = lines(&second.stdout);
    assert_eq!(events[0]["thread_id"], thread.as_str());
    assert_eq!(completed(&events, "agent_message")[0]["text"], "It was 7.");
    let request = &env.server.model_requests()[1];
    let sent = request.body.to_string();
    assert!(
        sent.contains("remember the number 7") && sent.contains("Noted: the number is 7."),
        "the first turn is in the second request: {sent}"
    );
    // `--last` takes this folder's most recent session.
    env.server.push(Reply::text("Still 7."));
    let third = env.exec(&["--json", "resume", "--last", "and now?"]).await;
    assert_eq!(third.code, 0, "{third:?}");
    assert_eq!(lines(&third.stdout)[0]["thread_id"], thread.as_str());
    let missing = env.exec(&["--json", "resume", "nonexistent-id", "x"]).await;
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(
        missing.stderr.contains("nonexistent-id"),
        "{}",
        missing.stderr
    );
}

#[tokio::test]
async fn a_structured_answer_is_checked_and_asked_again_once() {
    let env = TestEnv::new().await;
    let schema = env.cwd.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}"#,
    )
    .unwrap();
    let schema = schema.to_str().unwrap();
    env.server
        .push(Reply::text("There are three.").usage(10, 2))
        .push(Reply::text("```json\n{\"count\": 3}\n```").usage(20, 3));
    let out = env
        .exec(&["--json", "--output-schema", schema, "how many?"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let events = lines(&out.stdout);
    let kinds = kinds(&events);
    assert_eq!(
        kinds.iter().filter(|k| *k == "turn.started").count(),
        1,
        "{kinds:?}"
    );
    let messages = completed(&events, "agent_message");
    assert_eq!(messages.last().unwrap()["text"], r#"{"count":3}"#);
    assert_eq!(events.last().unwrap()["usage"]["input_tokens"], 30);
    let requests = env.server.model_requests();
    assert!(
        requests[0]
            .body
            .to_string()
            .contains("additionalProperties"),
        "the model is given the schema"
    );
    assert!(
        last_message_text(&env.server, 1).contains("does not validate"),
        "{}",
        last_message_text(&env.server, 1)
    );

    // Wrong twice: the turn fails.
    env.server
        .push(Reply::text("three"))
        .push(Reply::text("{\"count\": \"three\"}"));
    let out = env
        .exec(&["--json", "--output-schema", schema, "how many?"])
        .await;
    assert_eq!(out.code, 1, "{out:?}");
    let last = lines(&out.stdout).pop().unwrap();
    assert_eq!(last["type"], "turn.failed");
    assert!(
        last["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not validate against the output schema"),
        "{last}"
    );

    // The human mode prints the JSON alone on stdout, and -o writes it.
    env.server.push(Reply::text("{\"count\": 5}"));
    let answer = env.cwd.path().join("answer.txt");
    let out = env
        .exec(&[
            "--output-schema",
            schema,
            "-o",
            answer.to_str().unwrap(),
            "how many?",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "{\"count\":5}\n");
    assert_eq!(std::fs::read_to_string(&answer).unwrap(), "{\"count\":5}\n");
}

#[tokio::test]
async fn bad_schema_and_image_files_are_named() {
    let env = TestEnv::new().await;
    let schema = env.cwd.path().join("schema.json");
    std::fs::write(&schema, "{\"type\": 12}").unwrap();
    let out = env
        .exec(&["--json", "--output-schema", schema.to_str().unwrap(), "x"])
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("--output-schema") && out.stderr.contains("not a JSON Schema"),
        "{}",
        out.stderr
    );
    let out = env.exec(&["--json", "--image", "missing.png", "x"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("error: --image missing.png: no such file"),
        "{}",
        out.stderr
    );
    assert!(env.server.model_requests().is_empty());
}

#[tokio::test]
async fn codex_flags_and_keys_mean_what_they_mean_to_codex() {
    let env = TestEnv::new().await;
    // No configuration: the built-in OpenAI provider, moved to the mock
    // with Codex's key, its key from CODEX_API_KEY.
    std::fs::remove_file(env.oi_home().join("config.toml")).unwrap();
    env.server.require_api_key("sk-codex-test");
    let work = env.cwd.path().join("work");
    let extra = env.cwd.path().join("extra");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    let image = env.cwd.path().join("dot.png");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\nnot really").unwrap();
    env.server
        .push(Reply::tool_calls(vec![MockToolCall::execute(
            "shell",
            &format!("pwd; touch {}/made-here", extra.display()),
        )]))
        .push(Reply::text("Done."));
    let base = format!("openai_base_url=\"{}\"", env.server.base_url());
    let mut cmd = env.command(&[
        "exec",
        "--experimental-json",
        "--config",
        &base,
        "--model",
        "mock-model",
        "--config",
        "models.mock-model.vision=true",
        "--sandbox",
        "workspace-write",
        "--cd",
        work.to_str().unwrap(),
        "--add-dir",
        extra.to_str().unwrap(),
        "--skip-git-repo-check",
        "--config",
        "model_reasoning_effort=\"high\"",
        "--config",
        "sandbox_workspace_write.network_access=false",
        "--config",
        "web_search=\"live\"",
        "--config",
        "approval_policy=\"never\"",
        "--image",
        image.to_str().unwrap(),
    ]);
    cmd.env("CODEX_API_KEY", "sk-codex-test");
    let out = crate::support::run_command(cmd, Some("where are you?")).await;
    assert_eq!(out.code, 0, "{out:?}");
    let events = lines(&out.stdout);
    let run = completed(&events, "command_execution")[0];
    assert_eq!(
        run["aggregated_output"].as_str().unwrap().trim(),
        work.display().to_string(),
        "--cd is where code runs"
    );
    assert!(extra.join("made-here").exists(), "--add-dir is writable");
    let request = &env.server.model_requests()[0];
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.body["model"], "mock-model");
    let sent = request.body.to_string();
    assert!(sent.contains("input_image"), "the image was sent: {sent}");
    for notice in [
        "oi does not set a reasoning effort",
        "oi has no web search tool",
        "risky code is never run without a person",
    ] {
        assert!(out.stderr.contains(notice), "{notice}: {}", out.stderr);
    }
}
