//! Stopping a task that repeats itself: the same error, the same code, or
//! small variations of one failing idea, several times in a row. Small
//! models in particular can rerun a failing snippet forever, each time
//! paying for a request.

use std::collections::BTreeSet;

use oi_protocol::RunStatus;

/// How alike two pieces of code must be (shared words over all words) to
/// count as variations of one idea.
const NEAR_SIMILARITY: f64 = 0.75;

/// What the guard has seen during one task.
#[derive(Debug, Default)]
pub(crate) struct LoopGuard {
    last_code: Option<String>,
    code_repeats: u32,
    last_error: Option<String>,
    error_repeats: u32,
    /// How the last run failed, as said (shortened), if it did.
    last_failure_text: Option<String>,
    /// The code proposed last, as words, until its run ends.
    pending: Option<(String, BTreeSet<String>)>,
    /// The last failed run: its language, words and kind of error.
    last_failure: Option<Failure>,
    near_repeats: u32,
    /// Whether variations count (for small models, which need it).
    near: bool,
    /// The task's recent steps (code, and what its run said), for small
    /// models: going in circles (A, B, A, B …) repeats no step twice in a
    /// row, so the counts above never see it.
    steps: Vec<Step>,
    /// Runs that repeated an earlier step, code and result alike.
    cycle_repeats: u32,
    /// What the last run printed when it failed (its start), to tell its
    /// output copied back as code.
    failed_output: String,
    /// Runs that ended (not those refused before they started), in the
    /// whole task.
    runs: u64,
    /// Whether the code proposed last ran and ended without an error.
    last_ran_ok: bool,
}

/// Bytes of a failed run's output kept to compare code with.
const FAILED_OUTPUT: usize = 8 * 1024;

#[derive(Debug, PartialEq)]
struct Step {
    key: String,
    outcome: String,
    failed: bool,
}

/// Steps remembered, at most.
const STEPS: usize = 16;

#[derive(Debug)]
struct Failure {
    language: String,
    words: BTreeSet<String>,
    kind: String,
}

impl LoopGuard {
    /// A guard for one task; `near` also counts failing variations of one
    /// idea (small models), not only exact repeats.
    pub(crate) fn new(near: bool) -> Self {
        Self {
            near,
            ..Self::default()
        }
    }

    /// The model proposed `code`.
    pub(crate) fn proposed(&mut self, language: &str, code: &str) {
        let key = format!("{language}\n{}", normalize_code(code));
        if self.last_code.as_deref() == Some(key.as_str()) {
            self.code_repeats += 1;
        } else {
            self.last_code = Some(key);
            self.code_repeats = 1;
        }
        self.last_ran_ok = false;
        // Words are only needed to compare failing variations.
        self.pending = self.near.then(|| (language.to_owned(), words(code)));
    }

    /// A run ended with `status`, its output for the model being `output`.
    pub(crate) fn ran(&mut self, status: &RunStatus, output: &str) {
        self.runs += 1;
        let pending = self.pending.take();
        self.last_failure_text = raw_error(status, output).map(|raw| shorten(&raw));
        let signature = error_signature(status, output);
        self.last_ran_ok = matches!(status, RunStatus::Ok);
        self.failed_output.clear();
        if self.last_failure_text.is_some() {
            let mut end = output.len().min(FAILED_OUTPUT);
            while !output.is_char_boundary(end) {
                end -= 1;
            }
            self.failed_output.push_str(&output[..end]);
        }
        // A run the guard saw proposed (small models): its code is the
        // last proposed.
        if pending.is_some()
            && let Some(key) = self.last_code.clone()
        {
            let step = Step {
                key,
                failed: signature.is_some(),
                outcome: signature.clone().unwrap_or_else(|| normalize_error(output)),
            };
            if self.steps.contains(&step) {
                self.cycle_repeats += 1;
            }
            if self.steps.len() == STEPS {
                self.steps.remove(0);
            }
            self.steps.push(step);
        }
        let Some(error) = signature else {
            self.last_error = None;
            self.error_repeats = 0;
            self.last_failure = None;
            self.near_repeats = 0;
            return;
        };
        if let Some((language, words)) = pending {
            let failure = Failure {
                language,
                words,
                kind: error_kind(&error),
            };
            let near = self.last_failure.as_ref().is_some_and(|last| {
                last.language == failure.language
                    && last.kind == failure.kind
                    && similarity(&last.words, &failure.words) >= NEAR_SIMILARITY
            });
            self.near_repeats = if near { self.near_repeats + 1 } else { 1 };
            self.last_failure = Some(failure);
        }
        if self.last_error.as_deref() == Some(error.as_str()) {
            self.error_repeats += 1;
        } else {
            self.last_error = Some(error);
            self.error_repeats = 1;
        }
    }

