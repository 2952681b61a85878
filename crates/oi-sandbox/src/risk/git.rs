//! The rules for git: what rewrites history or throws away work.

use super::{Risk, risk};
use crate::shell::Word;

pub(super) fn git_risks(words: &[Word], text: &str, risks: &mut Vec<Risk>) {
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
