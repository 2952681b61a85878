//! Small models stop short in a few ways that a word from oi fixes: they
//! describe code instead of running it, end without the file the task
//! names, or say a task is done without having run anything. The coach
//! tells them once each (as `[oi: …]` notes), and shows them what their
//! runs made of the files the task names, so they can tell a wrong result
//! from a right one. For other models it stays silent.

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use oi_protocol::HarnessKind;

use crate::harness::Report;

/// What the coach knows of the current task.
pub(super) struct Coach {
    small_model: bool,
    /// Whether the task asks a question (which may be answered without
    /// code) rather than for something to be done.
    question: bool,
    /// Files the task names that did not exist when it began: likely what
    /// it asks to make.
    expected: Vec<String>,
    /// Whether the model was told it described code instead of running it.
    told_to_run: bool,
    /// Whether the files the task names were checked when it ended.
    checked_outputs: bool,
    /// Whether code ran in this task, and whether a model that ended
    /// without running anything was told so.
    ran_any: bool,
    told_idle: bool,
    /// The files the task names, as last shown: size and change time.
    shown: HashMap<String, (u64, Option<SystemTime>)>,
}

impl Coach {
    /// The coach of a task whose text is `task`, in the folder `cwd`.
    pub(super) fn new(small_model: bool, task: &str, cwd: &Path) -> Self {
        let expected = if small_model {
            named_files(task)
                .into_iter()
                .filter(|name| !cwd.join(name).exists())
                .collect()
        } else {
            Vec::new()
        };
        Self {
            small_model,
            question: is_question(task),
            expected,
            told_to_run: false,
            checked_outputs: false,
            ran_any: false,
            told_idle: false,
            shown: HashMap::new(),
        }
    }

    /// Reads a reply: a model that repeats one of oi's notes back instead
    /// of acting on it gets no more (they only cost turns).
    pub(super) fn heard(&mut self, reply: &str) {
        if reply.trim_start().starts_with("[oi:") {
            self.told_to_run = true;
            self.checked_outputs = true;
            self.told_idle = true;
        }
    }

    /// A reply that proposed nothing to run: the note to send the model
    /// before the task may end, if any (each is sent once per task).
    pub(super) fn note_before_ending(
        &mut self,
        reply: &str,
        harness: HarnessKind,
        cwd: &Path,
    ) -> Option<String> {
        if !self.small_model {
            return None;
        }
        if !self.told_to_run && describes_code(reply) {
            self.told_to_run = true;
            let how = match harness {
                HarnessKind::Native => "call the `execute` tool with it",
                HarnessKind::Markdown => {
                    "write it in a fenced code block tagged with its language (```python … ```)"
                }
            };
            return Some(format!(
                "[oi: you described code instead of running it. Run it yourself: {how}. You will see its output.]"
            ));
        }
        if !self.checked_outputs && !self.expected.is_empty() {
            self.checked_outputs = true;
            let missing: Vec<String> = self
                .expected
                .iter()
                .filter(|name| !cwd.join(name.as_str()).exists())
                .map(|name| format!("`{name}`"))
                .collect();
            if !missing.is_empty() {
                return Some(format!(
                    "[oi: the task names {}, which does not exist yet. If the task asks you to write it, do that now with code; if it does not, give your answer again.]",
                    missing.join(", ")
                ));
            }
        }
        if !self.ran_any && !self.told_idle && !self.question {
            // It says it did the task without running anything.
            self.told_idle = true;
            return Some(
                "[oi: you have not run any code for this task, so nothing has been done yet. Do the task now by running code, then answer.]".to_owned(),
            );
        }
        None
    }

    /// After a batch of runs: what they made of the files the task names
    /// (those changed since last shown), to add to the results.
    pub(super) fn after_runs(&mut self, reports: &[Report], cwd: &Path) -> Vec<String> {
        self.ran_any |= reports.iter().any(|r| !r.language.is_empty());
        let mut previews = Vec::new();
        for name in &self.expected {
            let path = cwd.join(name);
            let Ok(meta) = fs_err::metadata(&path) else {
                continue;
            };
            let stamp = (meta.len(), meta.modified().ok());
            if self.shown.get(name) == Some(&stamp) {
                continue;
            }
            self.shown.insert(name.clone(), stamp);
            previews.extend(file_preview(name, &path, meta.len()));
        }
        previews
    }
}

