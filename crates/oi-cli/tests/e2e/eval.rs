//! `interpreter eval` against scripted models that always succeed, always
//! fail, or fail some: the numbers must be exactly right; `--repeat`,
//! `--jobs`, `--resume` and `compare`.

use std::path::Path;

use oi_testkit::Reply;
use serde_json::Value;

use crate::support::TestEnv;

/// A suite of tasks `make NAME.txt`, each checked by the file's existence.
pub(crate) fn suite(root: &Path, names: &[&str]) -> std::path::PathBuf {
    let dir = root.join("suite");
    for name in names {
        let task = dir.join(format!("make-{name}"));
        std::fs::create_dir_all(&task).unwrap();
        std::fs::write(
            task.join("task.toml"),
            format!("prompt = \"make {name}.txt\"\ntimeout = 60\ntags = [\"{name}\"]\n"),
        )
        .unwrap();
        std::fs::write(task.join("check"), format!("test -f {name}.txt\n")).unwrap();
    }
    dir
}

/// The model makes the file for `name` (then says it is done).
fn succeeds(env: &TestEnv, name: &str) {
    env.server
        .answer_when(&format!("MADE-{name}"), Reply::text("Done."))
        .answer_when(
            &format!("make {name}.txt"),
            Reply::execute(
                "python",
                &format!("open('{name}.txt', 'w').write('x')\nprint('MADE-' + '{name}')"),
            ),
        );
}

/// The model answers without doing anything.
fn fails(env: &TestEnv, name: &str) {
    env.server.answer_when(
        &format!("make {name}.txt"),
        Reply::text("I would rather not."),
    );
}

