//! Session transcripts: written as the session goes, taken up again with
//! `--continue` / `--resume`, listed by `interpreter sessions`, forgiving
//! of a torn last line, and free of secrets.

use oi_testkit::Reply;

use crate::support::{TestEnv, last_message_text, signal_when};

fn transcripts(env: &TestEnv) -> Vec<std::path::PathBuf> {
    let dir = env.oi_home().join("sessions");
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("transcript.jsonl"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn a_session_killed_mid_run_is_continued_with_everything_before_the_kill() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute(
            "python",
            "answer = 6 * 7\nprint('first', answer)",
        ))
        .push(Reply::execute(
            "python",
            "import sys, time\nprint('kill' + '-me-now', flush=True)\ntime.sleep(60)",
        ));
    let (code, stderr) = signal_when(
        &env,
        &["exec", "-y", "compute the answer"],
        "kill-me-now",
        "-KILL",
    )
    .await;
    assert_eq!(code, -1, "{stderr}");
    let files = transcripts(&env);
    assert_eq!(files.len(), 1);

    env.server
        .push(Reply::text("I was cut off; the answer was 42."));
    let out = env.exec(&["-y", "--continue", "what happened?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Resumed session"), "{}", out.stderr);
    let request = &env.server.chat_requests()[2];
    let body = request.body.to_string();
    // Everything before the kill: the task, both calls, the first result.
    assert!(body.contains("compute the answer"), "{body}");
    assert!(body.contains("first 42"), "{body}");
    assert!(body.contains("kill' + '-me-now"), "{body}");
    // The cut-off call got a result, and the model is told of the restart.
    assert!(
        body.contains("the session ended while this was running"),
        "{body}"
    );
    let last = last_message_text(&env.server, 2);
    assert!(last.contains("kernels were restarted"), "{last}");
    assert!(last.ends_with("what happened?"), "{last}");
    // The same transcript goes on.
    assert_eq!(transcripts(&env), files);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("I was cut off"), "{text}");

    // Listed, with its first prompt and its two tasks.
    let out = env.run(&["sessions"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("compute the answer"), "{}", out.stdout);
    let id = files[0]
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    let row = out.stdout.lines().find(|l| l.starts_with(id)).unwrap();
    assert!(row.split_whitespace().any(|w| w == "2"), "{row}");
}

#[tokio::test]
async fn a_torn_last_line_is_skipped_with_a_warning_and_resume_takes_an_id_prefix() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("Noted: blue."));
    let out = env.exec(&["my favourite colour is blue"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let file = transcripts(&env).remove(0);
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"cont");
    std::fs::write(&file, text).unwrap();

    let id = file
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    env.server.push(Reply::text("Blue."));
    let out = env.exec(&["--resume", &id[..12], "which colour?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("the last line is not a complete record and was skipped"),
        "{}",
        out.stderr
    );
    let body = env.server.chat_requests()[1].body.to_string();
    assert!(body.contains("my favourite colour is blue"), "{body}");
    assert!(body.contains("Noted: blue."), "{body}");

    let out = env.exec(&["--resume", "nosuchsession", "x"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("no recorded session `nosuchsession`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("interpreter sessions"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn continue_without_a_session_here_says_so() {
    let env = TestEnv::new().await;
    let out = env.exec(&["--continue", "x"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("no session was recorded in"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn api_keys_never_appear_in_transcripts() {
    let env = TestEnv::new().await;
    let key = "sk-test-0123456789abcdef";
    env.server
        .require_api_key(key)
        .push(Reply::execute("shell", &format!("echo {key}")))
        .push(Reply::text(&format!("Your key is {key}.")));
    let out = env
        .exec(&["-y", "--api-key", key, &format!("is {key} my key?")])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let text = std::fs::read_to_string(transcripts(&env).remove(0)).unwrap();
    assert!(!text.contains(key), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
}