/// Whether a reply that ran nothing tells the user to run code ("you can
/// run", "run the following" …) instead of running it.
fn describes_code(text: &str) -> bool {
    let lower = text.to_lowercase();
    [
        "you can run",
        "you can use the following",
        "run the following",
        "execute the following",
        "run this command",
        "use this command",
        "copy and paste",
        "save this code",
        "you can use",
        "you need to",
        "text editor",
        "follow these steps",
        "here's how you can",
        "here is how you can",
        "please provide",
        "not yet completed",
        "not yet complete",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// Whether a task asks a question (which a model may answer without code)
/// rather than asks for something to be done.
fn is_question(text: &str) -> bool {
    let text = text.trim();
    if text.ends_with('?') {
        return true;
    }
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    matches!(
        first.as_str(),
        "what"
            | "why"
            | "how"
            | "who"
            | "when"
            | "where"
            | "which"
            | "is"
            | "are"
            | "does"
            | "do"
            | "can"
            | "could"
            | "explain"
            | "describe"
            | "tell"
    )
}

/// What a file the task names now holds, for a small model: its size and
/// first lines (a binary file: its size only).
fn file_preview(name: &str, path: &Path, len: u64) -> Option<String> {
    use std::io::Read as _;
    const LINES: usize = 3;
    const WIDTH: usize = 100;
    /// Only the start is read whole; the rest of a big file is only counted.
    const HEAD: u64 = 64 * 1024;
    let mut file = fs_err::File::open(path).ok()?;
    let mut head = Vec::new();
    (&mut file).take(HEAD).read_to_end(&mut head).ok()?;
    // Text: valid UTF-8 without NUL bytes, though the head may end inside
    // a character.
    let text = match std::str::from_utf8(&head) {
        Ok(text) => Some(text),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    let Some(text) = text.filter(|t| !t.contains('\0')) else {
        return Some(format!(
            "[oi: `{name}` now exists ({len} bytes). Check that it is what the task asks for.]"
        ));
    };
    if text.trim().is_empty() && len <= HEAD {
        return Some(format!(
            "[oi: `{name}` now exists but is empty. Check that it is what the task asks for.]"
        ));
    }
    // Lines as `str::lines` counts them: the line breaks, and an unended
    // last line.
    let mut breaks = bytecount(&head);
    let mut last = head.last().copied();
    let mut buf = vec![0; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                breaks += bytecount(&buf[..n]);
                last = Some(buf[n - 1]);
            }
        }
    }
    let count = breaks + usize::from(last.is_some_and(|b| b != b'\n'));
    let shown: Vec<String> = text
        .lines()
        .take(LINES)
        .map(|line| {
            let cut: String = line.chars().take(WIDTH).collect();
            if cut.len() < line.len() {
                format!("{cut}…")
            } else {
                cut
            }
        })
        .collect();
    let more = if count > LINES { "\n…" } else { "" };
    let lines = if count == 1 { "line" } else { "lines" };
    Some(format!(
        "[oi: `{name}` now has {count} {lines}:\n{}{more}\nCheck that it holds exactly what the task asks for.]",
        shown.join("\n")
    ))
}

/// File names a task mentions (`count.txt`, `out/sum.txt`, `chart.png` …).
fn named_files(text: &str) -> Vec<String> {
    const EXTENSIONS: &[&str] = &[
        "txt", "csv", "json", "md", "png", "jpg", "jpeg", "svg", "pdf", "zip", "tar", "gz", "py",
        "sh", "js", "html", "xml", "yaml", "yml", "log", "ini", "toml", "db", "xlsx",
    ];
    let mut found: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let word = word.trim_matches(|c: char| {
            matches!(
                c,
                '`' | '"' | '\'' | ',' | ';' | ':' | '(' | ')' | '[' | ']' | '<' | '>'
            )
        });
        let word = word.strip_suffix('.').unwrap_or(word);
        let Some((stem, ext)) = word.rsplit_once('.') else {
            continue;
        };
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
        if stem.is_empty()
            || word.starts_with('/')
            || word.contains("..")
            || !word.chars().all(plain)
            || !EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        {
            continue;
        }
        if !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
        }
    }
    found
}

