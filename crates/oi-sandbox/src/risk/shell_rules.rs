//! The risks of shell code, read as bash reads it (see `shell.rs`):
//! through wrappers (`sudo`, `env`, `nohup`, `xargs` …), `bash -c` and
//! `eval`, with the variables the script sets to plain values substituted,
//! the folders it `cd`s to and the links it makes followed. Each command
//! is then judged by the rules of `shell_commands.rs`.

use std::collections::HashMap;

use super::{Risk, Scope, basename, risk};
use crate::shell::{self, SimpleCommand, Word};

/// How deep `bash -c`, `eval` and code fed to interpreters are followed.
const MAX_DEPTH: usize = 4;

/// The risks of `code`, run as shell code.
pub(crate) fn risks(code: &str, scope: &Scope, depth: usize, risks: &mut Vec<Risk>) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(name) = fork_bomb(code) {
        risks.push(risk(
            "fork-bomb",
            format!("a fork bomb: `{name}` starts copies of itself until the machine stalls"),
            code,
        ));
    }
    let script = shell::parse(code);
    let mut scope = scope.clone();
    let mut vars: HashMap<String, Option<String>> = HashMap::new();
    let commands: Vec<SimpleCommand> = script.commands.clone();
    for (i, command) in commands.iter().enumerate() {
        let command = substituted(command, &vars);
        if remember_assignments(&command.words, &mut vars) {
            continue;
        }
        let words = unwrap(&command.words);
        // A download piped into an interpreter.
        if is_download(&command.words) && command.piped_to_next {
            let runs_it = commands[i + 1..]
                .iter()
                .scan(true, |piped, next| {
                    let this = *piped;
                    *piped = next.piped_to_next;
                    this.then_some(next)
                })
                .any(|next| {
                    unwrap(&next.words)
                        .first()
                        .is_some_and(|w| interpreter(&w.text).is_some())
                });
            if runs_it {
                risks.push(risk(
                    "download-exec",
                    "runs a script downloaded from the internet without showing it",
                    &command_text(&command.words),
                ));
            }
        }
        // Code an interpreter reads from its input: a here-document, a
        // here-string, or what the command before it prints.
        if let Some(first) = words.first()
            && let Some(language) = interpreter(&first.text)
            && reads_code_from_stdin(words)
        {
            let fed = match &command.stdin_text {
                Some(text) => Some(text.text.clone()),
                None if i > 0 && commands[i - 1].piped_to_next => {
                    let before = substituted(&commands[i - 1], &vars);
                    printed_text(&before)
                        .or_else(|| is_download(&before.words).then(String::new))
                        .or_else(|| {
                            risks.push(risk(
                                "generated-code",
                                format!(
                                    "runs code it builds while running (piped into {})",
                                    basename(&first.text)
                                ),
                                &format!(
                                    "{} | {}",
                                    command_text(&before.words),
                                    command_text(&command.words)
                                ),
                            ));
                            None
                        })
                }
                None => None,
            };
            if let Some(fed) = fed {
                run_code(language, &fed, &scope, depth, risks);
            }
        }
        super::shell_commands::command_risks(&command, &mut scope, depth, risks);
    }
    for nested in &script.nested {
        // `sh -c "$(curl …)"` and `bash <(curl …)`: the download is run.
        let nested_script = shell::parse(nested);
        if nested_script.commands.iter().any(|c| is_download(&c.words))
            && commands.iter().any(|c| {
                unwrap(&c.words).first().is_some_and(|w| {
                    interpreter(&w.text).is_some()
                        || matches!(w.text.as_str(), "eval" | "source" | ".")
                })
            })
        {
            risks.push(risk(
                "download-exec",
                "runs a script downloaded from the internet without showing it",
                nested,
            ));
        }
        // `eval "$(echo 'rm -rf …')"`, `sh -c "$(printf …)"`: what the
        // substitution prints is run.
        let runs_output = commands.iter().any(|c| {
            unwrap(&c.words).first().is_some_and(|w| {
                matches!(w.text.as_str(), "eval" | "source" | ".") || interpreter(&w.text).is_some()
            })
        });
        if runs_output
            && let [only] = &nested_script.commands[..]
            && let Some(printed) = printed_text(only)
        {
            self::risks(&printed, &scope, depth + 1, risks);
        }
        self::risks(nested, &scope, depth + 1, risks);
    }
}