    /// Whether `code` is the output of the last run, which failed, copied
    /// back (every line of it found in that output): told the run failed
    /// and held to a code block, a small model fills it with the error it
    /// read, which fails again, with that error nested.
    pub(crate) fn echoes_failed_output(&self, code: &str) -> bool {
        let mut lines = code
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .peekable();
        lines.peek().is_some() && lines.all(|line| self.failed_output.contains(line))
    }

    /// Whether `code` is the code proposed last in this task, line for
    /// line (whatever language it was named in).
    pub(crate) fn is_last_code(&self, code: &str) -> bool {
        self.last_code
            .as_deref()
            .and_then(|key| key.split_once('\n'))
            .is_some_and(|(_, last)| last == normalize_code(code))
    }

    /// Whether `code` is the code proposed last and it ran, ending without
    /// an error (not refused, not still to run).
    pub(crate) fn ran_ok_last(&self, code: &str) -> bool {
        self.last_ran_ok && self.is_last_code(code)
    }

    /// Whether `code` ran before in this task and failed, whatever
    /// language it was named in (a block tagged `py` runs as `python`):
    /// small models only, whose guard remembers steps.
    pub(crate) fn failed_before(&self, code: &str) -> bool {
        let code = normalize_code(code);
        self.steps.iter().any(|step| {
            step.failed
                && step
                    .key
                    .split_once('\n')
                    .is_some_and(|(_, ran)| ran == code)
        })
    }

    /// For a task that starts over (small models): the repeats counted so
    /// far are forgotten; the steps that ran, and which of them failed,
    /// are kept, so code that failed is still known and a step of the
    /// first try run again still counts as going in circles.
    pub(crate) fn start_over(&mut self) {
        *self = Self {
            near: self.near,
            steps: std::mem::take(&mut self.steps),
            runs: self.runs,
            ..Self::default()
        };
    }

    /// How many runs ended in the task so far: a run refused or skipped
    /// before it started does not count.
    pub(crate) fn runs(&self) -> u64 {
        self.runs
    }

    /// How the last run failed (its error, shortened), if it did.
    pub(crate) fn last_failure(&self) -> Option<&str> {
        self.last_failure_text.as_deref()
    }

    /// Failing variations of one idea stop the task one repeat later than
    /// exact repeats do: a variation may be the fix.
    fn near_limit(max: u32) -> u32 {
        max + 1
    }

    /// A word to the model one repeat before the guard stops the task:
    /// small models often change course when told they are repeating.
    pub(crate) fn warning(&self, max: u32) -> Option<String> {
        if max < 2 {
            return None;
        }
        if self.code_repeats == max - 1 {
            return Some(format!(
                "[oi: you ran exactly this code {} times in a row. Running it again will not help; change your approach, or answer if the task is done. One more repeat stops the task.]",
                self.code_repeats
            ));
        }
        if self.error_repeats == max - 1 {
            return Some(format!(
                "[oi: the same error {} times in a row. Read it and do something different (another method, check your assumptions, inspect the data); one more repeat stops the task.]",
                self.error_repeats
            ));
        }
        if self.cycle_repeats == Self::near_limit(max) - 1 {
            return Some(format!(
                "[oi: {} of your steps repeated an earlier step, code and result alike: you are going in circles. Do not run those again; read the error and the files' first look once more and try something new. One more such repeat stops the task.]",
                self.cycle_repeats
            ));
        }
        if self.near_repeats == Self::near_limit(max) - 1 {
            return Some(format!(
                "[oi: {} small variations of the same code failed the same way. Stop guessing: look at the real input first (print its first lines, its keys or columns), then take another approach. One more such attempt stops the task.]",
                self.near_repeats
            ));
        }
        None
    }

