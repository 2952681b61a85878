//! Every error a user meets: a short message, a hint, a non-zero exit.

use oi_testkit::Reply;
use pretty_assertions::assert_eq;

use crate::support::TestEnv;

fn assert_error(out: &crate::support::Output, code: i32, message: &str, hint: &str) {
    assert_eq!(out.code, code, "{out:?}");
    assert!(
        out.stderr.contains(&format!("error: {message}")),
        "expected `{message}` in:\n{}",
        out.stderr
    );
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("hint: ") && l.contains(hint)),
        "expected hint `{hint}` in:\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[tokio::test]
async fn an_unreachable_server() {
    let env = TestEnv::new().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let out = env.exec(&["--api-base", &base, "hi"]).await;
    assert_error(
        &out,
        1,
        &format!("cannot reach the model server at {base}/chat/completions"),
        "is the model server running",
    );
    assert!(
        out.stderr.contains("retrying"),
        "retries are shown: {}",
        out.stderr
    );
}

#[tokio::test]
async fn a_rejected_api_key() {
    let env = TestEnv::new().await;
    env.server.require_api_key("sk-right");
    let out = env.exec(&["--api-key", "sk-wrong", "hi"]).await;
    assert_error(
        &out,
        1,
        "the model server answered HTTP 401",
        "the API key was rejected",
    );
    // The server quotes the key back; oi never prints it.
    assert!(
        out.stderr
            .contains("Incorrect API key provided: [redacted]"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("sk-wrong"), "{}", out.stderr);
    assert_eq!(env.server.chat_requests().len(), 1, "401 is not retried");

    // Nor a key from the provider's variable, in any wire's error, in the
    // event stream or in the transcript.
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"m\"\n[model_providers.mock]\nbase_url = \"{}\"\nenv_key = \"MOCK_API_KEY\"\n",
        env.server.base_url()
    ));
    let key = "sk-from-the-environment-42";
    env.server.push(Reply::raw_error(
        403,
        &format!("{{\"error\": {{\"message\": \"key {key} may not use this model\"}}}}"),
    ));
    let mut cmd = env.command(&["exec", "--oi-json", "hi"]);
    cmd.env("MOCK_API_KEY", key);
    let out = crate::support::run_command(cmd, None).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("key [redacted] may not use"), "{out:?}");
    assert!(
        !out.stdout.contains(key) && !out.stderr.contains(key),
        "{out:?}"
    );
    for entry in walk(&env.oi_home().join("sessions")) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(!text.contains(key), "{}: {text}", entry.display());
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[tokio::test]
async fn the_api_key_comes_from_the_providers_variable() {
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"m\"\n[model_providers.mock]\nbase_url = \"{}\"\nenv_key = \"MOCK_API_KEY\"\n",
        env.server.base_url()
    ));
    env.server.require_api_key("sk-env").push(Reply::text("ok"));
    let mut cmd = env.command(&["exec", "hi"]);
    cmd.env("MOCK_API_KEY", "sk-env");
    let out = crate::support::run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        env.server.chat_requests()[0].header("authorization"),
        Some("Bearer sk-env")
    );

    // Unset, it is named in the error, with the provider.
    let out = env.exec(&["hi"]).await;
    assert_error(
        &out,
        2,
        "the API key for mock (`mock`) is missing: `$MOCK_API_KEY` is not set",
        "export MOCK_API_KEY=",
    );
}

#[tokio::test]
async fn a_base_url_without_v1() {
    let env = TestEnv::new().await;
    let root = env.server.root_url();
    let out = env.exec(&["--api-base", &root, "hi"]).await;
    assert_error(
        &out,
        1,
        "the model server answered HTTP 404",
        "does the base URL need `/v1`?",
    );
}

#[tokio::test]
async fn rate_limits_after_retries() {
    let env = TestEnv::new().await;
    env.server
        .repeat(Reply::error(429, "Rate limit reached for requests").header("retry-after-ms", "5"));
    let out = env.exec(&["hi"]).await;
    assert_error(
        &out,
        1,
        "the model server answered HTTP 429 (after 5 attempts)",
        "the server is rate-limiting requests",
    );
    assert!(
        out.stderr.contains("Rate limit reached for requests"),
        "{}",
        out.stderr
    );
    assert_eq!(env.server.chat_requests().len(), 5);
}

