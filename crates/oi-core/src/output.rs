//! A run's output on its two ways out: to the model (a bounded head and
//! tail, with progress-bar updates collapsed) and to the user (as it comes,
//! but never faster than a terminal can take).

use std::time::Instant;

use oi_protocol::RunStatus;

/// Keeps the first and last characters of a run's output (stdout and stderr
/// in the order they arrived), so memory stays bounded however much a run
/// prints, while the model still sees the start and the end (where errors
/// are).
///
/// A carriage return that is not part of a `\r\n` starts its line over, as
/// on a terminal: a progress bar that redraws itself a thousand times leaves
/// only its last state.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head_cap: usize,
    tail_cap: usize,
    head: String,
    head_chars: usize,
    /// The end of the output; may grow to twice `tail_cap` before it is
    /// trimmed, so trimming costs amortized O(1) per character.
    tail: String,
    tail_chars: usize,
    /// Characters of the output after collapsing overwritten lines.
    total_chars: u64,
    /// The last piece ended in `\r`: whether it starts the line over depends
    /// on the next character.
    pending_cr: bool,
}

impl HeadTail {
    /// Keeps at most `limit` characters in all.
    pub(crate) fn new(limit: usize) -> Self {
        let head_cap = limit / 2;
        Self {
            head_cap,
            tail_cap: limit - head_cap,
            head: String::new(),
            head_chars: 0,
            tail: String::new(),
            tail_chars: 0,
            total_chars: 0,
            pending_cr: false,
        }
    }

    pub(crate) fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if std::mem::take(&mut self.pending_cr) && !text.starts_with('\n') {
            self.erase_line();
        }
        let mut rest = text;
        while let Some(i) = rest.find('\r') {
            self.append(&rest[..i]);
            let after = &rest[i + 1..];
            if after.is_empty() {
                self.pending_cr = true;
                return;
            }
            if !after.starts_with('\n') {
                self.erase_line();
            }
            rest = after;
        }
        self.append(rest);
    }

    fn append(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut rest = text;
        if self.head_chars < self.head_cap {
            let room = self.head_cap - self.head_chars;
            let split = rest.char_indices().nth(room).map_or(rest.len(), |(i, _)| i);
            let (head, after) = rest.split_at(split);
            let n = head.chars().count();
            self.head.push_str(head);
            self.head_chars += n;
            self.total_chars += n as u64;
            rest = after;
        }
        if rest.is_empty() {
            return;
        }
        let n = rest.chars().count();
        self.total_chars += n as u64;
        if self.tail_cap == 0 {
            return;
        }
        if n >= self.tail_cap {
            let skip = n - self.tail_cap;
            let start = rest.char_indices().nth(skip).map_or(rest.len(), |(i, _)| i);
            self.tail.clear();
            self.tail.push_str(&rest[start..]);
            self.tail_chars = self.tail_cap;
            return;
        }
        self.tail.push_str(rest);
        self.tail_chars += n;
        if self.tail_chars > 2 * self.tail_cap {
            self.trim_tail();
        }
    }

    /// Cuts the tail down to its last `tail_cap` characters.
    fn trim_tail(&mut self) {
        if self.tail_chars <= self.tail_cap {
            return;
        }
        let skip = self.tail_chars - self.tail_cap;
        let start = self
            .tail
            .char_indices()
            .nth(skip)
            .map_or(self.tail.len(), |(i, _)| i);
        self.tail.drain(..start);
        self.tail_chars = self.tail_cap;
    }

    /// Forgets the current (last, unfinished) line: a carriage return is
    /// about to write over it.
    fn erase_line(&mut self) {
        if !self.tail.is_empty() {
            let keep = self.tail.rfind('\n').map_or(0, |i| i + 1);
            let erased = self.tail[keep..].chars().count();
            self.tail.truncate(keep);
            self.tail_chars -= erased;
            self.total_chars -= erased as u64;
            let contiguous = self.total_chars == (self.head_chars + self.tail_chars) as u64;
            if keep > 0 || !contiguous {
                // The line began in the tail, or in output already cut.
                return;
            }
        }
        let keep = self.head.rfind('\n').map_or(0, |i| i + 1);
        let erased = self.head[keep..].chars().count();
        self.head.truncate(keep);
        self.head_chars -= erased;
        self.total_chars -= erased as u64;
    }

    /// The kept text; if some was cut, a note in the middle says how much.
    pub(crate) fn render(&self) -> String {
        let tail_start = self
            .tail
            .char_indices()
            .nth(self.tail_chars.saturating_sub(self.tail_cap))
            .map_or(self.tail.len(), |(i, _)| i);
        let tail = &self.tail[tail_start..];
        let kept = (self.head_chars + self.tail_chars.min(self.tail_cap)) as u64;
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

/// What to show the user of a run's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shown {
    Text(String),
    /// This many bytes came too fast to be shown and were skipped.
    Skipped(u64),
}

