//! Configuration through the binary: the seed file, every wire, `-c`,
//! profiles, trust, `config show`/`set`, `models`, and `/model`.

use oi_testkit::Reply;
use pretty_assertions::assert_eq;

use crate::support::{TestEnv, last_message_text, run_command};

const SEED: &str = r#"# ~/.openinterpreter/config.toml
model_provider = "kunavo"
model = "claude-sonnet-5"

[model_providers.kunavo]
name = "Kunavo"
base_url = "https://api.kunavo.com/v1"
env_key = "KUNAVO_API_KEY"     # the NAME of the variable, not the key
wire_api = "chat"
"#;

fn seed_for(env: &TestEnv) -> String {
    SEED.replace("https://api.kunavo.com/v1", &env.server.base_url())
}

#[tokio::test]
async fn the_seed_configuration_runs_a_task() {
    let env = TestEnv::new().await;
    env.write_config(&seed_for(&env));
    env.server
        .require_api_key("sk-kunavo")
        .push(Reply::execute("python", "print(40 + 2)"))
        .push(Reply::text("42"));
    let mut cmd = env.command(&["exec", "-y", "add"]);
    cmd.env("KUNAVO_API_KEY", "sk-kunavo");
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "42\n");
    let request = &env.server.chat_requests()[0];
    assert_eq!(request.body["model"], "claude-sonnet-5");
    assert_eq!(request.header("authorization"), Some("Bearer sk-kunavo"));
}

/// The same scripted task through `interpreter exec` on each wire.
#[tokio::test]
async fn the_same_task_passes_on_every_wire() {
    for (wire, base) in [("chat", false), ("responses", false), ("messages", true)] {
        let env = TestEnv::new().await;
        let base_url = if base {
            env.server.root_url()
        } else {
            env.server.base_url()
        };
        env.write_config(&format!(
            "model_provider = \"p\"\nmodel = \"m\"\n[model_providers.p]\nbase_url = \"{base_url}\"\nwire_api = \"{wire}\"\nenv_key = \"P_KEY\"\n"
        ));
        env.server
            .require_api_key("sk-p")
            .push(Reply::execute("python", "x = 6 * 7").with_text("Computing."))
            .push(Reply::execute("python", "print(x)"))
            .push(Reply::text("It is 42.").usage(100, 5));
        let mut cmd = env.command(&["exec", "-y", "what is 6*7?"]);
        cmd.env("P_KEY", "sk-p");
        let out = run_command(cmd, None).await;
        assert_eq!(out.code, 0, "{wire}: {out:?}");
        assert_eq!(out.stdout, "It is 42.\n", "{wire}");
        let requests = env.server.model_requests();
        assert_eq!(requests.len(), 3, "{wire}");
        assert_eq!(last_message_text(&env.server, 2), "42\n", "{wire}");
        assert!(out.stderr.contains("Computing."), "{wire}: {}", out.stderr);
    }
}

