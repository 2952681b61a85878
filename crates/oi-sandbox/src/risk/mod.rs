//! Recognising risky code before it runs.
//!
//! Some actions deserve a person's yes even when runs are approved
//! automatically: deleting outside the workspace, `sudo`, disk tools,
//! rewriting history, killing processes, removing packages, editing shell
//! startup files, piping a download into a shell. [`assess`] reads shell
//! code as a shell would (`shell_rules.rs`), Python as Python
//! (`python.rs`), and the other languages by their own calls that run
//! commands, delete, kill or change permissions (`other.rs`); the rules
//! for single shell commands are in `shell_commands.rs` and `git.rs`.
//!
//! A reader of code cannot see everything, so what it cannot tell is a
//! reason to ask too: a command whose name is computed, code built at run
//! time and handed to a shell or `eval`, a module or function looked up by a
//! built name, a deletion whose target is only known when it runs. Each
//! finding names the rule that made it ([`Risk::rule`]); the labelled
//! corpus (`tests/risk_corpus.toml`) says which rule must catch each case.

mod expr;
mod git;
mod other;
mod python;
mod shell_commands;
mod shell_rules;

use std::path::{Component, Path, PathBuf};

/// Where code runs, for judging the paths it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RiskContext {
    /// The workspace (changes inside it can be undone).
    pub workspace: PathBuf,
    /// The kernel's working directory (relative paths start here).
    pub cwd: PathBuf,
    /// The user's home folder (`~`, `$HOME`).
    pub home: Option<PathBuf>,
    /// Temporary folders (deleting in them is harmless), except what lies
    /// in the home folder, the workspace or a protected folder.
    pub temp_dirs: Vec<PathBuf>,
    /// Folders that must never be changed (oi's own folder): anything in
    /// them counts as outside the workspace wherever they are.
    pub protected: Vec<PathBuf>,
}

impl RiskContext {
    /// A context for `workspace`, with the working directory there, the
    /// user's home from `$HOME` and the system's temporary folders (`/tmp`
    /// and `$TMPDIR`; not `/var/tmp`, which survives reboots, nor
    /// `/dev/shm`).
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        let mut temp_dirs = vec![PathBuf::from("/tmp")];
        let system_temp = std::env::temp_dir();
        if !temp_dirs.contains(&system_temp) {
            temp_dirs.push(system_temp);
        }
        Self {
            cwd: workspace.clone(),
            workspace,
            home: std::env::var_os("HOME").map(PathBuf::from),
            temp_dirs,
            protected: Vec::new(),
        }
    }
}

/// One reason to ask before running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    /// The rule that found it, a stable name (`delete-outside`,
    /// `generated-code` …; the list is in `docs/safety.md`).
    pub rule: &'static str,
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

/// The rules, with what each one finds (for documentation and tests).
pub const RULES: &[(&str, &str)] = &[
    (
        "delete-outside",
        "deletes files outside the workspace and the temporary folder",
    ),
    (
        "delete-workspace",
        "deletes the whole workspace, a folder holding it, or its .git",
    ),
    (
        "delete-unknown",
        "deletes files whose location is only known when the code runs",
    ),
    (
        "write-outside",
        "writes or moves files outside the workspace",
    ),
    (
        "startup-file",
        "changes a file run at every login or shell start",
    ),
    (
        "permissions",
        "changes permissions, owners or times outside the workspace, or of all of it",
    ),
    ("root", "runs as root or as another user"),
    ("disk", "changes disks, file systems or raw devices"),
    (
        "history",
        "rewrites git history or throws away uncommitted work",
    ),
    ("kill", "stops running processes"),
    ("shutdown", "shuts down or restarts the machine"),
    ("services", "stops or changes system services"),
    ("packages", "removes installed packages"),
    (
        "download-exec",
        "runs a script downloaded from the internet",
    ),
    (
        "generated-code",
        "runs code it builds while running (decoded, piped into a shell, eval, exec)",
    ),
    (
        "dynamic-command",
        "runs a command, function or module whose name is computed when it runs",
    ),
    (
        "fork-bomb",
        "starts processes without end until the machine stalls",
    ),
    ("firewall", "changes the firewall"),
    ("accounts", "changes user accounts"),
    ("mounts", "changes mounted file systems"),
    ("containers", "deletes containers, images or volumes"),
    ("scheduled-jobs", "changes scheduled jobs"),
    ("shell-history", "erases the shell history"),
];

