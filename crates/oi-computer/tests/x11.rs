//! The X11 backend against a real X server (Xvfb), checked with xdotool
//! and xev.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "tests"
)]

use std::path::Path;
use std::time::Duration;

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

#[test]
fn screenshots_are_scaled_pngs_and_the_mouse_goes_where_the_model_points() {
    let Some(x) = Xvfb::start(1920, 1080) else {
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
    let Some(mut x) = Xvfb::start_with(1024, 768, &["xterm"]) else {
        return;
    };
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
    oi_testkit::wait_until("the command's file", || proof.exists());
    oi_testkit::wait_until("the file's text", || {
        fs_err::read_to_string(&proof).unwrap_or_default() == "Hello, World! <a|b> ~$%&*()_+{}\n"
    });
}

#[test]
fn drags_and_scrolls_reach_a_window_as_button_events() {
    let Some(mut x) = Xvfb::start_with(1024, 768, &["xev"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("xev.log");
    x.spawn_xev(&["button"], &log).unwrap();
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
    oi_testkit::wait_until("xev to log the scroll", || {
        fs_err::read_to_string(&log)
            .unwrap_or_default()
            .matches("button 4,")
            .count()
            >= 2
    });
    let events = oi_testkit::xev_events(&fs_err::read_to_string(&log).unwrap());
    let presses: Vec<&oi_testkit::XEvent> =
        events.iter().filter(|e| e.name == "ButtonPress").collect();
    assert_eq!(presses[0].button, 1, "the drag presses button 1");
    assert_eq!(
        (presses[0].x, presses[0].y),
        (100, 100),
        "where the drag starts"
    );
    let release = events
        .iter()
        .find(|e| e.name == "ButtonRelease" && e.button == 1)
        .expect("button 1 released");
    assert_eq!((release.x, release.y), (300, 200), "where the drag ends");
    let motions_while_pressed = events
        .iter()
        .skip_while(|e| e.name != "ButtonPress")
        .take_while(|e| e.name != "ButtonRelease")
        .filter(|e| e.name == "MotionNotify")
        .count();
    assert!(
        motions_while_pressed >= 5,
        "the pointer moves while pressed: {events:?}"
    );
    let wheel_down = presses.iter().filter(|e| e.button == 5).count();
    let wheel_up = presses.iter().filter(|e| e.button == 4).count();
    assert_eq!((wheel_down, wheel_up), (3, 1), "{events:?}");
    assert!(
        presses
            .iter()
            .filter(|e| e.button == 5)
            .all(|e| (e.x, e.y) == (250, 250)),
        "the scroll happens where asked"
    );
}

#[test]
fn characters_missing_from_the_keyboard_map_are_typed_too() {
    let Some(mut x) = Xvfb::start_with(1024, 768, &["xev"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("xev.log");
    x.spawn_xev(&["keyboard"], &log).unwrap();
    let mut d = desktop(&x, dir.path());
    // Keys go to the window under the pointer (no window manager).
    act(
        &mut d,
        json!({"action": "mouse_move", "coordinate": [200, 150]}),
    );
    act(&mut d, json!({"action": "type", "text": "aZ€"}));
    oi_testkit::wait_until("xev to log the euro sign", || {
        fs_err::read_to_string(&log)
            .unwrap_or_default()
            .contains("gives 3 bytes: (e2 82 ac) \"€\"")
    });
    let text = fs_err::read_to_string(&log).unwrap();
    assert!(text.contains("keysym 0x61, a)"), "{text}");
    assert!(text.contains("keysym 0x5a, Z)"), "shifted: {text}");
    // The borrowed key is given back afterwards: no key types € now.
    use x11rb::connection::Connection as _;
    use x11rb::protocol::xproto::ConnectionExt as _;
    let (conn, _) = x11rb::connect(Some(x.display())).unwrap();
    let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .unwrap()
        .reply()
        .unwrap();
    assert!(
        !map.keysyms.contains(&0x0100_20ac),
        "the spare key still types €"
    );
}