/// Paces the output shown to the user: it passes as it comes up to a burst,
/// then at a steady rate; what comes faster is skipped (and counted), and
/// the last bit of skipped output is shown when the run ends, so the user
/// always sees how it finished. Progress-bar redraws within a piece are
/// collapsed to their last state first.
///
/// This keeps a run that prints a gigabyte from freezing the terminal or
/// piling up events faster than a front end can draw them.
#[derive(Debug)]
pub(crate) struct DisplayPacer {
    /// Bytes that may be shown now.
    allowance: f64,
    last: Instant,
    skipped: u64,
    /// The end of the skipped output.
    skipped_tail: String,
}

impl DisplayPacer {
    /// Bytes shown at once before pacing starts.
    pub(crate) const BURST: f64 = 512.0 * 1024.0;
    /// Bytes per second shown after that.
    pub(crate) const RATE: f64 = 256.0 * 1024.0;
    /// While skipping, output is shown again only once this much may be.
    const RESUME: f64 = 64.0 * 1024.0;
    /// How much of the skipped output's end is kept for the end of the run.
    const TAIL: usize = 2048;

    pub(crate) fn new(now: Instant) -> Self {
        Self {
            allowance: Self::BURST,
            last: now,
            skipped: 0,
            skipped_tail: String::new(),
        }
    }

    /// What to show of `text`, which arrived at `now`.
    pub(crate) fn offer(&mut self, text: &str, now: Instant) -> Vec<Shown> {
        let elapsed = now.saturating_duration_since(self.last);
        self.last = now;
        self.allowance = (self.allowance + elapsed.as_secs_f64() * Self::RATE).min(Self::BURST);
        let text = collapse_redraws(text);
        let len = text.len() as f64;
        let skipping = self.skipped > 0;
        let threshold = if skipping { Self::RESUME.max(len) } else { len };
        if self.allowance < threshold {
            self.skipped += text.len() as u64;
            keep_end(&mut self.skipped_tail, &text, Self::TAIL);
            return Vec::new();
        }
        self.allowance -= len;
        let mut shown = Vec::with_capacity(2);
        if skipping {
            shown.push(Shown::Skipped(std::mem::take(&mut self.skipped)));
            self.skipped_tail.clear();
        }
        shown.push(Shown::Text(text));
        shown
    }

    /// At the end of the run: the count of skipped bytes and the end of
    /// the skipped output, if any was skipped.
    pub(crate) fn finish(&mut self) -> Vec<Shown> {
        if self.skipped == 0 {
            return Vec::new();
        }
        let tail = std::mem::take(&mut self.skipped_tail);
        let tail_len = tail.len() as u64;
        let skipped = std::mem::take(&mut self.skipped) - tail_len;
        let mut shown = Vec::with_capacity(2);
        if skipped > 0 {
            shown.push(Shown::Skipped(skipped));
        }
        shown.push(Shown::Text(tail));
        shown
    }

    #[cfg(test)]
    fn idle(&mut self, seconds: f64) -> Instant {
        self.last + std::time::Duration::from_secs_f64(seconds)
    }
}

