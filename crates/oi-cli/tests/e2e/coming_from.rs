//! Habits brought from Open Interpreter 0.4.3 and Codex (docs/coming-from.md):
//! their flags, profiles and forms of the command line do what they did there.

use oi_testkit::Reply;
use serde_json::Value;

use crate::support::TestEnv;

/// The line of `interpreter config show`'s output that sets `key`.
fn config_line(stdout: &str, key: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("{key} =")))
        .unwrap_or_default()
        .to_owned()
}

/// The user's words of model request `n`.
fn user_text(env: &TestEnv, n: usize) -> String {
    let request = &env.server.chat_requests()[n];
    let user = request
        .messages()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap();
    user["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn open_interpreter_flags_reach_the_model_request() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("done"));
    let out = env
        .exec(&[
            "-t",
            "0.25",
            "-x",
            "321",
            "-cw",
            "9000",
            "-ci",
            "Custom rule: be kind.",
            "-s",
            "You are the test system.",
            "hi",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let request = &env.server.chat_requests()[0];
    assert_eq!(request.body["temperature"], 0.25);
    assert_eq!(request.body["max_tokens"], 321);
    let system = request.messages()[0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are the test system."), "{system}");
    assert!(system.contains("Custom rule: be kind."), "{system}");

    // Where each value came from, as typed in oi's spelling.
    let out = env
        .run(&["config", "show", "-cw", "9000", "-t", "1"], None)
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("context_window = 9000") && out.stdout.contains("--context-window"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("--temperature"), "{}", out.stdout);
}

#[tokio::test]
async fn flags_oi_does_not_take_get_one_line_saying_what_it_offers() {
    let env = TestEnv::new().await;
    for (args, says) in [
        (vec!["-safe", "ask"], "-a untrusted"),
        (vec!["--speak_messages"], "aloud"),
        (vec!["--llm_supports_vision"], "vision = true"),
        (vec!["-o"], "--offline"),
        (vec!["exec", "--multi_line", "x"], "several lines"),
        (vec!["--codestral"], "--local --model"),
    ] {
        let out = env.run(&args, None).await;
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {}", out.stderr);
        assert!(
            lines[0].starts_with("error: `") && lines[0].contains("oi does not take"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(lines[1].contains(says), "{args:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains("unexpected argument"),
            "{}",
            out.stderr
        );
    }
    // Accepted for Open Interpreter's scripts, changing nothing.
    env.server.push(Reply::text("done"));
    let out = env.exec(&["--disable_telemetry", "hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
}

#[tokio::test]
async fn llm_supports_functions_chooses_the_harness() {
    let env = TestEnv::new().await;
    let show = |args: &'static [&'static str]| env.run(args, None);
    let out = show(&["config", "show", "--no-llm_supports_functions"]).await;
    assert!(
        out.stdout.contains("harness = \"markdown\""),
        "{}",
        out.stdout
    );
    let out = show(&["config", "show", "-lsf"]).await;
    assert!(
        out.stdout.contains("harness = \"native\""),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn codex_approval_spellings_map_onto_oi_policies() {
    let env = TestEnv::new().await;
    let out = env.run(&["config", "show", "-a", "untrusted"], None).await;
    let approval = config_line(&out.stdout, "approval");
    assert!(
        approval.contains("\"ask\"") && approval.contains("--ask-for-approval untrusted"),
        "{approval}"
    );
    let out = env.run(&["config", "show", "--full-auto"], None).await;
    assert!(
        config_line(&out.stdout, "approval").contains("\"auto\""),
        "{}",
        out.stdout
    );
    assert!(
        config_line(&out.stdout, "sandbox").contains("\"workspace-write\""),
        "{}",
        out.stdout
    );

    // `-a never` runs code without asking (no second confirmation needed).
    env.server
        .push(Reply::execute(
            "python",
            "open('ran.txt', 'w').write('yes')",
        ))
        .push(Reply::text("done"));
    let out = env.exec(&["-a", "never", "write the file"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(env.cwd.path().join("ran.txt").is_file(), "{out:?}");
}

#[tokio::test]
async fn ephemeral_sessions_leave_no_transcript() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("done"));
    let out = env.exec(&["--ephemeral", "hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let out = env.run(&["sessions"], None).await;
    assert!(
        out.stdout.starts_with("No sessions recorded"),
        "{}",
        out.stdout
    );

    // An ephemeral session may still start from a recorded one: it gets
    // that conversation, and adds nothing to its transcript.
    env.server.push(Reply::text("noted"));
    let out = env.exec(&["remember the number 4242"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let transcript = |env: &TestEnv| {
        let sessions = env.oi_home().join("sessions");
        let dir = std::fs::read_dir(sessions)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        std::fs::read_to_string(dir.path().join("transcript.jsonl")).unwrap()
    };
    let before = transcript(&env);
    env.server.push(Reply::text("4242"));
    let out = env
        .exec(&["--ephemeral", "--continue", "which number?"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let sent = serde_json::to_string(env.server.chat_requests()[2].messages()).unwrap();
    assert!(sent.contains("remember the number 4242"), "{sent}");
    assert_eq!(transcript(&env), before);
}

#[tokio::test]
async fn piped_input_joins_the_task_as_a_stdin_block() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("two lines"));
    let out = env
        .run(&["exec", "count these lines"], Some("alpha\nbeta\n"))
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        user_text(&env, 0),
        "count these lines\n\n<stdin>\nalpha\nbeta\n</stdin>"
    );
}

#[tokio::test]
async fn a_task_as_the_first_argument_starts_the_interactive_session_with_it() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text("first answer"))
        .push(Reply::text("second answer"));
    // The task runs first; the session then reads the next one.
    let out = env
        .run(&["what is in this folder?"], Some("and now?\n"))
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(user_text(&env, 0), "what is in this folder?");
    assert_eq!(user_text(&env, 1), "and now?");
    assert!(
        out.stdout.contains("first answer") && out.stdout.contains("second answer"),
        "{}",
        out.stdout
    );

    // A mistyped command is not sent to the model.
    let out = env.run(&["sesions"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("did you mean `sessions`"),
        "{}",
        out.stderr
    );
    assert_eq!(env.server.chat_requests().len(), 2);
    // A word near a command's name is a task (`hello` is two from `help`).
    env.server.push(Reply::text("hello to you"));
    let out = env.run(&["hello"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(user_text(&env, 2), "hello");
}

#[tokio::test]
async fn resume_takes_up_a_session_picked_from_the_list_or_the_last() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("noted"));
    let out = env.exec(&["remember the number 4242"]).await;
    assert_eq!(out.code, 0, "{out:?}");

    // `--last`: this folder's latest, in the interactive session.
    env.server.push(Reply::text("it was 4242"));
    let out = env.run(&["resume", "--last"], Some("what was it?\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    let sent: Vec<Value> = env.server.chat_requests()[1].messages().to_vec();
    assert!(
        sent.iter()
            .any(|m| m["content"] == "remember the number 4242"),
        "{sent:?}"
    );

    // Picked by number (without a terminal the list goes to stderr), and
    // Open Interpreter's `--conversations` is the same picker.
    for args in [&["resume"][..], &["--conversations"][..]] {
        env.server.push(Reply::text("again"));
        let n = env.server.chat_requests().len();
        let out = env.run(args, Some("1\nand again?\n")).await;
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        assert!(out.stderr.contains("  1. "), "{}", out.stderr);
        assert!(
            out.stderr.contains("remember the number 4242"),
            "{}",
            out.stderr
        );
        let sent = env.server.chat_requests()[n].messages().to_vec();
        assert!(
            sent.iter()
                .any(|m| m["content"] == "remember the number 4242"),
            "{sent:?}"
        );
    }

    // Conversations Open Interpreter saved are listed after oi's sessions.
    let saved = env
        .home
        .path()
        .join(".config/open-interpreter/conversations");
    std::fs::create_dir_all(&saved).unwrap();
    std::fs::write(saved.join("Zed_chat.json"), OPEN_INTERPRETER_CONVERSATION).unwrap();
    env.server.push(Reply::text("You are Zed."));
    let n = env.server.chat_requests().len();
    let out = env
        .run(&["--conversations"], Some("2\nwhat is my name?\n"))
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("  2. Open Interpreter · Zed chat"),
        "{}",
        out.stderr
    );
    let sent = serde_json::to_string(&env.server.chat_requests()[n].messages()).unwrap();
    assert!(sent.contains("My name is Zed."), "{sent}");
}

#[tokio::test]
async fn verbose_shows_each_request_as_sent() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("done"));
    let out = env.exec(&["-v", "hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("→ request:"), "{}", out.stderr);
    assert!(
        out.stderr.contains("\"model\": \"mock-model\""),
        "{}",
        out.stderr
    );
    env.server.push(Reply::text("done"));
    let out = env.exec(&["hi"]).await;
    assert!(!out.stderr.contains("→ request:"), "{}", out.stderr);
}

#[tokio::test]
async fn profiles_ship_with_oi_load_from_a_path_and_from_open_interpreter() {
    let env = TestEnv::new().await;
    // oi's own, by name and by Open Interpreter's shortcut.
    for args in [
        &["config", "show", "-p", "fast"][..],
        &["config", "show", "--fast"][..],
    ] {
        let out = env.run(args, None).await;
        assert_eq!(out.code, 0, "{out:?}");
        let line = config_line(&out.stdout, "model");
        assert!(
            line.contains("gpt-5-nano") && line.contains("profile fast"),
            "{line}"
        );
    }

    // A file's path.
    std::fs::write(
        env.cwd.path().join("mine.toml"),
        "model = \"from-a-file\"\n",
    )
    .unwrap();
    let out = env
        .run(&["config", "show", "--profile", "./mine.toml"], None)
        .await;
    assert!(
        config_line(&out.stdout, "model").contains("from-a-file"),
        "{}",
        out.stdout
    );

    // Open Interpreter's YAML profile, found in its folder: the keys oi
    // knows converted, the others named.
    let oi_dir = env.home.path().join(".config/open-interpreter/profiles");
    std::fs::create_dir_all(&oi_dir).unwrap();
    std::fs::write(
        oi_dir.join("work.yaml"),
        "llm:\n  model: openai/mock-model\n  temperature: 0.5\ncomputer:\n  import_computer_api: true\nauto_run: true\nversion: 0.2.5\n",
    )
    .unwrap();
    env.server
        .push(Reply::execute("python", "print('ran without asking')"))
        .push(Reply::text("done"));
    let out = env.exec(&["-p", "work", "go"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let request = &env.server.chat_requests()[0];
    assert_eq!(request.body["model"], "mock-model");
    assert_eq!(request.body["temperature"], 0.5);
    assert!(
        out.stderr.contains("`computer.import_computer_api`") && !out.stderr.contains("`version`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("ran without asking"), "{}", out.stderr);

    // `--profiles` lists all three kinds, and where yours go.
    let out = env.run(&["--profiles"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    for expected in ["fast", "oi's own", "work", "Open Interpreter's", "profiles"] {
        assert!(out.stdout.contains(expected), "{expected}: {}", out.stdout);
    }

    // Open Interpreter's Python profiles cannot be run: said so, with the way.
    let out = env
        .run(&["config", "show", "-p", "local-os.py"], None)
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("Python profiles") && out.stderr.contains("TOML"),
        "{}",
        out.stderr
    );

    // A name nobody has lists what there is.
    let out = env.run(&["config", "show", "-p", "nope"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("fast") && out.stderr.contains("work"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn magic_commands_are_the_slash_commands_and_double_percent_runs_a_shell_command() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("hello there"));
    let out = env
        .run(
            &[],
            Some("%help\n%verbose on\nhi\n%verbose off\n%% echo from-the-shell-$((6*7))\n%tokens\n%nope\n%reset\n"),
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    for expected in [
        "Open Interpreter's magic commands",
        "→ request:",
        "hello there",
        "from-the-shell-42",
        "context",
    ] {
        assert!(out.stdout.contains(expected), "{expected}: {}", out.stdout);
    }
    assert!(
        out.stdout.contains("unknown command `%nope`")
            || out.stderr.contains("unknown command `%nope`"),
        "{out:?}"
    );
    // `%%` ran without the model.
    assert_eq!(env.server.chat_requests().len(), 1);
}

#[tokio::test]
async fn export_writes_markdown_and_a_notebook_the_jupyter_library_reads() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "print(6 * 7)"))
        .push(Reply::text("The answer is 42."));
    let out = env
        .run(
            &["-y"],
            Some("compute it\n/export markdown out.md\n%jupyter out.ipynb\n/export pdf x\n"),
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("`pdf` is not a format oi exports"), "{all}");
    let markdown = std::fs::read_to_string(env.cwd.path().join("out.md")).unwrap();
    assert!(markdown.contains("> compute it"), "{markdown}");
    assert!(
        markdown.contains("```python\nprint(6 * 7)\n```"),
        "{markdown}"
    );
    assert!(markdown.contains("42"), "{markdown}");
    assert!(
        markdown.trim_end().ends_with("The answer is 42."),
        "{markdown}"
    );

    let Some(python) = oi_testkit::pip_package("nbformat", "nbformat") else {
        return;
    };
    let check = "import json, nbformat, sys\n\
        nb = nbformat.read(sys.argv[1], as_version=4)\n\
        nbformat.validate(nb)\n\
        code = [c for c in nb.cells if c.cell_type == 'code']\n\
        print(json.dumps({'source': code[0].source, 'out': code[0].outputs[0].text}))";
    let out = env
        .program(&python, &["-c", check, "out.ipynb"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cell: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cell["source"], "print(6 * 7)");
    assert!(cell["out"].as_str().unwrap().contains("42"), "{cell}");
}

/// A conversation as Open Interpreter 0.4.3 saves it: a JSON list of LMC
/// messages.
const OPEN_INTERPRETER_CONVERSATION: &str = r#"[
  {"role": "user", "type": "message", "content": "My name is Zed."},
  {"role": "assistant", "type": "message", "content": "Nice to meet you. Let me check the date."},
  {"role": "assistant", "type": "code", "format": "python", "content": "print('2024-07-01')"},
  {"role": "computer", "type": "console", "format": "active_line", "content": "1"},
  {"role": "computer", "type": "console", "format": "output", "content": "2024-07-01\n"},
  {"role": "assistant", "type": "message", "content": "It is July 1st."}
]"#;

#[tokio::test]
async fn open_interpreter_conversations_load_with_load_and_resume_file() {
    let env = TestEnv::new().await;
    std::fs::write(
        env.cwd.path().join("oi-conversation.json"),
        OPEN_INTERPRETER_CONVERSATION,
    )
    .unwrap();
    let had_it = |n: usize| {
        let sent = env.server.chat_requests()[n].messages().to_vec();
        let text = serde_json::to_string(&sent).unwrap();
        text.contains("My name is Zed.")
            && text.contains("print('2024-07-01')")
            && text.contains("2024-07-01\\n")
    };

    // `--resume FILE`: a new session that starts from it.
    env.server.push(Reply::text("You are Zed."));
    let out = env
        .exec(&["--resume", "./oi-conversation.json", "what is my name?"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("Loaded 4 messages")
            && out.stderr.contains("saved by Open Interpreter"),
        "{}",
        out.stderr
    );
    assert!(had_it(0));

    // `/load FILE` in the session.
    env.server.push(Reply::text("Zed."));
    let out = env
        .run(
            &[],
            Some("/load ./oi-conversation.json\nwhat is my name?\n"),
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("loaded 4 messages"), "{}", out.stdout);
    assert!(had_it(1));

    // A file that is no conversation is refused, naming it.
    std::fs::write(env.cwd.path().join("bad.json"), "{\"hello\": 1}").unwrap();
    let out = env.exec(&["--resume", "bad.json", "hi"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("--resume") && out.stderr.contains("bad.json"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn doctor_says_what_oi_sees_each_with_a_hint() {
    let env = TestEnv::new().await;
    env.server.set_models(serde_json::json!({
        "object": "list",
        "data": [{"id": "mock-model", "object": "model"}, {"id": "other", "object": "model"}]
    }));
    let out = env
        .run_with_env(&["doctor"], &[("ANTHROPIC_API_KEY", "sk-test-doctor")])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    for expected in [
        "Configuration",
        "✓ the model server at ",
        "model mock-model",
        "✓ the server answers: 2 models",
        "✓ ANTHROPIC_API_KEY (Anthropic)",
        "· OPENAI_API_KEY not set",
        "Model servers on this machine",
        "✓ python: ",
        "✓ shell: ",
        "Sandbox",
        "OS mode",
        "DISPLAY is not set",
    ] {
        assert!(out.stdout.contains(expected), "{expected}:\n{}", out.stdout);
    }
    // The key itself is never shown.
    assert!(!out.stdout.contains("sk-test-doctor"), "{}", out.stdout);

    // As JSON, for programs.
    let out = env.run(&["doctor", "--json"], None).await;
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let titles: Vec<&str> = report["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Configuration",
            "Model",
            "API keys",
            "Model servers on this machine",
            "Languages",
            "Sandbox",
            "OS mode"
        ]
    );

    // A model server that does not answer is a problem: exit code 1, with a hint.
    env.write_config(
        "model_provider = \"gone\"\nmodel = \"m\"\n[model_providers.gone]\nname = \"the gone server\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    );
    let out = env.run(&["doctor"], None).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("✗ the server does not answer"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("    → "), "{}", out.stdout);
}

#[tokio::test]
async fn open_interpreter_word_flags_set_what_their_oi_spellings_set() {
    let env = TestEnv::new().await;
    let out = env
        .run(
            &[
                "config",
                "show",
                "-vi",
                "-xo",
                "1234",
                "-b",
                "2.5",
                "-os",
                "--auto_run",
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let line_of = |key: &str| config_line(&out.stdout, key);
    assert!(
        line_of("model").contains("gpt-5-mini") && line_of("model").contains("profile vision"),
        "{}",
        out.stdout
    );
    assert!(
        line_of("max_output").contains("1234") && line_of("max_output").contains("--max-output"),
        "{}",
        out.stdout
    );
    assert!(line_of("max_budget").contains("2.5"), "{}", out.stdout);
    assert!(
        line_of("os").contains("true") && line_of("os").contains("--os"),
        "{}",
        out.stdout
    );
    assert!(line_of("approval").contains("\"auto\""), "{}", out.stdout);
}

#[tokio::test]
async fn local_models_lists_the_servers_here_and_the_built_in_model() {
    let env = TestEnv::new().await;
    for flag in ["--local-models", "--local_models"] {
        let out = env
            .run_with_env(&[flag], &[("OI_LOCAL_SERVERS", "127.0.0.1:9")])
            .await;
        assert_eq!(out.code, 0, "{flag}: {out:?}");
        assert!(
            out.stdout
                .contains("no model server answered on this machine")
                && out.stdout.contains("http://127.0.0.1:9"),
            "{flag}: {}",
            out.stdout
        );
        assert!(
            out.stdout.contains("Built-in model"),
            "{flag}: {}",
            out.stdout
        );
    }
}
