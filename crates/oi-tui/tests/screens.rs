//! The live view as a terminal shows it: events are rendered into a
//! terminal emulator (vt100) and the screen is read back, at 80 and 120
//! columns. Snapshots (insta) hold the expected screens.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a test failure"
)]

use oi_protocol::{Event, OutputStream, RunId, RunStatus, StopReason};
use oi_tui::highlight::Palette;
use oi_tui::{Mode, View};

/// A tall terminal, so the whole session stays on screen.
const HEIGHT: u16 = 120;

fn screen_after(width: u16, events: &[Event]) -> vt100::Parser {
    let mut view = View::with_mode(Vec::new(), Mode::Live, width.into(), HEIGHT.into())
        .with_palette(Palette::Ansi256);
    for event in events {
        view.event(event).unwrap();
    }
    // What the session's ticker does every frame.
    view.tick().unwrap();
    let mut parser = terminal(HEIGHT, width);
    parser.process(&view.into_inner());
    parser
}

fn terminal(rows: u16, cols: u16) -> vt100::Parser {
    let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
    vt100::Parser::new(nz(rows), nz(cols), 0)
}

/// The screen's text, trailing blank lines dropped.
fn text(parser: &vt100::Parser) -> String {
    let contents = parser.screen().contents();
    contents.trim_end().to_owned()
}

/// The reply split into small pieces, as a model streams it.
fn streamed(reply: &str, piece: usize) -> Vec<Event> {
    let chars: Vec<char> = reply.chars().collect();
    let mut events = vec![Event::TaskStarted, Event::ModelRequest { turn: 1 }];
    for chunk in chars.chunks(piece) {
        events.push(Event::TextDelta {
            delta: chunk.iter().collect(),
        });
    }
    events.push(Event::AssistantMessage {
        text: reply.to_owned(),
    });
    events
}

const REPLY: &str = "# Sales summary\n\nThe **total** is `15.0`, from *three* rows of [sales.csv](./sales.csv).\n\n- January: 5\n- February: 10\n  - of which refunds: 0\n\n> Numbers are in EUR.\n\n| month | amount |\n|---|---|\n| Jan | 5 |\n| Feb | 10 |\n\n```python\ntotal = 0\nfor amount in [5, 10]:\n    if amount > 0:\n        total += amount\nprint(total)\n```\n\nThat's all — 日本語 too.\n";

#[test]
fn a_streamed_reply_ends_as_its_markdown_rendering() {
    for width in [80u16, 120] {
        let whole = screen_after(width, &streamed(REPLY, 1000));
        for piece in [1, 7, 13] {
            let parts = screen_after(width, &streamed(REPLY, piece));
            assert_eq!(
                text(&parts),
                text(&whole),
                "width {width}, pieces of {piece}"
            );
        }
        insta::assert_snapshot!(format!("markdown_{width}"), text(&whole));
    }
}

#[test]
fn while_the_reply_streams_a_spinner_shows_below_it() {
    let mut events = streamed("First paragraph.\n\nSecond, still being writ", 5);
    events.pop();
    let parser = screen_after(80, &events);
    let screen = text(&parser);
    assert!(
        screen.starts_with("First paragraph.\n\nSecond, still being writ"),
        "{screen}"
    );
    let last = screen.lines().last().unwrap();
    assert!(
        last.contains("thinking") && last.contains("Ctrl-C stops it"),
        "{last}"
    );
    // The spinner stops when the reply is complete.
    let done = screen_after(80, &streamed("First paragraph.\n\nSecond.", 5));
    assert!(!text(&done).contains("thinking"));
}

fn run_events() -> Vec<Event> {
    let id = RunId(1);
    let mut events = streamed("Let me compute it.", 100);
    events.extend([
        Event::CodeProposed {
            id,
            language: "python".into(),
            code: "import sys\nprint('progress 50%', end='\\r')\nprint(1 / 0)".into(),
        },
        Event::RunStarted {
            id,
            language: "python".into(),
            code: String::new(),
        },
        Event::OutputDelta {
            id,
            stream: OutputStream::Stdout,
            text: "progress 10%\rprogress 50%\r".into(),
        },
        Event::OutputDelta {
            id,
            stream: OutputStream::Stdout,
            text: "done\nhalf a li".into(),
        },
        Event::OutputDelta {
            id,
            stream: OutputStream::Stdout,
            text: "ne\n".into(),
        },
        Event::OutputDelta {
            id,
            stream: OutputStream::Stderr,
            text: "Traceback (most recent call last):\n  File \"<cell-1>\", line 3, in <module>\nZeroDivisionError: division by zero\n".into(),
        },
        Event::RunFinished {
            id,
            status: RunStatus::Failed {
                exit_code: None,
                error: Some("ZeroDivisionError: division by zero".into()),
            },
            duration_ms: 1200,
            output_bytes: 120,
        },
        Event::TaskComplete {
            reason: StopReason::Interrupted,
            final_message: None,
        },
    ]);
    events
}

#[test]
fn code_output_and_errors_are_shown_apart() {
    for width in [80u16, 120] {
        let parser = screen_after(width, &run_events());
        let screen = text(&parser);
        insta::assert_snapshot!(format!("run_{width}"), screen);
        // The code is highlighted: more than one color on its first line.
        let row = screen
            .lines()
            .position(|l| l.starts_with("import sys"))
            .unwrap() as u16;
        let colors: std::collections::HashSet<String> = (0..10)
            .filter_map(|col| parser.screen().cell(row, col))
            .map(|cell| format!("{:?}", cell.fgcolor()))
            .collect();
        assert!(colors.len() > 1, "{colors:?}");
        // The traceback is intact and red.
        let tb = screen
            .lines()
            .position(|l| l.starts_with("ZeroDivisionError"))
            .unwrap() as u16;
        let cell = parser.screen().cell(tb, 0).unwrap();
        assert_eq!(cell.fgcolor(), vt100::Color::Idx(1));
    }
}

