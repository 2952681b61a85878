//! Asking a small model again when its reply would run, unchanged, the code
//! that ran last, or code that already failed in this task (going in
//! circles: A fails, B looks, A again), the output of a run that failed
//! copied back as code, the prompt's example block copied as a step, a
//! block that is only a file's path or a note of oi's copied back, or
//! a block that only prints a value typed into it (a guess); or when a
//! reply held to a code step runs nothing (its block is prose, comments,
//! or the output it expects). Sampled greedily (the default for
//! small local models), the same conversation brings the same reply: the
//! repeat is not run, and the request is sent once more with freer
//! sampling and without the failed code in view (a small model copies
//! code it sees, whatever the temperature). Only when those replies
//! repeat too is the code run again (and counted by the loop guard).

use oi_protocol::Message;

use crate::harness::{Action, EXAMPLE_CODE, fenced_blocks};
use crate::loop_guard::LoopGuard;

use super::typed;

/// What stands, in a request asking again, where a block that failed was.
const LEFT_OUT: &str = "(code left out here: it failed, as its result below says)\n";

/// Whether a reply copies the line that stood for left-out code in place
/// of code (it holds no fenced block): a small model shown it writes it
/// back, alone or after a sentence that announces a fix.
pub(super) fn copies_left_out(reply: &str) -> bool {
    reply.contains(LEFT_OUT.trim_end()) && !reply.contains("```")
}

/// `answer` without the line that stood for left-out code, which a small
/// model may copy into its last reply: oi's placeholder is no answer.
pub(super) fn without_left_out(answer: String) -> String {
    let line = LEFT_OUT.trim_end();
    if !answer.contains(line) {
        return answer;
    }
    answer.replace(line, "").trim_end().to_owned()
}

/// The temperatures of the further requests for one repeat, in order.
const TEMPERATURES: [f64; 2] = [0.7, 1.0];

/// Why a request is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Again {
    /// The reply was no new step (see [`Resample::again`]).
    NoStep,
    /// The reply fell into repeating itself.
    Runaway,
    /// The task started over after going in circles.
    StartOver,
}

impl Again {
    /// Why the request is sent again, as the warning says it; nothing for
    /// a task that starts over, said as it does.
    pub(super) fn reason(self) -> Option<&'static str> {
        match self {
            Again::NoStep => Some(
                "the reply is no new step (code that just ran or already failed in this task, the failed run's output, the prompt's example, a value typed into a print, or no code where a step was asked for)",
            ),
            Again::Runaway => Some("the reply fell into repeating itself and was dropped"),
            Again::StartOver => None,
        }
    }
}

/// The further requests made for the current repeat.
#[derive(Debug, Default)]
pub(super) struct Resample {
    tries: usize,
    /// The task's text as [`typed::key`] makes it, when known: a block
    /// that only prints a value the task does not give is no step.
    task_key: Option<String>,
    /// The output of the task's runs so far, as [`typed::key`] makes it: a
    /// value written to a file that a run printed was found, not typed.
    outputs_key: String,
}

impl Resample {
    /// The further requests of the task whose text is `task`.
    pub(super) fn for_task(task: &str) -> Self {
        Self {
            tries: 0,
            task_key: Some(typed::key(task)),
            outputs_key: String::new(),
        }
    }

    /// What the task's runs printed so far, as [`typed::key`] makes it.
    pub(super) fn saw_outputs(&mut self, outputs_key: &str) {
        outputs_key.clone_into(&mut self.outputs_key);
    }

