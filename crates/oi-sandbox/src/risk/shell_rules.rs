//! The risks of shell code, read as bash reads it (see `shell.rs`):
//! through wrappers (`sudo`, `env`, `nohup`, `xargs` …), `bash -c` and
//! `eval`, with the variables the script sets to plain values substituted,
//! the folders it `cd`s to and the links it makes followed.

use std::collections::HashMap;
use std::path::PathBuf;

use super::{
    Place, Risk, Scope, basename, deletion_risk, is_disk_device, is_startup_file, normalize,
    place_of, risk,
};
use crate::shell::{self, SUBSTITUTION, SimpleCommand, Word};

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
        command_risks(&command, &mut scope, depth, risks);
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
fn run_code(language: &str, code: &str, scope: &Scope, depth: usize, risks: &mut Vec<Risk>) {
    match language {
        "shell" => self::risks(code, scope, depth + 1, risks),
        "python" => super::python::risks(code, scope, depth + 1, risks),
        other => super::other::risks(other, code, scope, risks),
    }
}

/// The language of an interpreter's program name (`bash`, `python3.12`).
fn interpreter(name: &str) -> Option<&'static str> {
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

fn is_download(words: &[Word]) -> bool {
    let words = unwrap(words);
    words
        .first()
        .is_some_and(|w| matches!(basename(&w.text), "curl" | "wget" | "fetch" | "aria2c"))
}

fn command_text(words: &[Word]) -> String {
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
fn unwrap(words: &[Word]) -> &[Word] {
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

fn has_flag(words: &[Word], short: char, long: &[&str]) -> bool {
    words.iter().skip(1).any(|w| {
        let t = w.text.as_str();
        if t == "--" {
            return false;
        }
        if let Some(name) = t.strip_prefix("--") {
            return long.contains(&name);
        }
        t.starts_with('-')
            && t.len() > 1
            && t[1..].chars().all(|c| c.is_ascii_alphanumeric())
            && t[1..].contains(short)
    })
}

/// The non-option arguments (after `--`, everything), skipping the values
/// of the options in `with_value`.
fn operands<'a>(words: &'a [Word], with_value: &[&str]) -> Vec<&'a Word> {
    let mut out = Vec::new();
    let mut options_done = false;
    let mut skip_next = false;
    for w in words.iter().skip(1) {
        if skip_next {
            skip_next = false;
            continue;
        }
        if !options_done && w.text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && w.text.starts_with('-') && w.text.len() > 1 {
            skip_next = with_value.contains(&w.text.as_str());
            continue;
        }
        out.push(w);
    }
    out
}

fn place(word: &Word, scope: &Scope) -> Place {
    place_of(&word.text, word.expanded, scope)
}

