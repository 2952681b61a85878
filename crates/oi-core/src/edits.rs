//! File edits the model asks for through the tools of the `claude-code`
//! harness (Anthropic's text editor: `view`, `create`, `str_replace`,
//! `insert`) and the `codex` harness (`apply_patch` in Codex's patch
//! format). Reading a request gives either an answer (a view, or what is
//! wrong with it) or a [`Change`] of whole files, which the agent shows as
//! a diff, has approved, checkpoints and writes.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Files shown in full up to this many bytes (the rest is cut, with a note).
const MAX_VIEW_BYTES: usize = 64 * 1024;

/// One file's new content (`None`: the file is deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileWrite {
    pub path: PathBuf,
    /// Its content before (`None`: it did not exist).
    pub before: Option<String>,
    pub after: Option<String>,
}

impl FileWrite {
    /// Its path relative to `cwd` (absolute when outside it).
    pub(crate) fn shown(&self, cwd: &Path) -> String {
        self.path
            .strip_prefix(cwd)
            .unwrap_or(&self.path)
            .display()
            .to_string()
    }

    /// Whether it adds, changes or deletes the file.
    pub(crate) fn kind(&self) -> oi_protocol::FileChangeKind {
        use oi_protocol::FileChangeKind;
        match (&self.before, &self.after) {
            (None, _) => FileChangeKind::Added,
            (_, None) => FileChangeKind::Deleted,
            _ => FileChangeKind::Modified,
        }
    }
}

/// What a request of the model amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Nothing to write: this is the answer (a view).
    Answer(String),
    /// A mistake in the request, for the model to correct.
    Refused(String),
    /// Files to write, in order.
    Change(Vec<FileWrite>),
}

/// Reads a text file, with a message the model can act on when it cannot.
fn read_text(path: &Path, shown: &str) -> Result<String, String> {
    match fs_err::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            format!("{shown} is not a UTF-8 text file, so it cannot be edited as text")
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{shown} does not exist"))
        }
        Err(e) => Err(format!("cannot read {shown}: {e}")),
    }
}

/// `path` as the model gave it, made absolute against `cwd`.
fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let given = Path::new(path);
    if given.is_absolute() {
        given.to_path_buf()
    } else {
        cwd.join(given)
    }
}

/// A request of Anthropic's text editor tool (`str_replace_based_edit_tool`).
pub(crate) fn text_editor(cwd: &Path, input: &Value) -> Plan {
    let Some(command) = input["command"].as_str() else {
        return Plan::Refused(
            "`command` is missing: use view, create, str_replace or insert".to_owned(),
        );
    };
    let Some(given) = input["path"].as_str().filter(|p| !p.is_empty()) else {
        return Plan::Refused("`path` is missing".to_owned());
    };
    let path = resolve(cwd, given);
    let text_field = |name: &str| input[name].as_str();
    match command {
        "view" => view(&path, given, &input["view_range"]),
        "create" => {
            let Some(text) = text_field("file_text") else {
                return Plan::Refused("`create` needs `file_text`".to_owned());
            };
            if path.is_dir() {
                return Plan::Refused(format!("{given} is a directory"));
            }
            let before = fs_err::read_to_string(&path).ok();
            Plan::Change(vec![FileWrite {
                path,
                before,
                after: Some(text.to_owned()),
            }])
        }
        "str_replace" => {
            let Some(old) = text_field("old_str").filter(|s| !s.is_empty()) else {
                return Plan::Refused("`str_replace` needs a non-empty `old_str`".to_owned());
            };
            let new = text_field("new_str").unwrap_or("");
            let before = match read_text(&path, given) {
                Ok(text) => text,
                Err(problem) => return Plan::Refused(problem),
            };
            match before.matches(old).count() {
                0 => Plan::Refused(format!(
                    "`old_str` was not found in {given}: it must match the file exactly, whitespace included (view the file first)"
                )),
                1 => {
                    let after = before.replacen(old, new, 1);
                    Plan::Change(vec![FileWrite {
                        path,
                        before: Some(before),
                        after: Some(after),
                    }])
                }
                n => Plan::Refused(format!(
                    "`old_str` occurs {n} times in {given}: include more of the surrounding lines so that it occurs once"
                )),
            }
        }
        "insert" => {
            let Some(line) = input["insert_line"].as_u64() else {
                return Plan::Refused(
                    "`insert` needs `insert_line` (0 inserts at the top)".to_owned(),
                );
            };
            let Some(new) = text_field("new_str").or_else(|| text_field("insert_text")) else {
                return Plan::Refused("`insert` needs `new_str`".to_owned());
            };
            let before = match read_text(&path, given) {
                Ok(text) => text,
                Err(problem) => return Plan::Refused(problem),
            };
            let mut lines: Vec<&str> = before.split_inclusive('\n').collect();
            let at = line as usize;
            if at > lines.len() {
                return Plan::Refused(format!(
                    "`insert_line` {at} is past the end of {given}, which has {} lines",
                    lines.len()
                ));
            }
            let mut piece = new.to_owned();
            if !piece.ends_with('\n') {
                piece.push('\n');
            }
            // Inserting after a last line without a newline gives it one.
            let mut owned_last = None;
            if at == lines.len()
                && let Some(last) = lines.last()
                && !last.ends_with('\n')
            {
                owned_last = Some(format!("{last}\n"));
            }
            if let Some(last) = owned_last.as_deref() {
                let n = lines.len();
                lines[n - 1] = last;
            }
            lines.insert(at, &piece);
            Plan::Change(vec![FileWrite {
                path,
                after: Some(lines.concat()),
                before: Some(before),
            }])
        }
        "undo_edit" => Plan::Refused(
            "`undo_edit` is not available: make the edit you want with `str_replace` (the user can undo any change with /undo)".to_owned(),
        ),
        other => Plan::Refused(format!(
            "there is no command `{other}`: use view, create, str_replace or insert"
        )),
    }
}

