//! The interactive session, driven through stdin: tasks and approvals
//! (y, n, a, e) are typed lines.

use oi_testkit::Reply;
use pretty_assertions::assert_eq;

use crate::support::{TestEnv, last_message_text};

#[tokio::test]
async fn approving_runs_the_code() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "print(2 + 2)"))
        .push(Reply::text("It is 4."));
    let out = env.run(&[], Some("add two and two\ny\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("Run this python code? [y]es, [n]o, [a]lways (this session), [e]dit:"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("It is 4."), "{}", out.stdout);
    assert_eq!(last_message_text(&env.server, 1), "4\n");
}

#[tokio::test]
async fn a_declined_run_reaches_the_model_as_declined() {
    let env = TestEnv::new().await;
    let marker = env.cwd.path().join("should-not-exist");
    env.server
        .push(Reply::execute(
            "shell",
            &format!("touch {}", marker.display()),
        ))
        .push(Reply::text("Understood, I will not."));
    let out = env.run(&[], Some("make a file\nn\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!marker.exists());
    assert!(out.stdout.contains("not run (declined)"), "{}", out.stdout);
    assert_eq!(
        last_message_text(&env.server, 1),
        "The user declined to run this code."
    );
}

#[tokio::test]
async fn always_approves_the_rest_of_the_session() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "a = 1"))
        .push(Reply::execute("python", "print(a + 1)"))
        .push(Reply::text("first task done"))
        .push(Reply::execute("python", "print(a + 2)"))
        .push(Reply::text("second task done"));
    // One `a` answers every later run, including the next task's.
    let out = env.run(&[], Some("first\na\nsecond\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.matches("Run this python code?").count(),
        1,
        "{}",
        out.stdout
    );
    assert_eq!(last_message_text(&env.server, 2), "2\n");
    assert_eq!(last_message_text(&env.server, 4), "3\n");
}

#[tokio::test]
async fn editing_runs_the_edited_code_and_tells_the_model() {
    let env = TestEnv::new().await;
    let editor = env.home.path().join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/41/42/' \"$1\"\n").unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.server
        .push(Reply::execute("python", "print(41)"))
        .push(Reply::text("ok"));
    let mut cmd = env.command(&[]);
    cmd.env("EDITOR", &editor);
    let out = crate::support::run_command(cmd, Some("print it\ne\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    let result = last_message_text(&env.server, 1);
    assert_eq!(
        result,
        "The user edited the code before running it. It ran as:\n```\nprint(42)\n```\n42\n"
    );
}

#[tokio::test]
async fn unclear_answers_are_asked_again_and_end_of_input_declines() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "print('never')"))
        .push(Reply::text("ok"));
    let out = env.run(&[], Some("go\nmaybe\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("Please answer y, n, a or e."),
        "{}",
        out.stdout
    );
    assert_eq!(
        last_message_text(&env.server, 1),
        "The user declined to run this code."
    );
}

#[tokio::test]
async fn yes_skips_the_questions_and_exit_ends_the_session() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("shell", "echo ran"))
        .push(Reply::text("done"));
    let out = env.run(&["--yes"], Some("go\n/exit\nnot sent\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stdout.contains("Run this"), "{}", out.stdout);
    assert_eq!(env.server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_program_waiting_for_input_gets_the_line_the_user_types() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute(
            "python",
            "name = input('Your name? ')\nprint('hello', name)",
        ))
        .push(Reply::text("Greeted."));
    let out = env.run(&["-y"], Some("greet me\nAda\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("the program waits for input"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("hello Ada\n"), "{}", out.stdout);
    assert_eq!(
        last_message_text(&env.server, 1),
        "Your name? Ada\nhello Ada\n"
    );
}

#[tokio::test]
async fn when_the_loop_guard_stops_a_task_the_user_may_continue_it() {
    let env = TestEnv::new().await;
    for _ in 0..3 {
        env.server
            .push(Reply::execute("python", "import nosuchmodule"));
    }
    env.server
        .push(Reply::text("Trying another way: it is not installed."));
    let out = env.run(&["-y"], Some("use nosuchmodule\ny\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(
            "the task was going in circles: the same error 3 times in a row: ModuleNotFoundError"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Continue anyway? [y/N]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Trying another way"), "{}", out.stdout);
    let requests = env.server.model_requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[3]
            .last_message_text()
            .starts_with("Continue, but take a different approach")
    );
}

#[tokio::test]
async fn undo_puts_back_what_a_run_deleted_and_edited_and_tells_the_model() {
    let env = TestEnv::new().await;
    let cwd = env.cwd.path();
    std::fs::write(cwd.join("keep.csv"), "id,value\n1,10\n").unwrap();
    std::fs::write(
        cwd.join("notes.md"),
        [0xefu8, 0xbb, 0xbf, b'#', b' ', b'x', b'\n'],
    )
    .unwrap();
    env.server
        .push(Reply::execute(
            "shell",
            "rm keep.csv && printf 'rewritten' > notes.md && echo new > added.txt",
        ))
        .push(Reply::text("Cleaned up."))
        .push(Reply::text("Understood."));
    let out = env
        .run(&["-y"], Some("clean up\n/undo\nwhat happened?\n"))
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("keep.csv")).unwrap(),
        "id,value\n1,10\n"
    );
    assert_eq!(
        std::fs::read(cwd.join("notes.md")).unwrap(),
        [0xefu8, 0xbb, 0xbf, b'#', b' ', b'x', b'\n']
    );
    assert!(!cwd.join("added.txt").exists());
    assert!(
        out.stdout
            .contains("↶ undone: the workspace is back to before run 1"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("brought back keep.csv"),
        "{}",
        out.stdout
    );
    let told = last_message_text(&env.server, 2);
    assert!(
        told.starts_with("[The user undid your last run(s)"),
        "{told}"
    );
    assert!(told.ends_with("what happened?"), "{told}");
    // The undone exchange left the conversation.
    let roles: Vec<String> = env.server.model_requests()[2]
        .messages()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(roles, ["system", "user", "user"]);
}

#[tokio::test]
async fn the_plain_session_has_every_slash_command_and_triple_quoted_blocks() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text("Two lines seen.").usage(900, 12))
        .push(Reply::text("After reset."))
        .push(Reply::text("After load."));
    let script = "\"\"\"line one\nline two\"\"\"\n/cost\n/tokens\n/save kept\n/reset\n/harness markdown\n/auto\n/verbose\n/verbose\n/modle\ngreetings\n/load\n1\nagain\n/exit\n";
    let out = env.run(&[], Some(script)).await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(last_message_text(&env.server, 0), "line one\nline two");
    assert!(
        out.stdout.contains("1 requests, 900 tokens in"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("next request:"), "{}", out.stdout);
    assert!(env.oi_home().join("conversations/kept.json").is_file());
    assert!(out.stdout.contains("new conversation"), "{}", out.stdout);
    assert!(out.stdout.contains("harness: markdown"), "{}", out.stdout);
    assert!(out.stdout.contains("auto-run on"), "{}", out.stdout);
    assert!(
        out.stdout.contains("did you mean /model?"),
        "{}",
        out.stdout
    );
    // After /reset the conversation starts again; the markdown harness
    // sends no tools.
    let body = requests[1].body.to_string();
    assert!(!body.contains("line one"), "{body}");
    assert!(requests[1].body.get("tools").is_none(), "{body}");
    // /load by number from the list brings the first exchange back.
    assert!(out.stdout.contains("  1. kept"), "{}", out.stdout);
    let body = requests[2].body.to_string();
    assert!(body.contains("line one"), "{body}");
    assert!(!body.contains("greetings"), "{body}");
}
