//! A first start on a machine with no key and no configuration: the
//! set-up dialog in a terminal (each of its three ways), the error that
//! names them without one, and the built-in model's download (progress,
//! resume, a wrong file refused) from a local server standing in for
//! Hugging Face.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::json;

use crate::pty::Pty;
use crate::support::TestEnv;

/// A test environment with nothing configured (no key is set either).
async fn fresh() -> TestEnv {
    let env = TestEnv::new().await;
    std::fs::remove_file(env.oi_home().join("config.toml")).unwrap();
    env
}

fn config(env: &TestEnv) -> String {
    std::fs::read_to_string(env.oi_home().join("config.toml")).unwrap_or_default()
}

/// The number the dialog's menu gives the line holding `needle`.
fn number_of(screen: &str, needle: &str) -> String {
    let line = screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in:\n{screen}"));
    line.trim().split(')').next().unwrap().trim().to_owned()
}

#[tokio::test]
async fn without_a_terminal_the_error_names_all_three_ways() {
    let env = fresh().await;
    let out = env.exec(&["hi"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    let err = &out.stderr;
    assert!(err.contains("no language model"), "{err}");
    for way in [
        "export OPENAI_API_KEY=",
        "interpreter setup",
        "--local",
        "-c model_provider=builtin --yes",
        "--model FILE.gguf",
    ] {
        assert!(err.contains(way), "`{way}` missing from:\n{err}");
    }
    // `interpreter setup` itself needs a terminal, and says what else works.
    let out = env.run(&["setup"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("no terminal"), "{}", out.stderr);
    assert!(out.stderr.contains("--local"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_key_is_saved_privately_and_never_shown() {
    let env = fresh().await;
    let mut pty = Pty::spawn(&env, &[], 110, 40);
    pty.wait_for("How should it reach one?");
    pty.wait_for("Choose 1, 2 or 3");
    pty.type_line("1");
    let screen = pty.wait_for("Which provider?");
    let groq = number_of(&screen, "(groq)");
    pty.type_line(&groq);
    pty.wait_for("Paste your Groq API key");
    pty.send("gsk-secret-1234\r");
    pty.wait_for("`interpreter setup` changes this later");
    // The session starts with the saved choice.
    pty.wait_for("› ");
    assert!(!pty.raw().contains("gsk-secret-1234"), "the key was echoed");
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());

    let keys = env.oi_home().join("keys.toml");
    let stored = std::fs::read_to_string(&keys).unwrap();
    assert!(
        stored.contains("GROQ_API_KEY = \"gsk-secret-1234\""),
        "{stored}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&keys).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let config = config(&env);
    assert!(config.contains("model_provider = \"groq\""), "{config}");
    assert!(!config.contains("gsk-secret"), "{config}");

    // The next start goes straight in, with the stored key.
    let out = env.run(&["config", "show"], None).await;
    assert!(
        out.stdout.contains("model_provider = \"groq\""),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("gsk-secret"), "{}", out.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_server_found_here_is_saved_as_the_provider() {
    let env = fresh().await;
    env.server.set_models(
        json!({"object": "list", "data": [{"id": "qwen2.5-coder:1.5b", "object": "model"}]}),
    );
    let servers = env.server.root_url();
    let mut pty = Pty::spawn_env(&env, &[], 110, 40, &[("OI_LOCAL_SERVERS", &servers)]);
    pty.wait_for("Choose 1, 2 or 3");
    pty.type_line("2");
    pty.wait_for("`interpreter setup` changes this later");
    pty.wait_for("› ");
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
    let config = config(&env);
    assert!(config.contains("model_provider = \"local\""), "{config}");
    assert!(
        config.contains("model = \"qwen2.5-coder:1.5b\""),
        "{config}"
    );
    assert!(config.contains(&servers), "{config}");

    // And it is used: a task goes to that server, for that model.
    env.server
        .repeat(oi_testkit::Reply::text("hello from the local server"));
    let out = env.exec(&["--max-turns", "1", "hi"]).await;
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("hello from the local server"),
        "{out:?}"
    );
    let requests = env.server.chat_requests();
    assert!(!requests.is_empty());
    assert_eq!(requests[0].body["model"], "qwen2.5-coder:1.5b");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_server_the_dialog_says_so_and_asks_again() {
    let env = fresh().await;
    let mut pty = Pty::spawn_env(
        &env,
        &[],
        110,
        40,
        &[("OI_LOCAL_SERVERS", "http://127.0.0.1:9")],
    );
    pty.wait_for("Choose 1, 2 or 3");
    pty.type_line("2");
    pty.wait_for("No model server answered");
    pty.type_line("q");
    pty.wait_for("set-up was left without choosing a model");
    assert_eq!(pty.wait_exit(), 2, "{}", pty.screen());
    assert_eq!(config(&env), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_built_in_model_is_chosen_and_its_download_asked_for() {
    let env = fresh().await;
    let mut pty = Pty::spawn(&env, &[], 110, 40);
    pty.wait_for("Choose 1, 2 or 3");
    pty.type_line("3");
    if oi_builtin::AVAILABLE {
        pty.wait_for("Download it now? [Y/n]");
        pty.type_line("n");
        pty.wait_for("is not downloaded");
        assert_eq!(pty.wait_exit(), 2, "{}", pty.screen());
        assert!(config(&env).contains("model_provider = \"builtin\""));
        // Without a terminal, the session's set-up says how to get it.
        let out = env.exec(&["hi"]).await;
        assert_eq!(out.code, 2, "{out:?}");
        assert!(
            out.stderr
                .contains("interpreter models --download qwen2.5-coder-1.5b"),
            "{}",
            out.stderr
        );
    } else {
        pty.wait_for("This build has no built-in model");
        pty.type_line("q");
        assert_eq!(pty.wait_exit(), 2, "{}", pty.screen());
        assert_eq!(config(&env), "");
    }
}

/// Serves one file under Hugging Face's paths, with ranges; the first
/// answer breaks off halfway when `break_first`.
#[derive(Clone)]
struct Hub {
    data: Arc<Vec<u8>>,
    break_next: Arc<Mutex<bool>>,
    corrupt: Arc<Mutex<bool>>,
    ranges: Arc<Mutex<Vec<String>>>,
}

async fn serve(State(hub): State<Hub>, headers: HeaderMap) -> Response {
    let range = headers
        .get("range")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    hub.ranges.lock().unwrap().push(range.clone());
    let from: usize = range
        .trim_start_matches("bytes=")
        .trim_end_matches('-')
        .parse()
        .unwrap_or(0);
    let mut body = hub.data[from..].to_vec();
    if *hub.corrupt.lock().unwrap() {
        let last = body.len() - 1;
        body[last] ^= 0xff;
    }
    let status = if from > 0 {
        StatusCode::PARTIAL_CONTENT
    } else {
        StatusCode::OK
    };
    let body = if std::mem::take(&mut *hub.break_next.lock().unwrap()) {
        let half = body[..body.len() / 2].to_vec();
        let first = futures::stream::iter([Ok::<_, std::io::Error>(half)]);
        let then_break = futures::stream::once(async {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            Err(std::io::Error::other("cut"))
        });
        Body::from_stream(futures::StreamExt::chain(first, then_break))
    } else {
        Body::from(body)
    };
    Response::builder().status(status).body(body).unwrap()
}

#[tokio::test]
async fn the_download_shows_progress_resumes_and_refuses_a_wrong_file() {
    // The real weights, served from 127.0.0.1 (no hub is reachable here).
    let Some(weights) = oi_testkit::builtin_weights(true) else {
        return;
    };
    let known = oi_builtin::catalog::known("qwen2.5-coder-0.5b").unwrap();
    let data = std::fs::read(&weights).unwrap();
    if data.len() as u64 != known.size {
        panic!(
            "OI_BUILTIN_GGUF must be the 0.5B weights ({} bytes)",
            known.size
        );
    }
    let hub = Hub {
        data: Arc::new(data),
        break_next: Arc::new(Mutex::new(true)),
        corrupt: Arc::new(Mutex::new(false)),
        ranges: Arc::new(Mutex::new(Vec::new())),
    };
    let app = axum::Router::new()
        .route("/{*path}", axum::routing::get(serve))
        .with_state(hub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mirror = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let env = fresh().await;
    env.write_config(&format!("[builtin]\nmirror = \"{mirror}/hf\"\n"));
    let cached = env.home.path().join(".cache/oi/models").join(known.file);
    let args = ["models", "--download", "qwen2.5-coder-0.5b"];

    // Broken off: the error says it resumes, the part is kept.
    let out = env.run(&args, None).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("broke off"), "{}", out.stderr);
    assert!(out.stderr.contains("resumes"), "{}", out.stderr);
    assert!(out.stderr.contains("%"), "progress shown: {}", out.stderr);
    assert!(!cached.exists());

    // Run again: only the rest is asked for, then checked and kept.
    let out = env.run(&args, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("resumed at"), "{}", out.stderr);
    assert!(out.stderr.contains("100%"), "{}", out.stderr);
    let ranges = hub.ranges.lock().unwrap().clone();
    assert_eq!(ranges[0], "");
    assert!(ranges[1].starts_with("bytes="), "{ranges:?}");
    assert!(
        ranges[0].is_empty() && !ranges[1].ends_with("=0-"),
        "{ranges:?}"
    );
    assert_eq!(std::fs::metadata(&cached).unwrap().len(), known.size);
    let listed = env.run(&["models", "--local"], None).await;
    assert!(
        listed
            .stdout
            .contains("qwen2.5-coder-0.5b  0.5 GB, downloaded"),
        "{}",
        listed.stdout
    );

    // A file that is not the model is refused and not kept.
    std::fs::remove_file(&cached).unwrap();
    *hub.corrupt.lock().unwrap() = true;
    let out = env.run(&args, None).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("SHA-256"), "{}", out.stderr);
    assert!(!cached.exists());
    let part = cached.with_file_name(format!("{}.part", known.file));
    assert!(!part.exists());
}
