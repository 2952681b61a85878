//! The actions of the `computer` tool, read from the model's arguments.
//!
//! The argument names are those of Anthropic's computer-use tool
//! (`action`, `coordinate`, `start_coordinate`, `text`, `scroll_direction`,
//! `scroll_amount`, `duration`), which models of every family know.

use serde_json::Value;

use crate::Button;

/// A point as the model gave it (on the screenshot it was shown, unless
/// the caller says real pixels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub x: i64,
    pub y: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

impl ScrollDirection {
    pub(crate) fn button(self) -> Button {
        match self {
            Self::Up => Button::WheelUp,
            Self::Down => Button::WheelDown,
            Self::Left => Button::WheelLeft,
            Self::Right => Button::WheelRight,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Up => "up",
            Self::Down => "down",
            Self::Left => "left",
            Self::Right => "right",
        }
    }
}

/// One thing to do with the screen, mouse or keyboard.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Screenshot,
    CursorPosition,
    /// Wait, then take a screenshot.
    Wait {
        seconds: f64,
    },
    /// Click `count` times, at `at` or where the pointer is, holding the
    /// `modifiers` keys (e.g. `shift`).
    Click {
        button: Button,
        count: u8,
        at: Option<Point>,
        modifiers: Option<String>,
    },
    MouseDown {
        at: Option<Point>,
    },
    MouseUp {
        at: Option<Point>,
    },
    Move {
        to: Point,
    },
    Drag {
        from: Point,
        to: Point,
    },
    Scroll {
        direction: ScrollDirection,
        amount: u32,
        at: Option<Point>,
        modifiers: Option<String>,
    },
    Type {
        text: String,
    },
    /// A key or combination (`Return`, `ctrl+s`); several separated by spaces.
    Key {
        keys: String,
    },
    HoldKey {
        keys: String,
        seconds: f64,
    },
}

/// The action names, as offered to the model.
pub const ACTIONS: &[&str] = &[
    "screenshot",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "mouse_move",
    "left_click_drag",
    "left_mouse_down",
    "left_mouse_up",
    "scroll",
    "type",
    "key",
    "hold_key",
    "wait",
    "cursor_position",
];

/// Longest wait or key hold, in seconds.
const MAX_SECONDS: f64 = 30.0;