    /// Why the task should stop, once something repeated `max` times.
    pub(crate) fn tripped(&self, max: u32) -> Option<(u32, String)> {
        if max == 0 {
            return None;
        }
        if self.error_repeats >= max
            && let Some(error) = &self.last_error
        {
            return Some((
                self.error_repeats,
                format!(
                    "the same error {} times in a row: {}",
                    self.error_repeats,
                    shorten(error)
                ),
            ));
        }
        if self.near_repeats >= Self::near_limit(max)
            && let Some(failure) = &self.last_failure
        {
            return Some((
                self.near_repeats,
                format!(
                    "{} variations of the same {} code failed the same way ({})",
                    self.near_repeats,
                    failure.language,
                    shorten(&failure.kind)
                ),
            ));
        }
        if self.cycle_repeats >= Self::near_limit(max) {
            return Some((
                self.cycle_repeats,
                format!(
                    "the model went in circles: {} runs repeated an earlier step, code and result alike",
                    self.cycle_repeats
                ),
            ));
        }
        if self.code_repeats >= max
            && let Some(code) = &self.last_code
        {
            let (language, code) = code.split_once('\n').unwrap_or(("", code));
            return Some((
                self.code_repeats,
                format!(
                    "the model proposed the same {language} code {} times in a row: {}",
                    self.code_repeats,
                    shorten(code)
                ),
            ));
        }
        None
    }
}

/// The words of some code (identifiers, numbers, words inside strings),
/// lowercased, for comparing two attempts.
fn words(code: &str) -> BTreeSet<String> {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Shared words over all words of the two (Jaccard); two empty sets are alike.
fn similarity(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let all = a.union(b).count();
    if all == 0 {
        return 1.0;
    }
    a.intersection(b).count() as f64 / all as f64
}

/// The kind of a failure, from its signature: what precedes the first
/// colon (`KeyError`, `FileNotFoundError`, `ls`), with quoted parts taken
/// out; a signature without a colon stands for itself.
fn error_kind(signature: &str) -> String {
    let mut plain = String::with_capacity(signature.len());
    let mut quote: Option<char> = None;
    for c in signature.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                plain.push('…');
            }
            None => plain.push(c),
        }
    }
    match plain.split_once(':') {
        Some((head, _)) if !head.trim().is_empty() => head.trim().to_owned(),
        _ => plain.trim().to_owned(),
    }
}

fn normalize_code(code: &str) -> String {
    code.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error a failed run ended with, with what varies between attempts
/// (line numbers, addresses, other numbers, cell names) taken out.
fn error_signature(status: &RunStatus, output: &str) -> Option<String> {
    raw_error(status, output).map(|raw| normalize_error(&raw))
}

/// The error a failed run ended with, as it was said.
fn raw_error(status: &RunStatus, output: &str) -> Option<String> {
    let raw = match status {
        RunStatus::Ok | RunStatus::Interrupted => return None,
        RunStatus::Failed {
            error: Some(error), ..
        } => error.clone(),
        RunStatus::Failed {
            exit_code: Some(code),
            ..
        } => {
            let last = output
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty() && !l.starts_with("[exit code"))
                .unwrap_or("");
            format!("{last} (exit code {code})")
        }
        RunStatus::Failed { .. } => "the run failed".to_owned(),
        RunStatus::Crashed { reason } => format!("the kernel died: {reason}"),
        RunStatus::TimedOut { .. } => "the run timed out".to_owned(),
        RunStatus::WaitingForInput { .. } => "the program waited for input".to_owned(),
    };
    Some(raw)
}

fn normalize_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c == '0' && chars.peek().is_some_and(|n| *n == 'x' || *n == 'X') {
            chars.next();
            while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                chars.next();
            }
            out.push('#');
        } else if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('#');
        } else {
            out.push(c);
        }
    }
    out
}