/// The risks of running `code` in `language` (a canonical name: `shell`,
/// `python`, `javascript` …); empty when nothing needs asking.
pub fn assess(language: &str, code: &str, ctx: &RiskContext) -> Vec<Risk> {
    let mut risks = Vec::new();
    let scope = Scope::new(ctx);
    match language {
        "shell" | "zsh" | "bash" | "sh" => shell_rules::risks(code, &scope, 0, &mut risks),
        "python" => python::risks(code, &scope, 0, &mut risks),
        other => other::risks(other, code, &scope, &mut risks),
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

/// What analysis knows while it reads one piece of code: the context, where
/// the code has `cd`-ed to, and the symbolic links it made.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub ctx: RiskContext,
    /// `ln -s TARGET LINK` seen so far: (link, target), both absolute.
    pub links: Vec<(PathBuf, PathBuf)>,
}

impl Scope {
    pub(crate) fn new(ctx: &RiskContext) -> Self {
        Self {
            ctx: ctx.clone(),
            links: Vec::new(),
        }
    }
}

/// A placeholder for a part of a value only known when the code runs (a
/// variable, a call's result): it reads as an unset shell variable.
pub(crate) const DYNAMIC: &str = "$__oi_dynamic";

/// Where a path points, from the point of view of undoing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Inside the workspace (checkpoints cover it).
    Workspace,
    /// The workspace itself, a folder that holds it, or its `.git`.
    WorkspaceRoot,
    Temp,
    Outside,
    /// Depends on a variable or a computation.
    Unknown,
}

/// Where the path `text` points; `expanded` when the shell expands it
/// (globs count then).
pub(crate) fn place_of(text: &str, expanded: bool, scope: &Scope) -> Place {
    let ctx = &scope.ctx;
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
    let through = text.ends_with('/');
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
    let path = follow_links(&normalize(&ctx.cwd.join(&base)), through || globbed, scope);
    let workspace = real(&normalize(&ctx.workspace));
    let protected: Vec<PathBuf> = ctx.protected.iter().map(|p| real(&normalize(p))).collect();
    if protected.iter().any(|p| path.starts_with(p)) {
        return Place::Outside;
    }
    if path == workspace || path.starts_with(workspace.join(".git")) {
        // `rm -rf *` in the workspace root empties all of it.
        return if globbed && (path != workspace || !everything) {
            Place::Workspace
        } else {
            Place::WorkspaceRoot
        };
    }
    if workspace.starts_with(&path) {
        // A folder that holds the workspace.
        return Place::WorkspaceRoot;
    }
    if path.starts_with(&workspace) {
        return Place::Workspace;
    }
    if protected.iter().any(|p| p.starts_with(&path)) {
        return Place::Outside;
    }
    let in_temp = |t: &PathBuf| {
        let t = real(&normalize(t));
        path.starts_with(&t) && path != t
    };
    let home = ctx.home.as_ref().map(|h| real(&normalize(h)));
    if let Some(home) = &home
        && (path.starts_with(home) || home.starts_with(&path))
        // A temporary folder of its own inside the home folder still is one.
        && !ctx
            .temp_dirs
            .iter()
            .any(|t| in_temp(t) && real(&normalize(t)).starts_with(home))
    {
        return Place::Outside;
    }
    if ctx.temp_dirs.iter().any(in_temp) {
        return Place::Temp;
    }
    Place::Outside
}

/// `path` through the symbolic links the code made (`ln -s`) and those on
/// disk. The last component is followed only when `through` (a trailing
/// `/`, or a glob inside it): `rm -rf link` removes the link, `rm -rf
/// link/` what it points to.
fn follow_links(path: &Path, through: bool, scope: &Scope) -> PathBuf {
    let mut path = path.to_path_buf();
    for (link, target) in scope.links.iter().rev() {
        if path == *link && !through {
            return path;
        }
        if let Ok(rest) = path.strip_prefix(link) {
            path = normalize(&target.join(rest));
            break;
        }
    }
    if through {
        return real(&path);
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => real(parent).join(name),
        _ => real(&path),
    }
}

/// `path` with the symbolic links of its longest existing prefix resolved.
fn real(path: &Path) -> PathBuf {
    crate::policy::resolve(Path::new("/"), path)
}