impl Action {
    /// Reads the model's arguments; the error says what is wrong and how
    /// the call should look.
    pub fn from_json(args: &Value) -> Result<Self, String> {
        let Some(object) = args.as_object() else {
            return Err(
                "the arguments must be a JSON object such as {\"action\": \"screenshot\"}"
                    .to_owned(),
            );
        };
        let Some(name) = object.get("action").and_then(Value::as_str) else {
            return Err(format!(
                "`action` is missing; it is one of: {}",
                ACTIONS.join(", ")
            ));
        };
        let point = |key: &str| -> Result<Option<Point>, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => read_point(value)
                    .map(Some)
                    .ok_or_else(|| format!("`{key}` must be [x, y], two whole numbers of pixels on the screenshot (got {value})")),
            }
        };
        let needs_point = |key: &str| -> Result<Point, String> {
            point(key)?.ok_or_else(|| format!("`{name}` needs `{key}`: [x, y] on the screenshot"))
        };
        let text = |what: &str| -> Result<String, String> {
            match object.get("text").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => Ok(t.to_owned()),
                _ => Err(format!("`{name}` needs `text`: {what}")),
            }
        };
        let modifiers = object
            .get("text")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let seconds = |default: Option<f64>| -> Result<f64, String> {
            match object.get("duration").and_then(Value::as_f64).or(default) {
                Some(s) if (0.0..=MAX_SECONDS).contains(&s) => Ok(s),
                Some(s) => Err(format!(
                    "`duration` must be between 0 and {MAX_SECONDS} seconds (got {s})"
                )),
                None => Err(format!("`{name}` needs `duration` in seconds")),
            }
        };
        let click = |button, count| -> Result<Action, String> {
            Ok(Action::Click {
                button,
                count,
                at: point("coordinate")?,
                modifiers: modifiers.clone(),
            })
        };
        Ok(match name {
            "screenshot" => Self::Screenshot,
            "cursor_position" => Self::CursorPosition,
            "wait" => Self::Wait {
                seconds: seconds(Some(1.0))?,
            },
            "left_click" => click(Button::Left, 1)?,
            "right_click" => click(Button::Right, 1)?,
            "middle_click" => click(Button::Middle, 1)?,
            "double_click" => click(Button::Left, 2)?,
            "triple_click" => click(Button::Left, 3)?,
            "left_mouse_down" => Self::MouseDown {
                at: point("coordinate")?,
            },
            "left_mouse_up" => Self::MouseUp {
                at: point("coordinate")?,
            },
            "mouse_move" => Self::Move {
                to: needs_point("coordinate")?,
            },
            "left_click_drag" => Self::Drag {
                from: needs_point("start_coordinate")?,
                to: needs_point("coordinate")?,
            },
            "scroll" => {
                let direction = match object.get("scroll_direction").and_then(Value::as_str) {
                    Some("up") => ScrollDirection::Up,
                    Some("down") => ScrollDirection::Down,
                    Some("left") => ScrollDirection::Left,
                    Some("right") => ScrollDirection::Right,
                    other => {
                        return Err(format!(
                            "`scroll` needs `scroll_direction`: up, down, left or right (got {})",
                            other.map_or("nothing".to_owned(), |o| format!("`{o}`"))
                        ));
                    }
                };
                let amount = match object.get("scroll_amount") {
                    None | Some(Value::Null) => 3,
                    Some(value) => match value.as_f64() {
                        Some(n) if (1.0..=100.0).contains(&n) => n.round() as u32,
                        _ => {
                            return Err(format!(
                                "`scroll_amount` must be a number of wheel clicks from 1 to 100 (got {value})"
                            ));
                        }
                    },
                };
                Self::Scroll {
                    direction,
                    amount,
                    at: point("coordinate")?,
                    modifiers,
                }
            }
            "type" => Self::Type {
                text: text("the text to type")?,
            },
            "key" => Self::Key {
                keys: text("a key or combination such as `Return` or `ctrl+s`")?,
            },
            "hold_key" => Self::HoldKey {
                keys: text("the key to hold")?,
                seconds: seconds(None)?,
            },
            other => {
                return Err(format!(
                    "there is no action `{other}`; the actions are: {}",
                    ACTIONS.join(", ")
                ));
            }
        })
    }

    /// Whether the action only looks (nothing on the screen changes).
    pub fn observes(&self) -> bool {
        matches!(
            self,
            Self::Screenshot | Self::CursorPosition | Self::Wait { .. }
        )
    }

    /// The action's name, as the model calls it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Screenshot => "screenshot",
            Self::CursorPosition => "cursor_position",
            Self::Wait { .. } => "wait",
            Self::Click {
                button: Button::Right,
                ..
            } => "right_click",
            Self::Click {
                button: Button::Middle,
                ..
            } => "middle_click",
            Self::Click { count: 2, .. } => "double_click",
            Self::Click { count: 3, .. } => "triple_click",
            Self::Click { .. } => "left_click",
            Self::MouseDown { .. } => "left_mouse_down",
            Self::MouseUp { .. } => "left_mouse_up",
            Self::Move { .. } => "mouse_move",
            Self::Drag { .. } => "left_click_drag",
            Self::Scroll { .. } => "scroll",
            Self::Type { .. } => "type",
            Self::Key { .. } => "key",
            Self::HoldKey { .. } => "hold_key",
        }
    }

    /// The action in one line, with `place` describing each point (e.g.
    /// adding the real pixel it maps to).
    pub fn describe(&self, place: &dyn Fn(Point) -> String) -> String {
        let name = self.name();
        let at = |p: &Option<Point>| {
            p.map_or(" where the pointer is".to_owned(), |p| {
                format!(" at {}", place(p))
            })
        };
        let holding = |m: &Option<String>| {
            m.as_ref()
                .map_or(String::new(), |m| format!(" holding {m}"))
        };
        match self {
            Self::Screenshot | Self::CursorPosition => name.to_owned(),
            Self::Wait { seconds } => format!("wait {seconds} s"),
            Self::Click {
                at: p, modifiers, ..
            } => format!("{name}{}{}", at(p), holding(modifiers)),
            Self::MouseDown { at: p } | Self::MouseUp { at: p } => format!("{name}{}", at(p)),
            Self::Move { to } => format!("{name} to {}", place(*to)),
            Self::Drag { from, to } => format!("{name} from {} to {}", place(*from), place(*to)),
            Self::Scroll {
                direction,
                amount,
                at: p,
                modifiers,
            } => format!(
                "scroll {} by {amount}{}{}",
                direction.name(),
                at(p),
                holding(modifiers)
            ),
            Self::Type { text } => format!("type {}", quoted(text)),
            Self::Key { keys } => format!("key {keys}"),
            Self::HoldKey { keys, seconds } => format!("hold_key {keys} for {seconds} s"),
        }
    }
}

