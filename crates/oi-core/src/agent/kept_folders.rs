//! Files moved or copied without their folders, where the task asks to
//! keep them.
//!
//! Asked to move every backup "keeping each file's folders relative to
//! project/", a small model joins the target folder with the file's name
//! alone (`os.path.join('backups', f)`): `project/docs/guide.md.bak` lands
//! at `backups/guide.md.bak`, and files of the same name from two folders
//! overwrite each other. The run succeeds and prints nothing, so nothing
//! tells the model. The coach notes, when the task names folders and asks
//! to keep the structure, which file of a subfolder now stands elsewhere
//! without its folders, with where it belongs and the code that puts it
//! there. Copies are told the same way: a new file with a nested file's
//! name outside its folder.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

/// Folders walked below a folder the task names, at most, and entries
/// read in each; files remembered in all.
const DEPTH: usize = 4;
const ENTRIES: usize = 500;
const FILES: usize = 2000;

/// Whether `task` asks to keep files' folders as they move ("keeping each
/// file's folders relative to project/", "preserve the directory
/// structure", "mirror the folder tree"): a word for keeping, then within
/// a few words one for the folders.
pub(super) fn asked(task: &str) -> bool {
    KEEP.as_ref().is_some_and(|keep| keep.is_match(task))
}

static KEEP: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(keep|keeping|preserve|preserving|retain|retaining|mirror|mirroring)\b[^.,;:]{0,30}\b(folders|subfolders|directories|subdirectories|structure|tree|layout|relative paths?)\b",
    )
    .ok()
});

/// What a task's folders held when it began: the files in a subfolder of
/// each folder it names (`./` left out: everything is below it), which
/// are the files that can lose their folders, and every file below the
/// working folder, so that a file a run made is told from one that was
/// there.
#[derive(Debug, Default)]
pub(super) struct Layout {
    /// Paths from the working folder, each with its named folder.
    nested: Vec<(String, String)>,
    before: BTreeSet<String>,
}

impl Layout {
    /// The layout below `cwd` of the named `folders`.
    pub(super) fn of(cwd: &Path, folders: &[String]) -> Self {
        let mut nested = Vec::new();
        for folder in folders.iter().filter(|f| f.as_str() != "./") {
            let Ok(entries) = fs_err::read_dir(cwd.join(folder)) else {
                continue;
            };
            for entry in entries.flatten().take(ENTRIES) {
                let hidden = entry.file_name().to_string_lossy().starts_with('.');
                if entry.file_type().is_ok_and(|t| t.is_dir()) && !hidden {
                    files_below(&entry.path(), DEPTH, &mut |path| {
                        if nested.len() < FILES
                            && let Ok(rel) = path.strip_prefix(cwd)
                        {
                            nested.push((rel.to_string_lossy().into_owned(), folder.clone()));
                        }
                    });
                }
            }
        }
        let mut before = BTreeSet::new();
        if !nested.is_empty() {
            files_below(cwd, DEPTH + 1, &mut |path| {
                if before.len() < FILES
                    && let Ok(rel) = path.strip_prefix(cwd)
                {
                    before.insert(rel.to_string_lossy().into_owned());
                }
            });
        }
        Self { nested, before }
    }

    /// When a file a run made (moved or copied) outside its named folder
    /// has the name of one of the nested files but not the folders it had
    /// in its named folder: what is wrong, where the file belongs, and
    /// the code that keeps its folders.
    pub(super) fn flattened(&self, cwd: &Path) -> Option<String> {
        if self.nested.is_empty() {
            return None;
        }
        let mut found = None;
        files_below(cwd, DEPTH + 1, &mut |path| {
            if found.is_some() {
                return;
            }
            let Ok(now) = path.strip_prefix(cwd) else {
                return;
            };
            let now = now.to_string_lossy().into_owned();
            if self.before.contains(&now) {
                return;
            }
            for (was, folder) in &self.nested {
                let inside = &was[folder.len()..];
                let same_name = Path::new(was).file_name() == path.file_name();
                if same_name && !now.ends_with(inside) && !now.starts_with(folder.as_str()) {
                    let dest = Path::new(&now)
                        .parent()
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    found = Some((was.clone(), now, dest, folder.clone(), inside.to_owned()));
                    return;
                }
            }
        });
        let (was, now, dest, folder, inside) = found?;
        let root = folder.trim_end_matches('/');
        let belongs = if dest.is_empty() {
            inside.clone()
        } else {
            format!("{dest}/{inside}")
        };
        let dest = if dest.is_empty() { "." } else { dest.as_str() };
        Some(format!(
            "`{was}` is now `{now}`: it lost its folders, and the task asks to keep them, so it belongs at `{belongs}`. Join the target with the path inside `{folder}`, `os.path.join('{dest}', os.path.relpath(path, '{root}'))`, and make its folder first (`os.makedirs(os.path.dirname(target), exist_ok=True)`)"
        ))
    }
}