pub(crate) fn normalize(path: &Path) -> PathBuf {
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

pub(crate) fn excerpt(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 80 {
        let cut: String = one_line.chars().take(77).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

pub(crate) fn risk(rule: &'static str, reason: impl Into<String>, text: &str) -> Risk {
    Risk {
        rule,
        reason: reason.into(),
        excerpt: excerpt(text),
    }
}

/// The finding for deleting what is at `place`, if it is worth asking.
pub(crate) fn deletion_risk(place: Place, text: &str) -> Option<Risk> {
    match place {
        Place::Outside => Some(risk(
            "delete-outside",
            "deletes files outside the workspace",
            text,
        )),
        Place::WorkspaceRoot => Some(risk(
            "delete-workspace",
            "deletes the whole workspace or its .git history",
            text,
        )),
        Place::Unknown => Some(risk(
            "delete-unknown",
            "deletes files whose location is only known when it runs",
            text,
        )),
        Place::Workspace | Place::Temp => None,
    }
}

/// Files run at every login or shell start.
pub(crate) const STARTUP_FILES: &[&str] = &[
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

pub(crate) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

pub(crate) fn is_startup_file(path: &str) -> bool {
    let name = basename(path.trim_end_matches('/'));
    STARTUP_FILES.iter().any(|f| {
        if f.starts_with('/') {
            path == *f
        } else {
            name == *f
        }
    })
}

pub(crate) fn is_disk_device(path: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn ctx() -> RiskContext {
        RiskContext {
            workspace: PathBuf::from("/home/u/project"),
            cwd: PathBuf::from("/home/u/project"),
            home: Some(PathBuf::from("/home/u")),
            temp_dirs: vec![PathBuf::from("/tmp")],
            protected: vec![PathBuf::from("/home/u/.openinterpreter")],
        }
    }

    fn place(text: &str) -> Place {
        place_of(text, text.contains(['*', '$']), &Scope::new(&ctx()))
    }

    #[test]
    fn paths_are_placed_relative_to_the_working_directory() {
        assert_eq!(place("build"), Place::Workspace);
        assert_eq!(place("./build/x"), Place::Workspace);
        assert_eq!(place("."), Place::WorkspaceRoot);
        assert_eq!(place(".git"), Place::WorkspaceRoot);
        assert_eq!(place("*"), Place::WorkspaceRoot);
        assert_eq!(place("build/*"), Place::Workspace);
        assert_eq!(place("../other"), Place::Outside);
        assert_eq!(place("~/old"), Place::Outside);
        assert_eq!(place("$HOME/project/x"), Place::Workspace);
        assert_eq!(place("/tmp/x"), Place::Temp);
        assert_eq!(place("/tmp"), Place::Outside);
        assert_eq!(place("/var/tmp/x"), Place::Outside);
        assert_eq!(place("$DIR/x"), Place::Unknown);
        // Folders that hold the workspace, and oi's own folder.
        assert_eq!(place(".."), Place::WorkspaceRoot);
        assert_eq!(place("/home"), Place::WorkspaceRoot);
        assert_eq!(place("~/.openinterpreter/config.toml"), Place::Outside);
    }

    #[test]
    fn a_home_or_workspace_inside_the_temporary_folder_is_not_temporary() {
        let mut c = ctx();
        c.home = Some(PathBuf::from("/tmp/h"));
        c.workspace = PathBuf::from("/tmp/h/ws");
        c.cwd = c.workspace.clone();
        c.protected = vec![PathBuf::from("/tmp/oi-home")];
        let scope = Scope::new(&c);
        let place = |t: &str| place_of(t, false, &scope);
        // The home folder holds the workspace here.
        assert_eq!(place("~"), Place::WorkspaceRoot);
        assert_eq!(place("/tmp/h"), Place::WorkspaceRoot);
        assert_eq!(place("~/../x"), Place::Temp);
        assert_eq!(place("~/notes"), Place::Outside);
        assert_eq!(place("/tmp/oi-home/checkpoints"), Place::Outside);
        assert_eq!(place("/tmp/scratch"), Place::Temp);
    }

    #[test]
    fn links_made_by_the_code_are_followed_through_a_trailing_slash() {
        let mut scope = Scope::new(&ctx());
        scope.links.push((
            PathBuf::from("/home/u/project/link"),
            PathBuf::from("/srv/data"),
        ));
        assert_eq!(place_of("link", false, &scope), Place::Workspace);
        assert_eq!(place_of("link/", false, &scope), Place::Outside);
        assert_eq!(place_of("link/x", false, &scope), Place::Outside);
        assert_eq!(place_of("link/*", true, &scope), Place::Outside);
    }

    #[test]
    fn every_rule_is_documented_once() {
        let mut names: Vec<&str> = RULES.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RULES.len());
    }
}
