//! "Save this as `X` and run it": small models often write a script and
//! then shell steps that run a file that was never written (`python3
//! main.py`, `chmod +x run.sh && ./run.sh`). When a reply's shell code runs
//! a script that does not exist, the reply's words name that script too
//! ("save this as `main.py`"), and an earlier block of the same reply is
//! code in that script's language, the earlier block is saved as that file
//! instead of being run on its own — what the reply asked the user to do.
//!
//! "Fix `script.py`": they also answer with the whole corrected script in
//! a block, which then runs on its own and leaves the file as broken as it
//! was. When a block is in the language of a script the task names, the
//! script exists, the block does not name it (so does not write it
//! itself), and the block is a new version of it (most of the script's
//! lines are in it, and it is not much shorter), the block is saved as
//! the script, which is then run as a file.

use std::path::Path;

use crate::harness::{Action, ProposedRun};

/// The script extensions recognised: the program that runs such a script,
/// and the languages (kernel names and aliases) whose code it holds.
struct Script {
    ext: &'static str,
    runner: &'static str,
    languages: &'static [&'static str],
}

const fn script_of(
    ext: &'static str,
    runner: &'static str,
    languages: &'static [&'static str],
) -> Script {
    Script {
        ext,
        runner,
        languages,
    }
}

const SCRIPTS: &[Script] = &[
    script_of("py", "python3", &["python", "py", "python3"]),
    script_of("sh", "bash", &["shell", "bash", "sh", "zsh"]),
    script_of("bash", "bash", &["shell", "bash", "sh"]),
    script_of("js", "node", &["javascript", "js", "node", "nodejs"]),
    script_of("mjs", "node", &["javascript", "js", "node", "nodejs"]),
    script_of("rb", "ruby", &["ruby", "rb"]),
    script_of("pl", "perl", &["perl", "pl"]),
    script_of("r", "Rscript", &["r", "rscript"]),
    script_of("lua", "lua", &["lua"]),
    script_of("php", "php", &["php"]),
];

/// Programs that run a script named after them.
const RUNNERS: &[&str] = &[
    "python", "python3", "bash", "sh", "zsh", "node", "ruby", "perl", "Rscript", "lua", "php",
    "source", ".",
];

/// The actions of a reply (`text`), with any block that the reply's shell
/// code runs as a missing script turned into writing that script; `cwd` is
/// where the shell runs. The second value names the files so saved.
pub(super) fn save_named_scripts(
    mut actions: Vec<Action>,
    text: &str,
    cwd: &Path,
) -> (Vec<Action>, Vec<String>) {
    let mut saved = Vec::new();
    for i in 0..actions.len() {
        let Action::Run(run) = &actions[i] else {
            continue;
        };
        if !is_shell(run.language.as_deref()) {
            continue;
        }
        for name in scripts_run(&run.code) {
            if saved.contains(&name) || cwd.join(&name).exists() {
                continue;
            }
            // The reply's words (outside its code) name the script.
            let in_code: usize = actions
                .iter()
                .map(|a| match a {
                    Action::Run(r) => r.code.matches(name.as_str()).count(),
                    _ => 0,
                })
                .sum();
            if text.matches(name.as_str()).count() <= in_code {
                continue;
            }
            // Written by an earlier block already (`cat > x.py`, `open("x.py", "w")`).
            let written = actions[..i].iter().any(|a| match a {
                Action::Run(r) => r.code.contains(name.as_str()),
                _ => false,
            });
            if written {
                continue;
            }
            let Some(Script { languages, .. }) = script(&name) else {
                continue;
            };
            // The nearest earlier block of the script's language.
            let source = (0..i).rev().find(|&j| match &actions[j] {
                Action::Run(r) => r
                    .language
                    .as_deref()
                    .is_some_and(|l| languages.contains(&l.to_ascii_lowercase().as_str())),
                _ => false,
            });
            let Some(j) = source else { continue };
            let Action::Run(script) = &actions[j] else {
                continue;
            };
            actions[j] = Action::Run(ProposedRun {
                call_id: script.call_id.clone(),
                language: Some("shell".to_owned()),
                code: writing(
                    &name,
                    &script.code,
                    &format!("the reply runs {name} below, so its code is saved as that file"),
                ),
            });
            saved.push(name);
        }
    }
    (actions, saved)
}