/// `view`: a file with line numbers, or a folder's entries two levels down.
fn view(path: &Path, shown: &str, range: &Value) -> Plan {
    if path.is_dir() {
        let mut entries = Vec::new();
        list_dir(path, path, 0, &mut entries);
        entries.sort();
        return Plan::Answer(format!(
            "Files and folders in {shown} (two levels, hidden ones left out):\n{}",
            entries.join("\n")
        ));
    }
    let text = match read_text(path, shown) {
        Ok(text) => text,
        Err(problem) => return Plan::Refused(problem),
    };
    let lines: Vec<&str> = text.lines().collect();
    let (first, last) = match range.as_array().map(Vec::as_slice) {
        None => (1, lines.len()),
        Some([a, b]) => {
            let a = a.as_i64().unwrap_or(1).max(1) as usize;
            let b = match b.as_i64() {
                Some(-1) | None => lines.len(),
                Some(n) => (n.max(0) as usize).min(lines.len()),
            };
            if a > lines.len().max(1) || b < a {
                return Plan::Refused(format!(
                    "`view_range` [{a}, {b}] is not within the {} lines of {shown}",
                    lines.len()
                ));
            }
            (a, b)
        }
        Some(_) => {
            return Plan::Refused("`view_range` is two line numbers: [first, last]".to_owned());
        }
    };
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate().take(last).skip(first - 1) {
        out.push_str(&format!("{:>6}\t{line}\n", i + 1));
        if out.len() > MAX_VIEW_BYTES {
            out.push_str(&format!(
                "[… cut here: view a smaller view_range to see lines {} to {last}]\n",
                i + 2
            ));
            break;
        }
    }
    if lines.is_empty() {
        out.push_str(&format!("[{shown} is empty]\n"));
    }
    Plan::Answer(out)
}

fn list_dir(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if path.is_dir() {
            out.push(format!("{shown}/"));
            if depth < 1 {
                list_dir(root, &path, depth + 1, out);
            }
        } else {
            out.push(shown);
        }
    }
}

/// One file operation of a Codex patch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PatchOp {
    Add {
        path: String,
        text: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

/// A change inside a file: an optional `@@` anchor, then lines kept (` `),
/// removed (`-`) and added (`+`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Hunk {
    anchor: Option<String>,
    lines: Vec<(char, String)>,
    /// `*** End of File`: the hunk is at the end of the file.
    at_end: bool,
}

