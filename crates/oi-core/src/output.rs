//! What the model is told about a run: the output, cut to a bounded size,
//! and how the run ended.

use std::collections::VecDeque;

use oi_protocol::RunStatus;

/// Keeps the first and last characters of a run's output (stdout and stderr
/// in the order they arrived), so memory stays bounded however much a run
/// prints, while the model still sees the start and the end (where errors are).
#[derive(Debug)]
pub(crate) struct HeadTail {
    limit: usize,
    head: String,
    head_chars: usize,
    tail: VecDeque<char>,
    total_chars: u64,
}

impl HeadTail {
    /// Keeps at most `limit` characters in all.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            head: String::new(),
            head_chars: 0,
            tail: VecDeque::new(),
            total_chars: 0,
        }
    }

    pub(crate) fn push(&mut self, text: &str) {
        let head_cap = self.limit / 2;
        let tail_cap = self.limit - head_cap;
        for c in text.chars() {
            self.total_chars += 1;
            if self.head_chars < head_cap {
                self.head.push(c);
                self.head_chars += 1;
                continue;
            }
            if self.tail.len() == tail_cap {
                self.tail.pop_front();
            }
            if tail_cap > 0 {
                self.tail.push_back(c);
            }
        }
    }

    /// The kept text; if some was cut, a note in the middle says how much.
    pub(crate) fn render(&self) -> String {
        let kept = (self.head_chars + self.tail.len()) as u64;
        let tail: String = self.tail.iter().collect();
        if kept == self.total_chars {
            return format!("{}{tail}", self.head);
        }
        let cut = self.total_chars - kept;
        format!(
            "{}\n[… {cut} characters of output cut; {} in all …]\n{tail}",
            self.head, self.total_chars
        )
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total_chars == 0
    }
}

/// The result text for the model: the output, then a line on how it ended
/// unless it simply succeeded.
pub(crate) fn describe_run(language: &str, output: &HeadTail, status: &RunStatus) -> String {
    let mut text = if output.is_empty() {
        String::new()
    } else {
        output.render()
    };
    let note = match status {
        RunStatus::Ok if output.is_empty() => Some("(the code ran and printed nothing)".to_owned()),
        RunStatus::Ok => None,
        RunStatus::Failed {
            exit_code: Some(code),
            ..
        } => Some(format!("[exit code {code}]")),
        RunStatus::Failed {
            exit_code: None,
            error,
        } => match error {
            // The traceback in the output already names the exception.
            Some(e) if text.contains(e.as_str()) => None,
            Some(e) => Some(format!("[error: {e}]")),
            None => Some("[the run failed]".to_owned()),
        },
        RunStatus::Crashed { reason } => Some(format!(
            "[the {language} kernel died: {reason}. Its state (variables, imports, working directory) was lost; the next run starts a fresh kernel.]"
        )),
        RunStatus::Interrupted => Some("[the run was interrupted by the user]".to_owned()),
    };
    if let Some(note) = note {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&note);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn collect(limit: usize, pieces: &[&str]) -> HeadTail {
        let mut h = HeadTail::new(limit);
        for p in pieces {
            h.push(p);
        }
        h
    }

    #[test]
    fn short_output_is_kept_whole() {
        assert_eq!(collect(10, &["abc", "def"]).render(), "abcdef");
        assert_eq!(collect(6, &["abc", "def"]).render(), "abcdef");
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_says_how_much_was_cut() {
        let h = collect(10, &["0123456789", "abcdefghij"]);
        assert_eq!(
            h.render(),
            "01234\n[… 10 characters of output cut; 20 in all …]\nfghij"
        );
    }

    #[test]
    fn counts_characters_not_bytes() {
        let h = collect(4, &["ééééé", "ü"]);
        assert_eq!(
            h.render(),
            "éé\n[… 2 characters of output cut; 6 in all …]\néü"
        );
    }

    #[test]
    fn memory_stays_bounded() {
        let mut h = HeadTail::new(100);
        let chunk = "x".repeat(10_000);
        for _ in 0..100 {
            h.push(&chunk);
        }
        assert_eq!(h.head.len() + h.tail.len(), 100);
        assert_eq!(h.total_chars, 1_000_000);
    }

    #[test]
    fn describes_how_runs_ended() {
        let empty = HeadTail::new(100);
        assert_eq!(
            describe_run("python", &empty, &RunStatus::Ok),
            "(the code ran and printed nothing)"
        );
        let out = collect(100, &["Traceback …\nZeroDivisionError: division by zero\n"]);
        let failed = RunStatus::Failed {
            exit_code: None,
            error: Some("ZeroDivisionError: division by zero".into()),
        };
        assert_eq!(
            describe_run("python", &out, &failed),
            "Traceback …\nZeroDivisionError: division by zero\n"
        );
        let out = collect(100, &["no such file"]);
        let failed = RunStatus::Failed {
            exit_code: Some(2),
            error: None,
        };
        assert_eq!(
            describe_run("shell", &out, &failed),
            "no such file\n[exit code 2]"
        );
        let crashed = RunStatus::Crashed {
            reason: "the kernel exited (exit code 3)".into(),
        };
        assert!(describe_run("python", &empty, &crashed).contains("state (variables"));
    }
}
