//! The X11 backend against a real X server (Xvfb), checked with xdotool
//! and xev.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "tests"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use oi_computer::{Action, Desktop, Perform, Size, Space, connect_to, png_size};
use oi_testkit::Xvfb;
use serde_json::json;

fn desktop(x: &Xvfb, shots: &Path) -> Desktop {
    Desktop::new(
        connect_to(Some(x.display()), false).unwrap(),
        shots.to_path_buf(),
    )
}

fn act(d: &mut Desktop, args: serde_json::Value) -> oi_computer::Outcome {
    let how = Perform {
        screenshot_after: false,
        ..Perform::for_model()
    };
    d.perform(&Action::from_json(&args).unwrap(), how, &|| false)
        .unwrap_or_else(|e| panic!("{args}: {e}"))
}

fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn screenshots_are_scaled_pngs_and_the_mouse_goes_where_the_model_points() {
    let Some(x) = Xvfb::start(1920, 1080) else {
        eprintln!("skipped: Xvfb is not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut d = desktop(&x, dir.path());
    assert_eq!(
        d.scaler().real(),
        Size {
            width: 1920,
            height: 1080
        }
    );
    let shot = act(&mut d, json!({"action": "screenshot"}))
        .screenshot
        .unwrap();
    let expected = Size {
        width: 1280,
        height: 720,
    };
    assert_eq!(shot.size, expected);
    assert_eq!(png_size(&fs_err::read(&shot.path).unwrap()), Some(expected));

    act(
        &mut d,
        json!({"action": "mouse_move", "coordinate": [640, 360]}),
    );
    let location = x.xdotool(&["getmouselocation"]).unwrap();
    assert!(location.starts_with("x:960 y:540 "), "{location}");
    let outcome = act(&mut d, json!({"action": "cursor_position"}));
    assert_eq!(outcome.pointer, (640, 360));
    assert!(outcome.text.contains("X=640, Y=360"), "{}", outcome.text);

    // Scripts work in real pixels.
    d.perform(
        &Action::from_json(&json!({"action": "mouse_move", "coordinate": [1919, 1000]})).unwrap(),
        Perform::for_script(),
        &|| false,
    )
    .unwrap();
    let location = x.xdotool(&["getmouselocation"]).unwrap();
    assert!(location.starts_with("x:1919 y:1000 "), "{location}");
    let full = d.screenshot(Space::Real).unwrap();
    assert_eq!(
        full.size,
        Size {
            width: 1920,
            height: 1080
        }
    );
}

#[test]
fn typing_into_a_terminal_runs_a_command_with_every_character_intact() {
    let Some(mut x) = Xvfb::start(1024, 768) else {
        eprintln!("skipped: Xvfb is not installed");
        return;
    };
    if which("xterm").is_none() {
        assert!(!oi_testkit::xvfb_required(), "xterm is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    x.spawn(
        "xterm",
        &[
            "-geometry",
            "80x24+0+0",
            "-title",
            "oi-typing",
            "-e",
            "bash --norc --noprofile",
        ],
    )
    .unwrap();
    x.wait_for_window("oi-typing", Duration::from_secs(15))
        .expect("xterm window");
    let mut d = desktop(&x, dir.path());
    act(
        &mut d,
        json!({"action": "left_click", "coordinate": [200, 150]}),
    );
    let proof = dir.path().join("typed.txt");
    let text = format!(
        "echo 'Hello, World! <a|b> ~$%&*()_+{{}}' > {}",
        proof.display()
    );
    act(&mut d, json!({"action": "type", "text": text}));
    act(&mut d, json!({"action": "key", "text": "Return"}));
    wait_for("the command's file", || proof.exists());
    wait_for("the file's text", || {
        fs_err::read_to_string(&proof).unwrap_or_default() == "Hello, World! <a|b> ~$%&*()_+{}\n"
    });
}

#[test]
fn drags_and_scrolls_reach_a_window_as_button_events() {
    let Some(mut x) = Xvfb::start(1024, 768) else {
        eprintln!("skipped: Xvfb is not installed");
        return;
    };
    if which("xev").is_none() {
        assert!(!oi_testkit::xvfb_required(), "xev is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("xev.log");
    x.spawn_logged(
        "xev",
        &[
            "-geometry",
            "600x400+0+0",
            "-name",
            "oi-events",
            "-event",
            "button",
            "-event",
            "mouse",
        ],
        &log,
    )
    .unwrap();
    wait_for("the xev window", || {
        fs_err::read_to_string(&log)
            .unwrap_or_default()
            .contains("Outer window is")
    });
    let mut d = desktop(&x, dir.path());
    act(
        &mut d,
        json!({"action": "left_click_drag", "start_coordinate": [100, 100], "coordinate": [300, 200]}),
    );
    act(
        &mut d,
        json!({"action": "scroll", "coordinate": [250, 250], "scroll_direction": "down", "scroll_amount": 3}),
    );
    act(
        &mut d,
        json!({"action": "scroll", "scroll_direction": "up", "scroll_amount": 1}),
    );
    wait_for("xev to log the scroll", || {
        fs_err::read_to_string(&log)
            .unwrap_or_default()
            .matches("button 4,")
            .count()
            >= 2
    });
    let events = parse_xev(&fs_err::read_to_string(&log).unwrap());
    let presses: Vec<&(String, u32, i32, i32)> =
        events.iter().filter(|e| e.0 == "ButtonPress").collect();
    assert_eq!(presses[0].1, 1, "the drag presses button 1");
    assert_eq!(
        (presses[0].2, presses[0].3),
        (100, 100),
        "where the drag starts"
    );
    let release = events
        .iter()
        .find(|e| e.0 == "ButtonRelease" && e.1 == 1)
        .expect("button 1 released");
    assert_eq!((release.2, release.3), (300, 200), "where the drag ends");
    let motions_while_pressed = events
        .iter()
        .skip_while(|e| e.0 != "ButtonPress")
        .take_while(|e| e.0 != "ButtonRelease")
        .filter(|e| e.0 == "MotionNotify")
        .count();
    assert!(
        motions_while_pressed >= 5,
        "the pointer moves while pressed: {events:?}"
    );
    let wheel_down = presses.iter().filter(|e| e.1 == 5).count();
    let wheel_up = presses.iter().filter(|e| e.1 == 4).count();
    assert_eq!((wheel_down, wheel_up), (3, 1), "{events:?}");
    assert!(
        presses
            .iter()
            .filter(|e| e.1 == 5)
            .all(|e| (e.2, e.3) == (250, 250)),
        "the scroll happens where asked"
    );
}

/// (event, button, x, y) of each event in xev's output.
fn parse_xev(text: &str) -> Vec<(String, u32, i32, i32)> {
    let mut events = Vec::new();
    let mut current: Option<(String, u32, i32, i32)> = None;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            if let Some(event) = current.take() {
                events.push(event);
            }
            let name = line.split_whitespace().next().unwrap_or("").to_owned();
            current = Some((name, 0, -1, -1));
        } else if let Some(event) = current.as_mut() {
            if let Some(at) = line.find("root:(") {
                let inside = &line[at + 6..];
                if let Some((xs, rest)) = inside.split_once(',')
                    && let Some(ys) = rest.split(')').next()
                {
                    event.2 = xs.trim().parse().unwrap_or(-1);
                    event.3 = ys.trim().parse().unwrap_or(-1);
                }
            }
            if let Some(at) = line.find("button ") {
                event.1 = line[at + 7..]
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
            }
        }
    }
    events.extend(current);
    events
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}