    /// The temperature to ask again with when the last code `actions`
    /// would run is the code proposed last (`guard`), or no new step (see
    /// above), or when nothing would run of a reply `held` to a code step
    /// (its block was prose, comments, or the output it expects), while
    /// tries remain; `configured` (the session's temperature) is never
    /// lowered. `None`: run the actions.
    pub(super) fn again(
        &mut self,
        actions: &[Action],
        held: bool,
        guard: &LoopGuard,
        configured: Option<f64>,
    ) -> Option<f64> {
        let last_run = actions.iter().rev().find_map(Action::run);
        let repeat = match last_run {
            Some(run) => {
                guard.is_last_code(&run.code)
                    || guard.failed_before(&run.code)
                    || guard.echoes_failed_output(&run.code)
                    || run.code.trim() == EXAMPLE_CODE
                    || bare_value(&run.code)
                    || bare_path(&run.code)
                    || run.code.trim_start().starts_with("[oi:")
                    || (super::save_as::is_shell(run.language.as_deref())
                        && (names_listed(&run.code) || words_listed(&run.code)))
                    || self.task_key.as_deref().is_some_and(|task| {
                        typed::guess(&run.code, run.language.as_deref(), task, &self.outputs_key)
                            .is_some()
                    })
            }
            None => held && actions.is_empty(),
        };
        if !repeat {
            self.tries = 0;
            return None;
        }
        self.freer(configured)
    }

    /// The temperature to ask again with after a reply that fell into
    /// repeating itself (cut, not kept), while tries remain: greedy
    /// sampling of the same conversation falls into the same repetition,
    /// and a cut reply kept in view is copied. `None`: keep the cut reply
    /// and tell the model.
    pub(super) fn after_runaway(&mut self, configured: Option<f64>) -> Option<f64> {
        self.freer(configured)
    }

    /// The next temperature of the current repeat, if tries remain: also
    /// after a reply known to be no new step by what it would change (a
    /// script's new version the same as the one that just failed).
    pub(super) fn freer(&mut self, configured: Option<f64>) -> Option<f64> {
        let temperature = *TEMPERATURES.get(self.tries)?;
        self.tries += 1;
        Some(temperature.max(configured.unwrap_or(0.0)))
    }
}

/// Whether every action of a reply runs the code that ran last, which
/// ended without an error (and there is at least one): nothing new.
pub(super) fn repeats_good_run(actions: &[Action], guard: &LoopGuard) -> bool {
    !actions.is_empty()
        && actions
            .iter()
            .all(|action| action.run().is_some_and(|run| guard.ran_ok_last(&run.code)))
}

/// Whether shell `code` only lists file names, one per line (`docs/a.md`,
/// `notes.txt`), or is one name of a data or text file
/// (`docs/old_setup.md`): an answer written as a block, whose lines bash
/// runs as commands (`Permission denied`, `command not found`; a small
/// model then makes the file executable to "fix" it).
fn names_listed(code: &str) -> bool {
    let lines: Vec<&str> = code
        .lines()
        .filter(|l| super::splice::is_significant(l))
        .map(str::trim)
        .collect();
    match lines.as_slice() {
        [] => false,
        [line] => crate::harness::listed_name(line) && names_data(line),
        _ => lines.iter().all(|l| crate::harness::listed_name(l)),
    }
}

/// Whether shell `code` is a list of three or more lone words, one per
/// line, most of which no program on `PATH` is called (`requests`,
/// `Jinja2`, `NumPy`), or of three or more settings whose names hold a
/// `.` (`app.name=Ledger`): the lines of a file the reply meant to write,
/// which bash would run one by one as commands (one of them, `flask`,
/// a real program).
fn words_listed(code: &str) -> bool {
    let lines: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    // `app.name=Ledger` lines: a file's settings, since a shell
    // variable's name holds no `.`.
    let setting = |line: &&str| {
        line.split_once('=').is_some_and(|(key, value)| {
            key.contains('.')
                && !key.starts_with('.')
                && key
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
                && !value.contains(char::is_whitespace)
        })
    };
    if lines.len() >= 3 && lines.iter().all(setting) {
        return true;
    }
    let lone = |line: &&str| {
        line.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !line.starts_with(['-', '.'])
    };
    if lines.len() < 3 || !lines.iter().all(lone) {
        return false;
    }
    let paths: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    let programs = lines
        .iter()
        .filter(|word| paths.iter().any(|dir| dir.join(word).is_file()))
        .count();
    programs * 2 < lines.len()
}

/// Whether the file name `line` ends in the extension of data or text,
/// which no command has.
fn names_data(line: &str) -> bool {
    const DATA: [&str; 18] = [
        "txt", "md", "csv", "tsv", "json", "jsonl", "log", "ini", "cfg", "yaml", "yml", "xml",
        "html", "pdf", "png", "jpg", "jpeg", "gif",
    ];
    line.rsplit_once('.')
        .is_some_and(|(_, extension)| DATA.contains(&extension.to_ascii_lowercase().as_str()))
}