/// Reads Codex's patch format (`*** Begin Patch` … `*** End Patch`).
fn parse_patch(input: &str) -> Result<Vec<PatchOp>, String> {
    let text = input.trim();
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim()) != Some("*** Begin Patch") {
        return Err("the patch must start with `*** Begin Patch`".to_owned());
    }
    if lines.last().map(|l| l.trim()) != Some("*** End Patch") {
        return Err("the patch must end with `*** End Patch`".to_owned());
    }
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i];
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            i += 1;
            let mut text = String::new();
            while i < body.len() && !body[i].starts_with("*** ") {
                let Some(added) = body[i].strip_prefix('+') else {
                    return Err(format!(
                        "line {}: every line of an added file starts with `+`",
                        i + 2
                    ));
                };
                text.push_str(added);
                text.push('\n');
                i += 1;
            }
            ops.push(PatchOp::Add {
                path: path.trim().to_owned(),
                text,
            });
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            ops.push(PatchOp::Delete {
                path: path.trim().to_owned(),
            });
            i += 1;
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            i += 1;
            let mut move_to = None;
            if let Some(to) = body.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
                move_to = Some(to.trim().to_owned());
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            let mut current: Option<Hunk> = None;
            while i < body.len()
                && (!body[i].starts_with("*** ") || body[i].trim() == "*** End of File")
            {
                let line = body[i];
                if line.trim() == "*** End of File" {
                    if let Some(h) = current.as_mut() {
                        h.at_end = true;
                    }
                } else if let Some(anchor) = line.strip_prefix("@@") {
                    hunks.extend(current.take());
                    let anchor = anchor.trim();
                    current = Some(Hunk {
                        anchor: (!anchor.is_empty()).then(|| anchor.to_owned()),
                        ..Hunk::default()
                    });
                } else {
                    let (kind, rest) = match line.chars().next() {
                        Some(c @ (' ' | '-' | '+')) => (c, &line[1..]),
                        // An empty context line whose space was lost.
                        None => (' ', ""),
                        Some(_) => {
                            return Err(format!(
                                "line {}: a changed line starts with ` `, `-` or `+` (or `@@` for a new hunk): {line:?}",
                                i + 2
                            ));
                        }
                    };
                    current
                        .get_or_insert_with(Hunk::default)
                        .lines
                        .push((kind, rest.to_owned()));
                }
                i += 1;
            }
            hunks.extend(current.take());
            if hunks.is_empty() && move_to.is_none() {
                return Err(format!("`*** Update File: {}` has no changes", path.trim()));
            }
            ops.push(PatchOp::Update {
                path: path.trim().to_owned(),
                move_to,
                hunks,
            });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(format!(
                "line {}: expected `*** Add File: `, `*** Update File: ` or `*** Delete File: `, found {line:?}",
                i + 2
            ));
        }
    }
    if ops.is_empty() {
        return Err("the patch changes no file".to_owned());
    }
    Ok(ops)
}

/// Where `needle` (lines) occurs in `hay` at or after `from`: exactly,
/// then ignoring trailing spaces, then ignoring leading and trailing ones.
fn find_lines(hay: &[String], needle: &[&str], from: usize, at_end: bool) -> Option<usize> {
    if needle.is_empty() {
        return Some(if at_end { hay.len() } else { from });
    }
    let tries: [fn(&str) -> &str; 3] = [|s| s, str::trim_end, str::trim];
    for norm in tries {
        let fits = |start: usize| {
            needle
                .iter()
                .enumerate()
                .all(|(k, n)| norm(&hay[start + k]) == norm(n))
        };
        if hay.len() < needle.len() {
            return None;
        }
        let last = hay.len() - needle.len();
        if at_end {
            if last >= from && fits(last) {
                return Some(last);
            }
            continue;
        }
        if let Some(found) = (from..=last).find(|&s| fits(s)) {
            return Some(found);
        }
    }
    None
}

/// Applies the hunks of an update to `before`.
fn apply_hunks(before: &str, hunks: &[Hunk], shown: &str) -> Result<String, String> {
    let mut lines: Vec<String> = before.lines().map(str::to_owned).collect();
    let mut cursor = 0;
    for hunk in hunks {
        if let Some(anchor) = &hunk.anchor {
            match find_lines(&lines, &[anchor.as_str()], cursor, false) {
                Some(at) => cursor = at + 1,
                None => {
                    return Err(format!("the `@@ {anchor}` line was not found in {shown}"));
                }
            }
        }
        let old: Vec<&str> = hunk
            .lines
            .iter()
            .filter(|(k, _)| *k != '+')
            .map(|(_, l)| l.as_str())
            .collect();
        let new: Vec<String> = hunk
            .lines
            .iter()
            .filter(|(k, _)| *k != '-')
            .map(|(_, l)| l.clone())
            .collect();
        let Some(at) = find_lines(&lines, &old, cursor, hunk.at_end) else {
            return Err(format!(
                "these lines were not found in {shown} (view the file and use its exact lines as context):\n{}",
                old.join("\n")
            ));
        };
        lines.splice(at..at + old.len(), new.iter().cloned());
        cursor = at + new.len();
    }
    let mut after = lines.join("\n");
    if !after.is_empty() || before.ends_with('\n') {
        after.push('\n');
    }
    Ok(after)
}

