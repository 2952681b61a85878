//! Whole-output snapshots of the CLI's key outputs — an exec's progress and
//! answer, errors, `config show`, `sessions`, an eval report — beside the
//! other tests' assertions on their parts. Paths, ports, ids, times,
//! durations and token counts are filtered out, so a snapshot changes only
//! when what a user reads changes.

use oi_testkit::Reply;

use crate::support::{Output, TestEnv};

/// `out` as one text: its exit code, stdout and stderr.
fn whole(out: &Output) -> String {
    format!(
        "exit code: {}\n--- stdout\n{}--- stderr\n{}",
        out.code, out.stdout, out.stderr
    )
}

/// Snapshots `text` with what changes from run to run taken out.
fn snapshot(env: &TestEnv, name: &str, text: &str) {
    let cwd = env.cwd.path().display().to_string();
    let home = env.home.path().display().to_string();
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&cwd), "[CWD]");
    settings.add_filter(&regex_escape(&home), "[HOME]");
    settings.add_filter(r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]");
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    settings.add_filter(r"\d{8}-\d{6}-[0-9a-f]{4}", "[SESSION]");
    settings.add_filter(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?( UTC|Z)?", "[TIME]");
    // Spaces before a duration too: a slower run's wider number must not
    // shift the columns.
    settings.add_filter(r" *\d+\.\d ?s\b", " [SECS] s");
    settings.add_filter(r"\d+ in, \d+ out", "[N] in, [N] out");
    settings.add_filter(r"\b\d+(\.\d+)? s\)", "[SECS] s)");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

#[tokio::test]
async fn an_exec_shows_its_code_output_and_answer() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "print(6 * 7)"))
        .push(Reply::text("The answer is 42."));
    let out = env.exec(&["-y", "what is 6 times 7?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    snapshot(&env, "exec_progress", &whole(&out));
}

#[tokio::test]
async fn errors_say_what_where_and_how_to_fix_it() {
    let env = TestEnv::new().await;
    let mut all = String::new();
    let mut case = |name: &str, out: Output| {
        all.push_str(&format!("=== {name}\n{}\n", whole(&out)));
    };
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"m\"\nmax_turn = 5\n\n[model_providers.mock]\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    case("unknown key", env.exec(&["hi"]).await);
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"m\"\n\n[model_providers.mock]\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    case("bad limit", env.exec(&["--max-budget", "-5", "hi"]).await);
    case(
        "missing workspace",
        env.exec(&["--workspace", "nowhere", "hi"]).await,
    );
    case("bad sandbox", env.exec(&["--sandbox", "open", "hi"]).await);
    case(
        "approval never",
        env.exec(&["-c", "approval=never", "hi"]).await,
    );
    assert!(env.server.model_requests().is_empty());
    snapshot(&env, "errors", &all);
}

#[tokio::test]
async fn config_show_and_sessions_read_as_before() {
    let env = TestEnv::new().await;
    let out = env
        .run(&["config", "show", "-c", "max_turns=9"], None)
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    snapshot(&env, "config_show", &out.stdout);

    env.server.push(Reply::text("Hello."));
    let out = env.exec(&["say hello"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let out = env.run(&["sessions"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    snapshot(&env, "sessions", &out.stdout);
}

#[tokio::test]
async fn an_eval_report_reads_as_before() {
    let env = TestEnv::new().await;
    let dir = env.cwd.path().join("suite");
    for name in ["pass", "fail"] {
        let task = dir.join(name);
        std::fs::create_dir_all(&task).unwrap();
        std::fs::write(
            task.join("task.toml"),
            format!("prompt = \"make {name}.txt\"\ntimeout = 60\n"),
        )
        .unwrap();
        std::fs::write(task.join("check"), format!("test -f {name}.txt\n")).unwrap();
    }
    env.server
        .answer_when("MADE", Reply::text("Done."))
        .answer_when(
            "make pass.txt",
            Reply::execute("python", "open('pass.txt', 'w').write('x')\nprint('MADE')"),
        )
        .answer_when("make fail.txt", Reply::text("I would rather not."));
    let results = env.cwd.path().join("r.json");
    let out = env
        .run(
            &[
                "eval",
                dir.to_str().unwrap(),
                "--out",
                results.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    snapshot(&env, "eval_report", &whole(&out));
}