fn command_risks(command: &SimpleCommand, scope: &mut Scope, depth: usize, risks: &mut Vec<Risk>) {
    let all = &command.words;
    let text = command_text(all);
    let push = |risks: &mut Vec<Risk>, rule: &'static str, reason: String| {
        risks.push(risk(rule, reason, &text));
    };
    // Writes through redirections.
    for redirect in &command.redirects {
        if !redirect.writes() {
            continue;
        }
        let target = &redirect.target.text;
        if is_startup_file(target) {
            push(
                risks,
                "startup-file",
                format!("changes {target}, a file run at every login or shell start"),
            );
        } else if is_disk_device(target) {
            push(
                risks,
                "disk",
                format!("writes straight to the disk device {target}"),
            );
        } else if !target.starts_with("/dev/") && !target.starts_with("/proc/self/") {
            match place(&redirect.target, scope) {
                Place::Outside => push(
                    risks,
                    "write-outside",
                    format!("writes {target}, outside the workspace"),
                ),
                Place::WorkspaceRoot if redirect.target.text != "." => push(
                    risks,
                    "write-outside",
                    format!("writes over {target}, which holds the workspace"),
                ),
                _ => {}
            }
        }
    }
    let words = unwrap(all);
    let wrapped_in_sudo = all.len() != words.len()
        && all
            .iter()
            .take(all.len() - words.len())
            .any(|w| matches!(basename(&w.text), "sudo" | "doas"));
    if wrapped_in_sudo {
        push(risks, "root", "runs as root (sudo)".to_owned());
    }
    let Some(first) = words.first() else {
        return;
    };
    if first.expanded && (first.text.contains('$') || first.text.is_empty()) {
        push(
            risks,
            "dynamic-command",
            "runs a command whose name is only known when it runs".to_owned(),
        );
        return;
    }
    let name = basename(&first.text);
    let args: Vec<&str> = words.iter().skip(1).map(|w| w.text.as_str()).collect();
    match name {
        "cd" | "pushd" => {
            match words.get(1) {
                Some(target) => {
                    let known = !target.text.contains('$') || target.text.starts_with("$HOME");
                    if let (true, Some(text)) = (known, cd_text(&target.text, scope)) {
                        scope.ctx.cwd = normalize(&scope.ctx.cwd.join(text));
                    } else {
                        // Somewhere only known when it runs.
                        scope.ctx.cwd = PathBuf::from("/$__oi_dynamic");
                    }
                }
                None => {
                    if let Some(home) = &scope.ctx.home {
                        scope.ctx.cwd = home.clone();
                    }
                }
            }
        }
        "ln" if has_flag(words, 's', &["symbolic"]) => {
            let targets = operands(words, &["-t", "--target-directory", "-S", "--suffix"]);
            if let [target, link] = targets[..] {
                let link_path = normalize(&scope.ctx.cwd.join(link.text.trim_end_matches('/')));
                let target_path = if target.text.starts_with('/') {
                    normalize(&PathBuf::from(&target.text))
                } else {
                    normalize(
                        &link_path
                            .parent()
                            .unwrap_or(&scope.ctx.cwd)
                            .join(&target.text),
                    )
                };
                scope.links.push((link_path, target_path));
            }
        }
        "su" | "pkexec" | "runuser" => {
            push(risks, "root", "runs as another user (root)".to_owned())
        }
        "sudo" | "doas" if !wrapped_in_sudo => {
            push(risks, "root", "runs as root (sudo)".to_owned())
        }
        "rm" | "unlink" | "rmdir" | "shred" | "srm" => {
            if name == "shred" || name == "srm" {
                push(
                    risks,
                    "delete-outside",
                    "destroys file contents beyond recovery (shred)".to_owned(),
                );
                return;
            }
            let recursive = has_flag(words, 'r', &["recursive"]) || has_flag(words, 'R', &[]);
            let force = has_flag(words, 'f', &["force"]);
            let targets = operands(words, &[]);
            if targets.is_empty() && name == "rm" && words.len() > 1 {
                // Targets from xargs or a glob that expanded to options.
                push(
                    risks,
                    "delete-unknown",
                    "deletes files it does not name".to_owned(),
                );
            }
            for target in targets {
                let found = match place(target, scope) {
                    // A single file whose name is a variable: undo has it
                    // if it is in the workspace; ask for folders and -f.
                    Place::Unknown if !recursive && !force => None,
                    other => deletion_risk(other, &text),
                };
                if let Some(found) = found {
                    risks.push(found);
                    break;
                }
            }
        }
        "find" => {
            let deletes = args.contains(&"-delete")
                || args.windows(2).any(|w| {
                    matches!(w[0], "-exec" | "-execdir" | "-ok")
                        && matches!(basename(w[1]), "rm" | "shred" | "unlink" | "rmdir")
                });
            if deletes {
                let roots: Vec<&Word> = words
                    .iter()
                    .skip(1)
                    .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
                    .collect();
                // What lies below each root: `find /` reaches far beyond
                // the workspace that `/` holds.
                let places: Vec<Place> = if roots.is_empty() {
                    vec![place_of(".", false, scope)]
                } else {
                    roots
                        .iter()
                        .map(|w| match place(w, scope) {
                            Place::WorkspaceRoot => {
                                let below = format!("{}/__oi_entry", w.text.trim_end_matches('/'));
                                match place_of(&below, false, scope) {
                                    Place::Workspace => Place::WorkspaceRoot,
                                    other => other,
                                }
                            }
                            other => other,
                        })
                        .collect()
                };
                let filtered = args.iter().any(|a| {
                    matches!(
                        *a,
                        "-name"
                            | "-iname"
                            | "-path"
                            | "-type"
                            | "-newer"
                            | "-mtime"
                            | "-size"
                            | "-empty"
                            | "-regex"
                    )
                });
                if places.contains(&Place::Outside) {
                    push(
                        risks,
                        "delete-outside",
                        "deletes files outside the workspace (find)".to_owned(),
                    );
                } else if places.contains(&Place::Unknown) {
                    push(
                        risks,
                        "delete-unknown",
                        "deletes files in a folder only known when it runs (find)".to_owned(),
                    );
                } else if places.contains(&Place::WorkspaceRoot) && !filtered {
                    push(
                        risks,
                        "delete-workspace",
                        "deletes everything in the workspace (find)".to_owned(),
                    );
                }
            }
        }
        "mkfs" | "mke2fs" | "mkswap" | "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "sgdisk"
        | "parted" | "wipefs" | "badblocks" | "cryptsetup" | "hdparm" | "blkdiscard" | "zpool"
        | "lvremove" | "vgremove" | "pvremove" => {
            push(risks, "disk", "changes disks or file systems".to_owned());
        }
        _ if name.starts_with("mkfs.") => push(risks, "disk", "formats a file system".to_owned()),
        "dd" => {
            if let Some(target) = args.iter().find_map(|a| a.strip_prefix("of=")) {
                if is_disk_device(target) {
                    push(risks, "disk", "writes raw data over a disk (dd)".to_owned());
                } else if !target.starts_with("/dev/")
                    && place_of(target, false, scope) == Place::Outside
                {
                    push(
                        risks,
                        "write-outside",
                        "writes raw data over a file outside the workspace (dd)".to_owned(),
                    );
                }
            }
        }
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" | "touch" => {
            let recursive = has_flag(words, 'R', &["recursive"]);
            let targets = operands(words, &["-m", "-x", "-r", "-d", "-t", "--reference"]);
            // The first operand of chmod/chown/chgrp is the mode or owner.
            let skip = usize::from(matches!(name, "chmod" | "chown" | "chgrp"));
            let places: Vec<Place> = targets.iter().skip(skip).map(|w| place(w, scope)).collect();
            let outside = places.contains(&Place::Outside)
                || (name != "touch" && places.contains(&Place::Unknown) && recursive);
            if outside && name == "touch" {
                push(
                    risks,
                    "write-outside",
                    "creates or changes files outside the workspace (touch)".to_owned(),
                );
            } else if outside {
                push(
                    risks,
                    "permissions",
                    format!("changes permissions or owners outside the workspace ({name})"),
                );
            } else if recursive && places.contains(&Place::WorkspaceRoot) {
                push(
                    risks,
                    "permissions",
                    format!("changes permissions or owners of the whole workspace ({name} -R)"),
                );
            }
        }
        "git" => git_risks(words, &text, risks),
        "kill" | "killall" | "pkill" | "xkill" | "killall5" | "skill" => {
            push(risks, "kill", "stops running processes".to_owned());
        }
        "shutdown" | "reboot" | "poweroff" | "halt" => {
            push(
                risks,
                "shutdown",
                "shuts down or restarts the machine".to_owned(),
            );
        }
        "init" | "telinit" if args.first().is_some_and(|a| matches!(*a, "0" | "6")) => {
            push(
                risks,
                "shutdown",
                "shuts down or restarts the machine".to_owned(),
            );
        }
        "systemctl" | "service" => {
            let verbs = [
                "stop", "disable", "mask", "kill", "reboot", "poweroff", "halt", "isolate",
                "restart",
            ];
            if args.iter().any(|a| verbs.contains(a)) {
                let rule = if args
                    .iter()
                    .any(|a| matches!(*a, "reboot" | "poweroff" | "halt"))
                {
                    "shutdown"
                } else {
                    "services"
                };
                push(risks, rule, "stops or changes system services".to_owned());
            }
        }
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "apk" | "snap" | "flatpak" => {
            let verbs = ["remove", "purge", "autoremove", "erase", "del", "uninstall"];
            if args.iter().any(|a| verbs.contains(a)) {
                push(risks, "packages", "removes system packages".to_owned());
            }
        }
        "pacman" if args.iter().any(|a| a.starts_with("-R")) => {
            push(risks, "packages", "removes system packages".to_owned());
        }
        "dpkg" | "rpm"
            if args
                .iter()
                .any(|a| matches!(*a, "-r" | "-P" | "--remove" | "--purge" | "-e" | "--erase")) =>
        {
            push(risks, "packages", "removes system packages".to_owned());
        }
        "pip" | "pip3" | "conda" | "mamba" | "brew" | "gem" | "cargo" | "pipx"
            if args.iter().any(|a| matches!(*a, "uninstall" | "remove")) =>
        {
            push(
                risks,
                "packages",
                format!("removes installed packages ({name})"),
            );
        }
        "npm" | "pnpm" | "yarn" => {
            let removes = args
                .iter()
                .any(|a| matches!(*a, "uninstall" | "remove" | "rm" | "un" | "r"));
            let global = args
                .iter()
                .any(|a| matches!(*a, "-g" | "--global" | "global"));
            if removes && global {
                push(
                    risks,
                    "packages",
                    format!("removes globally installed packages ({name})"),
                );
            }
        }
        "crontab"
            if args.iter().any(|a| matches!(*a, "-r" | "-e"))
                || (!operands(words, &[]).is_empty() && !args.contains(&"-l")) =>
        {
            push(
                risks,
                "scheduled-jobs",
                "changes scheduled jobs (crontab)".to_owned(),
            );
        }
        "tee" | "cp" | "mv" | "install" | "rsync" | "ln" | "truncate" | "sed" | "perl" => {
            file_writes(name, words, scope, &text, risks);
            if name == "perl"
                && let Some(i) = args.iter().position(|a| *a == "-e" || *a == "-E")
                && let Some(inner) = args.get(i + 1)
            {
                super::other::risks("perl", inner, scope, risks);
            }
        }
        "docker" | "podman" => {
            let destructive = args.windows(2).any(|w| {
                matches!(
                    (w[0], w[1]),
                    ("system", "prune")
                        | ("volume", "rm")
                        | ("volume", "prune")
                        | ("image", "prune")
                        | ("container", "prune")
                )
            }) || args.first().is_some_and(|a| matches!(*a, "rm" | "rmi"));
            if destructive {
                push(
                    risks,
                    "containers",
                    format!("deletes containers, images or volumes ({name})"),
                );
            }
        }
        "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd" => {
            push(risks, "firewall", "changes the firewall".to_owned());
        }
        "passwd" | "chpasswd" | "usermod" | "userdel" | "useradd" | "groupdel" | "visudo" => {
            push(risks, "accounts", "changes user accounts".to_owned());
        }
        "mount" | "umount" | "swapoff" => {
            push(risks, "mounts", "changes mounted file systems".to_owned())
        }
        "history" if args.contains(&"-c") => push(
            risks,
            "shell-history",
            "erases the shell history".to_owned(),
        ),
        "eval" => {
            // eval joins its words and runs them as shell code.
            let inner = words[1..]
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if inner.contains(SUBSTITUTION)
                || words[1..]
                    .iter()
                    .any(|w| w.expanded && w.text.contains('$'))
            {
                push(
                    risks,
                    "generated-code",
                    "runs code it builds while running (eval)".to_owned(),
                );
            }
            // Nothing but substituted output: what the substituted
            // commands print is judged with them.
            if !inner.replace(SUBSTITUTION, "").trim().is_empty() {
                self::risks(&inner, scope, depth + 1, risks);
            }
        }
        "source" | "." => {
            let from_stdin = words.get(1).is_some_and(|w| {
                matches!(
                    w.text.as_str(),
                    "/dev/stdin" | "/dev/fd/63" | "/proc/self/fd/0" | "-"
                ) || (w.expanded && w.text.contains('$'))
            });
            if from_stdin {
                push(
                    risks,
                    "generated-code",
                    "runs code it builds while running (source)".to_owned(),
                );
            }
        }
        _ => {
            if let Some(language) = interpreter(name) {
                // `bash -c "…"`, `python3 -c "…"`, `perl -e '…'`.
                let flag = if language == "shell" || language == "python" {
                    "-c"
                } else {
                    "-e"
                };
                let at = words.iter().skip(1).position(|w| {
                    w.text == flag
                        || (language == "javascript" && w.text == "--eval")
                        || (language == "perl" && w.text == "-E")
                });
                if let Some(code) = at.and_then(|i| words.get(i + 2)) {
                    if language != "shell" && code.expanded && code.text.contains('$') {
                        push(
                            risks,
                            "generated-code",
                            format!("runs code it builds while running ({name} {flag})"),
                        );
                    }
                    run_code(language, &code.text, scope, depth, risks);
                }
            }
        }
    }
}