/// The line breaks in `bytes`.
fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn questions_are_told_from_tasks() {
        assert!(is_question("What is 2 ** 20?"));
        assert!(is_question("how many CPUs does this machine have"));
        assert!(!is_question("Delete the temporary files in cache/."));
        assert!(!is_question(
            "Write the message of the latest commit to last.txt."
        ));
    }

    #[test]
    fn previews_show_the_start_of_a_file_the_task_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("emails.txt");
        fs_err::write(&path, "Ann <ann@x.org>\nBob <bob@x.org>\nCy\nDee\n").unwrap();
        assert_eq!(
            file_preview("emails.txt", &path, 36).unwrap(),
            "[oi: `emails.txt` now has 4 lines:\nAnn <ann@x.org>\nBob <bob@x.org>\nCy\n…\nCheck that it holds exactly what the task asks for.]"
        );
        // A big file: its start shown, all of its lines counted.
        let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        fs_err::write(&path, &big).unwrap();
        assert!(big.len() > 64 * 1024);
        let preview = file_preview("emails.txt", &path, big.len() as u64).unwrap();
        assert!(
            preview
                .starts_with("[oi: `emails.txt` now has 20000 lines:\nline 0\nline 1\nline 2\n…\n"),
            "{preview}"
        );
        fs_err::write(&path, "").unwrap();
        assert!(
            file_preview("emails.txt", &path, 0)
                .unwrap()
                .contains("is empty")
        );
        fs_err::write(&path, b"\x89PNG\0\0").unwrap();
        assert_eq!(
            file_preview("chart.png", &path, 6).unwrap(),
            "[oi: `chart.png` now exists (6 bytes). Check that it is what the task asks for.]"
        );
    }

    #[test]
    fn the_files_a_task_names_are_found() {
        assert_eq!(
            named_files("Count the lines of data.csv and write the number to count.txt."),
            ["data.csv", "count.txt"]
        );
        assert_eq!(
            named_files(
                "write the squares to out/squares.txt, then `out/sum.txt` (see /etc/hosts, v1.2 and e.g. this)"
            ),
            ["out/squares.txt", "out/sum.txt"]
        );
        assert!(named_files("no files here, version 3.11.7").is_empty());
    }

    #[test]
    fn each_note_is_sent_once_and_only_to_small_models() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Write the squares of 1..5 to squares.txt";
        let mut big = Coach::new(false, task, cwd);
        assert_eq!(
            big.note_before_ending("You can run this.", HarnessKind::Native, cwd),
            None
        );

        let mut coach = Coach::new(true, task, cwd);
        let first = coach.note_before_ending(
            "You can run the following code.",
            HarnessKind::Markdown,
            cwd,
        );
        assert!(first.unwrap().contains("fenced code block"));
        let second = coach
            .note_before_ending("Done!", HarnessKind::Markdown, cwd)
            .unwrap();
        assert!(
            second.contains("`squares.txt`, which does not exist yet"),
            "{second}"
        );
        let third = coach
            .note_before_ending("Done!", HarnessKind::Markdown, cwd)
            .unwrap();
        assert!(third.contains("you have not run any code"), "{third}");
        assert_eq!(
            coach.note_before_ending("Done!", HarnessKind::Markdown, cwd),
            None
        );
    }

    #[test]
    fn a_note_repeated_back_silences_the_coach() {
        let dir = tempfile::tempdir().unwrap();
        let mut coach = Coach::new(true, "Write hello to out.txt", dir.path());
        coach.heard("[oi: you have not run any code for this task]");
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Native, dir.path()),
            None
        );
    }

    #[test]
    fn the_files_a_run_made_are_shown_once_until_they_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut coach = Coach::new(true, "Write hello to out.txt", dir.path());
        let ran = [Report {
            call_id: None,
            language: "python".to_owned(),
            text: String::new(),
            images: Vec::new(),
        }];
        assert!(coach.after_runs(&ran, dir.path()).is_empty());
        fs_err::write(dir.path().join("out.txt"), "hello\n").unwrap();
        let shown = coach.after_runs(&ran, dir.path());
        assert_eq!(shown.len(), 1);
        assert!(
            shown[0].starts_with("[oi: `out.txt` now has 1 line:\nhello"),
            "{shown:?}"
        );
        assert!(coach.after_runs(&ran, dir.path()).is_empty());
        // Code ran, so an answer now ends the task.
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Native, dir.path()),
            None
        );
    }
}