fn shorten(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 120 {
        format!("{}…", one_line.chars().take(117).collect::<String>())
    } else {
        one_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(error: &str) -> RunStatus {
        RunStatus::Failed {
            exit_code: None,
            error: Some(error.to_owned()),
        }
    }

    #[test]
    fn the_code_proposed_last_is_recognised_line_for_line() {
        let mut guard = LoopGuard::default();
        assert!(!guard.is_last_code("print(1)"), "nothing proposed yet");
        guard.proposed("python", "x = 1\n\nprint(x)");
        assert!(guard.is_last_code("x = 1\nprint(x)   \n"));
        assert!(!guard.is_last_code("x = 2\nprint(x)"));
        guard.proposed("shell", "ls");
        assert!(guard.is_last_code("ls"));
        assert!(!guard.is_last_code("x = 1\nprint(x)"), "only the last one");
    }

    #[test]
    fn the_model_is_warned_one_repeat_before_the_stop() {
        let mut guard = LoopGuard::default();
        guard.proposed("python", "print(x)");
        assert_eq!(guard.warning(3), None);
        guard.proposed("python", "print(x)  ");
        let warning = guard.warning(3).unwrap();
        assert!(warning.contains("exactly this code 2 times"), "{warning}");
        assert_eq!(guard.tripped(3), None);
        let mut guard = LoopGuard::default();
        guard.ran(&failed("NameError: name 'x' is not defined"), "");
        guard.ran(&failed("NameError: name 'x' is not defined"), "");
        assert!(guard.warning(3).unwrap().contains("same error 2 times"));
        assert_eq!(guard.warning(1), None);
    }

    #[test]
    fn the_same_error_three_times_trips_even_at_other_lines_and_addresses() {
        let mut guard = LoopGuard::default();
        guard.ran(&failed("NameError: name 'df' is not defined (line 3)"), "");
        guard.ran(&failed("NameError: name 'df' is not defined (line 7)"), "");
        assert_eq!(guard.tripped(3), None);
        guard.ran(&failed("NameError: name 'df' is not defined (line 12)"), "");
        let (repeats, summary) = guard.tripped(3).unwrap();
        assert_eq!(repeats, 3);
        assert!(
            summary.starts_with("the same error 3 times in a row: NameError"),
            "{summary}"
        );
        let mut guard = LoopGuard::default();
        for address in ["0x7f3a10", "0x7f9b22", "0x55aa00"] {
            guard.ran(&failed(&format!("Segfault at {address}")), "");
        }
        assert!(guard.tripped(3).is_some());
    }

    #[test]
    fn only_code_proposed_last_that_ran_without_error_ran_ok_last() {
        let mut guard = LoopGuard::default();
        guard.proposed("python", "print(1)");
        assert!(!guard.ran_ok_last("print(1)"), "proposed, not run yet");
        guard.ran(&RunStatus::Ok, "1\n");
        assert!(guard.ran_ok_last("print(1)\n"));
        assert!(!guard.ran_ok_last("print(2)"), "other code");
        // Proposed again and refused: it did not run this time.
        guard.proposed("python", "print(1)");
        assert!(!guard.ran_ok_last("print(1)"));
        guard.proposed("python", "1/0");
        guard.ran(&failed("ZeroDivisionError: division by zero"), "");
        assert!(!guard.ran_ok_last("1/0"), "it failed");
        // A shell command that exits non-zero without an error line.
        guard.proposed("shell", "false");
        guard.ran(
            &RunStatus::Failed {
                exit_code: Some(1),
                error: None,
            },
            "",
        );
        assert!(!guard.ran_ok_last("false"));
        guard.proposed("python", "while True: pass");
        guard.ran(&RunStatus::Interrupted, "");
        assert!(!guard.ran_ok_last("while True: pass"), "stopped");
    }

    #[test]
    fn a_success_or_another_error_starts_the_count_again() {
        let mut guard = LoopGuard::default();
        guard.ran(&failed("KeyError: 'a'"), "");
        guard.ran(&failed("KeyError: 'a'"), "");
        guard.ran(&RunStatus::Ok, "fine");
        guard.ran(&failed("KeyError: 'a'"), "");
        assert_eq!(guard.tripped(3), None);
        guard.ran(&failed("KeyError: 'b'"), "");
        guard.ran(&failed("KeyError: 'a'"), "");
        assert_eq!(guard.tripped(3), None);
    }

    #[test]
    fn shell_failures_are_told_apart_by_their_last_line() {
        let exit = RunStatus::Failed {
            exit_code: Some(1),
            error: None,
        };
        let mut guard = LoopGuard::default();
        for _ in 0..3 {
            guard.ran(
                &exit,
                "ls: cannot access 'x': No such file or directory\n[exit code 1]",
            );
        }
        let (_, summary) = guard.tripped(3).unwrap();
        assert!(
            summary.contains("No such file or directory (exit code #)"),
            "{summary}"
        );
    }

    #[test]
    fn failing_variations_of_one_idea_are_warned_then_stopped_one_later() {
        let mut guard = LoopGuard::new(true);
        let attempt = |guard: &mut LoopGuard, column: &str| {
            guard.proposed(
                "python",
                &format!(
                    "import csv\nrows = list(csv.DictReader(open('data.csv')))\nprint(sum(float(r['{column}']) for r in rows))"
                ),
            );
            guard.ran(&failed(&format!("KeyError: '{column}'")), "");
        };
        attempt(&mut guard, "Amount");
        attempt(&mut guard, "amount");
        // Different errors, so not the same error twice.
        assert_eq!(guard.error_repeats, 1);
        assert_eq!(guard.warning(3), None);
        attempt(&mut guard, "AMOUNT");
        let warning = guard.warning(3).unwrap();
        assert!(warning.contains("3 small variations"), "{warning}");
        assert_eq!(guard.tripped(3), None);
        attempt(&mut guard, "amount ");
        let (repeats, summary) = guard.tripped(3).unwrap();
        assert_eq!(repeats, 4);
        assert!(
            summary
                .starts_with("4 variations of the same python code failed the same way (KeyError)"),
            "{summary}"
        );
    }

    #[test]
    fn another_approach_or_a_success_is_not_a_near_repeat() {
        let mut guard = LoopGuard::new(true);
        guard.proposed(
            "python",
            "import csv\nrows = list(csv.DictReader(open('a.csv')))",
        );
        guard.ran(&failed("KeyError: 'x'"), "");
        guard.proposed("shell", "cut -d, -f2 a.csv | paste -sd+ | bc");
        guard.ran(&failed("KeyError: 'y'"), "");
        guard.proposed(
            "python",
            "import json\nprint(json.load(open('a.json'))['data'][0]['x'])",
        );
        guard.ran(&failed("KeyError: 'z'"), "");
        assert_eq!(guard.near_repeats, 1);
        guard.proposed(
            "python",
            "import json\nprint(json.load(open('a.json'))['data'][0]['y'])",
        );
        assert_eq!(guard.last_failure(), Some("KeyError: 'z'"));
        guard.ran(&RunStatus::Ok, "1");
        assert_eq!(guard.near_repeats, 0);
        assert_eq!(guard.last_failure(), None);
        assert_eq!(error_kind("KeyError: 'a:b'"), "KeyError");
        assert_eq!(
            error_kind("cat: 'no such.txt': No such file or directory (exit code #)"),
            "cat"
        );
        assert_eq!(error_kind("the run timed out"), "the run timed out");
        // Off for other models.
        let mut guard = LoopGuard::new(false);
        for column in ["a", "b", "c", "d"] {
            guard.proposed("python", &format!("print(rows['{column}'])"));
            guard.ran(&failed(&format!("KeyError: '{column}'")), "");
        }
        assert_eq!(guard.tripped(3), None);
    }

    #[test]
    fn a_task_started_over_forgets_its_repeats_but_not_what_failed() {
        let mut guard = LoopGuard::new(true);
        for _ in 0..3 {
            guard.proposed("python", "print(1 + 1)");
            guard.ran(&failed("NameError: name 'x' is not defined"), "");
        }
        assert!(guard.tripped(3).is_some());
        guard.start_over();
        assert_eq!(guard.tripped(3), None);
        assert_eq!(guard.warning(3), None);
        assert_eq!(guard.last_failure(), None);
        assert!(!guard.is_last_code("print(1 + 1)"));
        assert!(guard.failed_before("print(1 + 1)"));
        // Near repeats are still watched for.
        assert!(guard.near);
        // Runs ended are counted for the whole task; one proposed and
        // refused is not a run.
        assert_eq!(guard.runs(), 3);
        guard.proposed("python", "print(2)");
        assert_eq!(guard.runs(), 3);
    }

    #[test]
    fn going_in_circles_is_warned_then_stopped() {
        let ok = RunStatus::Ok;
        let a = "df = pd.read_csv('x.csv')\nprint(df['Region'].sum())";
        let b = "print(df.columns)";
        let step = |guard: &mut LoopGuard, code: &str, failed_run: bool| {
            guard.proposed("python", code);
            if failed_run {
                guard.ran(&failed("KeyError: 'Region'"), "");
            } else {
                guard.ran(&ok, "Index(['a;Region;b'])\n");
            }
        };
        let mut guard = LoopGuard::new(true);
        step(&mut guard, a, true);
        assert!(guard.failed_before(a));
        assert!(guard.failed_before(&format!("{a}\n")), "line for line");
        assert!(!guard.failed_before(b));
        step(&mut guard, b, false);
        assert!(!guard.failed_before(b), "it did not fail");
        step(&mut guard, a, true);
        assert_eq!(guard.warning(3), None);
        step(&mut guard, b, false);
        step(&mut guard, a, true);
        let warning = guard.warning(3).unwrap();
        assert!(warning.contains("going in circles"), "{warning}");
        assert_eq!(guard.tripped(3), None);
        step(&mut guard, b, false);
        let (repeats, summary) = guard.tripped(3).unwrap();
        assert_eq!(repeats, 4);
        assert!(
            summary.starts_with("the model went in circles"),
            "{summary}"
        );

        // The same code with another result is a new step; other models'
        // guards remember no steps.
        let mut guard = LoopGuard::new(true);
        for i in 0..6 {
            guard.proposed("python", b);
            guard.ran(&ok, &format!("{}\n", ["a", "b", "c", "d", "e", "f"][i]));
            guard.proposed("python", a);
            guard.ran(&ok, "fine");
        }
        assert_eq!(guard.cycle_repeats, 5, "only `a` repeats its result");
        let mut big = LoopGuard::new(false);
        for _ in 0..4 {
            step(&mut big, a, true);
            step(&mut big, b, false);
        }
        assert_eq!(big.tripped(3), None);
        assert!(!big.failed_before(a));
    }

    #[test]
    fn the_same_code_three_times_trips_whatever_its_outcome() {
        let mut guard = LoopGuard::default();
        guard.proposed("python", "print(1)\n");
        guard.proposed("python", "print(1)");
        guard.proposed("shell", "print(1)");
        assert_eq!(guard.tripped(3), None);
        guard.proposed("shell", "print(1)  \n\n");
        guard.proposed("shell", "print(1)");
        let (_, summary) = guard.tripped(3).unwrap();
        assert!(
            summary.starts_with("the model proposed the same shell code 3 times"),
            "{summary}"
        );
        assert_eq!(guard.tripped(4), None);
    }

    #[test]
    fn a_failed_runs_output_copied_back_as_code_is_told() {
        let mut guard = LoopGuard::new(true);
        let code = "main()";
        guard.proposed("python", code);
        let output = "saved wordfreq.py\nUsage: python wordfreq.py <filename>\n[exit code 1]";
        guard.ran(
            &RunStatus::Failed {
                exit_code: Some(1),
                error: None,
            },
            output,
        );
        assert!(
            guard.echoes_failed_output(
                "saved wordfreq.py\n  Usage: python wordfreq.py <filename>\n"
            )
        );
        assert!(!guard.echoes_failed_output("import sys\nprint(sys.argv)"));
        assert!(!guard.echoes_failed_output("\n"));
        // The output of a run that worked may be code to run (a file shown).
        guard.proposed("shell", "cat steps.sh");
        guard.ran(&RunStatus::Ok, "echo one\necho two\n");
        assert!(!guard.echoes_failed_output("echo one\necho two"));
    }
}