/// What `tee`, `cp`, `mv`, `install`, `rsync`, `ln`, `truncate` and
/// in-place `sed`/`perl` write.
fn file_writes(name: &str, words: &[Word], scope: &Scope, text: &str, risks: &mut Vec<Risk>) {
    let args: Vec<&str> = words.iter().skip(1).map(|w| w.text.as_str()).collect();
    let mut written: Vec<&Word> = match name {
        "tee" => operands(words, &[]),
        "truncate" => operands(words, &["-s", "--size", "-r", "--reference"]),
        "sed" | "perl"
            if args
                .iter()
                .any(|a| a.starts_with("-i") || a.starts_with("--in-place") || *a == "-pi") =>
        {
            operands(words, &["-e", "-f", "-E"])
                .into_iter()
                .skip(1)
                .collect()
        }
        "sed" | "perl" => Vec::new(),
        _ => operands(
            words,
            &["-t", "--target-directory", "-S", "--suffix", "-m", "--mode"],
        )
        .last()
        .copied()
        .into_iter()
        .collect(),
    };
    let mut removed: Vec<&Word> = Vec::new();
    if name == "mv" || name == "rsync" && args.contains(&"--remove-source-files") {
        // Moving removes the sources.
        let ops = operands(words, &["-t", "--target-directory", "-S", "--suffix"]);
        removed.extend(ops.iter().take(ops.len().saturating_sub(1)));
    }
    if name == "rsync" && args.iter().any(|a| a.starts_with("--delete")) {
        written.extend(operands(words, &[]).last().copied());
    }
    for target in &written {
        if is_startup_file(&target.text) {
            risks.push(risk(
                "startup-file",
                format!(
                    "changes {}, a file run at every login or shell start",
                    target.text
                ),
                text,
            ));
            return;
        }
        if target.text.starts_with("/dev/") {
            continue;
        }
        match place(target, scope) {
            Place::Outside => {
                risks.push(risk(
                    "write-outside",
                    format!("changes files outside the workspace ({name})"),
                    text,
                ));
                return;
            }
            Place::WorkspaceRoot if name == "rsync" || name == "truncate" => {
                risks.push(risk(
                    "write-outside",
                    format!("overwrites the workspace ({name})"),
                    text,
                ));
                return;
            }
            _ => {}
        }
    }
    for source in removed {
        match place(source, scope) {
            Place::Outside => {
                risks.push(risk(
                    "delete-outside",
                    format!("moves files away from outside the workspace ({name})"),
                    text,
                ));
                return;
            }
            Place::WorkspaceRoot => {
                risks.push(risk(
                    "delete-workspace",
                    "moves the workspace or its .git history",
                    text,
                ));
                return;
            }
            _ => {}
        }
    }
}

