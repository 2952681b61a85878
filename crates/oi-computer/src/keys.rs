//! Key names in the syntax models are trained on (xdotool's: `Return`,
//! `ctrl+s`, `alt+Tab`, `KP_0`) turned into X keysyms.

/// An X keysym.
pub type Keysym = u32;

/// Named keys (matched without regard to case), with common aliases.
const NAMED: &[(&str, Keysym)] = &[
    ("return", 0xff0d),
    ("enter", 0xff0d),
    ("tab", 0xff09),
    ("escape", 0xff1b),
    ("esc", 0xff1b),
    ("backspace", 0xff08),
    ("delete", 0xffff),
    ("del", 0xffff),
    ("insert", 0xff63),
    ("home", 0xff50),
    ("end", 0xff57),
    ("left", 0xff51),
    ("up", 0xff52),
    ("right", 0xff53),
    ("down", 0xff54),
    ("page_up", 0xff55),
    ("pageup", 0xff55),
    ("prior", 0xff55),
    ("page_down", 0xff56),
    ("pagedown", 0xff56),
    ("next", 0xff56),
    ("print", 0xff61),
    ("menu", 0xff67),
    ("pause", 0xff13),
    ("scroll_lock", 0xff14),
    ("num_lock", 0xff7f),
    ("caps_lock", 0xffe5),
    ("space", 0x20),
    ("shift", 0xffe1),
    ("shift_l", 0xffe1),
    ("shift_r", 0xffe2),
    ("ctrl", 0xffe3),
    ("control", 0xffe3),
    ("control_l", 0xffe3),
    ("ctrl_l", 0xffe3),
    ("control_r", 0xffe4),
    ("ctrl_r", 0xffe4),
    ("alt", 0xffe9),
    ("alt_l", 0xffe9),
    ("alt_r", 0xffea),
    ("meta", 0xffe7),
    ("meta_l", 0xffe7),
    ("super", 0xffeb),
    ("super_l", 0xffeb),
    ("super_r", 0xffec),
    ("win", 0xffeb),
    ("cmd", 0xffeb),
    ("kp_enter", 0xff8d),
    ("kp_add", 0xffab),
    ("kp_subtract", 0xffad),
    ("kp_multiply", 0xffaa),
    ("kp_divide", 0xffaf),
    ("kp_decimal", 0xffae),
    ("minus", 0x2d),
    ("plus", 0x2b),
    ("equal", 0x3d),
    ("comma", 0x2c),
    ("period", 0x2e),
    ("slash", 0x2f),
    ("backslash", 0x5c),
    ("semicolon", 0x3b),
    ("colon", 0x3a),
    ("apostrophe", 0x27),
    ("quotedbl", 0x22),
    ("grave", 0x60),
    ("bracketleft", 0x5b),
    ("bracketright", 0x5d),
    ("braceleft", 0x7b),
    ("braceright", 0x7d),
    ("parenleft", 0x28),
    ("parenright", 0x29),
    ("underscore", 0x5f),
    ("asterisk", 0x2a),
    ("exclam", 0x21),
    ("at", 0x40),
    ("numbersign", 0x23),
    ("dollar", 0x24),
    ("percent", 0x25),
    ("ampersand", 0x26),
    ("less", 0x3c),
    ("greater", 0x3e),
    ("question", 0x3f),
    ("bar", 0x7c),
    ("asciitilde", 0x7e),
    ("asciicircum", 0x5e),
];

/// Modifier keysyms (held while the other keys of a combination are pressed).
pub fn is_modifier(keysym: Keysym) -> bool {
    (0xffe1..=0xffee).contains(&keysym)
}

/// The keysym of one key name: a named key, `F1`…`F35`, `KP_0`…`KP_9`, or
/// a single character.
pub fn keysym(name: &str) -> Option<Keysym> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(char_keysym(c));
    }
    let lower = name.to_ascii_lowercase();
    if let Some((_, sym)) = NAMED.iter().find(|(n, _)| *n == lower) {
        return Some(*sym);
    }
    if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u32>().ok())
        && (1..=35).contains(&n)
    {
        return Some(0xffbd + n);
    }
    if let Some(n) = lower
        .strip_prefix("kp_")
        .and_then(|n| n.parse::<u32>().ok())
        && n <= 9
    {
        return Some(0xffb0 + n);
    }
    None
}