/// Judges `code` as `language` (the code an interpreter was handed).
pub(super) fn run_code(
    language: &str,
    code: &str,
    scope: &Scope,
    depth: usize,
    risks: &mut Vec<Risk>,
) {
    match language {
        "shell" => self::risks(code, scope, depth + 1, risks),
        "python" => super::python::risks(code, scope, depth + 1, risks),
        other => super::other::risks(other, code, scope, risks),
    }
}

/// The language of an interpreter's program name (`bash`, `python3.12`).
pub(super) fn interpreter(name: &str) -> Option<&'static str> {
    let name = basename(name);
    Some(match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" | "busybox" => "shell",
        "python" | "python3" | "python2" | "pypy" | "pypy3" => "python",
        "perl" => "perl",
        "ruby" => "ruby",
        "node" | "nodejs" | "deno" | "bun" => "javascript",
        "php" => "php",
        "lua" | "lua5.4" | "luajit" => "lua",
        "Rscript" | "R" => "r",
        _ if name.starts_with("python3.") => "python",
        _ => return None,
    })
}

/// Whether an interpreter command takes its code from standard input: no
/// script file and no `-c`/`-e` code, or `-`/`-s`/`/dev/stdin`.
fn reads_code_from_stdin(words: &[Word]) -> bool {
    let args: Vec<&str> = words.iter().skip(1).map(|w| w.text.as_str()).collect();
    if args
        .iter()
        .any(|a| matches!(*a, "-" | "-s" | "/dev/stdin" | "/proc/self/fd/0"))
    {
        return true;
    }
    !args
        .iter()
        .any(|a| !a.starts_with('-') || matches!(*a, "-c" | "-e" | "-E" | "-r" | "--eval" | "-m"))
}

