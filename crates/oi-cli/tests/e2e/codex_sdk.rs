//! The official Codex TypeScript SDK (`@openai/codex-sdk` from npm, the
//! version `.ci/run` pins) drives the real binary, unchanged, against the
//! mock model server: two turns of a thread, the thread taken up again by
//! id with a structured answer, a failing turn.

use oi_testkit::{MockToolCall, Reply};
use serde_json::Value;

use crate::support::{TestEnv, run_command};

#[tokio::test]
async fn the_codex_sdk_drives_oi_unchanged() {
    let Some(prefix) = oi_testkit::npm_package("@openai/codex-sdk") else {
        return;
    };
    let env = TestEnv::new().await;
    // No configuration: the SDK points the built-in OpenAI provider at the
    // mock (`openai_base_url`) and passes the key in CODEX_API_KEY.
    std::fs::remove_file(env.oi_home().join("config.toml")).unwrap();
    env.server.require_api_key("sk-sdk-test");
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
        .push(Reply::text("{\"lines\": 3}").usage(300, 4))
        .push(Reply::error(400, "quota exceeded for this key"));

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/codex-sdk/drive.mjs");
    let mut cmd = env.command_wrapped(&["node", script], &[]);
    cmd.env("OI_CODEX_SDK_DIR", &prefix)
        .env("OI_BIN", env!("CARGO_BIN_EXE_interpreter"))
        .env("MOCK_BASE_URL", env.server.base_url())
        .env("WORK", &work)
        .env("IMAGE", &image);
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!("{e}: {out:?}");
    });

    // The first turn: the command's output, the answer, the tokens.
    let first = &report["first"];
    assert_eq!(first["finalResponse"], "data.csv has 3 lines.");
    let run = first["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "command_execution")
        .unwrap_or_else(|| panic!("no command_execution: {first}"));
    assert_eq!(run["command"], "wc -l < data.csv");
    assert_eq!(run["aggregated_output"].as_str().unwrap().trim(), "3");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(run["status"], "completed");
    for (field, value) in [
        ("input_tokens", 220),
        ("cached_input_tokens", 0),
        ("output_tokens", 18),
        ("cache_write_input_tokens", 0),
        ("reasoning_output_tokens", 0),
    ] {
        assert_eq!(first["usage"][field], value, "{field}: {}", first["usage"]);
    }
    let thread = report["threadId"].as_str().unwrap();
    assert!(
        env.oi_home().join("sessions").join(thread).is_dir(),
        "the thread is oi's recorded session {thread}"
    );

    // The second turn continued the thread, with the image.
    assert_eq!(report["second"]["finalResponse"], "A small red dot.");
    assert_eq!(report["second"]["usage"]["input_tokens"], 200);
    let requests = env.server.model_requests();
    assert_eq!(requests.len(), 5, "{requests:#?}");
    for request in &requests {
        assert_eq!(request.path, "/v1/responses");
        assert_eq!(request.body["model"], "mock-model");
        assert_eq!(request.header("authorization"), Some("Bearer sk-sdk-test"));
    }
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

    // Taken up again by id in another client, with a structured answer.
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
        "{report}"
    );
}
