//! The live session in a pseudo-terminal: a task with streamed Markdown,
//! highlighted code, the approval dialog and output; the slash commands;
//! Ctrl-C; resizing.

use std::time::Duration;

use oi_testkit::Reply;
use serde_json::json;

use crate::pty::Pty;
use crate::support::{TestEnv, last_message_text};

const PROMPT: &str = "› ";

/// Leaves with Ctrl-D at an empty prompt and checks the clean exit.
fn leave(mut pty: Pty) {
    wait_prompt(&pty);
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
}

/// The screen's last non-empty line, without trailing blanks.
fn last_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map_or("", str::trim_end)
}

/// Waits until the last line of the screen is `line`.
fn wait_last_line(pty: &Pty, line: &str) -> String {
    let started = std::time::Instant::now();
    loop {
        let screen = pty.screen();
        if last_line(&screen) == line {
            return screen;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the last line never became {line:?}; the screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the empty prompt (the session ready for the next line).
fn wait_prompt(pty: &Pty) -> String {
    wait_last_line(pty, PROMPT.trim_end())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_streams_markdown_asks_to_run_highlighted_code_and_shows_its_output() {
    let env = TestEnv::new().await;
    env.server
        .push(
            Reply::execute("python", "for _ in range(1):\n    x = 6 * 7\nprint(x)")
                .with_text("# Plan\nLet me **compute** it:\n\n- multiply\n- print"),
        )
        .push(Reply::text("The answer is `42`."));
    let mut pty = Pty::spawn(&env, &[], 100, 40);
    pty.wait_for(PROMPT);
    pty.type_line("what is 6 times 7?");
    let screen = pty.wait_for("Run this python code?");
    // Markdown rendered: no `#`, `**` or `-` markers left.
    assert!(screen.contains("\nPlan\n"), "{screen}");
    assert!(screen.contains("Let me compute it:"), "{screen}");
    assert!(screen.contains("• multiply"), "{screen}");
    // The code in a box naming the language, and highlighted.
    assert!(screen.contains("── python"), "{screen}");
    // Indentation kept.
    assert!(screen.contains("\n    x = 6 * 7\n"), "{screen}");
    assert!(pty.raw().contains("\x1b[38;"), "no colours in the code");
    assert!(screen.contains("sandbox: workspace-write"), "{screen}");
    pty.send("y");
    let screen = pty.wait_for("The answer is 42.");
    assert!(screen.contains("\n42\n"), "{screen}");
    assert!(screen.contains("✓ ran in"), "{screen}");
    assert_eq!(last_message_text(&env.server, 1), "42\n");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn declining_with_esc_does_not_run_and_the_model_is_told() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("bash", "touch made-by-the-model"))
        .push(Reply::text("Fine, I will not."));
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("make a file");
    pty.wait_for("Run this shell code?");
    pty.send("\x1b");
    pty.wait_for("Fine, I will not.");
    assert!(!env.cwd.path().join("made-by-the-model").exists());
    assert!(
        last_message_text(&env.server, 1).contains("declined"),
        "{}",
        last_message_text(&env.server, 1)
    );
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn risky_code_shows_the_classifiers_notes_in_the_dialog() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("bash", "rm -rf /opt/old-photos"))
        .push(Reply::text("Not run."));
    let mut pty = Pty::spawn(&env, &["-y"], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("clean up");
    let screen = pty.wait_for("Run this shell code?");
    assert!(screen.contains("⚠ risky:"), "{screen}");
    pty.send("n");
    pty.wait_for("Not run.");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_running_code_and_the_session_keeps_its_state() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute(
            "python",
            "kept = 'still here'\nimport time\nprint('sta' + 'rted', flush=True)\ntime.sleep(60)",
        ))
        .push(Reply::execute("python", "print(kept)"))
        .push(Reply::text("Done."));
    let mut pty = Pty::spawn(&env, &["-y"], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("sleep a minute");
    pty.wait_for("started");
    // Typed while the code runs: not echoed, and never taken as an answer.
    pty.send("zzz");
    pty.send("\x03");
    let screen = pty.wait_for("interrupted");
    assert!(!screen.contains("zzz"), "{screen}");
    wait_prompt(&pty);
    pty.type_line("print it");
    let screen = pty.wait_for("Done.");
    assert!(screen.contains("\nstill here\n"), "{screen}");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_a_streaming_reply() {
    let env = TestEnv::new().await;
    env.server
        .push(
            Reply::text(&"word ".repeat(400))
                .chunk_chars(5)
                .event_delay(Duration::from_millis(20)),
        )
        .push(Reply::text("Second answer."));
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("talk");
    pty.wait_for("word word word");
    pty.send("\x03");
    pty.wait_for("interrupted");
    wait_prompt(&pty);
    pty.type_line("again");
    pty.wait_for("Second answer.");
    // The reply was cut short: what the model is shown of it next time is
    // the part that streamed before Ctrl-C, not the 400 words it would
    // have said.
    let requests = env.server.model_requests();
    assert_eq!(requests.len(), 2);
    let partial = requests[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    let words = partial.matches("word").count();
    assert!((3..400).contains(&words), "{words} words kept: {partial}");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_twice_leaves_and_stops_the_kernels() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute(
            "python",
            "import os, time\nopen('pid', 'w').write(str(os.getpid()))\nprint('kernel' + ' up', flush=True)\ntime.sleep(60)",
        ))
        .push(Reply::text("unused"));
    let mut pty = Pty::spawn(&env, &["-y"], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("wait");
    pty.wait_for("kernel up");
    pty.send("\x03");
    std::thread::sleep(Duration::from_millis(100));
    pty.send("\x03");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
    let pid: i32 = std::fs::read_to_string(env.cwd.path().join("pid"))
        .unwrap()
        .parse()
        .unwrap();
    let started = std::time::Instant::now();
    while crate::support::alive(pid) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the kernel {pid} outlived the session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_asking_for_input_gets_the_line_the_user_types() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute(
            "python",
            "name = input('Your' + ' name? ')\nprint('hello', name)",
        ))
        .push(Reply::text("Greeted."));
    let mut pty = Pty::spawn(&env, &["-y"], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("greet me");
    pty.wait_for("Your name? ");
    pty.type_line("Ada");
    let screen = pty.wait_for("Greeted.");
    assert!(screen.contains("hello Ada"), "{screen}");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn resizing_while_a_reply_streams_rewraps_it_to_the_new_width() {
    let env = TestEnv::new().await;
    let long = "The quick brown fox jumps over the lazy dog again and again. ".repeat(12);
    env.server.push(
        Reply::text(&long)
            .chunk_chars(8)
            .event_delay(Duration::from_millis(5)),
    );
    let mut pty = Pty::spawn(&env, &[], 120, 40);
    pty.wait_for(PROMPT);
    pty.type_line("tell me about the fox");
    pty.wait_for("quick brown");
    pty.resize(60, 40);
    let screen = wait_prompt(&pty);
    assert!(screen.contains("lazy dog again and again."), "{screen}");
    // Laid out by oi at the new width: the terminal had to wrap no row
    // (a row it wraps was written wider than the screen).
    let wrapped = pty.wrapped_rows();
    assert!(wrapped.is_empty(), "rows {wrapped:?} overflowed:\n{screen}");
    // The whole reply is there, once, in order.
    let text: String = screen
        .lines()
        .filter(|l| l.contains("fox") || l.contains("again"))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(text.matches("lazy dog").count(), 12, "{screen}");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn multi_line_input_with_triple_quotes_and_history_across_sessions() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text("Got both lines."))
        .push(Reply::text("Once more."));
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("\"\"\"first line");
    wait_last_line(&pty, "…");
    pty.type_line("second line\"\"\"");
    pty.wait_for("Got both lines.");
    assert_eq!(last_message_text(&env.server, 0), "first line\nsecond line");
    leave(pty);
    let history = std::fs::read_to_string(env.oi_home().join("history")).unwrap();
    assert!(history.contains("first line"), "{history}");

    // A new session recalls it with the Up arrow.
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.send("\x1b[A");
    pty.wait_for("second line");
    pty.send("\r");
    pty.wait_for("Once more.");
    assert_eq!(last_message_text(&env.server, 1), "first line\nsecond line");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_image_path_is_attached_to_the_message() {
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nbase_url = \"{}\"\n\n[models.mock-model]\nvision = true\n",
        env.server.base_url()
    ));
    // A 1×1 PNG.
    let png: &[u8] = b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0d\x49\x44\x41\x54\x78\xda\x63\xfc\xcf\xc0\x50\x0f\x00\x04\x85\x01\x80\x84\xa9\x8c\x21\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82";
    std::fs::write(env.cwd.path().join("my shot.png"), png).unwrap();
    env.server.push(Reply::text("A tiny picture."));
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("what is in my\\ shot.png");
    pty.wait_for("A tiny picture.");
    let screen = pty.screen();
    assert!(screen.contains("(attached"), "{screen}");
    let body = env.server.chat_requests()[0].body.to_string();
    assert!(body.contains("data:image/png;base64,"), "{body}");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn help_unknown_commands_and_exit() {
    let env = TestEnv::new().await;
    let mut pty = Pty::spawn(&env, &[], 100, 40);
    pty.wait_for(PROMPT);
    pty.type_line("/help");
    let screen = pty.wait_for("/debug-config");
    for command in ["/model", "/undo", "/tokens", "/save", "/verbose", "/exit"] {
        assert!(screen.contains(command), "{command} missing:\n{screen}");
    }
    wait_prompt(&pty);
    pty.type_line("/modle");
    pty.wait_for("did you mean /model?");
    // Tab completes a command.
    pty.send("/exi\t");
    wait_last_line(&pty, "› /exit");
    pty.send("\r");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
}

#[tokio::test(flavor = "multi_thread")]
async fn model_picker_filters_the_providers_list_and_saves_the_choice() {
    let env = TestEnv::new().await;
    env.server.set_models(json!({
        "object": "list",
        "data": [
            {"id": "gpt-4o", "object": "model"},
            {"id": "gpt-4o-mini", "object": "model"},
            {"id": "o3-mini", "object": "model"},
            {"id": "mock-model", "object": "model"}
        ]
    }));
    env.server.push(Reply::text("Hi from the mini model."));
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("/model");
    let screen = pty.wait_for("o3-mini");
    assert!(screen.contains("gpt-4o-mini"), "{screen}");
    pty.send("4o-mi");
    // Only the matching model is left once the redraw is complete.
    pty.wait_until("the list filtered to gpt-4o-mini", |screen| {
        screen.contains("gpt-4o-mini") && !screen.contains("o3-mini")
    });
    pty.send("\r");
    pty.wait_for("saved as your default model");
    let config = std::fs::read_to_string(env.oi_home().join("config.toml")).unwrap();
    assert!(config.contains("model = \"gpt-4o-mini\""), "{config}");
    wait_prompt(&pty);
    pty.type_line("hello");
    pty.wait_for("Hi from the mini model.");
    let request = &env.server.chat_requests()[0];
    assert_eq!(request.body["model"], "gpt-4o-mini");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn session_commands_harness_auto_tokens_cost_verbose_and_config() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::text("Hello there.").usage(1200, 30))
        .push(Reply::execute("python", "print('auto ran')"))
        .push(Reply::text("Ran it."));
    let mut pty = Pty::spawn(&env, &[], 110, 50);
    pty.wait_for(PROMPT);
    pty.type_line("/harness markdown");
    pty.wait_for("harness: markdown");
    wait_prompt(&pty);
    pty.type_line("/harness native");
    pty.wait_for("harness: native");
    wait_prompt(&pty);
    pty.type_line("hi");
    pty.wait_for("Hello there.");
    wait_prompt(&pty);
    pty.type_line("/cost");
    let screen = pty.wait_for("cost:");
    assert!(screen.contains("1 requests, 1200 tokens in"), "{screen}");
    wait_prompt(&pty);
    pty.type_line("/tokens");
    pty.wait_for("next request:");
    wait_prompt(&pty);
    pty.type_line("/auto");
    pty.wait_for("auto-run on");
    wait_prompt(&pty);
    pty.type_line("/verbose");
    pty.wait_for("verbose: each request");
    wait_prompt(&pty);
    pty.type_line("run something");
    pty.wait_for("Ran it.");
    assert_eq!(last_message_text(&env.server, 2), "auto ran\n");
    assert!(!pty.raw().contains("Run this python code?"));
    assert!(
        pty.raw().contains("→ request:"),
        "verbose showed no request"
    );
    wait_prompt(&pty);
    pty.type_line("/verbose");
    pty.wait_for("verbose: off");
    wait_prompt(&pty);
    pty.type_line("/debug-config");
    let screen = pty.wait_for("# The effective configuration");
    assert!(screen.contains("mock-model"), "{screen}");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_restores_files_and_save_reset_load_round_trip() {
    let env = TestEnv::new().await;
    std::fs::write(env.cwd.path().join("notes.txt"), "original\n").unwrap();
    env.server
        .push(Reply::execute(
            "python",
            "open('notes.txt', 'w').write('overwritten\\n')",
        ))
        .push(Reply::text("Overwrote it."))
        .push(Reply::text("After undo."))
        .push(Reply::text("After load."));
    let mut pty = Pty::spawn(&env, &["-y"], 110, 50);
    pty.wait_for(PROMPT);
    pty.type_line("overwrite notes");
    pty.wait_for("Overwrote it.");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("notes.txt")).unwrap(),
        "overwritten\n"
    );
    wait_prompt(&pty);
    pty.type_line("/save trip");
    pty.wait_for("saved");
    assert!(env.oi_home().join("conversations/trip.json").is_file());
    wait_prompt(&pty);
    pty.type_line("/undo");
    pty.wait_for("↶ undone");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("notes.txt")).unwrap(),
        "original\n"
    );
    // The undone run and what followed it left the conversation; the
    // model is told.
    wait_prompt(&pty);
    pty.type_line("what now?");
    pty.wait_for("After undo.");
    let body = env.server.chat_requests()[2].body.to_string();
    assert!(!body.contains("overwritten"), "{body}");
    assert!(!body.contains("Overwrote it."), "{body}");
    assert!(body.contains("undid"), "{body}");
    wait_prompt(&pty);
    pty.type_line("/reset");
    pty.wait_for("new conversation");
    // /load without a name offers the saved conversations.
    wait_prompt(&pty);
    pty.type_line("/load");
    pty.wait_for("Conversation — type to filter");
    pty.send("\r");
    pty.wait_for("loaded");
    wait_prompt(&pty);
    pty.type_line("and now?");
    pty.wait_for("After load.");
    let body = env.server.chat_requests()[3].body.to_string();
    assert!(body.contains("Overwrote it."), "{body}");
    assert!(!body.contains("what now?"), "{body}");
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_l_clears_the_screen() {
    let env = TestEnv::new().await;
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.type_line("/cost");
    pty.wait_for("cost:");
    wait_prompt(&pty);
    pty.send("\x0c");
    pty.wait_gone("cost:");
    // Only the prompt is left, at the top.
    let started = std::time::Instant::now();
    while pty.screen().trim() != PROMPT.trim() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{}",
            pty.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_mode_in_a_terminal_writes_no_escape_codes() {
    for (args, no_color) in [(&["--plain"][..], false), (&[][..], true)] {
        let env = TestEnv::new().await;
        env.server
            .push(Reply::execute("python", "print(6 * 7)").with_text("Computing **now**."))
            .push(Reply::text("It is `42`."));
        let mut pty = Pty::spawn_with(&env, args, 100, 30, no_color);
        pty.wait_for("> ");
        pty.type_line("compute");
        pty.wait_for("Run this python code?");
        pty.type_line("y");
        pty.wait_for("It is `42`.");
        pty.send("\x04");
        assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
        let raw = pty.raw();
        assert!(!raw.contains('\x1b'), "escape codes in plain mode: {raw:?}");
        assert!(raw.contains("42\r\n"), "{raw:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_paste_arrives_whole_with_its_line_breaks() {
    let env = TestEnv::new().await;
    env.server.push(Reply::text("Read it all."));
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    let pasted: String = (0..400)
        .map(|i| format!("row {i}: some pasted text\n"))
        .collect();
    let pasted = pasted.trim_end();
    pty.send("summarize this:\x1b[200~");
    // In pieces, as a terminal delivers a big paste.
    for chunk in pasted.as_bytes().chunks(1000) {
        pty.send(std::str::from_utf8(chunk).unwrap());
    }
    pty.send("\x1b[201~");
    std::thread::sleep(Duration::from_millis(100));
    pty.send("\r");
    pty.wait_for("Read it all.");
    assert_eq!(
        last_message_text(&env.server, 0),
        format!("summarize this:{pasted}")
    );
    leave(pty);
}

#[tokio::test(flavor = "multi_thread")]
async fn tab_completes_file_paths_in_a_task() {
    let env = TestEnv::new().await;
    std::fs::write(env.cwd.path().join("quarterly-report.csv"), "a,b\n").unwrap();
    env.server.push(Reply::text("Looked at it."));
    let mut pty = Pty::spawn(&env, &[], 100, 30);
    pty.wait_for(PROMPT);
    pty.send("summarize quart\t");
    wait_last_line(&pty, "› summarize quarterly-report.csv");
    pty.send("\r");
    pty.wait_for("Looked at it.");
    assert_eq!(
        last_message_text(&env.server, 0),
        "summarize quarterly-report.csv"
    );
    leave(pty);
}