/// A Codex `apply_patch` request: the files it writes, or what is wrong.
pub(crate) fn apply_patch(cwd: &Path, input: &str) -> Plan {
    let ops = match parse_patch(input) {
        Ok(ops) => ops,
        Err(problem) => return Plan::Refused(format!("the patch is not valid: {problem}")),
    };
    let mut writes: Vec<FileWrite> = Vec::new();
    for op in ops {
        match op {
            PatchOp::Add { path: given, text } => {
                let path = resolve(cwd, &given);
                let before = fs_err::read_to_string(&path).ok();
                writes.push(FileWrite {
                    path,
                    before,
                    after: Some(text),
                });
            }
            PatchOp::Delete { path: given } => {
                let path = resolve(cwd, &given);
                match read_text(&path, &given) {
                    Ok(before) => writes.push(FileWrite {
                        path,
                        before: Some(before),
                        after: None,
                    }),
                    Err(problem) => return Plan::Refused(problem),
                }
            }
            PatchOp::Update {
                path: given,
                move_to,
                hunks,
            } => {
                let path = resolve(cwd, &given);
                // An earlier operation of the same patch may have written it.
                let before = match writes.iter().rev().find(|w| w.path == path) {
                    Some(w) => match &w.after {
                        Some(text) => text.clone(),
                        None => {
                            return Plan::Refused(format!(
                                "{given} was deleted earlier in the patch"
                            ));
                        }
                    },
                    None => match read_text(&path, &given) {
                        Ok(text) => text,
                        Err(problem) => return Plan::Refused(problem),
                    },
                };
                let after = match apply_hunks(&before, &hunks, &given) {
                    Ok(after) => after,
                    Err(problem) => return Plan::Refused(problem),
                };
                match move_to {
                    Some(to) => {
                        let target = resolve(cwd, &to);
                        writes.push(FileWrite {
                            path: path.clone(),
                            before: Some(before),
                            after: None,
                        });
                        let existing = fs_err::read_to_string(&target).ok();
                        writes.push(FileWrite {
                            path: target,
                            before: existing,
                            after: Some(after),
                        });
                    }
                    None => writes.push(FileWrite {
                        path,
                        before: Some(before),
                        after: Some(after),
                    }),
                }
            }
        }
    }
    Plan::Change(writes)
}

