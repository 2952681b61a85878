//! Recognising risky code before it runs.
//!
//! Some actions deserve a person's yes even when runs are approved
//! automatically: deleting outside the workspace, `sudo`, disk tools,
//! rewriting history, killing processes, removing packages, editing shell
//! startup files, piping a download into a shell. [`assess`] reads shell
//! code as a shell would (see `shell.rs`), sees through wrappers (`sudo`,
//! `env`, `nohup`, `xargs`, `bash -c`, `eval` …), and reads Python's
//! `subprocess`/`os.system` commands and file deletions; other languages
//! have the commands in their string literals read. Each finding carries a
//! short reason for the approval prompt.
//!
//! The classifier leans towards asking: recall on risky code matters more
//! than precision (see the labelled corpus in `tests/risk_corpus.toml`).

use std::path::{Component, Path, PathBuf};

use crate::shell::{self, SimpleCommand, Word};

/// Where code runs, for judging the paths it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RiskContext {
    /// The workspace (changes inside it can be undone).
    pub workspace: PathBuf,
    /// The kernel's working directory (relative paths start here).
    pub cwd: PathBuf,
    /// The user's home folder (`~`, `$HOME`).
    pub home: Option<PathBuf>,
    /// Temporary folders (deleting in them is harmless).
    pub temp_dirs: Vec<PathBuf>,
}

impl RiskContext {
    /// A context for `workspace`, with the working directory there, the
    /// user's home from `$HOME` and the usual temporary folders.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        let mut temp_dirs = vec![
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
            PathBuf::from("/dev/shm"),
        ];
        let system_temp = std::env::temp_dir();
        if !temp_dirs.contains(&system_temp) {
            temp_dirs.push(system_temp);
        }
        Self {
            cwd: workspace.clone(),
            workspace,
            home: std::env::var_os("HOME").map(PathBuf::from),
            temp_dirs,
        }
    }
}

/// One reason to ask before running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    /// Why, e.g. `deletes files outside the workspace`.
    pub reason: String,
    /// The command or call it is about, shortened.
    pub excerpt: String,
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (`{}`)", self.reason, self.excerpt)
    }
}

/// The risks of running `code` in `language` (a canonical name: `shell`,
/// `python`, `javascript` …); empty when nothing needs asking.
pub fn assess(language: &str, code: &str, ctx: &RiskContext) -> Vec<Risk> {
    let mut risks = Vec::new();
    match language {
        "shell" | "zsh" | "bash" | "sh" => shell_risks(code, ctx, 0, &mut risks),
        "python" => python_risks(code, ctx, &mut risks),
        _ => literal_commands(code, ctx, &mut risks),
    }
    dedupe(risks)
}

fn dedupe(risks: Vec<Risk>) -> Vec<Risk> {
    let mut out: Vec<Risk> = Vec::new();
    for risk in risks {
        if !out
            .iter()
            .any(|r| r.reason == risk.reason && r.excerpt == risk.excerpt)
        {
            out.push(risk);
        }
    }
    out
}

/// Where a path points, from the point of view of undoing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Inside the workspace (checkpoints cover it).
    Workspace,
    /// The workspace itself, or its `.git`.
    WorkspaceRoot,
    Temp,
    Outside,
    /// Depends on a variable or a computation.
    Unknown,
}

fn place(word: &Word, ctx: &RiskContext) -> Place {
    place_of(&word.text, word.expanded, ctx)
}