/// The actions of a reply with each block that is a new version of a
/// script the task names (`named`, relative to `cwd`) turned into saving it
/// as that script and running it: as each command the task quotes that
/// runs it (`commands`: `python3 csv2md.py data.csv --sort price`), else
/// bare. A small model told a quoted command has not run yet rewrites the
/// script again and again instead of running it. The second value names
/// the scripts so saved.
pub(super) fn save_rewritten_scripts(
    mut actions: Vec<Action>,
    named: &[String],
    commands: &[String],
    cwd: &Path,
) -> (Vec<Action>, Vec<String>) {
    let mut saved = Vec::new();
    for action in &mut actions {
        let Action::Run(run) = action else { continue };
        let Some(language) = run.language.as_deref().map(str::to_ascii_lowercase) else {
            continue;
        };
        // The script this block is a new version of, and its text now.
        let target = named.iter().find_map(|name| {
            let candidate = !saved.contains(name)
                && !uses_script(&run.code, name)
                && script(name).is_some_and(|s| s.languages.contains(&language.as_str()));
            let old = candidate
                .then(|| fs_err::read_to_string(cwd.join(name.as_str())).ok())
                .flatten()?;
            is_new_version(&old, &run.code).then(|| (name.clone(), old))
        });
        let Some((name, old)) = target else {
            continue;
        };
        // A rewrite that left out the line running the script (its
        // `main(sys.argv[1])`) gets it back: saved without it, the script
        // runs nothing, and a small model told so rewrites it the same way.
        let (code, kept) = match with_entry_restored(&name, &old, &run.code) {
            Some((code, line)) => (code, format!(", with its line `{line}` that runs it kept")),
            None => (run.code.clone(), String::new()),
        };
        let runner = script(&name).map_or("bash", |s| s.runner);
        let quoted = commands_running(commands, &name);
        let runs = if quoted.is_empty() {
            // A script that reads its arguments runs on the input the task
            // names (`… the file given as its argument … crashes on
            // numbers.txt`), else on the one data file beside it; run bare
            // it only fails for the missing argument.
            let inputs: Vec<String> = named
                .iter()
                .filter(|other| {
                    !is_script(other) && *other != &name && cwd.join(other.as_str()).is_file()
                })
                .cloned()
                .collect();
            let inputs = if inputs.is_empty() {
                sole_data_file(cwd).into_iter().collect()
            } else {
                inputs
            };
            if reads_arguments(&code) && !inputs.is_empty() {
                run_with_arguments(runner, &name, &inputs, arguments_read(&code, runner))
            } else {
                format!("{runner} '{name}'\n")
            }
        } else {
            quoted
                .iter()
                .map(|command| format!("{command}\n"))
                .collect()
        };
        *action = Action::Run(ProposedRun {
            call_id: run.call_id.clone(),
            language: Some("shell".to_owned()),
            code: format!(
                "{}{runs}",
                writing(
                    &name,
                    &code,
                    &format!(
                        "the reply's code is a new version of {name}, so it is saved as that file{kept} and run"
                    )
                )
            ),
        });
        saved.push(name);
    }
    (actions, saved)
}

/// A new version (`new`) of the Python script `name` that no longer runs
/// the function `old` ran at its top level, with `old`'s lines that ran it
/// (the call, or the `if __name__ == "__main__":` block) put back at its
/// end and `import sys` first when they use it; and the line that ran it.
/// `None` when nothing was left out.
fn with_entry_restored(name: &str, old: &str, new: &str) -> Option<(String, String)> {
    let (_, line) = super::coach::dropped_entry(name, old, new)?;
    let lines: Vec<&str> = old.lines().collect();
    let start = lines.iter().position(|l| l.trim() == line)?;
    // The entry and what belongs to it, up to the end: indented lines,
    // blank lines, and further top-level calls.
    let trailer: Vec<&str> = lines[start..]
        .iter()
        .take_while(|l| {
            l.trim().is_empty()
                || l.starts_with(char::is_whitespace)
                || l.trim() == line
                || l.trim_end().ends_with(')')
        })
        .copied()
        .collect();
    if start + trailer.len() != lines.len() {
        return None;
    }
    let trailer = trailer.join("\n");
    let imports_sys = new.lines().any(|l| {
        l.trim() == "import sys" || l.starts_with("from sys import") || l.starts_with("import sys,")
    });
    let mut code = String::new();
    if trailer.contains("sys.") && !imports_sys {
        code.push_str("import sys\n");
    }
    code.push_str(new.trim_end());
    code.push_str("\n\n");
    code.push_str(trailer.trim());
    code.push('\n');
    Some((code, line))
}

/// Whether a script's `code` reads the arguments it is run with (Python's
/// `sys.argv`, Node's `process.argv`, the shell's `$1`, Ruby's and Perl's
/// `ARGV`).
fn reads_arguments(code: &str) -> bool {
    [
        "sys.argv[1",
        "argparse",
        "process.argv[2",
        "$1",
        "${1",
        "ARGV",
    ]
    .iter()
    .any(|mark| code.contains(mark))
}