/// The change as a unified diff, paths shown relative to `cwd`.
pub(crate) fn diff(cwd: &Path, writes: &[FileWrite]) -> String {
    let mut out = String::new();
    for write in writes {
        let shown = write.shown(cwd);
        let old = write.before.as_deref().unwrap_or("");
        let new = write.after.as_deref().unwrap_or("");
        let (from, to) = match write.kind() {
            oi_protocol::FileChangeKind::Added => ("/dev/null".to_owned(), format!("b/{shown}")),
            oi_protocol::FileChangeKind::Deleted => (format!("a/{shown}"), "/dev/null".to_owned()),
            oi_protocol::FileChangeKind::Modified => (format!("a/{shown}"), format!("b/{shown}")),
        };
        let text = similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header(&from, &to)
            .to_string();
        if text.is_empty() {
            out.push_str(&format!("{shown}: unchanged\n"));
        } else {
            out.push_str(&text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Writes the files (creating folders as needed), in order.
pub(crate) fn write(writes: &[FileWrite]) -> Result<(), String> {
    for write in writes {
        match &write.after {
            Some(text) => {
                if let Some(dir) = write.path.parent() {
                    fs_err::create_dir_all(dir).map_err(|e| e.to_string())?;
                }
                fs_err::write(&write.path, text).map_err(|e| e.to_string())?;
            }
            None => fs_err::remove_file(&write.path).map_err(|e| e.to_string())?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn change(plan: Plan) -> Vec<FileWrite> {
        match plan {
            Plan::Change(w) => w,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_text_editor_views_creates_replaces_and_inserts() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("a.py"), "x = 1\ny = 2\n").unwrap();
        let Plan::Answer(seen) = text_editor(cwd, &json!({"command": "view", "path": "a.py"}))
        else {
            panic!()
        };
        assert_eq!(seen, "     1\tx = 1\n     2\ty = 2\n");
        let Plan::Answer(seen) = text_editor(
            cwd,
            &json!({"command": "view", "path": "a.py", "view_range": [2, -1]}),
        ) else {
            panic!()
        };
        assert_eq!(seen, "     2\ty = 2\n");
        let w = change(text_editor(
            cwd,
            &json!({"command": "str_replace", "path": "a.py", "old_str": "y = 2", "new_str": "y = 3"}),
        ));
        assert_eq!(w[0].after.as_deref(), Some("x = 1\ny = 3\n"));
        let w = change(text_editor(
            cwd,
            &json!({"command": "insert", "path": "a.py", "insert_line": 1, "new_str": "z = 0"}),
        ));
        assert_eq!(w[0].after.as_deref(), Some("x = 1\nz = 0\ny = 2\n"));
        let w = change(text_editor(
            cwd,
            &json!({"command": "create", "path": "new/b.txt", "file_text": "hi\n"}),
        ));
        assert_eq!(w[0].before, None);
        write(&w).unwrap();
        assert_eq!(
            fs_err::read_to_string(cwd.join("new/b.txt")).unwrap(),
            "hi\n"
        );
        // Mistakes are the model's to fix, said plainly.
        for (input, says) in [
            (
                json!({"command": "str_replace", "path": "a.py", "old_str": "nope", "new_str": ""}),
                "not found",
            ),
            (
                json!({"command": "str_replace", "path": "a.py", "old_str": " = ", "new_str": ""}),
                "occurs 2 times",
            ),
            (
                json!({"command": "view", "path": "missing.txt"}),
                "does not exist",
            ),
            (
                json!({"command": "insert", "path": "a.py", "insert_line": 9, "new_str": "q"}),
                "past the end",
            ),
            (
                json!({"command": "delete", "path": "a.py"}),
                "no command `delete`",
            ),
        ] {
            match text_editor(cwd, &input) {
                Plan::Refused(problem) => assert!(problem.contains(says), "{problem}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn codex_patches_add_update_move_and_delete_files() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("app.py"),
            "def main():\n    print('hi')\n\nmain()\n",
        )
        .unwrap();
        fs_err::write(cwd.join("old.txt"), "bye\n").unwrap();
        let patch = "*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n+one\n*** Update File: app.py\n@@ def main():\n-    print('hi')\n+    print('hello')\n*** Delete File: old.txt\n*** End Patch";
        let w = change(apply_patch(cwd, patch));
        assert_eq!(w.len(), 3);
        assert_eq!(w[0].after.as_deref(), Some("# Notes\none\n"));
        assert_eq!(
            w[1].after.as_deref(),
            Some("def main():\n    print('hello')\n\nmain()\n")
        );
        assert_eq!(w[2].after, None);
        let shown = diff(cwd, &w);
        assert!(
            shown.contains("--- /dev/null\n+++ b/docs/notes.md"),
            "{shown}"
        );
        assert!(
            shown.contains("-    print('hi')\n+    print('hello')"),
            "{shown}"
        );
        assert!(shown.contains("--- a/old.txt\n+++ /dev/null"), "{shown}");
        write(&w).unwrap();
        assert!(!cwd.join("old.txt").exists());

        let moved = change(apply_patch(
            cwd,
            "*** Begin Patch\n*** Update File: app.py\n*** Move to: src/app.py\n@@\n-main()\n+main()  # run\n*** End Patch",
        ));
        assert_eq!(moved[0].after, None);
        assert!(moved[1].path.ends_with("src/app.py"));
        assert!(
            moved[1]
                .after
                .as_deref()
                .unwrap()
                .ends_with("main()  # run\n")
        );

        for (patch, says) in [
            ("*** Update File: app.py\n*** End Patch", "must start with"),
            (
                "*** Begin Patch\n*** Update File: app.py\n-nothing like this\n+x\n*** End Patch",
                "were not found",
            ),
            (
                "*** Begin Patch\n*** Update File: nope.py\n-a\n+b\n*** End Patch",
                "does not exist",
            ),
            (
                "*** Begin Patch\nhello\n*** End Patch",
                "expected `*** Add File",
            ),
        ] {
            match apply_patch(cwd, patch) {
                Plan::Refused(problem) => assert!(problem.contains(says), "{problem}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