/// Keeps the last `max` bytes of `kept` followed by `text` (whole
/// characters; from the start of a line when the cut fell inside one).
fn keep_end(kept: &mut String, text: &str, max: usize) {
    let mid_line = |s: &str, start: usize| start > 0 && s.as_bytes()[start - 1] != b'\n';
    let cut_mid_line = if text.len() >= max {
        let start = floor_char_boundary(text, text.len() - max);
        kept.clear();
        kept.push_str(&text[start..]);
        mid_line(text, start)
    } else {
        kept.push_str(text);
        if kept.len() <= max {
            return;
        }
        let start = floor_char_boundary(kept, kept.len() - max);
        let cut = mid_line(kept, start);
        kept.drain(..start);
        cut
    };
    if cut_mid_line
        && let Some(i) = kept.find('\n')
        && i + 1 < kept.len()
    {
        kept.drain(..=i);
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Drops the states of a progress bar that a later `\r` in the same piece
/// writes over: `10%\r20%\r30%\n` becomes `\r30%\n`. The terminal shows the
/// same, with far less to draw.
pub(crate) fn collapse_redraws(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let body_no_crlf = body.strip_suffix('\r').unwrap_or(body);
        match body_no_crlf.rfind('\r') {
            // Keep the last state, with the `\r` that returns to the start.
            Some(i) => {
                out.push_str(&body_no_crlf[i..]);
                out.push_str(&line[body_no_crlf.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// What the model reads for a run that succeeded and printed nothing.
pub(crate) const PRINTED_NOTHING: &str = "(the code ran without errors and printed nothing)";

/// The result text for the model: the output, then a line on how it ended
/// unless it simply succeeded.
pub(crate) fn describe_run(language: &str, output: &HeadTail, status: &RunStatus) -> String {
    let mut text = if output.is_empty() {
        String::new()
    } else {
        output.render()
    };
    let note = match status {
        RunStatus::Ok if output.is_empty() => Some(PRINTED_NOTHING.to_owned()),
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
        RunStatus::TimedOut {
            seconds,
            kernel_restarted: false,
        } => Some(format!(
            "[the run was stopped after {seconds} s, the time limit for a run (run_timeout). The {language} kernel and its state were kept. For long work, do it in smaller steps or start it in the background and check on it.]"
        )),
        RunStatus::TimedOut {
            seconds,
            kernel_restarted: true,
        } => Some(format!(
            "[the run was stopped after {seconds} s, the time limit for a run (run_timeout). It did not stop when interrupted, so the {language} kernel was killed: its state (variables, imports, working directory) was lost; the next run starts a fresh kernel.]"
        )),
        RunStatus::WaitingForInput { prompt } => {
            let last = if prompt.trim().is_empty() {
                String::new()
            } else {
                format!(" (its last output: {:?})", prompt.trim())
            };
            Some(format!(
                "[the program stopped to wait for input on stdin{last}, and nobody can type it in this session, so oi interrupted it (any KeyboardInterrupt or similar above is that interruption, not a bug in the code). Do not read from stdin: put the values in the code instead (for example, replace input() with a variable).]"
            ))
        }
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
        // The same, whatever the pieces.
        let pieces: Vec<String> = "0123456789abcdefghij".chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(collect(10, &pieces).render(), h.render());
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
        assert!(h.head.len() + h.tail.len() <= 150);
        assert_eq!(h.total_chars, 1_000_000);
        let mut small = HeadTail::new(100);
        for _ in 0..10_000 {
            small.push("abc");
        }
        assert!(small.tail.len() <= 100, "{}", small.tail.len());
        assert!(small.render().ends_with(&"abc".repeat(16)));
    }

    #[test]
    fn carriage_returns_leave_only_the_last_state_of_a_line() {
        let h = collect(100, &["start\n", "10%\r20%\r", "30%\n", "done\r\n"]);
        assert_eq!(h.render(), "start\n30%\ndone\n");
        // A `\r` at the end of a piece, then `\n`, is a CRLF.
        let h = collect(100, &["a\r", "\nb"]);
        assert_eq!(h.render(), "a\nb");
        // Hundreds of thousands of redraws cost nothing in the kept text.
        let mut h = HeadTail::new(20);
        h.push("head\n");
        for i in 0..100_000 {
            h.push(&format!("\r{i}"));
        }
        h.push("\n");
        assert_eq!(h.render(), "head\n99999\n");
    }

    #[test]
    fn redraws_in_the_tail_are_collapsed_too() {
        let mut h = HeadTail::new(10);
        h.push("0123456789abcdef\n");
        h.push("50%\r100%\n");
        assert_eq!(
            h.render(),
            "01234\n[… 12 characters of output cut; 22 in all …]\n100%\n"
        );
    }

    #[test]
    fn describes_how_runs_ended() {
        let empty = HeadTail::new(100);
        assert_eq!(
            describe_run("python", &empty, &RunStatus::Ok),
            "(the code ran without errors and printed nothing)"
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
        let kept = RunStatus::TimedOut {
            seconds: 5,
            kernel_restarted: false,
        };
        assert!(describe_run("python", &empty, &kept).contains("after 5 s"));
        assert!(describe_run("python", &empty, &kept).contains("were kept"));
        let lost = RunStatus::TimedOut {
            seconds: 5,
            kernel_restarted: true,
        };
        assert!(describe_run("python", &empty, &lost).contains("was lost"));
        let waiting = RunStatus::WaitingForInput {
            prompt: "Name? ".into(),
        };
        let text = describe_run("python", &collect(100, &["Name? "]), &waiting);
        assert!(text.starts_with("Name? \n[the program stopped to wait for input"));
        assert!(text.contains("\"Name?\""));
    }

    fn texts(shown: &[Shown]) -> String {
        shown
            .iter()
            .map(|s| match s {
                Shown::Text(t) => t.clone(),
                Shown::Skipped(n) => format!("[skipped {n}]"),
            })
            .collect()
    }

    #[test]
    fn output_passes_at_once_up_to_a_burst() {
        let start = Instant::now();
        let mut pacer = DisplayPacer::new(start);
        let line = "x".repeat(1023) + "\n";
        let mut shown = 0;
        for _ in 0..512 {
            shown += texts(&pacer.offer(&line, start)).len();
        }
        assert_eq!(shown, 512 * 1024);
        assert!(pacer.finish().is_empty());
    }

    #[test]
    fn a_flood_is_skipped_counted_and_its_end_shown() {
        let start = Instant::now();
        let mut pacer = DisplayPacer::new(start);
        let line = "y".repeat(1023) + "\n";
        let mut shown = 0usize;
        // 100 MiB in one instant: the burst is shown, the rest skipped.
        for _ in 0..100 * 1024 {
            let out = pacer.offer(&line, start);
            shown += texts(&out).len();
        }
        assert_eq!(shown as f64, DisplayPacer::BURST);
        let end = pacer.finish();
        let Shown::Skipped(skipped) = end[0] else {
            panic!("{end:?}")
        };
        let Shown::Text(tail) = &end[1] else {
            panic!("{end:?}")
        };
        assert_eq!(
            skipped + tail.len() as u64 + shown as u64,
            100 * 1024 * 1024
        );
        assert!(tail.len() <= 2048 && tail.ends_with("y\n") && tail.starts_with('y'));
    }

    #[test]
    fn after_a_pause_output_resumes_with_a_note_of_what_was_skipped() {
        let start = Instant::now();
        let mut pacer = DisplayPacer::new(start);
        let big = "z".repeat(600 * 1024);
        assert!(pacer.offer(&big, start).is_empty());
        let later = pacer.idle(1.0);
        assert_eq!(
            pacer.offer("next\n", later),
            vec![Shown::Skipped(600 * 1024), Shown::Text("next\n".into())]
        );
        assert!(pacer.finish().is_empty());
    }

    #[test]
    fn redraws_within_a_piece_collapse_to_the_last() {
        assert_eq!(collapse_redraws("10%\r20%\r30%\n"), "\r30%\n");
        assert_eq!(collapse_redraws("a\r\nb\r\n"), "a\r\nb\r\n");
        assert_eq!(collapse_redraws("x\n1\r2"), "x\n\r2");
        assert_eq!(collapse_redraws("plain"), "plain");
    }
}
