//! Noticing a reply that has fallen into repeating itself.
//!
//! A small model can get stuck emitting one short pattern (`0, 0, 0, …`,
//! the same line of a table, the same sentence) until its output limit or
//! the context window is reached: minutes of generation that help no one.
//! The stream is watched while it arrives; once its end is one unit
//! repeated many times over, the reply is cut after the first few repeats
//! and the model is told why.

/// The longest repeating unit looked for, in bytes.
const MAX_UNIT: usize = 200;
/// How long the repeated run must be before it counts, in bytes: legitimate
/// output (a separator line, a list of zeros in a literal) stays below it.
const MIN_RUN: usize = 600;
/// How many times a unit must repeat, at least.
const MIN_REPEATS: usize = 8;
/// How many units of the repetition are kept when the reply is cut.
const KEPT_REPEATS: usize = 2;

/// A repetition found at the end of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Runaway {
    /// Where to cut the reply: after the first [`KEPT_REPEATS`] units.
    pub(super) cut_at: usize,
    /// The repeated unit (for the note to the model).
    pub(super) unit: String,
    /// How many times it repeated.
    pub(super) repeats: usize,
}

/// Watches a streamed reply for runaway repetition, checking only every so
/// often so that a long reply costs little.
#[derive(Debug, Default)]
pub(super) struct Watch {
    checked_len: usize,
}

impl Watch {
    /// The reply so far is `text`: the repetition its end has fallen into,
    /// if any.
    pub(super) fn check(&mut self, text: &str) -> Option<Runaway> {
        // At most once per 64 new bytes.
        if text.len() < self.checked_len + 64 || text.len() < MIN_RUN {
            return None;
        }
        self.checked_len = text.len();
        find(text)
    }
}

/// The repetition at the end of `text`: the shortest unit of at most
/// [`MAX_UNIT`] bytes that ends the text [`MIN_REPEATS`] times or more, in a
/// run of at least [`MIN_RUN`] bytes.
pub(super) fn find(text: &str) -> Option<Runaway> {
    let bytes = text.as_bytes();
    let len = bytes.len();
    for unit in 1..=MAX_UNIT.min(len / MIN_REPEATS) {
        // How far back the text keeps repeating with period `unit`.
        let mut start = len - unit;
        while start > 0 && bytes[start - 1] == bytes[start - 1 + unit] {
            start -= 1;
        }
        let run = len - start;
        let repeats = run / unit;
        if run < MIN_RUN || repeats < MIN_REPEATS {
            continue;
        }
        // Whitespace alone repeating is not a runaway worth a note (the
        // server will end it), and a unit must be a whole pattern.
        let pattern = &bytes[start..start + unit];
        if pattern.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut cut_at = start + unit * KEPT_REPEATS;
        while !text.is_char_boundary(cut_at) {
            cut_at += 1;
        }
        let unit_text = String::from_utf8_lossy(pattern).into_owned();
        return Some(Runaway {
            cut_at,
            unit: unit_text,
            repeats,
        });
    }
    None
}

/// Blank lines in a row a reply keeps when it has a run of more than
/// [`BLANK_RUN`]: two, as code may have between definitions.
const KEPT_BLANKS: usize = 2;
/// A run of blank lines longer than this is a reply gone astray.
const BLANK_RUN: usize = 6;

/// `text` with every run of more than [`KEPT_BLANKS`] blank lines cut to
/// that many, when it has a run of more than [`BLANK_RUN`] (a small model
/// can emit thousands of line breaks between its words, tokens cheap to
/// generate that fill the context window when sent back), with how many
/// lines were left out; `None` when it has no such run.
pub(super) fn collapse_blank_runs(text: &str) -> Option<(String, usize)> {
    let mut kept = Vec::new();
    let (mut run, mut longest, mut left_out) = (0, 0, 0);
    for line in text.split('\n') {
        if line.trim().is_empty() {
            run += 1;
            longest = longest.max(run);
            if run > KEPT_BLANKS {
                left_out += 1;
                continue;
            }
            kept.push("");
        } else {
            run = 0;
            kept.push(line);
        }
    }
    (longest > BLANK_RUN).then(|| (kept.join("\n"), left_out))
}

/// What the model is told after its reply was cut.
pub(super) fn note(runaway: &Runaway) -> String {
    let unit: String = runaway.unit.trim().chars().take(60).collect();
    format!(
        "[oi: your reply kept repeating `{unit}` ({} times), so it was cut there. Do not repeat it: continue the task with the next step.]",
        runaway.repeats
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_short_pattern_repeated_for_a_long_run_is_found_and_cut_early() {
        let text = format!("Here are the numbers:\n{}", "0, ".repeat(400));
        let found = find(&text).unwrap();
        assert_eq!(found.unit.len(), 3);
        assert!(found.repeats >= 399, "{found:?}");
        assert_eq!(&text[..found.cut_at], "Here are the numbers:\n0, 0, ");
        // A repeated line is a unit too.
        let lines = format!("intro\n{}", "| a | b | total of the column |\n".repeat(40));
        let found = find(&lines).unwrap();
        assert_eq!(found.unit.trim(), "| a | b | total of the column |");
        assert!(note(&found).contains("`| a | b | total of the column |` (40 times)"));
    }

    #[test]
    fn ordinary_replies_and_short_repeats_are_left_alone() {
        // Code with a separator line and a few similar lines.
        let code = format!(
            "```python\nprint('{}')\nfor i in range(10):\n    print(i)\n```\n",
            "=".repeat(60)
        );
        assert_eq!(find(&code), None);
        // Repeats below the run length.
        assert_eq!(find(&"ab".repeat(100)), None);
        // Varied text of any length.
        let varied: String = (0..500).map(|i| format!("line {i}\n")).collect();
        assert_eq!(find(&varied), None);
        // Trailing whitespace alone.
        assert_eq!(find(&format!("done{}", " ".repeat(2000))), None);
    }

    #[test]
    fn long_runs_of_blank_lines_are_cut_to_two() {
        let text = format!(
            "Fix:{}```python\nx = 1\n\n\ny = 2\n```{}",
            "\n".repeat(500),
            "\n \n\t".repeat(40)
        );
        let (kept, left_out) = collapse_blank_runs(&text).unwrap();
        assert_eq!(kept, "Fix:\n\n\n```python\nx = 1\n\n\ny = 2\n```\n\n");
        assert_eq!(left_out, 497 + 78);
        // Runs of up to six blank lines are the model's own layout.
        let layout = format!("a{}b", "\n".repeat(7));
        assert_eq!(collapse_blank_runs(&layout), None);
        assert!(collapse_blank_runs(&format!("a{}b", "\n".repeat(8))).is_some());
    }

    #[test]
    fn the_cut_falls_on_a_character_boundary() {
        let text = "é".repeat(400);
        let found = find(&text).unwrap();
        assert!(text.is_char_boundary(found.cut_at));
        assert_eq!(&text[..found.cut_at], "éé");
    }

    #[test]
    fn the_watch_checks_only_every_so_often() {
        let mut watch = Watch::default();
        let text = "x".repeat(700);
        assert!(watch.check(&text).is_some());
        // Nothing new since the last check.
        assert_eq!(watch.check(&text), None);
        assert_eq!(watch.check("short"), None);
    }
}
