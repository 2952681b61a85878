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

use super::table;
use super::walk::each_file;

/// Folders walked below a folder the task names, at most; files
/// remembered in all.
const DEPTH: usize = 4;
const FILES: usize = 2000;
/// Files put back by the block the note gives, at most.
const MAX_MOVES: usize = 12;

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
            let root = cwd.join(folder);
            each_file(&root, DEPTH + 1, &mut |path| {
                let in_subfolder = path.parent().is_some_and(|parent| parent != root);
                if in_subfolder
                    && nested.len() < FILES
                    && let Ok(rel) = path.strip_prefix(cwd)
                {
                    nested.push((rel.to_string_lossy().into_owned(), folder.clone()));
                }
            });
        }
        nested.sort();
        let mut before = BTreeSet::new();
        if !nested.is_empty() {
            each_file(cwd, DEPTH + 1, &mut |path| {
                if before.len() < FILES
                    && let Ok(rel) = path.strip_prefix(cwd)
                {
                    before.insert(rel.to_string_lossy().into_owned());
                }
            });
        }
        Self { nested, before }
    }

    /// When files a run made (moved or copied) outside their named folder
    /// have the names of nested files but not the folders they had in
    /// their named folder: what is wrong, and the block that puts each
    /// where it belongs. The run that lost the folders moved the files
    /// already, so the model's fixed code finds nothing left to move: the
    /// files must go from where they are now.
    pub(super) fn flattened(&self, cwd: &Path) -> Option<Flattened> {
        if self.nested.is_empty() {
            return None;
        }
        let mut lost: Vec<Lost> = Vec::new();
        let mut more = 0;
        each_file(cwd, DEPTH + 1, &mut |path| {
            let Ok(now) = path.strip_prefix(cwd) else {
                return;
            };
            let now = now.to_string_lossy().into_owned();
            if self.before.contains(&now) {
                return;
            }
            let namesakes: Vec<&(String, String)> = self
                .nested
                .iter()
                .filter(|(was, _)| Path::new(was).file_name() == path.file_name())
                .collect();
            // Where one namesake's folders are kept (or in its own named
            // folder), the file is where it belongs.
            let kept = namesakes.iter().any(|(was, folder)| {
                now.ends_with(&was[folder.len()..]) || now.starts_with(folder.as_str())
            });
            let Some((was, folder)) = namesakes.first().filter(|_| !kept) else {
                return;
            };
            if lost.len() == MAX_MOVES {
                more += 1;
                return;
            }
            let inside = &was[folder.len()..];
            let belongs = match Path::new(&now).parent().map(|p| p.to_string_lossy()) {
                Some(dest) if !dest.is_empty() => format!("{dest}/{inside}"),
                _ => inside.to_owned(),
            };
            // Two nested files of one name: which one this is, no name
            // tells.
            lost.push(Lost {
                was: was.clone(),
                now,
                belongs,
                sure: namesakes.len() == 1,
            });
        });
        let first = lost.first()?;
        let (was, now, belongs) = (&first.was, &first.now, &first.belongs);
        let others = lost.len() - 1 + more;
        let also = match others {
            0 => String::new(),
            1 => " (and 1 more file)".to_owned(),
            n => format!(" (and {n} more files)"),
        };
        let (they, them) = if others == 0 {
            ("it", "it")
        } else {
            ("they", "them")
        };
        let lead = format!(
            "`{was}` is now `{now}`{also}: {they} lost {} folders, and the task asks to keep them, so `{now}` belongs at `{belongs}`",
            if others == 0 { "its" } else { "their" }
        );
        if more > 0 || lost.iter().any(|l| !l.sure) {
            return Some(Flattened {
                problem: format!(
                    "{lead}. Join each target with the path inside its folder (`os.path.join(target_folder, os.path.relpath(path, folder))`), make the target's folder first, and move {them} from where {they} are now"
                ),
                repair: None,
                many: others > 0,
            });
        }
        let pairs: Vec<String> = lost
            .iter()
            .map(|l| {
                format!(
                    "({}, {})",
                    table::python_string(&l.now),
                    table::python_string(&l.belongs)
                )
            })
            .collect();
        Some(Flattened {
            problem: lead,
            repair: Some(format!(
                "import os\nfor now, belongs in [{}]:\n    os.makedirs(os.path.dirname(belongs), exist_ok=True)\n    os.rename(now, belongs)",
                pairs.join(", ")
            )),
            many: others > 0,
        })
    }
}