#[tokio::test]
async fn overrides_and_profiles_apply_to_the_run() {
    let env = TestEnv::new().await;
    let base = env.server.base_url();
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n[model_providers.mock]\nbase_url = \"{base}\"\n\n[profiles.fast]\nmodel = \"fast-model\"\nmax_turns = 2\n"
    ));
    env.server.repeat(Reply::execute("python", "print(1)"));
    let out = env.exec(&["-y", "--profile", "fast", "loop"]).await;
    assert_eq!(out.code, 3, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 2, "max_turns from the profile");
    assert_eq!(requests[0].body["model"], "fast-model");

    let out = env
        .exec(&[
            "-y",
            "--profile",
            "fast",
            "-c",
            "max_turns=1",
            "-c",
            "model=c-model",
            "loop",
        ])
        .await;
    assert_eq!(out.code, 3, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 3, "-c beats the profile");
    assert_eq!(requests[2].body["model"], "c-model");

    let out = env.exec(&["--profile", "slow", "hi"]).await;
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("error: profile `slow` does not exist"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("hint: available profiles: fast"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn config_errors_point_at_the_line_and_stop_before_any_request() {
    let env = TestEnv::new().await;
    env.write_config("model = \"m\"\n\nmax_turn = 5\n");
    let out = env.exec(&["hi"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("config.toml:3: unknown key `max_turn`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("hint: did you mean `max_turns`?"),
        "{}",
        out.stderr
    );
    env.write_config("model = \"m\"\n");
    let out = env.exec(&["-c", "max_turns", "hi"]).await;
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("error: -c `max_turns`: expected KEY=VALUE"),
        "{}",
        out.stderr
    );
    assert!(env.server.requests().is_empty());
}

#[tokio::test]
async fn a_negative_limit_flag_is_refused_with_its_range() {
    // Regression: `--max-budget -5` got clap's bare "unexpected argument".
    let env = TestEnv::new().await;
    for (flag, value, expected) in [
        (
            "--max-budget",
            "-5",
            "`max_budget` = -5.0 is not valid: expected a number from 0",
        ),
        (
            "--max-turns",
            "-5",
            "`max_turns` = -5 is not valid: expected a whole number of at least 1",
        ),
        (
            "--max-output",
            "0",
            "`max_output` = 0 is not valid: expected a whole number of at least 1",
        ),
        (
            "--max-time",
            "-3",
            "`max_time` = -3 is not valid: expected a whole number of at least 0",
        ),
        ("--run-timeout", "-1", "`run_timeout` = -1 is not valid"),
    ] {
        let out = env.exec(&[flag, value, "hi"]).await;
        assert_eq!(out.code, 2, "{flag} {value}: {out:?}");
        assert!(
            out.stderr.contains(&format!("error: {flag}: {expected}")),
            "{flag} {value}: {}",
            out.stderr
        );
        assert!(
            out.stderr
                .contains(&format!("hint: give `{flag}` a valid value")),
            "{}",
            out.stderr
        );
    }
    assert!(env.server.requests().is_empty());
}

#[tokio::test]
async fn an_untrusted_project_is_mentioned_once_and_applies_once_trusted() {
    let env = TestEnv::new().await;
    std::fs::create_dir(env.cwd.path().join(".git")).unwrap();
    let project = env.cwd.path().join(".openinterpreter");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("config.toml"),
        "custom_instructions = \"Always answer in haiku.\"\n",
    )
    .unwrap();
    env.server.repeat(Reply::text("ok"));

    let out = env.exec(&["hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("is not trusted. To apply it: `interpreter trust"),
        "{}",
        out.stderr
    );
    let system = |i: usize| {
        env.server.chat_requests()[i].messages()[0]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(!system(0).contains("haiku"));
    let out = env.exec(&["hi"]).await;
    assert!(
        !out.stderr.contains("not trusted"),
        "said once only: {}",
        out.stderr
    );

    let out = env.run(&["trust"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("is now trusted"), "{}", out.stdout);
    let out = env.exec(&["hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        system(2).contains("Always answer in haiku."),
        "{}",
        system(2)
    );
}

#[tokio::test]
async fn config_show_prints_values_with_their_origins_and_no_secrets() {
    let env = TestEnv::new().await;
    env.write_config(&seed_for(&env));
    let mut cmd = env.command(&[
        "config",
        "show",
        "-c",
        "max_turns=9",
        "--model",
        "flag-model",
    ]);
    cmd.env("KUNAVO_API_KEY", "sk-very-secret");
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let line = |key: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no `{key}` in:\n{}", out.stdout))
            .to_owned()
    };
    assert!(
        line("model_provider").ends_with("# ~/.openinterpreter/config.toml:2"),
        "{}",
        line("model_provider")
    );
    assert!(line("model").ends_with("# --model"), "{}", line("model"));
    assert!(line("max_turns").ends_with("# -c"), "{}", line("max_turns"));
    assert!(
        line("max_output").ends_with("# default"),
        "{}",
        line("max_output")
    );
    assert!(
        line("env_key").contains("$KUNAVO_API_KEY is set"),
        "{}",
        line("env_key")
    );
    assert!(!out.stdout.contains("sk-very-secret"));
}

#[tokio::test]
async fn config_set_writes_the_user_file_keeping_comments() {
    let env = TestEnv::new().await;
    env.write_config(&seed_for(&env));
    let out = env.run(&["config", "set", "max_turns", "7"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "max_turns = 7  (written to ~/.openinterpreter/config.toml)\n"
    );
    let text = std::fs::read_to_string(env.oi_home().join("config.toml")).unwrap();
    assert!(
        text.contains("env_key = \"KUNAVO_API_KEY\"     # the NAME of the variable, not the key"),
        "{text}"
    );
    assert!(text.contains("max_turns = 7"), "{text}");
    let out = env.run(&["config", "set", "harness", "xml"], None).await;
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("`harness` = \"xml\" is not valid"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn models_lists_what_the_provider_offers() {
    let env = TestEnv::new().await;
    let out = env.run(&["models", "--model", "mock-small"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "  mock-large\n* mock-small\n");
    env.server
        .set_models(serde_json::json!({"models": [{"name": "qwen2.5-coder:7b"}]}));
    let out = env.run(&["models"], None).await;
    assert_eq!(out.stdout, "  qwen2.5-coder:7b\n");
    env.server.require_api_key("sk-x");
    let out = env.run(&["models"], None).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("HTTP 401"), "{}", out.stderr);
}

#[tokio::test]
async fn slash_model_switches_and_saves_the_model_and_slash_debug_config_shows_it() {
    let env = TestEnv::new().await;
    env.server.repeat(Reply::text("ok"));
    // Pick by number from the list, then run a task, then by name.
    let out = env
        .run(
            &["--yes"],
            Some("/model\n2\nfirst\n/model mock-large\nsecond\n/debug-config\n"),
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(" 1. mock-large\n"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("model: mock-small\nsaved as your default model"),
        "{}",
        out.stdout
    );
    let requests = env.server.chat_requests();
    assert_eq!(requests[0].body["model"], "mock-small");
    assert_eq!(requests[1].body["model"], "mock-large");
    let text = std::fs::read_to_string(env.oi_home().join("config.toml")).unwrap();
    assert!(text.contains("model = \"mock-large\""), "{text}");
    assert!(
        out.stdout
            .contains("# Now, in this session: model = \"mock-large\""),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("model_provider = \"mock\""),
        "/debug-config: {}",
        out.stdout
    );
}

fn priced_config(env: &TestEnv) -> String {
    format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n[model_providers.mock]\nbase_url = \"{}\"\n\n[models.\"mock-model\"]\ninput_price = 1000.0\noutput_price = 2000.0\n",
        env.server.base_url()
    )
}

#[tokio::test]
async fn the_cost_of_a_task_is_shown_at_the_end() {
    let env = TestEnv::new().await;
    env.write_config(&priced_config(&env));
    env.server
        .push(Reply::text("done").usage(1000, 500).cached(0, 0));
    let out = env.exec(&["hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    // 1000 in × $1000/M + 500 out × $2000/M
    assert!(
        out.stderr.contains("tokens: 1000 in, 500 out · $2.0000"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn max_budget_stops_a_task_before_it_spends_too_much() {
    let env = TestEnv::new().await;
    env.write_config(&priced_config(&env));
    env.server
        .repeat(Reply::execute("python", "print(1)").usage(1000, 100));
    let out = env.exec(&["-y", "--max-budget", "3", "spend"]).await;
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr.contains("stopped before the next model request: it would take the session past its budget of $3.00 (spent $2.4000"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: raise the budget with `--max-budget USD`"),
        "{}",
        out.stderr
    );
    assert_eq!(
        env.server.chat_requests().len(),
        2,
        "each request costs $1.20"
    );
}

#[tokio::test]
async fn a_budget_cannot_be_set_for_a_model_of_unknown_price() {
    let env = TestEnv::new().await;
    let out = env
        .exec(&[
            "--api-base",
            "https://api.example.com/v1",
            "--model",
            "mystery-1",
            "--max-budget",
            "1",
            "hi",
        ])
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("max_budget = 1 cannot be kept: the price of `mystery-1` is unknown"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("[models.\"mystery-1\"] input_price"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_local_model_missing_from_the_catalog_costs_nothing_and_needs_no_note() {
    let env = TestEnv::new().await;
    env.server.repeat(Reply::text("ok").usage(100, 10));
    let out = env.exec(&["--model", "mystery-local", "hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        !out.stderr.contains("is not in oi's model catalog"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("tokens: 100 in, 10 out · $0.0000"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn agents_md_files_reach_the_model_nearest_last_and_config_show_lists_them() {
    let env = TestEnv::new().await;
    let root = env.cwd.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    let pkg = root.join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(root.join("AGENTS.md"), "Root rule: use uv, never pip.\n").unwrap();
    std::fs::write(pkg.join("AGENTS.md"), "Package rule: tests live in t/.\n").unwrap();
    std::fs::write(
        env.oi_home().join("AGENTS.md"),
        "User rule: answer briefly.\n",
    )
    .unwrap();
    env.server.repeat(Reply::text("ok"));

    // `-C pkg`: the workspace decides which files apply.
    let out = env
        .exec(&[
            "-C",
            "pkg",
            "--custom-instructions",
            "Custom rule: be kind.",
            "hi",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let system = env.server.chat_requests()[0].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = |text: &str| {
        system
            .find(text)
            .unwrap_or_else(|| panic!("{text} not in {system}"))
    };
    assert!(at("User rule") < at("Root rule"), "{system}");
    assert!(at("Root rule") < at("Package rule"), "{system}");
    assert!(at("Package rule") < at("Custom rule"), "{system}");

    // From the root, the package's file does not apply.
    let out = env.exec(&["hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let system = env.server.chat_requests()[1].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("Root rule") && !system.contains("Package rule"));

    // A system message replaces oi's prompt; the project's rules still follow.
    let out = env
        .exec(&["--system-message", "You are a terse robot.", "hi"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let system = env.server.chat_requests()[2].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.starts_with("You are a terse robot.\n"), "{system}");
    assert!(system.contains("Root rule") && !system.contains("Open Interpreter"));

    let out = env.run(&["-C", "pkg", "config", "show"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let listed: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("AGENTS.md ("))
        .collect();
    assert_eq!(listed.len(), 3, "{}", out.stdout);
    assert!(listed[2].contains("pkg/AGENTS.md (32 bytes)"), "{listed:?}");

    // Off: nothing is read, and `config show` says so.
    let out = env.exec(&["-c", "project_doc_max_bytes=0", "hi"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let system = env.server.chat_requests()[3].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!system.contains("rule"), "{system}");
}
