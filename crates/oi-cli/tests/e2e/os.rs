//! OS mode (`--os`): a scripted model operates a virtual X display (Xvfb)
//! with the `computer` tool; xdotool and xev only check what happened.
//! Skipped when Xvfb is missing, unless `OI_REQUIRE_XVFB=1` (CI).

use std::time::{Duration, Instant};

use base64::Engine as _;
use oi_testkit::{MockToolCall, Reply, Xvfb};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{Output, TestEnv, run_command};

fn computer(args: Value) -> Reply {
    Reply::tool_calls(vec![MockToolCall::new("computer", args)])
}

/// The mock model, said to read images (OS mode needs that).
async fn vision_env() -> TestEnv {
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{}\"\n\n[models.\"mock-model\"]\nvision = true\n",
        env.server.base_url()
    ));
    env
}

async fn exec_on(env: &TestEnv, display: Option<&str>, args: &[&str]) -> Output {
    let mut all = vec!["exec"];
    all.extend_from_slice(args);
    let mut cmd = env.command(&all);
    if let Some(display) = display {
        cmd.env("DISPLAY", display);
    }
    run_command(cmd, None).await
}

/// The images a chat-wire request shows the model, decoded.
fn images_in(request: &oi_testkit::RecordedRequest) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    for message in request.messages() {
        for part in message["content"].as_array().into_iter().flatten() {
            if let Some(url) = part["image_url"]["url"].as_str()
                && let Some(data) = url.strip_prefix("data:image/png;base64,")
            {
                found.push(
                    base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .unwrap(),
                );
            }
        }
    }
    found
}

fn transcript(env: &TestEnv) -> String {
    let sessions = env.oi_home().join("sessions");
    let entry = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    std::fs::read_to_string(entry.path().join("transcript.jsonl")).unwrap()
}