/// The keysym that types `c`.
pub fn char_keysym(c: char) -> Keysym {
    match c {
        '\n' | '\r' => 0xff0d,
        '\t' => 0xff09,
        '\u{8}' => 0xff08,
        '\u{1b}' => 0xff1b,
        ' '..='~' | '\u{a0}'..='\u{ff}' => c as u32,
        other => 0x0100_0000 + other as u32,
    }
}

/// Why a key combination cannot be pressed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown key `{name}` in `{combo}`: use key names such as `Return`, `Tab`, `Escape`, `BackSpace`, `Up`, `F5`, `space`, a single character, or combinations such as `ctrl+s` and `alt+Tab`"
)]
pub struct UnknownKey {
    pub name: String,
    pub combo: String,
}

/// The keysyms of a combination such as `ctrl+shift+t`, in press order.
/// Several combinations may be given separated by spaces (`ctrl+a Delete`):
/// each is pressed and released in turn.
pub fn parse_combos(text: &str) -> Result<Vec<Vec<Keysym>>, UnknownKey> {
    let text = text.trim();
    if text.is_empty() {
        return Err(UnknownKey {
            name: String::new(),
            combo: text.to_owned(),
        });
    }
    text.split_whitespace()
        .map(|combo| {
            // `+` alone, or at the end (`ctrl++`), is the plus key.
            let mut names: Vec<&str> = Vec::new();
            let mut rest = combo;
            while !rest.is_empty() {
                match rest.find('+') {
                    Some(0) => {
                        names.push("+");
                        rest = rest[1..].strip_prefix('+').unwrap_or(&rest[1..]);
                    }
                    Some(at) => {
                        names.push(&rest[..at]);
                        rest = &rest[at + 1..];
                    }
                    None => {
                        names.push(rest);
                        rest = "";
                    }
                }
            }
            names
                .into_iter()
                .map(|name| {
                    keysym(name).ok_or_else(|| UnknownKey {
                        name: name.to_owned(),
                        combo: combo.to_owned(),
                    })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_become_keysyms_in_press_order() {
        assert_eq!(parse_combos("Return").unwrap(), vec![vec![0xff0d]]);
        assert_eq!(parse_combos("ctrl+s").unwrap(), vec![vec![0xffe3, 0x73]]);
        assert_eq!(parse_combos("alt+Tab").unwrap(), vec![vec![0xffe9, 0xff09]]);
        assert_eq!(
            parse_combos("ctrl+shift+T").unwrap(),
            vec![vec![0xffe3, 0xffe1, 0x54]]
        );
        assert_eq!(parse_combos("KP_0").unwrap(), vec![vec![0xffb0]]);
        assert_eq!(
            parse_combos("F5 F12").unwrap(),
            vec![vec![0xffc2], vec![0xffc9]]
        );
        assert_eq!(parse_combos("ctrl++").unwrap(), vec![vec![0xffe3, 0x2b]]);
        assert_eq!(parse_combos("+").unwrap(), vec![vec![0x2b]]);
        assert_eq!(parse_combos("Page_Down").unwrap(), vec![vec![0xff56]]);
        assert_eq!(parse_combos("super").unwrap(), vec![vec![0xffeb]]);
    }

    #[test]
    fn unknown_keys_are_named_in_the_error() {
        let error = parse_combos("ctrl+Foo").unwrap_err();
        assert_eq!(error.name, "Foo");
        assert!(error.to_string().contains("`ctrl+Foo`"), "{error}");
        assert!(parse_combos("  ").is_err());
    }

    #[test]
    fn characters_map_to_their_keysyms() {
        assert_eq!(char_keysym('a'), 0x61);
        assert_eq!(char_keysym('>'), 0x3e);
        assert_eq!(char_keysym('é'), 0xe9);
        assert_eq!(char_keysym('€'), 0x0100_20ac);
        assert_eq!(char_keysym('\n'), 0xff0d);
        assert!(is_modifier(0xffe3) && !is_modifier(0xff0d));
    }
}