fn place_of(text: &str, expanded: bool, ctx: &RiskContext) -> Place {
    let mut text = text.trim().to_owned();
    if text.is_empty() {
        return Place::Unknown;
    }
    // Known variables first.
    if let Some(home) = &ctx.home {
        let home = home.display().to_string();
        for var in ["${HOME}", "$HOME"] {
            if let Some(rest) = text.strip_prefix(var) {
                text = format!("{home}{rest}");
            }
        }
        if text == "~" {
            text = home.clone();
        } else if let Some(rest) = text.strip_prefix("~/") {
            text = format!("{home}/{rest}");
        }
    }
    for var in ["${TMPDIR}", "$TMPDIR"] {
        if let Some(rest) = text.strip_prefix(var) {
            text = format!("/tmp{rest}");
        }
    }
    for var in ["$PWD", "${PWD}", "$(pwd)"] {
        if let Some(rest) = text.strip_prefix(var) {
            text = format!("{}{rest}", ctx.cwd.display());
        }
    }
    if text.starts_with('~') || text.contains('$') || text.contains('`') {
        return Place::Unknown;
    }
    // A glob: judge the folder it starts from; a pattern that is all
    // wildcards (`*`, `.*`) takes everything in it.
    let globbed = expanded && text.contains(['*', '?', '[']);
    let everything = globbed
        && text
            .rsplit('/')
            .next()
            .is_some_and(|last| last.chars().all(|c| matches!(c, '*' | '?' | '.')));
    let base = if globbed {
        let cut = text.find(['*', '?', '[']).unwrap_or(text.len());
        let prefix = &text[..cut];
        match prefix.rfind('/') {
            Some(i) => prefix[..=i].to_owned(),
            None => ".".to_owned(),
        }
    } else {
        text.clone()
    };
    let path = normalize(&ctx.cwd.join(&base));
    let workspace = normalize(&ctx.workspace);
    if path == workspace || path.starts_with(workspace.join(".git")) {
        // `rm -rf *` in the workspace root empties all of it.
        return if globbed && (path != workspace || !everything) {
            Place::Workspace
        } else {
            Place::WorkspaceRoot
        };
    }
    if path.starts_with(&workspace) {
        return Place::Workspace;
    }
    if ctx
        .temp_dirs
        .iter()
        .any(|t| path.starts_with(t) && path != *t)
    {
        return Place::Temp;
    }
    Place::Outside
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn excerpt(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 80 {
        let cut: String = one_line.chars().take(77).collect();
        format!("{cut}…")
    } else {
        one_line
    }
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

fn risk(reason: impl Into<String>, words: &[Word]) -> Risk {
    Risk {
        reason: reason.into(),
        excerpt: excerpt(&command_text(words)),
    }
}

// ── Shell ───────────────────────────────────────────────────────────────

fn shell_risks(code: &str, ctx: &RiskContext, depth: usize, risks: &mut Vec<Risk>) {
    if depth > 4 {
        return;
    }
    if code.contains(":(){") || code.contains(":() {") {
        risks.push(Risk {
            reason: "a fork bomb: it starts processes until the machine stalls".to_owned(),
            excerpt: excerpt(code),
        });
    }
    let script = shell::parse(code);
    let mut ctx = ctx.clone();
    let commands = &script.commands;
    for (i, command) in commands.iter().enumerate() {
        // A download piped into an interpreter.
        if is_download(&command.words) && command.piped_to_next {
            let mut j = i + 1;
            while let Some(next) = commands.get(j) {
                let inner = unwrap(&next.words);
                if inner.first().is_some_and(|w| is_interpreter(&w.text)) {
                    risks.push(risk(
                        "runs a script downloaded from the internet without showing it",
                        &command.words,
                    ));
                    break;
                }
                if !next.piped_to_next {
                    break;
                }
                j += 1;
            }
        }
        command_risks(command, &mut ctx, depth, risks);
    }
    for nested in &script.nested {
        // `sh -c "$(curl …)"` and `bash <(curl …)`: the download is run.
        let nested_script = shell::parse(nested);
        if nested_script.commands.iter().any(|c| is_download(&c.words))
            && commands.iter().any(|c| {
                unwrap(&c.words)
                    .first()
                    .is_some_and(|w| is_interpreter(&w.text) || w.text == "eval")
            })
        {
            risks.push(Risk {
                reason: "runs a script downloaded from the internet without showing it".to_owned(),
                excerpt: excerpt(nested),
            });
        }
        shell_risks(nested, &ctx, depth + 1, risks);
    }
}

fn is_download(words: &[Word]) -> bool {
    let words = unwrap(words);
    words
        .first()
        .is_some_and(|w| matches!(basename(&w.text), "curl" | "wget" | "fetch" | "aria2c"))
}

fn is_interpreter(name: &str) -> bool {
    let name = basename(name);
    matches!(
        name,
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "fish"
            | "python"
            | "python3"
            | "perl"
            | "ruby"
            | "node"
            | "php"
    ) || name.starts_with("python3.")
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
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
            "xargs" => skip_options(rest, &["-I", "-n", "-P", "-d", "-L", "-s", "-E"]),
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

/// The non-option arguments (after `--`, everything).
fn operands(words: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut options_done = false;
    for w in words.iter().skip(1) {
        if !options_done && w.text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && w.text.starts_with('-') && w.text.len() > 1 {
            continue;
        }
        out.push(w);
    }
    out
}

const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    "config.fish",
    "authorized_keys",
    "/etc/profile",
    "/etc/environment",
    "/etc/bash.bashrc",
    "/etc/crontab",
    "/etc/sudoers",
];

fn is_startup_file(path: &str) -> bool {
    let name = basename(path);
    STARTUP_FILES.iter().any(|f| {
        if f.starts_with('/') {
            path == *f
        } else {
            name == *f
        }
    })
}

fn is_disk_device(path: &str) -> bool {
    let devices = [
        "/dev/sd",
        "/dev/hd",
        "/dev/vd",
        "/dev/xvd",
        "/dev/nvme",
        "/dev/mmcblk",
        "/dev/disk",
        "/dev/mapper/",
        "/dev/md",
        "/dev/loop",
    ];
    devices.iter().any(|d| path.starts_with(d))
}

fn command_risks(
    command: &SimpleCommand,
    ctx: &mut RiskContext,
    depth: usize,
    risks: &mut Vec<Risk>,
) {
    let all = &command.words;
    // Writes through redirections.
    for redirect in &command.redirects {
        if !redirect.writes() {
            continue;
        }
        let target = &redirect.target.text;
        if is_startup_file(target) {
            risks.push(risk(
                format!("changes {target}, a file run at every login or shell start"),
                all,
            ));
        } else if is_disk_device(target) {
            risks.push(risk(
                format!("writes straight to the disk device {target}"),
                all,
            ));
        } else if matches!(place(&redirect.target, ctx), Place::Outside)
            && !target.starts_with("/dev/")
            && !target.starts_with("/proc/self/")
        {
            risks.push(risk(format!("writes {target}, outside the workspace"), all));
        }
    }
    let words = unwrap(all);
    let wrapped_in_sudo = all.len() != words.len()
        && all
            .iter()
            .take(all.len() - words.len())
            .any(|w| matches!(basename(&w.text), "sudo" | "doas"));
    if wrapped_in_sudo {
        risks.push(risk("runs as root (sudo)", all));
    }
    let Some(first) = words.first() else {
        return;
    };
    let name = basename(&first.text);
    let args: Vec<&str> = words.iter().skip(1).map(|w| w.text.as_str()).collect();
    match name {
        "cd" | "pushd" => {
            if let Some(target) = words.get(1) {
                if !target.expanded
                    || target.text.starts_with('~')
                    || target.text.starts_with("$HOME")
                {
                    let text = place_text(&target.text, ctx);
                    if let Some(text) = text {
                        ctx.cwd = normalize(&ctx.cwd.join(text));
                    }
                }
            } else if let Some(home) = &ctx.home {
                ctx.cwd = home.clone();
            }
        }
        "su" | "pkexec" | "runuser" => risks.push(risk("runs as another user (root)", all)),
        "sudo" | "doas" if !wrapped_in_sudo => risks.push(risk("runs as root (sudo)", all)),
        "rm" | "unlink" | "rmdir" | "shred" | "srm" => {
            let recursive = has_flag(words, 'r', &["recursive"]) || has_flag(words, 'R', &[]);
            let force = has_flag(words, 'f', &["force"]);
            let targets = operands(words);
            if name == "shred" || name == "srm" {
                risks.push(risk("destroys file contents beyond recovery (shred)", all));
                return;
            }
            if targets.is_empty() && (name == "rm") && words.len() > 1 {
                // Targets from xargs or a glob that expanded to options.
                risks.push(risk("deletes files it does not name", all));
            }
            for target in targets {
                match place(target, ctx) {
                    Place::Outside => {
                        risks.push(risk("deletes files outside the workspace", all));
                        break;
                    }
                    Place::WorkspaceRoot => {
                        risks.push(risk("deletes the whole workspace or its .git history", all));
                        break;
                    }
                    Place::Unknown if recursive || force => {
                        risks.push(risk(
                            "deletes files whose location depends on a variable",
                            all,
                        ));
                        break;
                    }
                    _ => {}
                }
            }
        }
        "find" => {
            let deletes = args.contains(&"-delete")
                || args.windows(2).any(|w| {
                    matches!(w[0], "-exec" | "-execdir" | "-ok")
                        && matches!(basename(w[1]), "rm" | "shred" | "unlink")
                });
            if deletes {
                let roots: Vec<&Word> = words
                    .iter()
                    .skip(1)
                    .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
                    .collect();
                let places: Vec<Place> = if roots.is_empty() {
                    vec![place_of(".", false, ctx)]
                } else {
                    roots.iter().map(|w| place(w, ctx)).collect()
                };
                if places
                    .iter()
                    .any(|p| matches!(p, Place::Outside | Place::Unknown))
                {
                    risks.push(risk("deletes files outside the workspace (find)", all));
                } else if places.contains(&Place::WorkspaceRoot)
                    && !args.iter().any(|a| {
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
                    })
                {
                    risks.push(risk("deletes everything in the workspace (find)", all));
                }
            }
        }
        "mkfs" | "mke2fs" | "mkswap" | "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "sgdisk"
        | "parted" | "wipefs" | "badblocks" | "cryptsetup" | "hdparm" | "blkdiscard" | "zpool"
        | "lvremove" | "vgremove" | "pvremove" => {
            risks.push(risk("changes disks or file systems", all));
        }
        _ if name.starts_with("mkfs.") => risks.push(risk("formats a file system", all)),
        "dd" => {
            if let Some(target) = args.iter().find_map(|a| a.strip_prefix("of=")) {
                let word = Word {
                    text: target.to_owned(),
                    expanded: false,
                };
                if is_disk_device(target)
                    || place(&word, ctx) == Place::Outside && !target.starts_with("/dev/null")
                {
                    risks.push(risk(
                        "writes raw data over a device or file outside the workspace (dd)",
                        all,
                    ));
                }
            }
        }
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" => {
            let recursive = has_flag(words, 'R', &["recursive"]);
            let targets = operands(words);
            // The first operand of chmod/chown is the mode/owner.
            let paths = targets
                .iter()
                .skip(usize::from(name != "setfacl" && name != "chattr"));
            let outside = paths
                .map(|w| place(w, ctx))
                .any(|p| matches!(p, Place::Outside | Place::Unknown | Place::WorkspaceRoot));
            if recursive && outside {
                risks.push(risk(
                    format!("changes permissions or owners recursively ({name} -R)"),
                    all,
                ));
            } else if outside
                && targets.iter().skip(1).any(|w| {
                    w.text == "/"
                        || w.text.starts_with("/etc")
                        || w.text.starts_with("/usr")
                        || w.text.starts_with("/bin")
                })
            {
                risks.push(risk(
                    format!("changes permissions of system files ({name})"),
                    all,
                ));
            }
        }
        "git" => git_risks(words, all, risks),
        "kill" | "killall" | "pkill" | "xkill" | "killall5" | "skill" => {
            risks.push(risk("stops running processes", all));
        }
        "shutdown" | "reboot" | "poweroff" | "halt" => {
            risks.push(risk("shuts down or restarts the machine", all))
        }
        "init" | "telinit" if args.first().is_some_and(|a| matches!(*a, "0" | "6")) => {
            risks.push(risk("shuts down or restarts the machine", all));
        }
        "systemctl" | "service" => {
            let verbs = [
                "stop", "disable", "mask", "kill", "reboot", "poweroff", "halt", "isolate",
                "restart",
            ];
            if args.iter().any(|a| verbs.contains(a)) {
                risks.push(risk("stops or changes system services", all));
            }
        }
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "apk" | "snap" | "flatpak" => {
            let verbs = ["remove", "purge", "autoremove", "erase", "del", "uninstall"];
            if args.iter().any(|a| verbs.contains(a)) {
                risks.push(risk("removes system packages", all));
            }
        }
        "pacman" if args.iter().any(|a| a.starts_with("-R")) => {
            risks.push(risk("removes system packages", all));
        }
        "dpkg" | "rpm"
            if args
                .iter()
                .any(|a| matches!(*a, "-r" | "-P" | "--remove" | "--purge" | "-e" | "--erase")) =>
        {
            risks.push(risk("removes system packages", all));
        }
        "pip" | "pip3" | "conda" | "mamba" | "brew" | "gem" | "cargo" | "pipx"
            if args.iter().any(|a| matches!(*a, "uninstall" | "remove")) =>
        {
            risks.push(risk(format!("removes installed packages ({name})"), all));
        }
        "npm" | "pnpm" | "yarn" => {
            let removes = args
                .iter()
                .any(|a| matches!(*a, "uninstall" | "remove" | "rm" | "un" | "r"));
            let global = args
                .iter()
                .any(|a| matches!(*a, "-g" | "--global" | "global"));
            if removes && global {
                risks.push(risk(
                    format!("removes globally installed packages ({name})"),
                    all,
                ));
            }
        }
        "crontab"
            if args.iter().any(|a| matches!(*a, "-r" | "-e"))
                || (!operands(words).is_empty() && !args.contains(&"-l")) =>
        {
            risks.push(risk("changes scheduled jobs (crontab)", all));
        }
        "tee" | "cp" | "mv" | "install" | "rsync" | "ln" | "truncate" | "sed" | "perl" => {
            let mut written: Vec<&Word> = match name {
                "tee" | "truncate" => operands(words),
                "sed" | "perl"
                    if has_flag(words, 'i', &["in-place"])
                        || args
                            .iter()
                            .any(|a| a.starts_with("-i") || a.starts_with("--in-place")) =>
                {
                    operands(words).into_iter().skip(1).collect()
                }
                "sed" | "perl" => Vec::new(),
                _ => operands(words).last().copied().into_iter().collect(),
            };
            if name == "mv" || name == "rsync" && args.contains(&"--remove-source-files") {
                // Moving removes the sources.
                written.extend(operands(words));
            }
            if name == "rsync" && args.iter().any(|a| a.starts_with("--delete")) {
                written.extend(operands(words).last().copied());
            }
            for target in written {
                if is_startup_file(&target.text) {
                    risks.push(risk(
                        format!(
                            "changes {}, a file run at every login or shell start",
                            target.text
                        ),
                        all,
                    ));
                    break;
                }
                if matches!(place(target, ctx), Place::Outside) && !target.text.starts_with("/dev/")
                {
                    risks.push(risk(
                        format!("changes files outside the workspace ({name})"),
                        all,
                    ));
                    break;
                }
                if matches!(place(target, ctx), Place::WorkspaceRoot)
                    && (name == "mv" || name == "rsync")
                {
                    risks.push(risk("moves the workspace or its .git history", all));
                    break;
                }
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
                risks.push(risk(
                    format!("deletes containers, images or volumes ({name})"),
                    all,
                ));
            }
        }
        "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd" => {
            risks.push(risk("changes the firewall", all));
        }
        "passwd" | "chpasswd" | "usermod" | "userdel" | "useradd" | "groupdel" | "visudo" => {
            risks.push(risk("changes user accounts", all));
        }
        "mount" | "umount" | "swapoff" => risks.push(risk("changes mounted file systems", all)),
        "history" if args.contains(&"-c") => risks.push(risk("erases the shell history", all)),
        "eval" => {
            // eval joins its words and runs them as shell code.
            let inner = words[1..]
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            shell_risks(&inner, ctx, depth + 1, risks);
        }
        _ if is_interpreter(name) => {
            // `bash -c "…"`, `python3 -c "…"`.
            if let Some(i) = args.iter().position(|a| *a == "-c") {
                if let Some(inner) = args.get(i + 1) {
                    if basename(name).starts_with("python") {
                        python_risks(inner, ctx, risks);
                    } else if matches!(basename(name), "sh" | "bash" | "zsh" | "dash" | "ksh") {
                        shell_risks(inner, ctx, depth + 1, risks);
                    } else {
                        literal_commands(inner, ctx, risks);
                    }
                }
            } else if matches!(basename(name), "perl" | "ruby" | "node")
                && let Some(i) = args.iter().position(|a| *a == "-e")
                && let Some(inner) = args.get(i + 1)
            {
                literal_commands(inner, ctx, risks);
            }
        }
        _ => {}
    }
}

/// The text of a `cd` target with `~`/`$HOME` expanded, if known.
fn place_text(text: &str, ctx: &RiskContext) -> Option<String> {
    if let Some(home) = &ctx.home {
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
    (!text.contains('$')).then(|| text.to_owned())
}

fn git_risks(words: &[Word], all: &[Word], risks: &mut Vec<Risk>) {
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
    match sub {
        "push"
            if has(&["--mirror", "--delete", "--prune"])
                || rest.iter().any(|a| a.starts_with("--force"))
                || short('f')
                || short('d')
                || rest
                    .iter()
                    .any(|a| a.starts_with('+') || a.starts_with(':')) =>
        {
            risks.push(risk(
                "rewrites or deletes history on a remote (git push --force)",
                all,
            ));
        }
        "reset" if has(&["--hard", "--merge", "--keep"]) => {
            risks.push(risk(
                "throws away uncommitted changes (git reset --hard)",
                all,
            ));
        }
        "clean" if short('f') || has(&["--force"]) => {
            risks.push(risk("deletes untracked files (git clean)", all));
        }
        "checkout" | "restore"
            if rest.iter().any(|a| matches!(*a, "." | "--" | ":/")) && !has(&["--staged"])
                || sub == "checkout" && short('f') =>
        {
            risks.push(risk("throws away uncommitted changes", all));
        }
        "branch" if short('D') || (short('d') && has(&["--force"])) => {
            risks.push(risk("deletes a branch that may not be merged", all));
        }
        "stash" if rest.first().is_some_and(|a| matches!(*a, "drop" | "clear")) => {
            risks.push(risk("deletes stashed changes", all));
        }
        "filter-branch" | "filter-repo" => {
            risks.push(risk("rewrites the repository's history", all))
        }
        "rebase" | "commit" if has(&["--amend"]) && sub == "commit" => {}
        "update-ref" if short('d') => risks.push(risk("deletes a reference", all)),
        "reflog"
            if rest
                .first()
                .is_some_and(|a| matches!(*a, "expire" | "delete")) =>
        {
            risks.push(risk("deletes the history of references", all));
        }
        "gc" if has(&["--prune=now", "--aggressive"])
            || rest.iter().any(|a| a.starts_with("--prune")) =>
        {
            risks.push(risk("prunes unreachable commits for good", all));
        }
        _ => {}
    }
}

// ── Python ──────────────────────────────────────────────────────────────

/// Python calls that delete their first argument.
const PY_DELETES: &[&str] = &[
    "shutil.rmtree",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "rmtree",
    "send2trash",
];

/// Python calls that run a shell command (a string, or a list of words).
const PY_RUNS: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "sp.run",
    "sp.call",
    "sp.check_call",
    "sp.check_output",
    "sp.Popen",
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
];

fn python_risks(code: &str, ctx: &RiskContext, risks: &mut Vec<Risk>) {
    let strings = PyStrings::new(code);
    let imported_from_subprocess = code.contains("from subprocess import");
    for call in find_calls(code) {
        let bare = !call.name.contains('.');
        if PY_RUNS.contains(&call.name.as_str()) && (!bare || imported_from_subprocess) {
            if let Some(command) = call.command(&strings) {
                shell_risks(&command, ctx, 1, risks);
            } else {
                // A command built at run time: judge any literal pieces.
                for literal in call.literals(&strings) {
                    shell_risks(&literal, ctx, 1, risks);
                }
            }
            continue;
        }
        let deletes = PY_DELETES.contains(&call.name.as_str())
            || (bare
                && matches!(call.name.as_str(), "remove" | "unlink" | "rmdir")
                && code.contains("from os import"))
            || call.name.ends_with(".unlink") && !call.name.starts_with("os.")
            || call.name.ends_with(".rmdir") && !call.name.starts_with("os.");
        if deletes {
            // `Path(p).unlink()`: the path is the receiver's argument.
            let target = if call.name.starts_with("x.") {
                call.receiver_path(&strings)
            } else {
                call.first_path(&strings)
            };
            let excerpt_text = excerpt(&call.text);
            let place = match target {
                Some(text) => place_of(&text, false, ctx),
                None => Place::Unknown,
            };
            let reason = match place {
                Place::Outside => Some("deletes files outside the workspace"),
                Place::WorkspaceRoot => Some("deletes the whole workspace or its .git history"),
                Place::Unknown if call.name.contains("rmtree") => {
                    Some("deletes a folder whose path is computed when it runs")
                }
                _ => None,
            };
            if let Some(reason) = reason {
                risks.push(Risk {
                    reason: reason.to_owned(),
                    excerpt: excerpt_text,
                });
            }
            continue;
        }
        match call.name.as_str() {
            "os.kill" | "os.killpg" => risks.push(Risk {
                reason: "stops running processes".to_owned(),
                excerpt: excerpt(&call.text),
            }),
            name if (name.ends_with(".kill") || name.ends_with(".terminate"))
                && code.contains("psutil") =>
            {
                risks.push(Risk {
                    reason: "stops running processes".to_owned(),
                    excerpt: excerpt(&call.text),
                });
            }
            "open" => {
                // Appending to or replacing a startup file.
                let writes = call
                    .literals(&strings)
                    .iter()
                    .skip(1)
                    .any(|m| m.contains('w') || m.contains('a'));
                if writes
                    && let Some(path) = call.first_path(&strings)
                    && is_startup_file(&path)
                {
                    risks.push(Risk {
                        reason: format!("changes {path}, a file run at every login or shell start"),
                        excerpt: excerpt(&call.text),
                    });
                }
            }
            _ => {}
        }
    }
    // Startup files named anywhere with a write.
    if (code.contains("'a'")
        || code.contains("\"a\"")
        || code.contains("'w'")
        || code.contains("\"w\"")
        || code.contains("write_text")
        || code.contains("write("))
        && STARTUP_FILES.iter().any(|f| {
            !f.starts_with('/')
                && (code.contains(&format!("~/{f}"))
                    || code.contains(&format!("/{f}'"))
                    || code.contains(&format!("/{f}\""))
                    || code.contains(&format!("'{f}'"))
                    || code.contains(&format!("\"{f}\"")))
        })
        && !risks.iter().any(|r| r.reason.contains("login"))
    {
        risks.push(Risk {
            reason: "changes a file run at every login or shell start".to_owned(),
            excerpt: excerpt(
                code.lines()
                    .find(|l| STARTUP_FILES.iter().any(|f| l.contains(f)))
                    .unwrap_or(code),
            ),
        });
    }
    // `!cmd` notebook lines run in the shell.
    for line in code.lines() {
        if let Some(command) = line.trim_start().strip_prefix('!') {
            shell_risks(command, ctx, 1, risks);
        }
    }
}

/// The string literals of Python code, by position, and simple variables
/// assigned a literal (`target = "/tmp/x"`).
struct PyStrings {
    assignments: Vec<(String, String)>,
}

impl PyStrings {
    fn new(code: &str) -> Self {
        let mut assignments = Vec::new();
        for line in code.lines() {
            let line = line.trim();
            if let Some((name, value)) = line.split_once('=') {
                let name = name.trim();
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !name.is_empty()
                    && let Some(value) = string_literal(value.trim())
                {
                    assignments.push((name.to_owned(), value));
                }
            }
        }
        Self { assignments }
    }

    /// The value of an argument: a literal, a variable holding one, or a
    /// `Path(…)`/`os.path.expanduser(…)`/`os.path.join(…)` of those.
    fn value(&self, arg: &str) -> Option<String> {
        let arg = arg.trim();
        if let Some(s) = string_literal(arg) {
            return Some(s);
        }
        for wrapper in [
            "Path(",
            "pathlib.Path(",
            "os.path.expanduser(",
            "os.path.abspath(",
            "str(",
        ] {
            if let Some(inner) = arg.strip_prefix(wrapper).and_then(|r| r.strip_suffix(')')) {
                return self.value(inner);
            }
        }
        if let Some(inner) = arg
            .strip_prefix("os.path.join(")
            .and_then(|r| r.strip_suffix(')'))
        {
            let parts: Option<Vec<String>> =
                split_args(inner).iter().map(|p| self.value(p)).collect();
            return parts.map(|p| p.join("/"));
        }
        if arg == "os.getcwd()" || arg == "'.'" {
            return Some(".".to_owned());
        }
        if let Some(home) = arg.strip_prefix("Path.home()") {
            let rest = home.trim_start_matches(" / ").trim();
            return Some(match string_literal(rest) {
                Some(r) => format!("~/{r}"),
                None => "~".to_owned(),
            });
        }
        self.assignments
            .iter()
            .rev()
            .find(|(name, _)| name == arg)
            .map(|(_, v)| v.clone())
    }
}

/// A Python string literal's value (`'x'`, `"x"`, `r'x'`, `f"x"` without
/// placeholders); `None` for anything else.
fn string_literal(text: &str) -> Option<String> {
    let text = text.trim().trim_end_matches([',', ';']);
    let body = text.trim_start_matches(['r', 'R', 'b', 'B', 'u', 'U']);
    let (is_f, body) = match body.strip_prefix(['f', 'F']) {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    for quote in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = body.strip_prefix(quote).and_then(|r| r.strip_suffix(quote)) {
            if inner.contains(quote) || is_f && inner.contains('{') {
                return None;
            }
            return Some(inner.to_owned());
        }
    }
    None
}

struct Call {
    name: String,
    /// The text between the parentheses.
    args: String,
    /// The whole call, for the excerpt.
    text: String,
    /// For `Path("x").unlink()`: the text before `.unlink`.
    receiver: String,
}

impl Call {
    fn first_path(&self, strings: &PyStrings) -> Option<String> {
        split_args(&self.args)
            .first()
            .and_then(|a| strings.value(a))
    }

    fn receiver_path(&self, strings: &PyStrings) -> Option<String> {
        strings.value(&self.receiver)
    }

    fn literals(&self, _strings: &PyStrings) -> Vec<String> {
        split_args(&self.args)
            .iter()
            .filter_map(|a| string_literal(a))
            .collect()
    }

    /// The shell command of a `subprocess`/`os.system` call, when it is
    /// written out: a string, or a list of strings.
    fn command(&self, strings: &PyStrings) -> Option<String> {
        let args = split_args(&self.args);
        let first = args.first()?.trim();
        if let Some(list) = first.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let words: Option<Vec<String>> =
                split_args(list).iter().map(|w| strings.value(w)).collect();
            return words.map(|w| {
                w.iter()
                    .map(|w| {
                        if w.is_empty()
                            || w.contains(|c: char| {
                                c.is_whitespace() || "'\"$;&|<>()`*?".contains(c)
                            })
                        {
                            format!("'{}'", w.replace('\'', "'\\''"))
                        } else {
                            w.clone()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        }
        strings.value(first)
    }
}

/// Splits call arguments at top-level commas (strings and brackets kept).
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut chars = args.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        current.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    current.push(c);
                }
                '(' | '[' | '{' => {
                    depth += 1;
                    current.push(c);
                }
                ')' | ']' | '}' => {
                    depth -= 1;
                    current.push(c);
                }
                ',' if depth == 0 => {
                    out.push(current.trim().to_owned());
                    current.clear();
                }
                _ => current.push(c),
            },
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// Calls `name(args)` in Python code, outside string literals and comments.
fn find_calls(code: &str) -> Vec<Call> {
    let chars: Vec<char> = code.chars().collect();
    let mut calls = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Skip strings and comments.
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '\'' || c == '"' {
            let triple = i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c;
            i += if triple { 3 } else { 1 };
            while i < chars.len() {
                if chars[i] == '\\' {
                    i += 2;
                    continue;
                }
                if chars[i] == c
                    && (!triple || (i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c))
                {
                    i += if triple { 3 } else { 1 };
                    break;
                }
                i += 1;
            }
            continue;
        }
        if c == '(' {
            // The dotted name before the parenthesis.
            let mut start = i;
            while start > 0
                && (chars[start - 1].is_alphanumeric()
                    || chars[start - 1] == '_'
                    || chars[start - 1] == '.')
            {
                start -= 1;
            }
            let name: String = chars[start..i].iter().collect();
            let name = name.trim_start_matches('.').to_owned();
            // The receiver of `Path("x").unlink()`: a call before the dot.
            let mut receiver = String::new();
            if start > 0 && chars[start - 1] == ')' || name.starts_with('.') {
                let mut depth = 0;
                let mut j = start;
                while j > 0 {
                    j -= 1;
                    match chars[j] {
                        ')' => depth += 1,
                        '(' => {
                            depth -= 1;
                            if depth == 0 {
                                let mut k = j;
                                while k > 0
                                    && (chars[k - 1].is_alphanumeric()
                                        || chars[k - 1] == '_'
                                        || chars[k - 1] == '.')
                                {
                                    k -= 1;
                                }
                                receiver = chars[k..start].iter().collect();
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            // The arguments, up to the matching parenthesis.
            let mut depth = 1;
            let mut j = i + 1;
            let mut quote: Option<char> = None;
            while j < chars.len() && depth > 0 {
                let d = chars[j];
                match quote {
                    Some(q) => {
                        if d == '\\' {
                            j += 1;
                        } else if d == q {
                            quote = None;
                        }
                    }
                    None => match d {
                        '\'' | '"' => quote = Some(d),
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    },
                }
                j += 1;
            }
            let args: String = chars[i + 1..j.saturating_sub(1).max(i + 1)]
                .iter()
                .collect();
            let text: String = chars[start..j.min(chars.len())].iter().collect();
            // A method of a call's result is named `x.method`.
            let name = if receiver.is_empty() || name.is_empty() {
                name
            } else {
                format!("x.{}", name.rsplit('.').next().unwrap_or(&name))
            };
            if !name.is_empty() {
                calls.push(Call {
                    name,
                    args,
                    text,
                    receiver,
                });
            }
        }
        i += 1;
    }
    calls
}

// ── Other languages ─────────────────────────────────────────────────────

/// For languages without their own rules: string literals that read like
/// shell commands (`execSync("rm -rf ~")`, `system("sudo …")`) are judged
/// as shell code.
fn literal_commands(code: &str, ctx: &RiskContext, risks: &mut Vec<Risk>) {
    for literal in quoted_strings(code) {
        let first = literal.split_whitespace().next().unwrap_or("");
        let interesting = [
            "rm",
            "sudo",
            "su",
            "dd",
            "mkfs",
            "git",
            "kill",
            "killall",
            "pkill",
            "chmod",
            "chown",
            "shutdown",
            "reboot",
            "curl",
            "wget",
            "find",
            "apt",
            "apt-get",
            "pip",
            "npm",
            "crontab",
            "systemctl",
            "shred",
            "doas",
        ];
        if interesting.contains(&basename(first)) || first.starts_with("mkfs") {
            shell_risks(&literal, ctx, 1, risks);
        }
    }
    // Ruby/Perl backticks and Node's fs deletions with a literal path.
    for (call, recursive_only) in [
        ("rmSync(", true),
        ("rmdirSync(", false),
        ("unlinkSync(", false),
        ("rm_rf(", false),
        ("rmtree(", false),
        ("FileUtils.rm_r(", false),
    ] {
        let mut rest = code;
        while let Some(start) = rest.find(call) {
            let after = &rest[start + call.len()..];
            let end = after.find(')').unwrap_or(after.len());
            let args = &after[..end];
            let first = split_args(args).first().and_then(|a| string_literal(a));
            if !recursive_only || args.contains("recursive") {
                let place = first
                    .as_deref()
                    .map_or(Place::Unknown, |p| place_of(p, false, ctx));
                if matches!(
                    place,
                    Place::Outside | Place::WorkspaceRoot | Place::Unknown
                ) {
                    risks.push(Risk {
                        reason: "deletes files outside the workspace".to_owned(),
                        excerpt: excerpt(&format!("{call}{args})")),
                    });
                }
            }
            rest = &after[end.min(after.len())..];
        }
    }
}

/// The contents of '…', "…" and `…` literals.
fn quoted_strings(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' || c == '`' {
            let mut value = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                value.push(chars[i]);
                i += 1;
            }
            out.push(value);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RiskContext {
        RiskContext {
            workspace: PathBuf::from("/home/u/project"),
            cwd: PathBuf::from("/home/u/project"),
            home: Some(PathBuf::from("/home/u")),
            temp_dirs: vec![PathBuf::from("/tmp")],
        }
    }

    fn reasons(language: &str, code: &str) -> Vec<String> {
        assess(language, code, &ctx())
            .into_iter()
            .map(|r| r.reason)
            .collect()
    }

    #[test]
    fn paths_are_placed_relative_to_the_working_directory() {
        let c = ctx();
        let w = |t: &str| Word {
            text: t.into(),
            expanded: t.contains(['*', '$']),
        };
        assert_eq!(place(&w("build"), &c), Place::Workspace);
        assert_eq!(place(&w("./build/x"), &c), Place::Workspace);
        assert_eq!(place(&w("."), &c), Place::WorkspaceRoot);
        assert_eq!(place(&w(".git"), &c), Place::WorkspaceRoot);
        assert_eq!(place(&w("*"), &c), Place::WorkspaceRoot);
        assert_eq!(place(&w("build/*"), &c), Place::Workspace);
        assert_eq!(place(&w("../other"), &c), Place::Outside);
        assert_eq!(place(&w("~/old"), &c), Place::Outside);
        assert_eq!(place(&w("$HOME/project/x"), &c), Place::Workspace);
        assert_eq!(place(&w("/tmp/x"), &c), Place::Temp);
        assert_eq!(place(&w("/tmp"), &c), Place::Outside);
        assert_eq!(place(&w("$DIR/x"), &c), Place::Unknown);
    }

    #[test]
    fn wrappers_are_seen_through() {
        assert!(
            reasons("shell", "sudo rm -rf /var/lib/x").contains(&"runs as root (sudo)".to_owned())
        );
        assert!(
            reasons("shell", "sudo rm -rf /var/lib/x")
                .contains(&"deletes files outside the workspace".to_owned())
        );
        assert_eq!(
            reasons("shell", "env FOO=1 nohup rm -rf ~/x"),
            ["deletes files outside the workspace"]
        );
        assert_eq!(
            reasons("shell", "bash -c 'rm -rf ~/x'"),
            ["deletes files outside the workspace"]
        );
        assert_eq!(
            reasons("shell", "echo $(rm -rf ~/x)"),
            ["deletes files outside the workspace"]
        );
        assert_eq!(
            reasons("shell", "cd / && rm -rf tmpdata"),
            ["deletes files outside the workspace"]
        );
    }

    #[test]
    fn python_commands_and_deletions_are_read() {
        assert_eq!(
            reasons("python", "import shutil\nshutil.rmtree('/home/u/old')"),
            ["deletes files outside the workspace"]
        );
        assert!(reasons("python", "import shutil\nshutil.rmtree('build')").is_empty());
        assert_eq!(
            reasons(
                "python",
                "import subprocess\nsubprocess.run(['git', 'push', '--force'])"
            ),
            ["rewrites or deletes history on a remote (git push --force)"]
        );
        assert_eq!(
            reasons("python", "import os\nos.system('sudo reboot')").len(),
            2
        );
        assert!(reasons("python", "print('rm -rf / is a bad idea')").is_empty());
        let p = "from pathlib import Path\np = Path.home() / '.bashrc'\nwith open(p, 'a') as f:\n    f.write('alias x=y')";
        assert!(!reasons("python", p).is_empty());
    }
}