#[tokio::test]
async fn without_a_display_os_mode_says_so_before_asking_the_model() {
    let env = vision_env().await;
    let out = exec_on(&env, None, &["--os", "--yes", "open the browser"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("OS mode cannot start")
            && out.stderr.contains("DISPLAY is not set")
            && out.stderr.contains("Xvfb"),
        "{}",
        out.stderr
    );
    assert!(env.server.model_requests().is_empty());
}

#[tokio::test]
async fn a_model_that_cannot_see_is_refused_with_how_to_fix_it() {
    let env = TestEnv::new().await;
    let out = exec_on(&env, Some(":0"), &["--os", "--yes", "open the browser"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("`mock-model` is not known to read images")
            && out.stderr.contains("[models.\"mock-model\"] vision = true"),
        "{}",
        out.stderr
    );
    // The same from the configuration file, which is named.
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\nos = true\n\n[model_providers.mock]\nname = \"m\"\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    let out = exec_on(&env, Some(":0"), &["--yes", "open the browser"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("config.toml"), "{}", out.stderr);
}

#[tokio::test]
async fn the_model_sees_the_screen_clicks_into_a_terminal_and_types_a_command() {
    let Some(mut x) = Xvfb::start_with(1920, 1080, &["xterm"]) else {
        return;
    };
    x.spawn(
        "xterm",
        &[
            "-geometry",
            "100x30+0+0",
            "-title",
            "oi-e2e-term",
            "-e",
            "bash --norc --noprofile",
        ],
    )
    .unwrap();
    x.wait_for_window("oi-e2e-term", Duration::from_secs(20))
        .expect("the xterm window");
    let env = vision_env().await;
    let proof = env.cwd.path().join("proof");
    env.server
        .push(computer(json!({"action": "screenshot"})))
        // Shown at 1280×720: (200, 100) is (300, 150) on the real screen,
        // inside the terminal.
        .push(computer(
            json!({"action": "left_click", "coordinate": [200, 100]}),
        ))
        .push(computer(
            json!({"action": "type", "text": format!("echo ok > {}", proof.display())}),
        ))
        .push(computer(json!({"action": "key", "text": "Return"})))
        .push(Reply::text("Done: the terminal wrote the file."));
    let out = exec_on(
        &env,
        Some(x.display()),
        &[
            "--os",
            "--yes",
            "write ok to the proof file with the terminal",
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    oi_testkit::wait_until("the proof file", || {
        std::fs::read_to_string(&proof).unwrap_or_default() == "ok\n"
    });

    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 5);
    // The tool is offered with the size of the screenshots.
    let tools = requests[0].body["tools"].as_array().unwrap();
    let tool = tools
        .iter()
        .find(|t| t["function"]["name"] == "computer")
        .expect("the computer tool");
    assert!(
        tool["function"]["description"]
            .as_str()
            .unwrap()
            .contains("1280×720"),
        "{tool}"
    );
    assert!(
        requests[0].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("OS mode is on")
    );
    // The screenshot reaches the model as a PNG of the scaled size.
    let images = images_in(&requests[1]);
    assert_eq!(images.len(), 1, "one screenshot so far");
    assert_eq!(
        oi_computer::png_size(&images[0]),
        Some(oi_computer::Size {
            width: 1280,
            height: 720
        })
    );
    // Every action returns a screenshot; only the last three stay.
    assert_eq!(
        (1..5)
            .map(|i| images_in(&requests[i]).len())
            .collect::<Vec<_>>(),
        [1, 2, 3, 3]
    );
    // The click's result says it was done, and names its screenshot.
    let click_result = requests[2]
        .messages()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        click_result.starts_with("Done. Screenshot 1280×720 after it: ")
            && click_result.ends_with("screen-0002.png."),
        "{click_result}"
    );
    // The user saw each action, the click with its real place.
    assert!(
        out.stderr
            .contains("left_click at (200, 100) → screen (300, 150)"),
        "{}",
        out.stderr
    );
    // The transcript records the actions and the screenshots' files.
    let transcript = transcript(&env);
    assert!(
        transcript.contains("left_click at (200, 100) → screen (300, 150)"),
        "{transcript}"
    );
    assert!(transcript.contains("key Return"), "{transcript}");
    let shot = transcript
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|e| {
            let event = if e["type"] == "event" {
                &e["event"]
            } else {
                &e
            };
            (event["type"] == "image").then(|| event["path"].as_str().unwrap().to_owned())
        })
        .expect("a screenshot in the transcript");
    assert!(shot.ends_with("screen-0001.png"), "{shot}");
    assert!(std::path::Path::new(&shot).is_file(), "{shot}");
}

#[tokio::test]
async fn claude_gets_its_own_computer_tool_and_drags_and_scrolls_reach_a_window() {
    let Some(mut x) = Xvfb::start_with(1024, 768, &["xev"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("xev.log");
    x.spawn_xev(&["button"], &log).unwrap();
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"anthropic-mock\"\nmodel = \"claude-sonnet-4-5\"\n\n[model_providers.anthropic-mock]\nname = \"the model server\"\nbase_url = \"{}\"\nwire_api = \"messages\"\n",
        env.server.root_url()
    ));
    env.server
        .push(computer(json!({"action": "left_click_drag", "start_coordinate": [100, 100], "coordinate": [300, 200]})))
        .push(computer(json!({"action": "scroll", "coordinate": [250, 250], "scroll_direction": "down", "scroll_amount": 3})))
        .push(Reply::text("Dragged and scrolled."));
    let out = exec_on(
        &env,
        Some(x.display()),
        &["--os", "--yes", "drag, then scroll"],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");

    let requests = env.server.model_requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some("computer-use-2025-01-24")
    );
    let tools = requests[0].body["tools"].as_array().unwrap();
    let tool = tools.iter().find(|t| t["name"] == "computer").unwrap();
    assert_eq!(tool["type"], "computer_20250124");
    // The screen fits: shown as it is.
    assert_eq!(tool["display_width_px"], 1024);
    assert_eq!(tool["display_height_px"], 768);
    // The result is a tool_result with the screenshot as an image block.
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let result = &last["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert!(
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image"),
        "{result}"
    );

    oi_testkit::wait_until("xev to log the scroll", || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("button 5,")
            .count()
            >= 6
    });
    let text = std::fs::read_to_string(&log).unwrap();
    let events = oi_testkit::xev_events(&text);
    let press = |button: u32| {
        events
            .iter()
            .filter(|e| e.name == "ButtonPress" && e.button == button)
            .map(|e| (e.x, e.y))
            .collect::<Vec<_>>()
    };
    assert_eq!(press(1), [(100, 100)], "the drag starts where asked");
    let released = events
        .iter()
        .find(|e| e.name == "ButtonRelease" && e.button == 1)
        .map(|e| (e.x, e.y));
    assert_eq!(released, Some((300, 200)), "and ends where asked");
    assert_eq!(
        press(5),
        [(250, 250); 3],
        "three wheel clicks down, in place"
    );
}