/// The text of a `cd` target with `~`/`$HOME` expanded, if known.
fn cd_text(text: &str, scope: &Scope) -> Option<String> {
    if let Some(home) = &scope.ctx.home {
        let home = home.display().to_string();
        if text == "~" || text == "$HOME" {
            return Some(home);
        }
        if let Some(rest) = text
            .strip_prefix("~/")
            .or_else(|| text.strip_prefix("$HOME/"))
        {
            return Some(format!("{home}/{rest}"));
        }
    }
    (!text.contains('$') && text != "-").then(|| text.to_owned())
}

fn git_risks(words: &[Word], text: &str, risks: &mut Vec<Risk>) {
    // Skip global options (`git -C dir …`).
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if matches!(w.text.as_str(), "-C" | "-c" | "--git-dir" | "--work-tree") {
            i += 2;
        } else if w.text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let Some(sub) = words.get(i).map(|w| w.text.as_str()) else {
        return;
    };
    let rest: Vec<&str> = words.iter().skip(i + 1).map(|w| w.text.as_str()).collect();
    let has = |flags: &[&str]| rest.iter().any(|a| flags.contains(a));
    let short = |c: char| {
        rest.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    };
    let reason = match sub {
        "push"
            if has(&["--mirror", "--delete", "--prune"])
                || rest.iter().any(|a| a.starts_with("--force"))
                || short('f')
                || short('d')
                || rest
                    .iter()
                    .any(|a| a.starts_with('+') || a.starts_with(':')) =>
        {
            "rewrites or deletes history on a remote (git push --force)"
        }
        "reset" if has(&["--hard", "--merge", "--keep"]) => {
            "throws away uncommitted changes (git reset --hard)"
        }
        "clean" if short('f') || has(&["--force"]) => "deletes untracked files (git clean)",
        "checkout" | "restore"
            if rest.iter().any(|a| matches!(*a, "." | "--" | ":/")) && !has(&["--staged"])
                || sub == "checkout" && short('f') =>
        {
            "throws away uncommitted changes"
        }
        "branch" if short('D') || (short('d') && has(&["--force"])) => {
            "deletes a branch that may not be merged"
        }
        "stash" if rest.first().is_some_and(|a| matches!(*a, "drop" | "clear")) => {
            "deletes stashed changes"
        }
        "filter-branch" | "filter-repo" => "rewrites the repository's history",
        "update-ref" if short('d') => "deletes a reference",
        "reflog"
            if rest
                .first()
                .is_some_and(|a| matches!(*a, "expire" | "delete")) =>
        {
            "deletes the history of references"
        }
        "gc" if rest
            .iter()
            .any(|a| a.starts_with("--prune") || *a == "--aggressive") =>
        {
            "prunes unreachable commits for good"
        }
        _ => return,
    };
    risks.push(risk("history", reason, text));
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
