//! The rules for single shell commands (`rm`, `find`, `chmod`, `dd`, `kill`,
//! `systemctl`, package managers, `eval`, interpreters given code …),
//! applied to each command of a script after `shell_rules` has put in
//! its variables and seen through its wrappers.

use std::path::PathBuf;

use super::shell_rules::{command_text, interpreter, run_code, unwrap};
use super::{
    Place, Risk, Scope, basename, deletion_risk, is_disk_device, is_startup_file, normalize,
    place_of, risk,
};
use crate::shell::{SUBSTITUTION, SimpleCommand, Word};

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

pub(super) fn command_risks(
    command: &SimpleCommand,
    scope: &mut Scope,
    depth: usize,
    risks: &mut Vec<Risk>,
) {
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
        "git" => super::git::git_risks(words, &text, risks),
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
                super::shell_rules::risks(&inner, scope, depth + 1, risks);
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