/// Files that lost their folders: what is wrong, and the block that puts
/// them where they belong when each is sure.
#[derive(Debug)]
pub(super) struct Flattened {
    problem: String,
    repair: Option<String>,
    many: bool,
}

impl Flattened {
    /// `them`, `they`, `belong` for several files; `it`, `it`, `belongs`
    /// for one.
    fn words(&self) -> (&'static str, &'static str, &'static str) {
        if self.many {
            ("them", "they", "belong")
        } else {
            ("it", "it", "belongs")
        }
    }

    /// The Python that puts the files where they belong, when each is
    /// sure.
    pub(super) fn repair(&self) -> Option<&str> {
        self.repair.as_deref()
    }

    /// What leads the result of oi's run of [`Self::repair`].
    pub(super) fn lead(&self) -> String {
        let (them, they, belong) = self.words();
        format!(
            "[oi: {}. So oi ran this block to put {them} where {they} {belong}:]\n```python\n{}\n```",
            self.problem,
            self.repair.as_deref().unwrap_or_default()
        )
    }

    /// The note after the run that made the files.
    pub(super) fn note(&self) -> String {
        let (them, they, belong) = self.words();
        match &self.repair {
            Some(code) => format!(
                "[oi: {}. {} there already, so run this block to put {them} where {they} {belong}:\n```python\n{code}\n```]",
                self.problem,
                if self.many {
                    "The files are"
                } else {
                    "The file is"
                },
            ),
            None => format!("[oi: {}. Fix the code and run it again.]", self.problem),
        }
    }

    /// The problem as the check before finishing names it.
    pub(super) fn problem(&self) -> String {
        let (them, they, belong) = self.words();
        match &self.repair {
            Some(code) => format!(
                "{}; this block puts {them} where {they} {belong}:\n```python\n{code}\n```\n",
                self.problem,
            ),
            None => self.problem.clone(),
        }
    }
}

