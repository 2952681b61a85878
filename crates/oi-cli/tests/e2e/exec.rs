//! `interpreter exec`: tasks that run code and answer.

use oi_testkit::{MockToolCall, Reply};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{TestEnv, alive, last_message_text, signal_when};

#[tokio::test]
async fn a_two_step_task_runs_python_and_prints_the_answer() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "print(6 * 7)"))
        .push(Reply::text("The answer is 42."));
    let out = env.exec(&["--yes", "what is 6 times 7?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "The answer is 42.\n");
    assert!(
        out.stderr.contains("print(6 * 7)"),
        "code is shown: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("42\n"),
        "output is shown: {}",
        out.stderr
    );

    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].messages()[1],
        json!({"role": "user", "content": "what is 6 times 7?"})
    );
    let tool_result = &requests[1].messages()[3];
    assert_eq!(tool_result["role"], "tool");
    assert_eq!(tool_result["tool_call_id"], "call_mock1_0");
    assert_eq!(tool_result["content"], "42\n");
}

#[tokio::test]
async fn requests_carry_the_execute_tool_and_a_system_prompt() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("Hi."));
    let out = env.exec(&["--model", "test-model", "hello"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let request = &env.server.chat_requests()[0];
    assert_eq!(request.body["model"], "test-model");
    // The languages of this machine (python and shell first).
    let languages: Vec<String> = oi_kernels::detect_languages()
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert_eq!(languages[..2], ["python", "shell"]);
    assert_eq!(
        request.body["tools"],
        json!([{
            "type": "function",
            "function": {
                "name": "execute",
                "description": "Run code on the user's machine in a persistent session and return its output (stdout and stderr). State (variables, imports, working directory) is kept between runs of the same language.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "language": {"type": "string", "enum": languages, "description": "The language of the code."},
                        "code": {"type": "string", "description": "The code to run."},
                    },
                    "required": ["language", "code"],
                    "additionalProperties": false,
                },
            },
        }])
    );
    let system = request.messages()[0]["content"].as_str().unwrap();
    assert!(
        system.contains(&env.cwd.path().display().to_string()),
        "{system}"
    );
    assert!(system.contains(&languages.join(", ")), "{system}");
}

#[tokio::test]
async fn python_state_persists_across_runs() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "x = 41"))
        .push(Reply::execute("python", "print(x + 1)"))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", "keep state"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        last_message_text(&env.server, 1),
        "(the code ran without errors and printed nothing)"
    );
    assert_eq!(last_message_text(&env.server, 2), "42\n");
}

#[tokio::test]
async fn shell_state_persists_across_runs() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("shell", "cd /tmp && export GREETING=hi"))
        .push(Reply::execute("shell", "pwd; echo $GREETING"))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", "keep state"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(last_message_text(&env.server, 2), "/tmp\nhi\n");
}

#[tokio::test]
async fn several_calls_in_one_reply_each_get_their_result() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::tool_calls(vec![
            MockToolCall::execute("python", "print('a')"),
            MockToolCall::execute(
                "shell",
                "echo b; exit_code_test() { return 3; }; exit_code_test",
            ),
        ]))
        .push(Reply::text("Both ran."));
    let out = env.exec(&["-y", "two things"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let messages = env.server.chat_requests()[1].messages().to_vec();
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_mock1_0", "content": "a\n"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_mock1_1", "content": "b\n[exit code 3]"})
    );
}