/// How many arguments a script's `code`, run by `runner`, reads by
/// position: the highest of Python's `sys.argv[N]`, Node's
/// `process.argv[N+1]`, Ruby's or Perl's `ARGV[N-1]` and, for a shell
/// script, `$N` (1 when it reads them otherwise, as with `argparse`).
fn arguments_read(code: &str, runner: &str) -> usize {
    let shell = runner == "bash";
    let after = |mark: &str, offset: isize| -> usize {
        code.match_indices(mark)
            .filter_map(|(at, _)| {
                let digits: String = code[at + mark.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse::<isize>().ok()
            })
            .map(|n| usize::try_from(n + offset).unwrap_or(0))
            .max()
            .unwrap_or(0)
    };
    [
        after("sys.argv[", 0),
        after("process.argv[", -1),
        after("ARGV[", 1),
        if shell { after("${", 0) } else { 0 },
        if shell { after("$", 0) } else { 0 },
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
    .clamp(1, MAX_ARGUMENTS)
}

/// The most arguments oi gives a script it runs for the model.
const MAX_ARGUMENTS: usize = 4;

/// How [`run_with_arguments`]' output ends the line that shows a scratch
/// output, and begins the line saying it lacks the input's header.
const SHOWN: &str = "now holds:]";
const LACKS_HEADER: &str = "[its first line is not the first line of ";

/// What a run's `output` says of the scratch outputs
/// [`run_with_arguments`] showed: `None` when it showed none; else the
/// input and its header line that one of them does not begin with, if one
/// does not.
pub(super) fn scratch_header(output: &str) -> Option<Option<(String, String)>> {
    output.contains(SHOWN).then(|| {
        let (_, rest) = output.split_once(LACKS_HEADER)?;
        let line = rest.lines().next()?.strip_suffix(']')?;
        let (input, header) = line.split_once(": ")?;
        Some((input.to_owned(), header.to_owned()))
    })
}

/// The command that runs the script `name` with `runner` on `inputs` (the
/// files the task names, in order) when it reads `count` arguments: the
/// inputs first; each argument beyond them is a file the script writes
/// (`… writes the rows … to the file given as its second argument`), so
/// it gets a scratch file outside the workspace (named like the first
/// input, `out2.csv`) whose lines are shown after the run: the model sees
/// what its script wrote, and the workspace gets no stray file.
fn run_with_arguments(runner: &str, name: &str, inputs: &[String], count: usize) -> String {
    let mut args: Vec<String> = inputs
        .iter()
        .take(count)
        .map(|input| format!("'{input}'"))
        .collect();
    let ext = inputs
        .first()
        .and_then(|input| input.rsplit_once('.'))
        .map(|(_, ext)| format!(".{ext}"))
        .unwrap_or_default();
    let outputs: Vec<String> = (args.len() + 1..=count)
        .map(|n| format!("\"$oi_out/out{n}{ext}\""))
        .collect();
    args.extend(outputs.iter().cloned());
    let run = format!("{runner} '{name}' {}", args.join(" "));
    if outputs.is_empty() {
        return format!("{run}\n");
    }
    let mut code = format!("oi_out=$(mktemp -d)\n{run}\noi_status=$?\n");
    // A table in, a table out: whether the output kept the input's header
    // (a filter that writes only the rows it keeps loses it).
    let table_in = inputs.first().filter(|input| {
        let lower = input.to_ascii_lowercase();
        lower.ends_with(".csv") || lower.ends_with(".tsv")
    });
    for (output, n) in outputs.iter().zip(args.len() - outputs.len() + 1..) {
        let header = table_in
            .map(|input| {
                format!(
                    "; if [ -s {output} ] && [ \"$(head -n 1 {output} | tr -d '\\r')\" != \"$(head -n 1 '{input}' | tr -d '\\r')\" ]; then echo \"{LACKS_HEADER}{input}: $(head -n 1 '{input}')]\"; fi"
                )
            })
            .unwrap_or_default();
        code.push_str(&format!(
            "if [ -f {output} ]; then echo \"[argument {n}, {output}, {SHOWN}\"; head -n 20 {output}{header}; else echo \"[argument {n}, {output}: not written]\"; fi\n"
        ));
    }
    // The script's status, without `exit`, which would end the shell
    // kernel the code runs in.
    code.push_str("(exit $oi_status)\n");
    code
}

/// The commands of `commands` (those a task quotes) that run the script
/// `name`.
pub(super) fn commands_running<'a>(commands: &'a [String], name: &str) -> Vec<&'a String> {
    commands
        .iter()
        .filter(|command| super::coach::named_files(command).iter().any(|n| n == name))
        .collect()
}

/// Whether `code` uses the script `name` (runs, reads or writes it) rather
/// than being a version of it: it names the script on a line that is not a
/// comment, a usage message or a printed message.
fn uses_script(code: &str, name: &str) -> bool {
    code.lines().filter(|line| line.contains(name)).any(|line| {
        let trimmed = line.trim_start();
        let lower = trimmed.to_lowercase();
        !(trimmed.starts_with('#')
            || trimmed.starts_with("//")
            || lower.contains("usage")
            || trimmed.starts_with("print(")
            || trimmed.starts_with("echo "))
    })
}

/// Whether `name` is a script (by its extension) that oi knows how to run.
pub(super) fn is_script(name: &str) -> bool {
    script(name).is_some()
}

/// The language a block of the script `name` is fenced with
/// (`python` for `x.py`), by its extension.
pub(super) fn language_of(name: &str) -> Option<&'static str> {
    script(name).and_then(|s| s.languages.first().copied())
}