/// The text a command prints, when it is spelled out: `echo`/`printf` with
/// plain arguments, or a here-document fed to `cat`.
fn printed_text(command: &SimpleCommand) -> Option<String> {
    let words = unwrap(&command.words);
    let first = words.first()?;
    let args: Vec<&Word> = words.iter().skip(1).collect();
    if args.iter().any(|w| w.expanded && w.text.contains('$')) {
        return None;
    }
    match basename(&first.text) {
        "echo" => {
            let args: Vec<&str> = args
                .iter()
                .map(|w| w.text.as_str())
                .skip_while(|a| matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
                .collect();
            Some(args.join(" ").replace("\\n", "\n"))
        }
        "printf" => {
            let format = args.first()?.text.replace("\\n", "\n");
            let rest: Vec<&str> = args.iter().skip(1).map(|w| w.text.as_str()).collect();
            Some(if rest.is_empty() {
                format
            } else {
                format.replacen("%s", &rest.join(" "), 1)
            })
        }
        "cat" if args.is_empty() => command.stdin_text.as_ref().map(|t| t.text.clone()),
        _ => None,
    }
}

/// `command` with the variables the script set to plain values put in.
fn substituted(command: &SimpleCommand, vars: &HashMap<String, Option<String>>) -> SimpleCommand {
    let mut out = command.clone();
    for word in out
        .words
        .iter_mut()
        .chain(out.redirects.iter_mut().map(|r| &mut r.target))
    {
        if !word.expanded || !word.text.contains('$') {
            continue;
        }
        let text = substitute_text(&word.text, vars);
        word.expanded = text.contains('$') || text.contains(['*', '?', '[']);
        word.text = text;
    }
    out
}

fn substitute_text(text: &str, vars: &HashMap<String, Option<String>>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            },
            None => {
                let end = after
                    .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        match vars.get(name) {
            Some(Some(value)) if !name.is_empty() => {
                out.push_str(value);
                rest = &after[len..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Records `NAME=value` (alone, or after `export`/`local`/`declare`); true
/// when the command is nothing but assignments. A value that is not plain
/// makes the variable unknown; `read` and `for` make theirs unknown.
fn remember_assignments(words: &[Word], vars: &mut HashMap<String, Option<String>>) -> bool {
    let skip = usize::from(words.first().is_some_and(|w| {
        !w.expanded
            && matches!(
                w.text.as_str(),
                "export" | "local" | "declare" | "readonly" | "typeset"
            )
    }));
    let rest = &words[skip.min(words.len())..];
    if rest.is_empty() {
        return false;
    }
    let assignments: Vec<(&str, &Word)> = rest
        .iter()
        .filter_map(|w| {
            let (name, _) = w.text.split_once('=')?;
            (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .then_some((name, w))
        })
        .collect();
    if assignments.len() == rest.len() {
        for (name, word) in assignments {
            let value = &word.text[name.len() + 1..];
            let known = !value.contains('$') && !word.text.contains('`');
            vars.insert(name.to_owned(), known.then(|| value.to_owned()));
        }
        return true;
    }
    match words.first().map(|w| w.text.as_str()) {
        Some("read") => {
            for w in words.iter().skip(1).filter(|w| !w.text.starts_with('-')) {
                vars.insert(w.text.clone(), None);
            }
        }
        Some(name) if words.get(1).is_some_and(|w| w.text == "in") => {
            // `for NAME in …` (the parser leaves `NAME in …`).
            vars.insert(name.to_owned(), None);
        }
        _ => {}
    }
    false
}

/// The name of a function that calls itself in a pipe or in the background
/// within its own body (`:(){ :|:& };:`, `f(){ f|f& };f`).
fn fork_bomb(code: &str) -> Option<String> {
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let mut search = compact.as_str();
    while let Some(at) = search.find("(){") {
        let name: String = search[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let body_start = at + 3;
        let body_end = search[body_start..]
            .find('}')
            .map_or(search.len(), |e| body_start + e);
        let body = &search[body_start..body_end];
        if !name.is_empty()
            && (body.contains(&format!("{name}|{name}"))
                || body.contains(&format!("{name}&")) && !body.contains(&format!("{name}&&")))
        {
            return Some(name);
        }
        search = &search[body_start..];
    }
    None
}

pub(super) fn is_download(words: &[Word]) -> bool {
    let words = unwrap(words);
    words
        .first()
        .is_some_and(|w| matches!(basename(&w.text), "curl" | "wget" | "fetch" | "aria2c"))
}

pub(super) fn command_text(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| {
            if w.text.contains(' ') || w.text.is_empty() {
                format!("'{}'", w.text)
            } else {
                w.text.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command inside wrappers: `sudo -u x cmd`, `env A=1 cmd`, `nohup`,
/// `time`, `nice -n 5`, `timeout 10`, `xargs -0`, `command`, `exec`,
/// `stdbuf -oL`, `ionice -c3`, leading assignments.
pub(super) fn unwrap(words: &[Word]) -> &[Word] {
    let mut rest = words;
    loop {
        let Some(first) = rest.first() else {
            return rest;
        };
        let name = basename(&first.text);
        let is_assignment = !first.text.starts_with('=')
            && first.text.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if is_assignment {
            rest = &rest[1..];
            continue;
        }
        let skip_options = |rest: &[Word], with_value: &[&str]| -> usize {
            let mut i = 1;
            while let Some(w) = rest.get(i) {
                if w.text == "--" {
                    return i + 1;
                }
                if !w.text.starts_with('-') {
                    break;
                }
                i += 1;
                if with_value.contains(&w.text.as_str()) {
                    i += 1;
                }
            }
            i
        };
        let skip = match name {
            "sudo" | "doas" => skip_options(
                rest,
                &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
            ),
            "env" => {
                let mut i = skip_options(rest, &["-u", "-C", "-S"]);
                while rest
                    .get(i)
                    .is_some_and(|w| w.text.contains('=') && !w.text.starts_with('-'))
                {
                    i += 1;
                }
                i
            }
            "nohup" | "time" | "command" | "builtin" | "exec" | "setsid" | "chronic" => {
                skip_options(rest, &[])
            }
            "nice" | "ionice" | "stdbuf" | "taskset" => {
                let mut i = skip_options(rest, &["-n", "-c", "-p"]);
                if name == "taskset" && rest.get(i).is_some() {
                    i += 1;
                }
                i
            }
            "timeout" => skip_options(rest, &["-s", "-k", "--signal", "--kill-after"]) + 1,
            "xargs" => skip_options(rest, &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"]),
            "watch" => skip_options(rest, &["-n"]),
            _ => return rest,
        };
        rest = rest.get(skip..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasons(code: &str) -> Vec<&'static str> {
        let mut found = Vec::new();
        risks(
            code,
            &Scope::new(&super::super::tests::ctx()),
            0,
            &mut found,
        );
        found.iter().map(|r| r.rule).collect()
    }

    #[test]
    fn wrappers_are_seen_through() {
        assert_eq!(
            reasons("sudo rm -rf /var/lib/x"),
            ["root", "delete-outside"]
        );
        assert_eq!(reasons("env FOO=1 nohup rm -rf ~/x"), ["delete-outside"]);
        assert_eq!(reasons("bash -c 'rm -rf ~/x'"), ["delete-outside"]);
        assert_eq!(reasons("echo $(rm -rf ~/x)"), ["delete-outside"]);
        assert_eq!(reasons("cd / && rm -rf tmpdata"), ["delete-outside"]);
    }

    #[test]
    fn plain_variables_are_substituted_and_computed_names_ask() {
        assert_eq!(reasons("R=rm; F=-rf; $R $F /srv/data"), ["delete-outside"]);
        assert_eq!(reasons("k=kill; $k -9 $PPID"), ["kill"]);
        assert!(reasons("D=build; rm -rf \"$D\"").is_empty());
        assert_eq!(reasons("$(echo rm) -rf x"), ["dynamic-command"]);
        assert_eq!(reasons("for t in a b; do $t; done"), ["dynamic-command"]);
        assert!(reasons("PY=python3; $PY script.py").is_empty());
    }

    #[test]
    fn code_fed_to_a_shell_is_read_or_asked_about() {
        assert_eq!(reasons("echo 'rm -rf ~/x' | sh"), ["delete-outside"]);
        assert_eq!(
            reasons("printf 'rm -rf /srv\\n' | bash"),
            ["delete-outside"]
        );
        assert_eq!(
            reasons("echo cm0gLXJmIH4K | base64 -d | sh"),
            ["generated-code"]
        );
        assert_eq!(reasons("bash <<'EOF'\nrm -rf ~/x\nEOF"), ["delete-outside"]);
        assert_eq!(
            reasons("eval \"$(echo 'rm -rf ~/x')\""),
            ["generated-code", "delete-outside"]
        );
        assert!(
            reasons("echo hello | python3 -c 'import sys; print(sys.stdin.read())'").is_empty()
        );
        assert!(reasons("cat data.csv | sort | uniq").is_empty());
    }

    #[test]
    fn fork_bombs_by_any_name() {
        assert_eq!(reasons(":(){ :|:& };:"), ["fork-bomb"]);
        assert_eq!(reasons("f(){ f|f& };f"), ["fork-bomb"]);
        assert!(reasons("build() { make && echo ok; }; build").is_empty());
    }

    #[test]
    fn links_made_then_deleted_through_are_followed() {
        assert_eq!(
            reasons("ln -s /srv/data d && rm -rf d/"),
            ["delete-outside"]
        );
        assert!(reasons("ln -s /srv/data d && rm d").is_empty());
    }

    #[test]
    fn permissions_outside_and_truncation_are_found() {
        assert_eq!(reasons("chmod -R 777 /srv/www"), ["permissions"]);
        assert_eq!(reasons("chmod 600 ~/.ssh/id_rsa"), ["permissions"]);
        assert!(reasons("chmod +x run.sh").is_empty());
        assert_eq!(reasons("truncate -s 0 /var/log/app.log"), ["write-outside"]);
        assert!(reasons("truncate -s 0 out.log").is_empty());
        assert_eq!(reasons("cat /dev/null > ~/notes.txt"), ["write-outside"]);
    }

    #[test]
    fn startup_files_keep_their_rule() {
        assert_eq!(reasons("echo 'alias x=y' >> ~/.bashrc"), ["startup-file"]);
    }
}