#[tokio::test]
async fn errors_reach_the_model_with_their_traceback() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "1 / 0"))
        .push(Reply::text("It failed."));
    let out = env.exec(&["-y", "divide"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let result = last_message_text(&env.server, 1);
    assert!(
        result.starts_with("Traceback (most recent call last):"),
        "{result}"
    );
    assert!(
        result
            .trim_end()
            .ends_with("ZeroDivisionError: division by zero"),
        "{result}"
    );
    assert!(
        out.stderr.contains("✗ failed: ZeroDivisionError"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn without_a_terminal_or_yes_code_is_not_run_and_the_model_is_told() {
    let env = TestEnv::new().await;
    let marker = env.cwd.path().join("created");
    env.server
        .push(Reply::execute(
            "python",
            &format!("open({:?}, 'w').write('x')", marker),
        ))
        .push(Reply::text("I could not run it."));
    let out = env.exec(&["make a file"]).await;
    assert_eq!(out.code, 4, "{out:?}");
    assert!(!marker.exists(), "the code must not run");
    assert_eq!(out.stdout, "I could not run it.\n");
    assert!(out.stderr.contains("--yes"), "{}", out.stderr);
    let result = last_message_text(&env.server, 1);
    assert!(
        result.contains("cannot ask the user for approval"),
        "{result}"
    );
}

#[tokio::test]
async fn a_tool_call_printed_as_json_text_is_run() {
    // What small local models do: the call is in the text, not in tool_calls.
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text(
            "I will compute it.\n```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print(sum(range(1, 101)))\"}}\n```",
        ))
        .push(Reply::text("The sum is 5050."));
    let out = env.exec(&["-y", "sum 1..100"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "The sum is 5050.\n");
    let messages = env.server.chat_requests()[1].messages().to_vec();
    // The printed call became a real call in the history, answered by a tool message.
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], "I will compute it.");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_oi_text_1");
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_oi_text_1", "content": "5050\n"})
    );
}

#[tokio::test]
async fn the_markdown_harness_runs_every_code_block_in_order() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text(
            "First Python:\n```python\nn = 7\nprint(n * 6)\n```\nThen the shell:\n```bash\necho from-shell\n```\nExpected:\n```text\n42\n```",
        ))
        .push(Reply::text("Both worked."));
    let out = env.exec(&["-y", "--harness", "markdown", "go"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let request = &env.server.chat_requests()[1];
    assert!(
        request.body.get("tools").is_none(),
        "markdown harness sends no tools"
    );
    let result = request.last_message_text();
    assert_eq!(request.messages().last().unwrap()["role"], "user");
    assert!(
        result.starts_with(
            "Code block 1 (python):\n```\n42\n```\n\nCode block 2 (shell):\n```\nfrom-shell\n```\n"
        ),
        "{result}"
    );
}

#[tokio::test]
async fn max_turns_stops_a_model_that_never_stops() {
    let env = TestEnv::new().await;
    env.server
        .repeat(Reply::execute("python", "print('again')"));
    // (The loop guard, which would stop this sooner, is set out of reach.)
    let out = env
        .exec(&[
            "-y",
            "--max-turns",
            "3",
            "-c",
            "loop_guard.max_repeats=100",
            "loop forever",
        ])
        .await;
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr.contains("stopped after 3 model requests"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: raise the limit with `--max-turns N`"),
        "{}",
        out.stderr
    );
    assert_eq!(env.server.chat_requests().len(), 3);
    assert_eq!(out.stdout, "");
}

#[tokio::test]
async fn long_output_is_cut_for_the_model_but_shown_whole() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "print('x' * 5000 + 'END')"))
        .push(Reply::text("ok"));
    let out = env
        .exec(&["-y", "--max-output", "100", "print a lot"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let result = last_message_text(&env.server, 1);
    assert!(
        result.contains("[… 4904 characters of output cut; 5004 in all …]"),
        "{result}"
    );
    assert!(result.ends_with("xxxEND\n"), "the tail is kept: {result}");
    assert!(
        out.stderr.contains(&format!("{}END", "x".repeat(5000))),
        "the user sees everything"
    );
}

#[tokio::test]
async fn the_prompt_can_come_from_stdin() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("Read it."));
    let out = env.run(&["exec", "-"], Some("task from stdin\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(last_message_text(&env.server, 0), "task from stdin\n");
    let out = env.run(&["exec"], Some("")).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("error: the task is empty"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn json_mode_prints_the_event_stream() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "print(1)"))
        .push(Reply::text("one"));
    let out = env.exec(&["-y", "--oi-json", "print one"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let events: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"session_configured"));
    assert_eq!(kinds.last(), Some(&"shutdown_complete"));
    for expected in [
        "code_proposed",
        "run_started",
        "output_delta",
        "run_finished",
        "task_complete",
    ] {
        assert!(
            kinds.contains(&expected),
            "{expected} missing from {kinds:?}"
        );
    }
    let done = events
        .iter()
        .find(|e| e["type"] == "task_complete")
        .unwrap();
    assert_eq!(done["reason"], json!({"type": "done"}));
    assert_eq!(done["final_message"], "one");
}

#[tokio::test]
async fn version_is_printed() {
    let env = TestEnv::new().await;
    let out = env.run(&["--version"], None).await;
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        format!("interpreter {}\n", env!("CARGO_PKG_VERSION"))
    );
}