/// The one file in `cwd` that is neither a script nor hidden (`sample.txt`
/// beside `wordfreq.py`), if there is exactly one.
fn sole_data_file(cwd: &Path) -> Option<String> {
    let mut found = fs_err::read_dir(cwd).ok()?.filter_map(|entry| {
        let entry = entry.ok()?;
        let name = entry.file_name().into_string().ok()?;
        let data = !name.starts_with('.')
            && !is_script(&name)
            && entry.file_type().is_ok_and(|t| t.is_file());
        data.then_some(name)
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// What a script named `name` is, by its extension.
fn script(name: &str) -> Option<&'static Script> {
    let (_, ext) = name.rsplit_once('.')?;
    SCRIPTS.iter().find(|s| s.ext.eq_ignore_ascii_case(ext))
}

/// Whether `code` is a new version of the script `old`: at least half of
/// the script's lines are in it (compared without indentation), or a third
/// of them with all of its skeleton (its imports and definitions: a
/// rewrite of the body), or it reads command-line arguments as the script
/// does (`sys.argv[1]`: run in a session, such code has none), and it has
/// at least 60% as many lines — not a snippet of it, not other code.
fn is_new_version(old: &str, code: &str) -> bool {
    const MAX_LINES: usize = 400;
    let meaningful = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let old = meaningful(old);
    let new = meaningful(code);
    if old.is_empty() || old.len() > MAX_LINES {
        return false;
    }
    let kept = old.iter().filter(|l| new.contains(l)).count();
    let skeleton: Vec<&String> = old.iter().filter(|l| is_skeleton(l)).collect();
    let same_skeleton = skeleton.len() >= 2 && skeleton.iter().all(|l| new.contains(l));
    // Code that reads command-line arguments only runs as a script.
    let both_read_arguments = old.iter().any(|l| reads_arguments(l)) && reads_arguments(code);
    let enough =
        kept * 2 >= old.len() || same_skeleton && kept * 3 >= old.len() || both_read_arguments;
    enough && new.len() * 10 >= old.len() * 6
}

/// Whether a script's line (trimmed) imports or defines something.
fn is_skeleton(line: &str) -> bool {
    [
        "import ",
        "from ",
        "def ",
        "class ",
        "function ",
        "sub ",
        "require",
        "const ",
    ]
    .iter()
    .any(|start| line.starts_with(start))
}

/// Whether a block's `language` (as the model named it) is Python: its
/// name or one of the names models use for it.
pub(super) fn is_python(language: Option<&str>) -> bool {
    language.is_some_and(|l| {
        matches!(
            l.to_ascii_lowercase().as_str(),
            "python" | "py" | "python3" | "ipython" | "jupyter" | "pycon"
        )
    })
}

/// Whether a block's `language` (as the model named it) is the shell.
pub(super) fn is_shell(language: Option<&str>) -> bool {
    language.is_some_and(|l| {
        matches!(
            l.to_ascii_lowercase().as_str(),
            "shell" | "bash" | "sh" | "zsh" | "console" | "terminal"
        )
    })
}

/// The scripts a piece of shell code runs: `python3 x.py`, `bash run.sh`,
/// `./run.sh`, `chmod +x run.sh` — relative paths only.
fn scripts_run(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in code.lines() {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
            .filter(|w| !w.is_empty())
            .collect();
        for (k, word) in words.iter().enumerate() {
            let word = word.trim_matches(|c| c == '"' || c == '\'');
            let candidate = if let Some(rest) = word.strip_prefix("./") {
                Some(rest)
            } else if k > 0 {
                let before = words[k - 1];
                let run_by = RUNNERS.contains(&before)
                    || (before == "+x" && k > 1 && words[k - 2] == "chmod");
                run_by.then_some(word)
            } else {
                None
            };
            let Some(name) = candidate else { continue };
            let plain = !name.is_empty()
                && !name.starts_with(['/', '-', '~', '$'])
                && !name.contains("..")
                && name.rsplit_once('.').is_some_and(|(stem, ext)| {
                    !stem.is_empty() && SCRIPTS.iter().any(|s| s.ext.eq_ignore_ascii_case(ext))
                })
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
            if plain && !found.iter().any(|f| f == name) {
                found.push(name.to_owned());
            }
        }
    }
    found
}

/// Shell code that writes `code` to `name`, exactly, saying `why` first.
fn writing(name: &str, code: &str, why: &str) -> String {
    let mut end = String::from("OI_SCRIPT_END");
    while code.lines().any(|l| l.trim() == end) {
        end.push('_');
    }
    let mut body = code.to_owned();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    format!(
        "{SAVING}{why}\ncat > '{name}' <<'{end}'\n{body}{end}\necho \"{}\"\n",
        saved_line(name)
    )
}

/// Whether `code` is oi's own shell code that saves a reply's code as a
/// script ([`writing`]), not code the model wrote.
pub(super) fn is_saving(code: &str) -> bool {
    code.starts_with(SAVING)
}

/// How oi's code that saves a reply as a script begins.
const SAVING: &str = "# oi: ";

/// The line the shell code that saves a reply's code as `name` prints once
/// it is written: what follows it in the run's output is the script's own.
pub(super) fn saved_line(name: &str) -> String {
    format!("saved {name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Runs `code` with a real bash in `dir`.
    fn bash(code: &str, dir: &Path) -> std::process::Output {
        std::process::Command::new("bash")
            .arg("-c")
            .arg(code)
            .current_dir(dir)
            .output()
            .unwrap()
    }

    fn run(language: &str, code: &str) -> Action {
        Action::Run(ProposedRun {
            call_id: None,
            language: Some(language.to_owned()),
            code: code.to_owned(),
        })
    }

    #[test]
    fn a_script_the_shell_runs_but_nobody_wrote_is_saved_first() {
        let dir = tempfile::tempdir().unwrap();
        let actions = vec![
            run("python", "print('hi')"),
            run("bash", "chmod +x main.py\npython3 main.py data.csv"),
        ];
        let text = "Save this as `main.py`:\n```python\nprint('hi')\n```\nThen run:\n```bash\nchmod +x main.py\npython3 main.py data.csv\n```";
        // Without the name in the reply's words, nothing changes.
        let (same, saved) = save_named_scripts(actions.clone(), "", dir.path());
        assert!(saved.is_empty());
        assert_eq!(same, actions);
        let (actions, saved) = save_named_scripts(actions, text, dir.path());
        assert_eq!(saved, ["main.py"]);
        let Action::Run(first) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(first.language.as_deref(), Some("shell"));
        assert_eq!(
            first.code,
            "# oi: the reply runs main.py below, so its code is saved as that file\ncat > 'main.py' <<'OI_SCRIPT_END'\nprint('hi')\nOI_SCRIPT_END\necho \"saved main.py\"\n"
        );
        // The code written by the heredoc is the block, exactly.
        let out = bash(&first.code, dir.path());
        assert!(out.status.success());
        assert_eq!(
            fs_err::read_to_string(dir.path().join("main.py")).unwrap(),
            "print('hi')\n"
        );
        assert_eq!(
            actions[1],
            run("bash", "chmod +x main.py\npython3 main.py data.csv")
        );
    }

    #[test]
    fn shell_scripts_run_with_a_dot_slash_take_the_nearest_shell_block() {
        let dir = tempfile::tempdir().unwrap();
        let actions = vec![
            run("bash", "echo one"),
            run("shell", "echo two\nOI_SCRIPT_END"),
            run("sh", "./run.sh && echo done"),
        ];
        let text = "Put it in run.sh:\n```shell\necho two\n```\n```sh\n./run.sh && echo done\n```";
        let (actions, saved) = save_named_scripts(actions, text, dir.path());
        assert_eq!(saved, ["run.sh"]);
        assert_eq!(actions[0], run("bash", "echo one"));
        let Action::Run(second) = &actions[1] else {
            panic!()
        };
        assert!(
            second
                .code
                .contains("<<'OI_SCRIPT_END_'\necho two\nOI_SCRIPT_END\nOI_SCRIPT_END_\n"),
            "{}",
            second.code
        );
    }

    #[test]
    fn existing_or_written_scripts_and_other_languages_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("stats.py"), "").unwrap();
        let text = "Save it as stats.py, gen.py, other.py or abs.py.";
        for untouched in [
            // The script exists.
            vec![
                run("python", "print(1)"),
                run("bash", "python3 stats.py data.txt"),
            ],
            // An earlier block writes it.
            vec![
                run("python", "open('gen.py', 'w').write('print(2)')"),
                run("bash", "python3 gen.py"),
            ],
            // No block of its language.
            vec![
                run("javascript", "console.log(1)"),
                run("bash", "python3 other.py"),
            ],
            // Absolute paths and options are not scripts of the reply.
            vec![
                run("python", "print(1)"),
                run("bash", "python3 /tmp/abs.py; python3 -m venv x"),
            ],
        ] {
            let (actions, saved) = save_named_scripts(untouched.clone(), text, dir.path());
            assert!(saved.is_empty(), "{saved:?}");
            assert_eq!(actions, untouched);
        }
    }

    #[test]
    fn the_scripts_shell_code_runs_are_found() {
        assert_eq!(
            scripts_run(
                "cd . && python script.py --x 1\nbash 'build.sh'; node app.js | tee log\n./go.sh\nchmod +x tool.rb\nls x.py"
            ),
            ["script.py", "build.sh", "app.js", "go.sh", "tool.rb"]
        );
    }

    #[test]
    fn a_new_version_of_a_script_the_task_names_is_saved_and_run() {
        let dir = tempfile::tempdir().unwrap();
        let broken = "def add_up(n):\n    total = 0\n    for i in range(1, n + 1):\n        total += i\n    return totl\n\nprint(add_up(10))\n";
        fs_err::write(dir.path().join("script.py"), broken).unwrap();
        fs_err::write(
            dir.path().join("count.sh"),
            "n=$(ls *.txt | wc -l\necho $n\n",
        )
        .unwrap();
        let fixed = broken.replace("totl", "total");
        let named = ["script.py".to_owned(), "count.sh".to_owned()];
        let actions = vec![
            run("python", &fixed),
            run("bash", "#!/bin/bash\nn=$(ls *.txt | wc -l)\necho $n"),
        ];
        let (actions, saved) = save_rewritten_scripts(actions, &named, &[], dir.path());
        assert_eq!(saved, ["script.py", "count.sh"]);
        let Action::Run(first) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(first.language.as_deref(), Some("shell"));
        assert_eq!(
            first.code,
            format!(
                "# oi: the reply's code is a new version of script.py, so it is saved as that file and run\ncat > 'script.py' <<'OI_SCRIPT_END'\n{fixed}OI_SCRIPT_END\necho \"saved script.py\"\npython3 'script.py'\n"
            )
        );
        let Action::Run(second) = &actions[1] else {
            panic!("{actions:?}")
        };
        assert!(
            second.code.ends_with("bash 'count.sh'\n"),
            "{}",
            second.code
        );
        // Run by a real shell, the script is written exactly and runs.
        let out = bash(&first.code, dir.path());
        assert_eq!(
            fs_err::read_to_string(dir.path().join("script.py")).unwrap(),
            fixed
        );
        assert!(out.status.success(), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).ends_with("saved script.py\n55\n"));
    }

    #[test]
    fn a_rewrite_of_a_scripts_body_that_keeps_its_skeleton_is_a_new_version() {
        let old = "import sys\nfrom collections import Counter\n\ndef main(path):\n    counts = Counter()\n    for line in open(path):\n        words = line.split(\" \")\n        counts[words[0]] += 1\n        for w in words[1:]:\n            counts[w] += 1\n    for word, n in counts.most_common(3):\n        print(word, n)\n\nmain(sys.argv[1])\n";
        let rewrite = "import sys\nimport re\nfrom collections import Counter\n\ndef main(path):\n    counts = Counter()\n    with open(path) as f:\n        for word in re.findall(r\"[a-z']+\", f.read().lower()):\n            counts[word] += 1\n    for word, n in counts.most_common(3):\n        print(f\"{word} {n}\")\n\nif __name__ == \"__main__\":\n    main(sys.argv[1])\n";
        assert!(is_new_version(old, rewrite));
        // Without the skeleton, a third of the lines is not enough.
        let other = rewrite
            .replace("def main(path):", "def count(path):")
            .replace("main(sys.argv[1])", "count('notes.txt')");
        assert!(!is_new_version(old, &other));
        // A rewrite that reads the script's arguments runs only as the
        // script, however little of it it keeps.
        let total = "import sys\n\npath, column = sys.argv[1], sys.argv[2]\nlines = open(path).read().split(\"\\n\")\nheader = lines[0].split(\",\")\nidx = header.index(column)\ntotal = 0\nfor line in lines[1:]:\n    total += float(line.split(\",\")[idx])\nprint(round(total, 2))\n";
        let with_csv = "import sys\n\nimport csv\n\npath, column = sys.argv[1], sys.argv[2]\nwith open(path) as f:\n    reader = csv.DictReader(f)\n    total = 0\n    for row in reader:\n        if column in row:\n            amount = row[column].replace(\",\", \"\")\n            if amount:\n                total += float(amount)\nprint(round(total, 2))\n";
        assert!(is_new_version(total, with_csv));
        let as_function = "import sys\nimport csv\n\ndef process_csv(file_path, column_name):\n    total = 0\n    with open(file_path, newline='') as file:\n        for row in csv.DictReader(file):\n            value = row[column_name].replace(',', '')\n            if value:\n                total += float(value)\n    return round(total, 2)\n\nif __name__ == '__main__':\n    print(process_csv(sys.argv[1], sys.argv[2]))\n";
        assert!(is_new_version(total, as_function));
        assert!(!is_new_version(
            total,
            &with_csv.replace(
                "path, column = sys.argv[1], sys.argv[2]",
                "path, column = 'a.csv', 'x'"
            )
        ));
        // Nor is the skeleton alone.
        assert!(!is_new_version(
            old,
            "import sys\nfrom collections import Counter\ndef main(path):\n    pass\n"
        ));
    }

    #[test]
    fn other_code_is_left_to_run() {
        let dir = tempfile::tempdir().unwrap();
        let script = "import sys\nrows = open(sys.argv[1]).read().splitlines()\nfor row in rows:\n    print(row.upper())\nprint(len(rows))\n";
        fs_err::write(dir.path().join("tool.py"), script).unwrap();
        let named = ["tool.py".to_owned(), "missing.py".to_owned()];
        for code in [
            // A snippet of it.
            "for row in rows:\n    print(row.upper())",
            // Other code, or code that writes or runs the script itself.
            "print(sum(range(11)))",
            "open('tool.py', 'w').write(fixed)",
        ] {
            let actions = vec![run("python", code)];
            let (same, saved) = save_rewritten_scripts(actions.clone(), &named, &[], dir.path());
            assert!(saved.is_empty(), "{code}");
            assert_eq!(same, actions);
        }
        // The script's whole text, but in another language's block.
        let actions = vec![run("bash", script)];
        let (_, saved) = save_rewritten_scripts(actions, &named, &[], dir.path());
        assert!(saved.is_empty());
        // The whole script with a line that runs it is code that uses it.
        let runs_it =
            format!("{script}import subprocess\nsubprocess.run(['python3', 'tool.py'])\n");
        let (_, saved) =
            save_rewritten_scripts(vec![run("python", &runs_it)], &named, &[], dir.path());
        assert!(saved.is_empty());
    }

    #[test]
    fn a_new_version_naming_itself_in_its_usage_or_comments_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let script = "import sys\nrows = open(sys.argv[1]).read().splitlines()\nfor row in rows:\n    print(row.upper())\nprint(len(rows))\n";
        fs_err::write(dir.path().join("tool.py"), script).unwrap();
        let new = format!(
            "# tool.py, with a usage line\nif len(sys.argv) < 2:\n    sys.exit('usage: python3 tool.py FILE')\n{script}"
        );
        let (_, saved) = save_rewritten_scripts(
            vec![run("python", &new)],
            &["tool.py".to_owned()],
            &[],
            dir.path(),
        );
        assert_eq!(saved, ["tool.py"]);
    }

    #[test]
    fn a_new_version_that_reads_its_argument_runs_on_the_input_the_task_names() {
        let dir = tempfile::tempdir().unwrap();
        let script = "import sys\nrows = open(sys.argv[1]).read().splitlines()\nfor row in rows:\n    print(row.upper())\nprint(len(rows))\n";
        fs_err::write(dir.path().join("tool.py"), script).unwrap();
        fs_err::write(dir.path().join("data.txt"), "a\nb\n").unwrap();
        let new = script.replace("row.upper()", "row.title()");
        // `out.txt` is not there (a file to write), `data.txt` is.
        let named = [
            "tool.py".to_owned(),
            "out.txt".to_owned(),
            "data.txt".to_owned(),
        ];
        let (actions, saved) =
            save_rewritten_scripts(vec![run("python", &new)], &named, &[], dir.path());
        assert_eq!(saved, ["tool.py"]);
        let Action::Run(saving) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            saving.code.ends_with("python3 'tool.py' 'data.txt'\n"),
            "{}",
            saving.code
        );
        let out = bash(&saving.code, dir.path());
        assert!(
            String::from_utf8_lossy(&out.stdout).ends_with("saved tool.py\nA\nB\n2\n"),
            "{out:?}"
        );
        // A script that reads no argument runs bare.
        let fixed = "rows = open('data.txt').read().splitlines()\nfor row in rows:\n    print(row.title())\nprint(len(rows))\n";
        fs_err::write(dir.path().join("tool.py"), fixed.replace("title", "upper")).unwrap();
        let (actions, _) =
            save_rewritten_scripts(vec![run("python", fixed)], &named, &[], dir.path());
        let Action::Run(saving) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            saving.code.ends_with("python3 'tool.py'\n"),
            "{}",
            saving.code
        );
        // The task names no input: the one data file beside the script;
        // with two of them, which one is not known, so bare.
        let only_script = ["tool.py".to_owned()];
        for (more, command) in [
            (None, "python3 'tool.py' 'data.txt'\n"),
            (Some("more.txt"), "python3 'tool.py'\n"),
        ] {
            fs_err::write(dir.path().join("tool.py"), script).unwrap();
            if let Some(more) = more {
                fs_err::write(dir.path().join(more), "c\n").unwrap();
            }
            let (actions, _) =
                save_rewritten_scripts(vec![run("python", &new)], &only_script, &[], dir.path());
            let Action::Run(saving) = &actions[0] else {
                panic!("{actions:?}")
            };
            assert!(saving.code.ends_with(command), "{}", saving.code);
        }
    }

    /// The shell code oi runs for a reply of Python `code` that rewrites
    /// one of the scripts `named` in `dir`.
    fn saving_code(code: &str, named: &[String], dir: &Path) -> String {
        let (actions, _) = save_rewritten_scripts(vec![run("python", code)], named, &[], dir);
        let Action::Run(saving) = &actions[0] else {
            panic!("{actions:?}")
        };
        saving.code.clone()
    }

    #[test]
    fn a_script_writing_to_its_second_argument_writes_a_scratch_file_shown_after() {
        let dir = tempfile::tempdir().unwrap();
        let old = "import csv, sys\nrows = list(csv.reader(open(sys.argv[1])))\nw = csv.writer(open(sys.argv[2], 'w'))\nfor row in rows[1:]:\n    if row[1] > '18':\n        w.writerow(row)\n";
        fs_err::write(dir.path().join("adults.py"), old).unwrap();
        fs_err::write(dir.path().join("people.csv"), "name,age\nAna,17\nBen,42\n").unwrap();
        let new = "import csv, sys\nrows = list(csv.reader(open(sys.argv[1])))\nw = csv.writer(open(sys.argv[2], 'w'))\nw.writerow(rows[0])\nfor row in rows[1:]:\n    if int(row[1]) >= 18:\n        w.writerow(row)\n";
        let named = ["adults.py".to_owned(), "people.csv".to_owned()];
        let (actions, saved) =
            save_rewritten_scripts(vec![run("python", new)], &named, &[], dir.path());
        assert_eq!(saved, ["adults.py"]);
        let Action::Run(saving) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            saving
                .code
                .contains("python3 'adults.py' 'people.csv' \"$oi_out/out2.csv\"\n"),
            "{}",
            saving.code
        );
        let out = bash(&saving.code, dir.path());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{out:?}");
        assert!(
            stdout.contains("/out2.csv, now holds:]\nname,age\r\nBen,42\r\n"),
            "{stdout}"
        );
        // The header kept (written with `\r\n`): no word on it.
        assert!(!stdout.contains("its first line"), "{stdout}");
        // Lost: the input's header is shown beside the output.
        let headless = new.replace("w.writerow(rows[0])\n", "");
        fs_err::write(dir.path().join("adults.py"), old).unwrap();
        let out = bash(&saving_code(&headless, &named, dir.path()), dir.path());
        assert!(
            String::from_utf8_lossy(&out.stdout).ends_with(
                "now holds:]\nBen,42\r\n[its first line is not the first line of people.csv: name,age]\n"
            ),
            "{out:?}"
        );
        // Nothing stray in the workspace.
        let mut files: Vec<String> = fs_err::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        assert_eq!(files, ["adults.py", "people.csv"]);
        // A script that fails keeps its exit status, and says it wrote
        // nothing.
        let failing = new.replace("w.writerow(rows[0])", "w.writerow(rows[0])\nsys.exit(3)");
        let failing = failing.replace("open(sys.argv[2], 'w')", "open(sys.argv[2] + 'x', 'r')");
        fs_err::write(dir.path().join("adults.py"), old).unwrap();
        let saving = saving_code(&failing, &named, dir.path());
        let out = bash(&saving, dir.path());
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("/out2.csv: not written]"));
        // The shell it runs in goes on after it (a kernel is one shell).
        let out = bash(&format!("{saving}echo still here $?\n"), dir.path());
        assert!(
            String::from_utf8_lossy(&out.stdout).ends_with("still here 1\n"),
            "{out:?}"
        );
    }

    #[test]
    fn arguments_read_by_position_are_counted_per_language() {
        assert_eq!(
            arguments_read("x = sys.argv[1]\ny = sys.argv[2]\n", "python3"),
            2
        );
        assert_eq!(arguments_read("import argparse\n", "python3"), 1);
        assert_eq!(arguments_read("const f = process.argv[3];", "node"), 2);
        assert_eq!(arguments_read("f = ARGV[0]", "ruby"), 1);
        assert_eq!(arguments_read("sort \"$1\" > \"${2}\"", "bash"), 2);
        // A regex capture in Perl is no argument.
        assert_eq!(arguments_read("my $f = $ARGV[0]; print $2;", "perl"), 1);
        assert_eq!(arguments_read("a = sys.argv[9]", "python3"), MAX_ARGUMENTS);
    }

    #[test]
    fn a_new_version_without_the_line_that_ran_it_gets_that_line_back() {
        let dir = tempfile::tempdir().unwrap();
        let old = "import sys\n\ndef main(path):\n    total = 0\n    count = 0\n    for line in open(path):\n        total += int(line)\n        count += 1\n    print(total // count)\n\nmain(sys.argv[1])\n";
        fs_err::write(dir.path().join("average.py"), old).unwrap();
        fs_err::write(dir.path().join("numbers.txt"), "# n\n10\n\n5\n").unwrap();
        let new = "def main(path):\n    total = 0\n    count = 0\n    for line in open(path):\n        line = line.strip()\n        if not line or line.startswith('#'):\n            continue\n        total += float(line)\n        count += 1\n    print(round(total / count, 2))\n";
        let named = ["average.py".to_owned(), "numbers.txt".to_owned()];
        let (actions, saved) =
            save_rewritten_scripts(vec![run("python", new)], &named, &[], dir.path());
        assert_eq!(saved, ["average.py"]);
        let Action::Run(saving) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            saving
                .code
                .starts_with("# oi: the reply's code is a new version of average.py, so it is saved as that file, with its line `main(sys.argv[1])` that runs it kept and run\n"),
            "{}",
            saving.code
        );
        // Run by a real shell: the script is saved whole and runs on the
        // input the task names.
        let out = bash(&saving.code, dir.path());
        assert_eq!(
            fs_err::read_to_string(dir.path().join("average.py")).unwrap(),
            format!("import sys\n{new}\nmain(sys.argv[1])\n")
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).ends_with("saved average.py\n7.5\n"),
            "{out:?}"
        );
        // A `__main__` block comes back whole.
        let guarded = old.replace(
            "main(sys.argv[1])\n",
            "if __name__ == \"__main__\":\n    main(sys.argv[1])\n",
        );
        let (code, line) = with_entry_restored("average.py", &guarded, new).unwrap();
        assert_eq!(line, "if __name__ == \"__main__\":");
        assert!(
            code.ends_with("\n\nif __name__ == \"__main__\":\n    main(sys.argv[1])\n"),
            "{code}"
        );
        // A new version that runs it itself is left as it is.
        let runs = format!("import sys\n{new}\nmain(sys.argv[1])\n");
        assert_eq!(with_entry_restored("average.py", old, &runs), None);
    }

    #[test]
    fn a_new_version_runs_as_the_commands_the_task_quotes() {
        let dir = tempfile::tempdir().unwrap();
        let script = "import sys\nrows = open(sys.argv[1]).read().splitlines()\nfor row in rows:\n    print(row.upper())\nprint(len(rows))\n";
        fs_err::write(dir.path().join("tool.py"), script).unwrap();
        fs_err::write(dir.path().join("data.txt"), "a\nb\n").unwrap();
        let new = script.replace("row.upper()", "row.title()");
        let commands = [
            "python3 tool.py data.txt".to_owned(),
            "python3 other.py data.txt".to_owned(),
            "python3 tool.py data.txt --quiet".to_owned(),
        ];
        let (actions, saved) = save_rewritten_scripts(
            vec![run("python", &new)],
            &["tool.py".to_owned()],
            &commands,
            dir.path(),
        );
        assert_eq!(saved, ["tool.py"]);
        let Action::Run(saving) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            saving.code.ends_with(
                "echo \"saved tool.py\"\npython3 tool.py data.txt\npython3 tool.py data.txt --quiet\n"
            ),
            "{}",
            saving.code
        );
        let out = bash(&saving.code, dir.path());
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with("saved tool.py\nA\nB\n2\n"),
            "{out:?}"
        );
    }
}