/// A file a run made without the folders its namesake had.
struct Lost {
    /// Where its namesake stood when the task began.
    was: String,
    /// Where it is.
    now: String,
    /// Where it belongs.
    belongs: String,
    /// Whether only one nested file has its name.
    sure: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::walk::folder_with;

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
    fn a_file_moved_without_its_folders_is_named_and_the_block_given_puts_it_back() {
        let dir = folder_with(&[
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
        assert!(layout.flattened(cwd).is_none(), "nothing moved yet");
        // Moved with its folders: right.
        fs_err::create_dir_all(cwd.join("backups/docs")).unwrap();
        fs_err::rename(
            cwd.join("project/docs/guide.md.bak"),
            cwd.join("backups/docs/guide.md.bak"),
        )
        .unwrap();
        assert!(layout.flattened(cwd).is_none());
        // Moved to the top of the target: wrong.
        fs_err::rename(
            cwd.join("backups/docs/guide.md.bak"),
            cwd.join("backups/guide.md.bak"),
        )
        .unwrap();
        let flat = layout.flattened(cwd).unwrap();
        let block = "```python\nimport os\nfor now, belongs in [('backups/guide.md.bak', 'backups/docs/guide.md.bak')]:\n    os.makedirs(os.path.dirname(belongs), exist_ok=True)\n    os.rename(now, belongs)\n```";
        assert_eq!(
            flat.note(),
            format!(
                "[oi: `project/docs/guide.md.bak` is now `backups/guide.md.bak`: it lost its folders, and the task asks to keep them, so `backups/guide.md.bak` belongs at `backups/docs/guide.md.bak`. The file is there already, so run this block to put it where it belongs:\n{block}]"
            )
        );
        assert!(flat.problem().ends_with(&format!(
            "; this block puts it where it belongs:\n{block}\n"
        )));
        // The block, run by Python, puts the file where it belongs.
        let code = block
            .trim_start_matches("```python\n")
            .trim_end_matches("```");
        let ran = std::process::Command::new("python3")
            .args(["-c", code])
            .current_dir(cwd)
            .status()
            .unwrap();
        assert!(ran.success());
        assert!(cwd.join("backups/docs/guide.md.bak").is_file());
        assert!(layout.flattened(cwd).is_none());
    }

    #[test]
    fn files_of_one_name_from_two_folders_get_no_block() {
        let dir = folder_with(&[
            "project/a/notes.txt",
            "project/b/notes.txt",
            "project/b/x.txt",
        ]);
        let cwd = dir.path();
        let layout = Layout::of(cwd, &["project/".to_owned()]);
        fs_err::create_dir_all(cwd.join("out")).unwrap();
        fs_err::copy(cwd.join("project/b/notes.txt"), cwd.join("out/notes.txt")).unwrap();
        fs_err::copy(cwd.join("project/b/x.txt"), cwd.join("out/x.txt")).unwrap();
        let flat = layout.flattened(cwd).unwrap();
        let note = flat.note();
        assert!(
            note.starts_with("[oi: `project/a/notes.txt` is now `out/notes.txt` (and 1 more file): they lost their folders"),
            "{note}"
        );
        assert!(!note.contains("```"), "{note}");
        assert!(
            note.ends_with(
                "and move them from where they are now. Fix the code and run it again.]"
            ),
            "{note}"
        );
        // Copied with its folders, a file is right whichever namesake it is.
        fs_err::remove_file(cwd.join("out/notes.txt")).unwrap();
        fs_err::remove_file(cwd.join("out/x.txt")).unwrap();
        fs_err::create_dir_all(cwd.join("out/b")).unwrap();
        fs_err::copy(cwd.join("project/b/notes.txt"), cwd.join("out/b/notes.txt")).unwrap();
        assert!(layout.flattened(cwd).is_none());
    }

    #[test]
    fn a_file_renamed_in_its_own_folder_or_one_that_was_there_is_not_flattened() {
        let dir = folder_with(&["project/docs/a.txt", "project/docs/b.txt", "b.txt", "c.txt"]);
        let cwd = dir.path();
        let layout = Layout::of(cwd, &["project/".to_owned(), "./".to_owned()]);
        fs_err::remove_file(cwd.join("project/docs/a.txt")).unwrap();
        // Moved up inside its own named folder: a rename the task may ask.
        fs_err::rename(cwd.join("project/docs/b.txt"), cwd.join("project/b.txt")).unwrap();
        // `b.txt` at the top was there before.
        assert!(layout.flattened(cwd).is_none());
        assert!(Layout::of(cwd, &["./".to_owned()]).flattened(cwd).is_none());
    }

    #[test]
    fn a_file_copied_without_its_folders_is_named_too() {
        let dir = folder_with(&["photos/2024/a.jpg"]);
        let cwd = dir.path();
        let layout = Layout::of(cwd, &["photos/".to_owned()]);
        fs_err::create_dir_all(cwd.join("thumbs")).unwrap();
        fs_err::copy(cwd.join("photos/2024/a.jpg"), cwd.join("thumbs/a.jpg")).unwrap();
        let told = layout.flattened(cwd).unwrap().problem();
        assert!(
            told.starts_with("`photos/2024/a.jpg` is now `thumbs/a.jpg`: it lost its folders, and the task asks to keep them, so `thumbs/a.jpg` belongs at `thumbs/2024/a.jpg`;"),
            "{told}"
        );
    }
}