/// Runs `interpreter ARGS…` on a pseudo-terminal (through util-linux
/// `script`), typing `keys`.
async fn on_a_terminal(env: &TestEnv, args: &[&str], keys: &str) -> crate::support::Output {
    let command_line = std::iter::once(env!("CARGO_BIN_EXE_interpreter"))
        .chain(args.iter().copied())
        .map(|a| shlex::try_quote(a).unwrap().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = env.command(&[]);
    let std_cmd = cmd.as_std_mut();
    let mut script = tokio::process::Command::new("script");
    script
        .args(["-q", "-e", "-c", &command_line, "/dev/null"])
        .current_dir(std_cmd.get_current_dir().unwrap())
        .kill_on_drop(true);
    for (key, value) in std_cmd.get_envs() {
        match value {
            Some(value) => script.env(key, value),
            None => script.env_remove(key),
        };
    }
    crate::support::run_command(script, Some(keys)).await
}

#[tokio::test]
async fn on_a_terminal_exec_asks_before_running() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("shell", "echo approved-run"))
        .push(Reply::text("Ran it."))
        .push(Reply::execute("shell", "echo declined-run"))
        .push(Reply::text("Did not run it."));
    let out = on_a_terminal(&env, &["exec", "first"], "y\n").await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("Run this shell code? [y]es"),
        "{}",
        out.stdout
    );
    assert_eq!(last_message_text(&env.server, 1), "approved-run\n");

    let out = on_a_terminal(&env, &["exec", "second"], "n\n").await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        last_message_text(&env.server, 3),
        "The user declined to run this code."
    );
}

#[tokio::test]
async fn ctrl_c_interrupts_the_running_code() {
    let env = TestEnv::new().await;
    env.server.push(Reply::execute(
        "python",
        "import time\nprint('spin' + 'ning', flush=True)\nwhile True:\n    time.sleep(0.01)",
    ));
    let (code, stderr) = signal_when(&env, &["exec", "-y", "spin"], "spinning", "-INT").await;
    assert_eq!(code, 130, "{stderr}");
    assert!(stderr.contains("✗ interrupted"), "{stderr}");
    assert!(stderr.contains("KeyboardInterrupt"), "{stderr}");
}

#[tokio::test]
async fn sigterm_stops_every_process_the_kernels_started() {
    let env = TestEnv::new().await;
    let pidfile = env.cwd.path().join("pid");
    env.server.push(Reply::execute(
        "shell",
        &format!(
            "sleep 1000 &\necho $! > {}\necho started\nwait",
            pidfile.display()
        ),
    ));
    let (code, stderr) = signal_when(&env, &["exec", "-y", "wait"], "started", "-TERM").await;
    assert_eq!(code, 143, "{stderr}");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The kernel's process group was killed before the binary exited.
    for _ in 0..100 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("`sleep` ({pid}) outlived the session");
}

#[tokio::test]
async fn a_printed_call_of_an_invented_tool_is_corrected_and_the_model_recovers() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text(
            "```json\n{\"name\": \"create_directory\", \"arguments\": {\"dir_name\": \"results\"}}\n```",
        ))
        .push(Reply::execute("shell", "mkdir results"))
        .push(Reply::text("Created."));
    let out = env.exec(&["-y", "create a directory named results"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(env.cwd.path().join("results").is_dir());
    let result = last_message_text(&env.server, 1);
    assert!(
        result.starts_with("Error: there is no tool named `create_directory`"),
        "{result}"
    );
}

#[tokio::test]
async fn a_task_going_in_circles_stops_with_the_limit_exit_code() {
    let env = TestEnv::new().await;
    for _ in 0..3 {
        env.server.push(Reply::execute("shell", "cat missing.txt"));
    }
    let out = env.exec(&["-y", "show missing.txt"]).await;
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr
            .contains("the model proposed the same shell code 3 times in a row")
            || out.stderr.contains("the same error 3 times in a row"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("loop_guard.max_repeats"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn checkpoints_can_be_listed_undone_and_restored_from_the_command_line() {
    let env = TestEnv::new().await;
    let file = env.cwd.path().join("report.txt");
    std::fs::write(&file, "v1\n").unwrap();
    env.server
        .push(Reply::execute("shell", "echo v2 > report.txt"))
        .push(Reply::text("Updated."));
    let out = env.exec(&["-y", "update the report"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v2\n");

    let out = env.run(&["checkpoints"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("before run 1: echo v2 > report.txt"),
        "{}",
        out.stdout
    );

    let out = env.run(&["undo"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v1\n");
    assert!(out.stdout.contains("restored report.txt"), "{}", out.stdout);
    let previous = out
        .stdout
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("to undo this: interpreter checkpoints restore ")
        })
        .unwrap()
        .to_owned();

    // The undo can be undone.
    let out = env.run(&["checkpoints", "restore", &previous], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v2\n");

    let out = env.run(&["checkpoints", "restore", "nosuchid"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("no checkpoint `nosuchid`"),
        "{}",
        out.stderr
    );
}