fn results(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn passed(results: &Value) -> Vec<(String, bool)> {
    let mut all: Vec<(String, bool)> = results["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["task"].as_str().unwrap().to_owned(),
                a["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

#[tokio::test]
async fn a_model_that_always_succeeds_scores_exactly_all() {
    let env = TestEnv::new().await;
    let dir = suite(env.cwd.path(), &["one", "two", "three"]);
    for name in ["one", "two", "three"] {
        succeeds(&env, name);
    }
    let out_file = env.cwd.path().join("r.json");
    let out = env
        .run(
            &[
                "eval",
                dir.to_str().unwrap(),
                "--jobs",
                "3",
                "--out",
                out_file.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("3 of 3 attempts passed: 100.0% (95% interval 43.9–100.0%)"),
        "{}",
        out.stdout
    );
    let r = results(&out_file);
    assert_eq!(r["model"], "mock-model");
    for attempt in r["attempts"].as_array().unwrap() {
        assert_eq!(attempt["passed"], true, "{attempt}");
        assert_eq!(attempt["turns"], 2, "{attempt}");
        assert_eq!(attempt["requests"], 2, "{attempt}");
        assert_eq!(attempt["runs"], 1, "{attempt}");
        assert!(attempt["input_tokens"].as_u64().unwrap() > 0, "{attempt}");
        let transcript = attempt["transcript"].as_str().unwrap();
        assert!(Path::new(transcript).is_file(), "{transcript}");
    }
    // Each task ran in its own workspace, never here.
    assert!(!env.cwd.path().join("one.txt").exists());
}

#[tokio::test]
async fn a_suite_named_by_a_relative_path_runs_its_setup_and_check() {
    let env = TestEnv::new().await;
    let dir = suite(env.cwd.path(), &["rel"]);
    // A setup script that must be found from the attempt's own workspace.
    std::fs::write(dir.join("make-rel/setup"), "echo seed > seed.txt\n").unwrap();
    std::fs::write(
        dir.join("make-rel/check"),
        "test -f rel.txt && test -f seed.txt\n",
    )
    .unwrap();
    succeeds(&env, "rel");
    // `suite`, relative to the current folder (the test's cwd).
    let out = env.run(&["eval", "suite"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("1 of 1 attempts passed"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
}

#[tokio::test]
async fn a_model_that_always_fails_scores_exactly_none_and_says_why() {
    let env = TestEnv::new().await;
    let dir = suite(env.cwd.path(), &["one", "two"]);
    fails(&env, "one");
    fails(&env, "two");
    let out = env
        .run(&["eval", dir.to_str().unwrap(), "--repeat", "2"], None)
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("0 of 4 attempts passed: 0.0% (95% interval 0.0–49.0%)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("failures: finished, but the check failed 4"),
        "{}",
        out.stdout
    );
    let r = results(&env.cwd.path().join("eval-results.json"));
    assert_eq!(r["attempts"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn some_pass_some_fail_and_failures_are_grouped_by_kind() {
    let env = TestEnv::new().await;
    let dir = suite(env.cwd.path(), &["good", "lazy", "loops", "slow"]);
    succeeds(&env, "good");
    fails(&env, "lazy");
    // The same failing code again and again: the loop guard stops it.
    env.server.answer_when(
        "make loops.txt",
        Reply::execute("python", "raise ValueError('no luck')"),
    );
    std::fs::write(
        dir.join("make-slow/task.toml"),
        "prompt = \"make slow.txt\"\ntimeout = 3\n",
    )
    .unwrap();
    env.server.answer_when(
        "make slow.txt",
        Reply::text("thinking a long time").hang_after_events(1),
    );
    let out = env
        .run(&["eval", dir.to_str().unwrap(), "--jobs", "2"], None)
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("1 of 4 attempts passed: 25.0% (95% interval 4.6–69.9%)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "failures: timed out 1; stopped by the loop guard 1; finished, but the check failed 1"
        ),
        "{}",
        out.stdout
    );
    let r = results(&env.cwd.path().join("eval-results.json"));
    let by_task = |name: &str| {
        r["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["task"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(by_task("make-slow")["timed_out"], true);
    assert_eq!(by_task("make-slow")["failure"], "timeout");
    assert_eq!(by_task("make-loops")["loop_guard"], true);
    assert_eq!(by_task("make-loops")["runs"], 3);
    assert_eq!(by_task("make-lazy")["failure"], "check");
    // The table has a row per task.
    assert!(out.stdout.contains("make-good"), "{}", out.stdout);
    assert!(out.stdout.contains("1/1"), "{}", out.stdout);
}

#[tokio::test]
async fn resume_skips_finished_attempts_and_compare_shows_what_changed() {
    let env = TestEnv::new().await;
    let dir = suite(env.cwd.path(), &["one", "two"]);
    succeeds(&env, "one");
    fails(&env, "two");
    let first = env.cwd.path().join("first.json");
    // Only task one, then the rest with --resume.
    let out = env
        .run(
            &[
                "eval",
                dir.to_str().unwrap(),
                "--tag",
                "one",
                "--out",
                first.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests_before = env.server.chat_requests().len();
    let out = env
        .run(
            &[
                "eval",
                dir.to_str().unwrap(),
                "--resume",
                first.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("1 attempts at 2 tasks"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("1 already done"), "{}", out.stderr);
    // Only task two asked the model (once: it answered without code).
    assert_eq!(env.server.chat_requests().len(), requests_before + 1);
    let r = results(&first);
    assert_eq!(
        passed(&r),
        vec![
            ("make-one".to_owned(), true),
            ("make-two".to_owned(), false)
        ]
    );

    // Now task two succeeds too: compare the two runs.
    let env2 = TestEnv::new().await;
    let dir2 = suite(env2.cwd.path(), &["one", "two"]);
    succeeds(&env2, "one");
    succeeds(&env2, "two");
    let second = env2.cwd.path().join("second.json");
    let out = env2
        .run(
            &[
                "eval",
                dir2.to_str().unwrap(),
                "--out",
                second.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let out = env
        .run(
            &[
                "eval",
                "compare",
                first.to_str().unwrap(),
                second.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("success rate: 50.0% → 100.0% (+50.0 points)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("make-two: 0% → 100% (better)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("make-one:"), "{}", out.stdout);
}

#[tokio::test]
async fn a_broken_suite_is_reported_with_where_and_how_to_fix() {
    let env = TestEnv::new().await;
    let dir = suite(env.cwd.path(), &["one"]);
    std::fs::write(
        dir.join("make-one/task.toml"),
        "prompt = \"x\"\ntimeout = \"soon\"\n",
    )
    .unwrap();
    let out = env.run(&["eval", dir.to_str().unwrap()], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("make-one/task.toml"), "{}", out.stderr);
    assert!(out.stderr.contains("timeout"), "{}", out.stderr);
    let out = env.run(&["eval", "no-such-suite"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("cannot read the suite no-such-suite"),
        "{}",
        out.stderr
    );
}