#[tokio::test]
async fn a_server_error_then_success_is_retried_transparently() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::error(502, "Bad gateway").header("retry-after-ms", "5"))
        .push(Reply::text("Fine now."));
    let out = env.exec(&["hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "Fine now.\n");
    assert!(
        out.stderr.contains("HTTP 502: Bad gateway; retrying"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn server_errors_after_retries() {
    let env = TestEnv::new().await;
    env.server.repeat(
        Reply::error(503, "The engine is currently overloaded").header("retry-after-ms", "5"),
    );
    let out = env.exec(&["hi"]).await;
    assert_error(
        &out,
        1,
        "the model server answered HTTP 503 (after 5 attempts)",
        "the server failed on its side",
    );
}

#[tokio::test]
async fn a_stream_cut_off_midway() {
    let env = TestEnv::new().await;
    env.server
        .repeat(Reply::text("This answer is going to be long").cut_after_events(3));
    let out = env
        .exec(&["-c", "model_providers.mock.request_max_retries=1", "hi"])
        .await;
    assert_error(
        &out,
        1,
        "the model server closed the stream before the reply was complete",
        "the connection broke mid-reply",
    );
    assert_eq!(out.stdout, "", "a partial reply is not an answer");
    assert!(
        out.stderr.contains("the reply broke off"),
        "the restart is shown: {}",
        out.stderr
    );
    assert_eq!(
        out.stderr.matches("This ans").count(),
        1,
        "no text twice: {}",
        out.stderr
    );
    assert_eq!(env.server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_malformed_stream() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::raw_sse("data: {\"choices\": [{\"delta\": \n\n"));
    let out = env.exec(&["hi"]).await;
    assert_error(
        &out,
        1,
        "the model server sent an event oi cannot read",
        "OpenAI streaming format",
    );
}

#[tokio::test]
async fn an_unknown_harness() {
    let env = TestEnv::new().await;
    let out = env.exec(&["--harness", "xml", "hi"]).await;
    assert_error(
        &out,
        2,
        "--harness: `harness` = \"xml\" is not valid: expected one of \"native\", \"markdown\", \"claude-code\", \"codex\", \"auto\"",
        "give `--harness` a valid value",
    );
    assert!(env.server.requests().is_empty(), "nothing is sent");
}

#[tokio::test]
async fn bad_flag_values() {
    let env = TestEnv::new().await;
    let out = env.exec(&["--max-turns", "0", "hi"]).await;
    assert_error(
        &out,
        2,
        "--max-turns: `max_turns` = 0 is not valid: expected a whole number of at least 1",
        "give `--max-turns` a valid value",
    );
    let out = env.exec(&["--api-base", "localhost:8080", "hi"]).await;
    assert_error(
        &out,
        2,
        "--api-base: `base_url` = \"localhost:8080\" is not valid: expected an http:// or https:// URL",
        "give `--api-base` a valid value",
    );
    let out = env.exec(&["--max-turns", "many", "hi"]).await;
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("invalid value 'many' for '--max-turns <N>'"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn no_key_for_openai() {
    // OpenAI chosen on purpose (with nothing chosen, see first_run.rs).
    let env = TestEnv::new().await;
    env.write_config("model_provider = \"openai\"\n");
    let out = env.exec(&["hi"]).await;
    assert_error(
        &out,
        2,
        "the API key for OpenAI (`openai`) is missing: `$OPENAI_API_KEY` is not set",
        "pass the key with `--api-key`",
    );
}

#[tokio::test]
async fn a_server_that_never_answers_is_given_up_after_the_idle_timeout() {
    let env = TestEnv::new().await;
    env.server.repeat(Reply::silent());
    let started = std::time::Instant::now();
    let out = env
        .exec(&[
            "-c",
            "model_providers.mock.stream_idle_timeout_ms=300",
            "-c",
            "model_providers.mock.request_max_retries=1",
            "hi",
        ])
        .await;
    assert_error(
        &out,
        1,
        "the model server sent nothing for 300 ms; the request was given up",
        "the connection broke mid-reply",
    );
    assert!(out.stderr.contains("retrying"), "{}", out.stderr);
    assert_eq!(env.server.chat_requests().len(), 2, "one retry");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[tokio::test]
async fn max_time_ends_a_task_whose_server_never_answers() {
    let env = TestEnv::new().await;
    env.server.repeat(Reply::silent());
    // The idle timeout (5 minutes by default) is far away: --max-time ends it.
    let out = env.exec(&["--max-time", "2", "hi"]).await;
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stderr.contains("time limit"), "{}", out.stderr);
    assert_eq!(env.server.chat_requests().len(), 1);
}

#[tokio::test]
async fn a_reply_that_never_ends_is_cut_at_its_ceiling_and_by_max_time() {
    let env = TestEnv::new().await;
    env.server.repeat(Reply::endless("again "));
    let out = env
        .exec(&[
            "-c",
            "model_providers.mock.stream_max_duration_ms=1000",
            "hi",
        ])
        .await;
    assert_error(
        &out,
        1,
        "the model server's reply was given up: it went on for more than 1 s without ending",
        "the server seems stuck in a loop",
    );
    assert_eq!(env.server.chat_requests().len(), 1, "not retried");

    let out = env.exec(&["--max-time", "2", "hi"]).await;
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stderr.contains("time limit"), "{}", out.stderr);
    assert!(
        out.stderr.contains("again again"),
        "the text streamed: {}",
        out.stderr
    );
}

#[tokio::test]
async fn a_web_page_where_the_api_should_be_is_named_at_once() {
    let env = TestEnv::new().await;
    env.server.repeat(Reply::page(
        200,
        "text/html; charset=utf-8",
        "<!doctype html><html><body>Welcome to our site</body></html>",
    ));
    let out = env.exec(&["hi"]).await;
    let url = format!("{}/chat/completions", env.server.base_url());
    assert_error(
        &out,
        1,
        &format!(
            "the model server at {url} answered with a web page (text/html), not a model API's event stream"
        ),
        "check the API base",
    );
    assert_eq!(env.server.chat_requests().len(), 1, "not retried");
    assert!(!out.stderr.contains("retrying"), "{}", out.stderr);

    // A JSON document instead of a stream says what it said.
    let env = TestEnv::new().await;
    env.server.push(Reply::page(
        200,
        "application/json",
        "{\"error\": {\"message\": \"streaming is not enabled for this key\"}}",
    ));
    let out = env.exec(&["hi"]).await;
    let url = format!("{}/chat/completions", env.server.base_url());
    assert_error(
        &out,
        1,
        &format!(
            "the model server at {url} answered with a JSON document (streaming is not enabled for this key)"
        ),
        "check the API base",
    );
}