/// Whether `code` is only one file path (`/tmp/work/settings.ini`,
/// `docs/old_setup.md`): the answer "the file is at", written as a block,
/// which runs as nothing in any language (a syntax error in Python,
/// `Permission denied` in bash). A path runs as a program only with no
/// extension of data or text, or when it names a script: those stay.
fn bare_path(code: &str) -> bool {
    let code = code.trim();
    !code.is_empty()
        && !code.contains(char::is_whitespace)
        && code.contains('/')
        && code
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~'))
        && names_data(code)
}

/// Whether `code` is only a value written out (`{'ben': 37.5}`, `[1, 2]`,
/// `21.0`): a result shown back in a code block ("The result is:"), which
/// does nothing when run. A small model that read a dict its run printed
/// writes it back as its next step, again and again.
fn bare_value(code: &str) -> bool {
    let code = code.trim();
    if code.parse::<f64>().is_ok() {
        return true;
    }
    let (Some(first), Some(last)) = (code.chars().next(), code.chars().last()) else {
        return false;
    };
    if !matches!((first, last), ('{', '}') | ('[', ']') | ('(', ')')) {
        return false;
    }
    // Outside strings: only brackets, separators, numbers and the
    // constants a printed value holds; no name, call or assignment.
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut word = String::new();
    for c in code.chars().chain([' ']) {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            let constant = matches!(
                word.as_str(),
                "True" | "False" | "None" | "nan" | "inf" | "true" | "false" | "null"
            );
            if !constant && word.parse::<f64>().is_err() {
                return false;
            }
            word.clear();
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '{' | '}' | '[' | ']' | '(' | ')' | ',' | ':' | '-' | '+' => {}
            _ if c.is_whitespace() => {}
            _ => return false,
        }
    }
    quote.is_none()
}

