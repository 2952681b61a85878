//! The official Codex Python SDK (`openai-codex` from PyPI, the version
//! `.ci/pip` pins) drives `interpreter app-server`, unchanged, against the
//! mock model server: two turns of a thread, the thread listed and taken
//! up again by id in another client with a structured answer, a failing
//! turn — and every notification validates against the SDK's models of
//! Codex's schema.

use oi_testkit::{MockToolCall, Reply};
use serde_json::Value;

use crate::support::{TestEnv, run_command};

#[tokio::test]
async fn the_codex_python_sdk_drives_the_app_server_unchanged() {
    let Some(python) = oi_testkit::pip_package("openai-codex", "openai_codex") else {
        return;
    };
    let env = TestEnv::new().await;
    let work = env.cwd.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
    let image = env.cwd.path().join("picture.png");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\nnot a real picture").unwrap();
    env.server
        .push(
            Reply::tool_calls(vec![MockToolCall::execute("shell", "wc -l < data.csv")])
                .usage(100, 10),
        )
        .push(Reply::text("data.csv has 3 lines.").usage(120, 8))
        .push(Reply::text("A small red dot.").usage(200, 5))
        .push(Reply::text("```json\n{\"lines\": 3}\n```").usage(300, 4))
        .push(Reply::error(400, "quota exceeded for this key"));

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/appserver-sdk/drive.py");
    let mut cmd = env.command_wrapped(&[&python, script], &[]);
    cmd.env("OI_BIN", env!("CARGO_BIN_EXE_interpreter"))
        .env("WORK", &work)
        .env("IMAGE", &image);
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!("{e}: {out:?}");
    });
    assert_eq!(report["problems"], Value::Array(Vec::new()), "{report:#}");
    assert_eq!(report["server"]["serverInfo"]["name"], "oi");

    // The first turn: the command's output (the SDK's default handler
    // approves), the answer, the tokens.
    let first = &report["first"];
    assert_eq!(first["status"], "completed");
    assert_eq!(first["finalResponse"], "data.csv has 3 lines.", "{first:#}");
    let items = first["items"].as_array().unwrap();
    let run = items
        .iter()
        .find(|i| i["type"] == "commandExecution")
        .unwrap_or_else(|| panic!("no commandExecution: {first:#}"));
    assert_eq!(run["command"], "wc -l < data.csv");
    assert_eq!(run["aggregatedOutput"].as_str().unwrap().trim(), "3");
    assert_eq!(run["exitCode"], 0);
    assert_eq!(run["status"], "completed");
    let user = items.iter().find(|i| i["type"] == "userMessage").unwrap();
    assert_eq!(
        user["content"][0]["text"],
        "How many lines does data.csv have?"
    );
    assert_eq!(first["usage"]["total"]["inputTokens"], 220, "{first:#}");
    assert_eq!(first["usage"]["total"]["outputTokens"], 18);
    let thread = report["threadId"].as_str().unwrap();
    assert!(
        env.oi_home().join("sessions").join(thread).is_dir(),
        "the thread is oi's recorded session {thread}"
    );

    // The second turn continued the thread, with the image.
    assert_eq!(report["second"]["finalResponse"], "A small red dot.");
    let requests = env.server.model_requests();
    assert_eq!(requests.len(), 5, "{requests:#?}");
    let second = requests[2].body.to_string();
    assert!(
        second.contains("How many lines does data.csv have?")
            && second.contains("data.csv has 3 lines.")
            && second.contains("And what is in this picture?"),
        "the second turn carries the first: {second}"
    );
    assert!(
        second.contains("picture.png"),
        "the image is named to the model: {second}"
    );
    assert_eq!(report["listed"], serde_json::json!([thread]));

    // Taken up again by id in another client, with a structured answer:
    // the JSON alone, compact.
    assert_eq!(report["resumedId"], thread);
    assert_eq!(report["third"]["finalResponse"], r#"{"lines":3}"#);
    let third = requests[3].body.to_string();
    assert!(
        third.contains("Give the count as JSON.")
            && third.contains("A small red dot.")
            && third.contains("additionalProperties"),
        "{third}"
    );

    // A failed turn is an error in the SDK, with the server's words.
    assert!(
        report["failed"]
            .as_str()
            .is_some_and(|m| m.contains("quota exceeded for this key")),
        "{report:#}"
    );
}