#[test]
fn a_fast_stream_redraws_the_live_region_at_most_once_a_frame() {
    // One long paragraph in 2,000 pieces, arriving faster than frames.
    let reply = "word ".repeat(2000);
    let mut view = View::with_mode(Vec::new(), Mode::Live, 80, 24).with_palette(Palette::Ansi256);
    let started = std::time::Instant::now();
    for event in streamed(&reply, 5).iter().take(2000) {
        view.event(event).unwrap();
    }
    let elapsed = started.elapsed();
    let out = view.into_inner();
    let redraws = out.windows(3).filter(|w| w == b"\x1b[J").count();
    let frames = elapsed.as_millis() / oi_tui::view::FRAME.as_millis() + 2;
    assert!(
        redraws as u128 <= frames + 2,
        "{redraws} redraws in {elapsed:?}"
    );
}

#[test]
fn a_partial_line_of_output_waits_in_the_live_region() {
    let id = RunId(1);
    let events = vec![
        Event::RunStarted {
            id,
            language: "shell".into(),
            code: String::new(),
        },
        Event::OutputDelta {
            id,
            stream: OutputStream::Stdout,
            text: "line one\nDownloading… 42%".into(),
        },
    ];
    let screen = text(&screen_after(80, &events));
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(lines[0], "line one");
    assert_eq!(lines[1], "Downloading… 42%");
    assert!(lines[2].contains("running shell"), "{screen}");
}

#[test]
fn resizing_redraws_the_live_region_without_leftovers() {
    let mut view = View::with_mode(Vec::new(), Mode::Live, 80, 24).with_palette(Palette::Ansi256);
    for event in streamed(
        "Para one.\n\nA long second paragraph that is still streaming",
        9,
    )
    .into_iter()
    .take(8)
    {
        view.event(&event).unwrap();
    }
    view.resize(40, 24).unwrap();
    let mut parser = terminal(24, 80);
    parser.process(&view.into_inner());
    let screen = text(&parser);
    let spinners = screen.matches("thinking").count();
    assert_eq!(spinners, 1, "one live region after the resize:\n{screen}");
}

/// The approval dialog as the session shows it: the proposed code, the
/// risk classifier's notes, then the question.
fn approval_screen(width: u16) -> vt100::Parser {
    let id = RunId(7);
    let code = "import shutil\nshutil.rmtree('/home/ada/old-photos')\nprint('removed')";
    let mut events = streamed("I'll delete the old photos folder.", 100);
    events.extend([
        Event::CodeProposed {
            id,
            language: "python".into(),
            code: code.into(),
        },
        Event::ApprovalRequested {
            id,
            language: "python".into(),
            code: code.into(),
            risks: vec![
                "deletes files outside the workspace (`shutil.rmtree('/home/ada/old-photos')`)"
                    .into(),
            ],
        },
    ]);
    let mut view = View::with_mode(Vec::new(), Mode::Live, width.into(), HEIGHT.into())
        .with_palette(Palette::Ansi256);
    for event in &events {
        view.event(event).unwrap();
    }
    let question = oi_tui::dialog::approval_question("python", "workspace-write");
    view.raw(&question.render(true)).unwrap();
    let mut parser = terminal(HEIGHT, width);
    parser.process(&view.into_inner());
    parser
}

#[test]
fn the_approval_dialog_shows_code_risks_sandbox_and_keys() {
    for width in [80u16, 120] {
        let parser = approval_screen(width);
        let screen = text(&parser);
        insta::assert_snapshot!(format!("approval_{width}"), screen);
        assert!(screen.contains("⚠ risky: deletes files outside the workspace"));
        assert!(screen.contains("(sandbox: workspace-write)"));
        for key in ["[y]es", "[n]o", "[a]lways", "[e]dit", "Esc: no"] {
            assert!(screen.contains(key), "{key} missing at {width}:\n{screen}");
        }
        // The risk is in red.
        let row = screen
            .lines()
            .position(|l| l.starts_with("⚠ risky"))
            .unwrap() as u16;
        assert_eq!(
            parser.screen().cell(row, 0).unwrap().fgcolor(),
            vt100::Color::Idx(1)
        );
    }
}

fn picker_screen(picker: &oi_tui::dialog::Picker, width: u16) -> String {
    let lines: Vec<String> = picker
        .render(usize::from(width) - 1)
        .iter()
        .map(|l| l.render(true))
        .collect();
    let mut parser = terminal(30, width);
    parser.process(lines.join("\r\n").as_bytes());
    text(&parser)
}

#[test]
fn the_model_picker_lists_filters_and_marks_the_current_model() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let models: Vec<String> = [
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4o",
        "gpt-4o-mini",
        "o3",
        "o3-mini",
        "o4-mini",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "a-model-with-a-very-long-name-that-does-not-fit-in-a-narrow-terminal-at-all-2025-11-30",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    for width in [80u16, 120] {
        let mut picker =
            oi_tui::dialog::Picker::new("Model", models.clone(), Some("gpt-4o".to_owned()));
        let all = picker_screen(&picker, width);
        insta::assert_snapshot!(format!("picker_{width}"), all);
        for c in "mini".chars() {
            picker.key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        picker.key(&KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
        let filtered = picker_screen(&picker, width);
        insta::assert_snapshot!(format!("picker_filtered_{width}"), filtered);
        for line in all.lines().chain(filtered.lines()) {
            assert!(
                unicode_width::UnicodeWidthStr::width(line) < usize::from(width),
                "{line}"
            );
        }
    }
}