#[tokio::test]
async fn python_code_drives_the_screen_with_the_computer_module() {
    let Some(x) = Xvfb::start_with(1024, 768, &[]) else {
        return;
    };
    let env = vision_env().await;
    let shot = env.cwd.path().join("shot.png");
    env.server
        .push(Reply::execute(
            "python",
            &format!(
                "import computer\nprint(computer.size())\ncomputer.move(10, 20)\nprint(computer.cursor_position())\nprint(computer.screenshot({:?}))",
                shot.display().to_string()
            ),
        ))
        .push(Reply::text("done"));
    let out = exec_on(
        &env,
        Some(x.display()),
        &["--os", "--yes", "use the screen"],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let result = env.server.chat_requests()[1].messages()[3]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(result.starts_with("(1024, 768)\n(10, 20)\n"), "{result}");
    assert_eq!(
        oi_computer::png_size(&std::fs::read(&shot).unwrap()),
        Some(oi_computer::Size {
            width: 1024,
            height: 768
        }),
        "full size for scripts"
    );
    let location = x.xdotool(&["getmouselocation"]).unwrap();
    assert!(location.starts_with("x:10 y:20 "), "{location}");
}

#[tokio::test]
async fn without_os_mode_the_computer_module_says_how_to_turn_it_on() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", "computer.click(1, 1)"))
        .push(Reply::text("done"));
    let out = env.exec(&["--yes", "click"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let result = crate::support::last_message_text(&env.server, 1);
    assert!(
        result.contains("ComputerError: OS mode is off: start oi with --os"),
        "{result}"
    );
}

#[tokio::test]
async fn in_ask_mode_each_action_is_shown_and_a_declined_one_is_not_done() {
    let Some(x) = Xvfb::start_with(1024, 768, &["xdotool"]) else {
        return;
    };
    let env = vision_env().await;
    env.server
        .push(computer(
            json!({"action": "mouse_move", "coordinate": [40, 50]}),
        ))
        .push(computer(
            json!({"action": "mouse_move", "coordinate": [600, 500]}),
        ))
        .push(Reply::text("The user did not want that."));
    let mut cmd = env.command(&["--os"]);
    cmd.env("DISPLAY", x.display());
    let out = run_command(cmd, Some("move the mouse around\ny\nn\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout
            .matches("Do this on the screen? [y]es, [n]o, [a]lways (this session):")
            .count(),
        2,
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("mouse_move to (40, 50)"),
        "{}",
        out.stdout
    );
    let location = x.xdotool(&["getmouselocation"]).unwrap();
    assert!(
        location.starts_with("x:40 y:50 "),
        "the approved move was done, the declined one not: {location}"
    );
    assert_eq!(
        crate::support::last_message_text(&env.server, 2),
        "The user declined this action."
    );
}

#[tokio::test]
async fn the_mouse_in_a_screen_corner_stops_the_task() {
    let Some(x) = Xvfb::start_with(1024, 768, &["xdotool"]) else {
        return;
    };
    // The user throws the mouse into the top-left corner.
    x.xdotool(&["mousemove", "0", "0"]).unwrap();
    let env = vision_env().await;
    env.server
        .push(computer(
            json!({"action": "left_click", "coordinate": [500, 400]}),
        ))
        .push(Reply::text("never asked"));
    let out = exec_on(&env, Some(x.display()), &["--os", "--yes", "click"]).await;
    assert_eq!(out.code, 130, "{out:?}");
    assert!(out.stderr.contains("fail-safe"), "{}", out.stderr);
    assert_eq!(env.server.model_requests().len(), 1, "the task stopped");
    let location = x.xdotool(&["getmouselocation"]).unwrap();
    assert!(
        location.starts_with("x:0 y:0 "),
        "nothing moved: {location}"
    );
}

#[tokio::test]
async fn the_fail_safe_also_stops_code_that_drives_the_screen() {
    let Some(x) = Xvfb::start_with(1024, 768, &["xdotool"]) else {
        return;
    };
    x.xdotool(&["mousemove", "1023", "767"]).unwrap();
    let env = vision_env().await;
    env.server
        .push(Reply::execute(
            "python",
            "computer.click(5, 5)\nprint('not reached')",
        ))
        .push(Reply::text("never asked"));
    let out = exec_on(&env, Some(x.display()), &["--os", "--yes", "click"]).await;
    assert_eq!(out.code, 130, "{out:?}");
    assert!(
        out.stderr.contains("ComputerError: fail-safe"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("not reached\n"), "{}", out.stderr);
    assert_eq!(env.server.model_requests().len(), 1, "the task stopped");
}

#[tokio::test]
async fn ctrl_c_stops_an_action_at_once() {
    let Some(x) = Xvfb::start_with(1024, 768, &[]) else {
        return;
    };
    let env = vision_env().await;
    env.server
        .push(computer(json!({"action": "wait", "duration": 25})))
        .push(Reply::text("never asked"));
    let mut cmd = env.command(&["exec", "--os", "--yes", "wait for the page"]);
    cmd.env("DISPLAY", x.display())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let pid = child.id().unwrap().to_string();
    let stderr = child.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let mut seen = String::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        seen.push_str(&line);
        seen.push('\n');
        if line == "wait 25 s" {
            break;
        }
    }
    assert!(seen.contains("wait 25 s"), "{seen}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let interrupted = Instant::now();
    std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    while let Some(line) = lines.next_line().await.unwrap() {
        seen.push_str(&line);
        seen.push('\n');
    }
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("interpreter did not stop")
        .unwrap();
    assert!(
        interrupted.elapsed() < Duration::from_secs(5),
        "stopped {:?} after Ctrl-C",
        interrupted.elapsed()
    );
    assert_eq!(status.code(), Some(130), "{seen}");
    assert_eq!(env.server.model_requests().len(), 1, "{seen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_live_session_asks_about_each_action_with_one_key() {
    let Some(x) = Xvfb::start_with(1024, 768, &["xdotool"]) else {
        return;
    };
    let env = vision_env().await;
    env.server
        .push(computer(
            json!({"action": "mouse_move", "coordinate": [70, 80]}),
        ))
        .push(Reply::text("Moved."));
    let mut pty = crate::pty::Pty::spawn_on_display(&env, &["--os"], 100, 30, x.display());
    let screen = pty.wait_for("› ");
    assert!(
        screen.contains(&format!(
            "OS mode: the model sees and uses X11 display {} (1024×768)",
            x.display()
        )) && screen.contains("screen corner to stop it"),
        "{screen}"
    );
    pty.type_line("move the mouse");
    let screen = pty.wait_for("Do this on the screen?");
    assert!(screen.contains("── computer"), "{screen}");
    assert!(screen.contains("mouse_move to (70, 80)"), "{screen}");
    assert!(
        !screen.contains("[e]dit"),
        "actions are not edited: {screen}"
    );
    assert!(!screen.contains("sandbox:"), "{screen}");
    pty.send("y");
    let screen = pty.wait_for("Moved.");
    assert!(screen.contains("✓ ran in"), "{screen}");
    let location = x.xdotool(&["getmouselocation"]).unwrap();
    assert!(location.starts_with("x:70 y:80 "), "{location}");
    pty.send("\x04");
    pty.wait_exit();
}