/// Text shown in quotes, with line breaks and control characters escaped.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `[x, y]` (numbers, or numeric strings), `{"x": …, "y": …}` or `"x,y"`.
fn read_point(value: &Value) -> Option<Point> {
    let number = |v: &Value| -> Option<i64> {
        let n = match v {
            Value::Number(n) => n.as_f64()?,
            Value::String(s) => s.trim().parse::<f64>().ok()?,
            _ => return None,
        };
        n.is_finite().then(|| n.round() as i64)
    };
    match value {
        Value::Array(items) if items.len() == 2 => Some(Point {
            x: number(&items[0])?,
            y: number(&items[1])?,
        }),
        Value::Object(map) => Some(Point {
            x: number(map.get("x")?)?,
            y: number(map.get("y")?)?,
        }),
        Value::String(s) => {
            let (x, y) = s
                .trim()
                .trim_matches(|c| c == '[' || c == ']' || c == '(' || c == ')')
                .split_once(',')?;
            Some(Point {
                x: number(&Value::String(x.to_owned()))?,
                y: number(&Value::String(y.to_owned()))?,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(args: Value) -> Result<Action, String> {
        Action::from_json(&args)
    }

    #[test]
    fn the_trained_actions_are_read() {
        assert_eq!(
            read(json!({"action": "screenshot"})),
            Ok(Action::Screenshot)
        );
        assert_eq!(
            read(json!({"action": "left_click", "coordinate": [10, 20]})),
            Ok(Action::Click {
                button: Button::Left,
                count: 1,
                at: Some(Point { x: 10, y: 20 }),
                modifiers: None
            })
        );
        assert_eq!(
            read(json!({"action": "double_click", "coordinate": {"x": 1.6, "y": "2"}})),
            Ok(Action::Click {
                button: Button::Left,
                count: 2,
                at: Some(Point { x: 2, y: 2 }),
                modifiers: None
            })
        );
        assert_eq!(
            read(
                json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": "(3, 4)"})
            ),
            Ok(Action::Drag {
                from: Point { x: 1, y: 2 },
                to: Point { x: 3, y: 4 }
            })
        );
        assert_eq!(
            read(
                json!({"action": "scroll", "coordinate": [5, 6], "scroll_direction": "down", "scroll_amount": 2, "text": "shift"})
            ),
            Ok(Action::Scroll {
                direction: ScrollDirection::Down,
                amount: 2,
                at: Some(Point { x: 5, y: 6 }),
                modifiers: Some("shift".into())
            })
        );
        assert_eq!(
            read(json!({"action": "key", "text": "ctrl+s"})),
            Ok(Action::Key {
                keys: "ctrl+s".into()
            })
        );
        assert_eq!(
            read(json!({"action": "wait"})),
            Ok(Action::Wait { seconds: 1.0 })
        );
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let cases = [
            (json!("screenshot"), "JSON object"),
            (json!({}), "`action` is missing"),
            (json!({"action": "fly"}), "no action `fly`"),
            (json!({"action": "mouse_move"}), "needs `coordinate`"),
            (
                json!({"action": "left_click", "coordinate": [1]}),
                "`coordinate` must be [x, y]",
            ),
            (json!({"action": "type"}), "needs `text`"),
            (
                json!({"action": "scroll", "scroll_direction": "sideways"}),
                "`sideways`",
            ),
            (
                json!({"action": "scroll", "scroll_direction": "up", "scroll_amount": 0}),
                "from 1 to 100",
            ),
            (
                json!({"action": "wait", "duration": 500}),
                "between 0 and 30",
            ),
            (
                json!({"action": "hold_key", "text": "a"}),
                "needs `duration`",
            ),
        ];
        for (args, expected) in cases {
            let error = read(args.clone()).unwrap_err();
            assert!(error.contains(expected), "{args}: {error}");
        }
    }

    #[test]
    fn descriptions_name_the_action_and_its_places() {
        let place = |p: Point| format!("({}, {})", p.x, p.y);
        let describe = |args| read(args).unwrap().describe(&place);
        assert_eq!(
            describe(json!({"action": "left_click", "coordinate": [3, 4]})),
            "left_click at (3, 4)"
        );
        assert_eq!(
            describe(json!({"action": "right_click"})),
            "right_click where the pointer is"
        );
        assert_eq!(
            describe(json!({"action": "type", "text": "a\"b\n"})),
            "type \"a\\\"b\\n\""
        );
        assert_eq!(
            describe(json!({"action": "scroll", "scroll_direction": "up", "coordinate": [1, 2]})),
            "scroll up by 3 at (1, 2)"
        );
        assert_eq!(
            describe(
                json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]})
            ),
            "left_click_drag from (1, 2) to (3, 4)"
        );
        for name in ACTIONS {
            let mut args = json!({"action": name, "coordinate": [1, 1], "start_coordinate": [0, 0], "text": "a", "scroll_direction": "up", "duration": 1});
            if *name == "wait" {
                args["duration"] = json!(0.5);
            }
            assert_eq!(read(args).unwrap().name(), *name);
        }
    }
}