/// Calls `each` with every file below `dir`, at most `depth` folders down
/// (hidden ones left out), folders in name order.
fn files_below(dir: &Path, depth: usize, each: &mut dyn FnMut(&Path)) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().take(ENTRIES).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_file() => each(&path),
            Ok(t)
                if t.is_dir()
                    && depth > 0
                    && !entry.file_name().to_string_lossy().starts_with('.') =>
            {
                files_below(&path, depth - 1, each);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, "x").unwrap();
        }
        dir
    }

    #[test]
    fn tasks_that_ask_to_keep_folders_are_told_apart() {
        assert!(asked(
            "Move every backup under project/ into backups/, keeping each file's folders relative to project/."
        ));
        assert!(asked(
            "Copy src/ to out/ and preserve the directory structure."
        ));
        assert!(!asked("Move every .bak file under project/ into backups/."));
        assert!(asked("Mirror the folder tree of photos/ in thumbs/."));
        assert!(!asked("Keep the newest file in each folder."));
        assert!(!asked("Keep a copy. Then list the folders."));
    }

    #[test]
    fn a_file_moved_without_its_folders_is_named_with_where_it_belongs() {
        let dir = folder(&[
            "project/docs/guide.md.bak",
            "project/src/main.py",
            "project/top.bak",
        ]);
        let cwd = dir.path();
        let layout = Layout::of(cwd, &["project/".to_owned()]);
        // Files at the top of the folder cannot lose folders.
        let paths: Vec<&str> = layout.nested.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths.len(), 2, "{paths:?}");
        assert!(!paths.contains(&"project/top.bak"));
        assert_eq!(layout.flattened(cwd), None, "nothing moved yet");
        // Moved with its folders: right.
        fs_err::create_dir_all(cwd.join("backups/docs")).unwrap();
        fs_err::rename(
            cwd.join("project/docs/guide.md.bak"),
            cwd.join("backups/docs/guide.md.bak"),
        )
        .unwrap();
        assert_eq!(layout.flattened(cwd), None);
        // Moved to the top of the target: wrong.
        fs_err::rename(
            cwd.join("backups/docs/guide.md.bak"),
            cwd.join("backups/guide.md.bak"),
        )
        .unwrap();
        assert_eq!(
            layout.flattened(cwd).unwrap(),
            "`project/docs/guide.md.bak` is now `backups/guide.md.bak`: it lost its folders, and the task asks to keep them, so it belongs at `backups/docs/guide.md.bak`. Join the target with the path inside `project/`, `os.path.join('backups', os.path.relpath(path, 'project'))`, and make its folder first (`os.makedirs(os.path.dirname(target), exist_ok=True)`)"
        );
    }

    #[test]
    fn a_file_renamed_in_its_own_folder_or_one_that_was_there_is_not_flattened() {
        let dir = folder(&["project/docs/a.txt", "project/docs/b.txt", "b.txt", "c.txt"]);
        let cwd = dir.path();
        let layout = Layout::of(cwd, &["project/".to_owned(), "./".to_owned()]);
        fs_err::remove_file(cwd.join("project/docs/a.txt")).unwrap();
        // Moved up inside its own named folder: a rename the task may ask.
        fs_err::rename(cwd.join("project/docs/b.txt"), cwd.join("project/b.txt")).unwrap();
        // `b.txt` at the top was there before.
        assert_eq!(layout.flattened(cwd), None);
        assert_eq!(Layout::of(cwd, &["./".to_owned()]).flattened(cwd), None);
    }

    #[test]
    fn a_file_copied_without_its_folders_is_named_too() {
        let dir = folder(&["photos/2024/a.jpg"]);
        let cwd = dir.path();
        let layout = Layout::of(cwd, &["photos/".to_owned()]);
        fs_err::create_dir_all(cwd.join("thumbs")).unwrap();
        fs_err::copy(cwd.join("photos/2024/a.jpg"), cwd.join("thumbs/a.jpg")).unwrap();
        let told = layout.flattened(cwd).unwrap();
        assert!(
            told.starts_with("`photos/2024/a.jpg` is now `thumbs/a.jpg`: it lost its folders, and the task asks to keep them, so it belongs at `thumbs/2024/a.jpg`."),
            "{told}"
        );
    }
}