/// In the `messages` of a request asking again: the fenced blocks of the
/// model's replies whose code failed in this task (`guard`), each replied
/// by a line saying so. The history keeps them; only this request does not
/// show them. Returns how many were left out.
pub(super) fn leave_out_failed_code(messages: &mut [Message], guard: &LoopGuard) -> usize {
    let mut left_out = 0;
    for message in messages {
        let Message::Assistant { text, .. } = message else {
            continue;
        };
        let failed: Vec<_> = fenced_blocks(text)
            .into_iter()
            .filter(|fence| guard.failed_before(&fence.code))
            .collect();
        // From the end, so the spans before stay where they are.
        for fence in failed.iter().rev() {
            text.replace_range(fence.span.clone(), LEFT_OUT);
        }
        left_out += failed.len();
    }
    left_out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::ProposedRun;

    fn run(code: &str) -> Action {
        Action::Run(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: code.to_owned(),
        })
    }

    #[test]
    fn only_a_reply_that_runs_nothing_but_the_code_that_just_ran_right_repeats_it() {
        let mut guard = LoopGuard::new(true);
        assert!(!repeats_good_run(&[run("print(1)")], &guard), "nothing ran");
        guard.proposed("python", "print(1)");
        guard.ran(&oi_protocol::RunStatus::Ok, "1\n");
        assert!(repeats_good_run(&[run("print(1)")], &guard));
        assert!(repeats_good_run(
            &[run("print(1)"), run("print(1)\n")],
            &guard
        ));
        assert!(!repeats_good_run(&[], &guard), "no action");
        assert!(
            !repeats_good_run(&[run("print(1)"), run("print(2)")], &guard),
            "a new step beside it"
        );
        guard.proposed("python", "print(x)");
        guard.ran(
            &oi_protocol::RunStatus::Failed {
                exit_code: None,
                error: Some("NameError: name 'x' is not defined".to_owned()),
            },
            "",
        );
        assert!(!repeats_good_run(&[run("print(x)")], &guard), "it failed");
    }

    fn shell(code: &str) -> Action {
        Action::Run(ProposedRun {
            call_id: None,
            language: Some("bash".to_owned()),
            code: code.to_owned(),
        })
    }

    /// A small model's guard after `a()` failed and `print(1)` ran.
    fn failed_then_printed() -> LoopGuard {
        let mut guard = LoopGuard::new(true);
        guard.proposed("python", "a()");
        guard.ran(
            &oi_protocol::RunStatus::Failed {
                exit_code: None,
                error: Some("NameError: name 'a' is not defined".to_owned()),
            },
            "",
        );
        guard.proposed("python", "print(1)");
        guard.ran(&oi_protocol::RunStatus::Ok, "1\n");
        guard
    }

    #[test]
    fn a_repeat_of_the_last_code_is_asked_again_twice_with_freer_sampling() {
        let mut guard = LoopGuard::default();
        let mut resample = Resample::default();
        assert_eq!(
            resample.again(&[run("print(1)")], false, &guard, None),
            None
        );
        guard.proposed("python", "print(1)");
        assert_eq!(
            resample.again(&[run("print(1)\n")], false, &guard, None),
            Some(0.7)
        );
        assert_eq!(
            resample.again(&[run("print(1)")], false, &guard, None),
            Some(1.0)
        );
        assert_eq!(
            resample.again(&[run("print(1)")], false, &guard, None),
            None,
            "then the repeat runs"
        );
        // A new reply starts the count again.
        assert_eq!(
            resample.again(&[run("print(2)")], false, &guard, None),
            None
        );
        assert_eq!(
            resample.again(&[run("print(1)")], false, &guard, Some(0.9)),
            Some(0.9)
        );
    }

    #[test]
    fn a_value_written_back_as_code_is_asked_again() {
        for value in [
            "{'ben': 37.5, 'ana': 12.5, 'cy': 0.0}",
            "[1, 2, -3.5e2]",
            "21.0\n",
            "{\"a\": [true, null], \"b\": \"x, y: {z}\"}",
            "('it\\'s', None)",
        ] {
            assert!(bare_value(value), "{value}");
        }
        for code in [
            "{'a': x}",
            "[f(1)]",
            "(a, b) = (1, 2)",
            "print({'a': 1})",
            "{'a': 1}\nprint(2)",
            "['open",
            "{1, 2} | {3}",
            "",
        ] {
            assert!(!bare_value(code), "{code}");
        }
        let guard = LoopGuard::default();
        let mut resample = Resample::default();
        assert_eq!(
            resample.again(&[run("{'ben': 37.5}")], false, &guard, None),
            Some(0.7)
        );
    }

    #[test]
    fn a_shell_block_of_lone_words_that_are_no_programs_is_no_step() {
        assert!(words_listed(
            "flask\nrequests\nJinja2\ngunicorn\npandas\nNumPy\nscikit-learn\nPyYAML\n"
        ));
        assert!(words_listed(
            "app.name=Ledger\napp.debug=false\ndb.url=postgres://db:5432/ledger\n"
        ));
        for code in [
            // Programs, or too few lines, or words with arguments.
            "ls\npwd\ndate",
            "Jinja2\nNumPy",
            "pip install requests\npip install flask\npip install numpy",
            // Shell assignments are commands.
            "A=1\nB=2\nC=3",
        ] {
            assert!(!words_listed(code), "{code}");
        }
        let guard = LoopGuard::default();
        let mut resample = Resample::for_task("Which packages are not pinned?");
        assert_eq!(
            resample.again(&[shell("requests\nJinja2\nNumPy")], false, &guard, None),
            Some(0.7)
        );
    }

    #[test]
    fn a_shell_block_that_only_lists_file_names_is_no_step() {
        for code in [
            "docs/intro copy.txt\ndocs/intro.txt\ndocs/notes.txt",
            "# the duplicates\nold_setup.md\nsetup.md\n",
            "docs/old_setup.md",
            "Notes.TXT\n",
        ] {
            assert!(names_listed(code), "{code}");
        }
        for code in [
            "ls docs/\ncat docs/setup.md",
            "python3 dedupe.py\nwc -l out.txt",
            "./run.sh\n./check.sh",
            "scripts/build.sh",
            "bin/tool",
            "make",
            "# only a comment",
            "cd docs/\nmd5sum *",
            "sort notes.txt > sorted.txt\ncat sorted.txt",
        ] {
            assert!(!names_listed(code), "{code}");
        }
        let guard = LoopGuard::default();
        let mut resample = Resample::for_task("Find the duplicates in docs/.");
        assert_eq!(
            resample.again(&[shell("docs/a.md\ndocs/b.md")], false, &guard, None),
            Some(0.7)
        );
        // In Python, the same lines are not taken for a list.
        let mut resample = Resample::for_task("Find the duplicates in docs/.");
        assert_eq!(
            resample.again(&[run("a.b\nc.d")], false, &guard, None),
            None
        );
    }

    #[test]
    fn a_block_that_is_only_a_path_or_a_note_of_oi_is_no_step() {
        for code in [
            "/tmp/oi-eval-Pn0rVM/settings.ini\n",
            "docs/old_setup.md",
            "~/data/report.csv",
        ] {
            assert!(bare_path(code), "{code}");
        }
        for code in [
            "./run.sh",
            "/usr/bin/env",
            "cat /tmp/settings.ini",
            "print('a/b.txt')",
            "settings.ini",
        ] {
            assert!(!bare_path(code), "{code}");
        }
        let guard = LoopGuard::default();
        let mut resample = Resample::for_task("Set the port in settings.ini to 5433.");
        assert_eq!(
            resample.again(&[run("/tmp/w/settings.ini")], false, &guard, None),
            Some(0.7)
        );
        let mut resample = Resample::for_task("Set the port in settings.ini to 5433.");
        assert_eq!(
            resample.again(
                &[run(
                    "[oi: before you finish: no run has changed `settings.ini` yet.]"
                )],
                false,
                &guard,
                None
            ),
            Some(0.7)
        );
    }

    #[test]
    fn a_block_printing_a_typed_value_is_asked_again_once_the_task_is_known() {
        let guard = LoopGuard::default();
        let task = "How many commits does the repository have? Write it to commits.txt.";
        let mut resample = Resample::for_task(task);
        assert_eq!(
            resample.again(&[run("print(4)")], false, &guard, None),
            Some(0.7)
        );
        assert_eq!(
            resample.again(&[run("print(4)")], false, &guard, None),
            Some(1.0)
        );
        assert_eq!(
            resample.again(&[run("print(4)")], false, &guard, None),
            None,
            "then it runs"
        );
        let mut resample = Resample::for_task(task);
        let counts =
            "import subprocess\nprint(subprocess.run(['git', 'rev-list', '--count', 'HEAD']))";
        assert_eq!(resample.again(&[run(counts)], false, &guard, None), None);
        // A value typed straight into the result file is no step either,
        // unless a run printed it before.
        let mut resample = Resample::for_task(task);
        assert_eq!(
            resample.again(&[shell("echo 4 > commits.txt")], false, &guard, None),
            Some(0.7)
        );
        let mut resample = Resample::for_task(task);
        resample.saw_outputs(&typed::key("4\n"));
        assert_eq!(
            resample.again(&[shell("echo 4 > commits.txt")], false, &guard, None),
            None
        );
        // Printing what the task gives is the step.
        let mut resample = Resample::for_task("Print hello world.");
        assert_eq!(
            resample.again(&[run("print('Hello, world!')")], false, &guard, None),
            None
        );
    }

    #[test]
    fn a_runaway_reply_is_asked_again_twice_then_kept() {
        let guard = LoopGuard::default();
        let mut resample = Resample::default();
        assert_eq!(resample.after_runaway(None), Some(0.7));
        assert_eq!(resample.after_runaway(Some(0.8)), Some(1.0));
        assert_eq!(resample.after_runaway(None), None);
        // A reply that runs new code starts the count again.
        assert_eq!(resample.again(&[run("x = 1")], false, &guard, None), None);
        assert_eq!(resample.after_runaway(Some(0.8)), Some(0.8));
    }

    #[test]
    fn a_reply_copying_the_left_out_line_is_told() {
        assert!(copies_left_out(LEFT_OUT));
        assert!(copies_left_out(&format!("  {}", LEFT_OUT.trim_end())));
        assert!(!copies_left_out("Done."));
        assert!(!copies_left_out(&format!(
            "{LEFT_OUT}```python\nx = 1\n```"
        )));
        // After a sentence that announces a fix, with no code.
        assert!(copies_left_out(&format!(
            "The variable is not defined. To fix it\n{LEFT_OUT}\n"
        )));
    }

    #[test]
    fn the_left_out_line_is_no_part_of_an_answer() {
        assert_eq!(
            without_left_out(format!("To fix it\n{LEFT_OUT}\n")),
            "To fix it"
        );
        assert_eq!(
            without_left_out(format!("It failed: {}", LEFT_OUT.trim_end())),
            "It failed:"
        );
        assert_eq!(
            without_left_out("The total is 6.".to_owned()),
            "The total is 6."
        );
    }

    #[test]
    fn the_prompts_example_copied_as_a_step_is_asked_again() {
        let guard = LoopGuard::default();
        let mut resample = Resample::default();
        let copied = format!("{EXAMPLE_CODE}\n");
        assert_eq!(
            resample.again(&[run(&copied)], false, &guard, None),
            Some(0.7)
        );
        assert_eq!(
            resample.again(&[run(&copied)], false, &guard, None),
            Some(1.0)
        );
        assert_eq!(resample.again(&[run(&copied)], false, &guard, None), None);
        let mut resample = Resample::default();
        assert_eq!(
            resample.again(&[run("print(1 + 2)")], false, &guard, None),
            None
        );
        // Held to a step, a reply that runs nothing.
        assert_eq!(resample.again(&[], true, &guard, None), Some(0.7));
        let mut resample = Resample::default();
        assert_eq!(resample.again(&[], false, &guard, None), None);
    }

    #[test]
    fn code_that_failed_earlier_in_the_task_is_asked_again() {
        let mut guard = failed_then_printed();
        let mut resample = Resample::default();
        assert_eq!(
            resample.again(&[run("a()")], false, &guard, None),
            Some(0.7)
        );
        // Whatever language the block names: `py` runs as `python`.
        let tagged_py = Action::Run(ProposedRun {
            call_id: None,
            language: Some("py".to_owned()),
            code: "a()".to_owned(),
        });
        assert_eq!(resample.again(&[tagged_py], false, &guard, None), Some(1.0));
        // Code that ran before and worked may run again.
        assert_eq!(resample.again(&[run("x = 2")], false, &guard, None), None);
        guard.proposed("python", "x = 2");
        guard.ran(&oi_protocol::RunStatus::Ok, "");
        guard.proposed("python", "b()");
        assert_eq!(resample.again(&[run("x = 2")], false, &guard, None), None);
    }

    #[test]
    fn a_request_asking_again_leaves_out_the_code_that_failed() {
        let guard = failed_then_printed();
        let reply = |text: &str| Message::Assistant {
            text: text.to_owned(),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        };
        let mut messages = vec![
            Message::user("Do it: ```python\na()\n```"),
            reply("First:\n```python\na()\n```\nthen\n```py\nprint(1)\n```\n"),
            Message::user("NameError"),
            reply("```python\na()\n```"),
        ];
        assert_eq!(leave_out_failed_code(&mut messages, &guard), 2);
        assert_eq!(
            messages,
            [
                Message::user("Do it: ```python\na()\n```"),
                reply(&format!("First:\n{LEFT_OUT}then\n```py\nprint(1)\n```\n")),
                Message::user("NameError"),
                reply(LEFT_OUT),
            ],
            "only the model's failed blocks"
        );
        // Other models' guards remember no steps: nothing is left out.
        let big = LoopGuard::default();
        let mut same = vec![reply("```python\na()\n```")];
        assert_eq!(leave_out_failed_code(&mut same, &big), 0);
    }

    #[test]
    fn only_the_code_that_would_run_last_is_compared() {
        let mut guard = LoopGuard::default();
        let mut resample = Resample::default();
        guard.proposed("python", "b()");
        assert_eq!(
            resample.again(&[run("b()"), run("c()")], false, &guard, None),
            None
        );
        assert_eq!(
            resample.again(&[run("a()"), run("b()")], false, &guard, None),
            Some(0.7)
        );
        assert_eq!(
            resample.again(&[], false, &guard, None),
            None,
            "an answer is not a repeat"
        );
    }
}
