//! Project instructions: the `AGENTS.md` files that tell the model how a
//! project works, read once when a session starts.
//!
//! Where they are looked for, in the order they reach the model:
//!
//! 1. oi's folder (`$INTERPRETER_HOME`, default `~/.openinterpreter`): the
//!    user's own instructions for every project;
//! 2. each folder from the project root (the nearest folder upward holding
//!    `.git`; the working directory itself outside a repository) down to the
//!    working directory.
//!
//! In each folder the first non-empty file of `AGENTS.override.md`,
//! `AGENTS.md`, then the names in `project_doc_fallback_filenames` is read;
//! at most one per folder. The nearest file comes last, so where files
//! disagree the model follows the one closest to the work.
//!
//! Together they may take at most `project_doc_max_bytes` bytes (0 reads
//! none). The budget goes to the nearest file first: what is cut is the
//! most general guidance, never the most specific. A file cut short ends
//! with a line saying so, and [`Instructions::left_out`] names each file
//! that did not fit at all.

use std::path::{Path, PathBuf};

use crate::load::project_root;

/// `project_doc_max_bytes` when the configuration does not set it.
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: u64 = 32 * 1024;

/// The names read in each folder, before the configured fallbacks.
pub const INSTRUCTION_FILES: &[&str] = &["AGENTS.override.md", "AGENTS.md"];

/// One instruction file as the model gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    pub path: PathBuf,
    /// The text the model gets: the file, or its first [`Self::kept`]
    /// bytes and a line saying it was cut.
    pub text: String,
    /// The file's whole size in bytes.
    pub size: usize,
    /// How many of its bytes the model gets.
    pub kept: usize,
}

impl InstructionFile {
    /// Whether the model gets only the start of the file.
    pub fn is_cut(&self) -> bool {
        self.kept < self.size
    }
}

/// The project instructions found for a working directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// In the order the model reads them: oi's folder first, the nearest
    /// folder last.
    pub files: Vec<InstructionFile>,
    /// Files found but not read: over the size limit, or not readable as
    /// text (the reason is in [`crate::Loaded::warnings`]).
    pub left_out: Vec<PathBuf>,
    /// The limit they were read with (`project_doc_max_bytes`).
    pub max_bytes: u64,
}

impl Instructions {
    /// The instructions as one block for the system prompt, or `None` when
    /// there are none.
    pub fn prompt_block(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let mut block = String::from(
            "Instructions for this project, from its AGENTS.md files (where they disagree, the later file wins):\n",
        );
        for file in &self.files {
            block.push_str(&format!("\n--- {} ---\n", file.path.display()));
            block.push_str(file.text.trim_end());
            block.push('\n');
        }
        Some(block)
    }
}

/// A file found in one folder, before the budget is applied.
struct Found {
    path: PathBuf,
    /// At most the whole budget's worth of the file.
    text: String,
    /// The file's whole size.
    size: usize,
}

/// Finds and reads the instructions for `cwd`. Problems with single files
/// (not UTF-8, unreadable) go to `warnings`; they never stop a session.
pub(crate) fn discover(
    home: &Path,
    cwd: &Path,
    fallbacks: &[String],
    max_bytes: u64,
    warnings: &mut Vec<String>,
) -> Instructions {
    let mut instructions = Instructions {
        max_bytes,
        ..Instructions::default()
    };
    if max_bytes == 0 {
        return instructions;
    }
    let root = project_root(cwd);
    // Folders nearest first: the budget is spent in this order.
    let mut folders: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    if !folders.contains(&home) {
        folders.push(home);
    }
    let mut found: Vec<Found> = folders
        .into_iter()
        .filter_map(|dir| {
            first_in(
                dir,
                fallbacks,
                max_bytes,
                warnings,
                &mut instructions.left_out,
            )
        })
        .collect();

    let mut budget = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut kept = Vec::new();
    for file in found.drain(..) {
        let size = file.size;
        if budget == 0 {
            warnings.push(format!(
                "{} was not read: the project instructions already take project_doc_max_bytes ({max_bytes} bytes)",
                crate::display_path(&file.path)
            ));
            instructions.left_out.push(file.path);
            continue;
        }
        let mut end = file.text.len().min(budget);
        while !file.text.is_char_boundary(end) {
            end -= 1;
        }
        let text = if end < size {
            format!(
                "{}\n[… cut here: the file has {size} bytes, project_doc_max_bytes allows {budget} more]\n",
                &file.text[..end]
            )
        } else {
            file.text
        };
        budget -= size.min(budget);
        kept.push(InstructionFile {
            path: file.path,
            text,
            size,
            kept: end,
        });
    }
    kept.reverse();
    instructions.files = kept;
    instructions
}

/// The first non-empty instruction file in `dir`, of which at most `limit`
/// bytes are read (a huge file costs no more than the budget).
fn first_in(
    dir: &Path,
    fallbacks: &[String],
    limit: u64,
    warnings: &mut Vec<String>,
    left_out: &mut Vec<PathBuf>,
) -> Option<Found> {
    let names = INSTRUCTION_FILES
        .iter()
        .copied()
        .chain(fallbacks.iter().map(String::as_str));
    for name in names {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        match read_start(&path, limit) {
            Ok((bytes, size)) => match utf8_start(bytes, size) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => return Some(Found { path, text, size }),
                Err(()) => {
                    warnings.push(format!(
                        "{} was not read: it is not UTF-8 text; save it as UTF-8 to give it to the model",
                        crate::display_path(&path)
                    ));
                    left_out.push(path);
                }
            },
            Err(error) => {
                warnings.push(format!("{error}; the model does not get this file"));
                left_out.push(path);
            }
        }
    }
    None
}

/// The first `limit` bytes of the file at `path`, and its whole size.
fn read_start(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, usize)> {
    use std::io::Read;
    let file = fs_err::File::open(path)?;
    let size = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok((bytes, size))
}

/// `bytes` as text; when they are only the start of the file, a character
/// cut in two at their end is dropped.
fn utf8_start(bytes: Vec<u8>, size: usize) -> Result<String, ()> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(error) if bytes_cut_in_a_character(&error, size) => {
            let valid = error.utf8_error().valid_up_to();
            let mut bytes = error.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| ())
        }
        Err(_) => Err(()),
    }
}

fn bytes_cut_in_a_character(error: &std::string::FromUtf8Error, size: usize) -> bool {
    error.as_bytes().len() < size && error.utf8_error().error_len().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }

    struct Tree {
        _dir: tempfile::TempDir,
        home: PathBuf,
        repo: PathBuf,
    }

    fn tree() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("work/repo");
        fs_err::create_dir_all(&home).unwrap();
        fs_err::create_dir_all(repo.join(".git")).unwrap();
        Tree {
            _dir: dir,
            home,
            repo,
        }
    }

    fn names(found: &Instructions) -> Vec<String> {
        found
            .files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    }

    #[test]
    fn files_are_read_from_oi_home_then_the_root_down_to_the_working_folder() {
        let t = tree();
        let deep = t.repo.join("src/app");
        write(&t.home.join("AGENTS.md"), "home rules\n");
        write(&t.repo.join("AGENTS.md"), "root rules\n");
        write(&deep.join("AGENTS.md"), "app rules\n");
        // Above the repository: not part of this project.
        write(&t.repo.parent().unwrap().join("AGENTS.md"), "outside\n");
        let mut warnings = Vec::new();
        let found = discover(&t.home, &deep, &[], 1000, &mut warnings);
        assert_eq!(
            names(&found),
            [
                t.home.join("AGENTS.md"),
                t.repo.join("AGENTS.md"),
                deep.join("AGENTS.md")
            ]
            .map(|p| p.display().to_string())
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let block = found.prompt_block().unwrap();
        let at = |s: &str| block.find(s).unwrap();
        assert!(at("home rules") < at("root rules") && at("root rules") < at("app rules"));
        assert!(!block.contains("outside"));
    }

    #[test]
    fn outside_a_repository_only_the_working_folder_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let cwd = dir.path().join("a/b");
        write(&dir.path().join("a/AGENTS.md"), "parent\n");
        write(&cwd.join("AGENTS.md"), "here\n");
        let found = discover(&home, &cwd, &[], 1000, &mut Vec::new());
        assert_eq!(names(&found), [cwd.join("AGENTS.md").display().to_string()]);
    }

    #[test]
    fn one_file_per_folder_the_override_first_then_fallbacks_and_empty_files_skipped() {
        let t = tree();
        write(&t.repo.join("AGENTS.override.md"), "override\n");
        write(&t.repo.join("AGENTS.md"), "plain\n");
        let sub = t.repo.join("sub");
        write(&sub.join("AGENTS.md"), "  \n");
        write(&sub.join("CLAUDE.md"), "fallback\n");
        let found = discover(&t.home, &sub, &["CLAUDE.md".into()], 1000, &mut Vec::new());
        let texts: Vec<&str> = found.files.iter().map(|f| f.text.trim()).collect();
        assert_eq!(texts, ["override", "fallback"]);
        // Without the fallback name, the empty AGENTS.md gives nothing.
        let found = discover(&t.home, &sub, &[], 1000, &mut Vec::new());
        assert_eq!(found.files.len(), 1);
    }

    #[test]
    fn the_budget_goes_to_the_nearest_file_first_and_what_is_cut_is_said() {
        let t = tree();
        let sub = t.repo.join("sub");
        write(&t.home.join("AGENTS.md"), "home\n");
        write(&t.repo.join("AGENTS.md"), &"r".repeat(100));
        write(&sub.join("AGENTS.md"), &"s".repeat(60));
        let mut warnings = Vec::new();
        let found = discover(&t.home, &sub, &[], 100, &mut warnings);
        assert_eq!(
            names(&found),
            [t.repo.join("AGENTS.md"), sub.join("AGENTS.md")].map(|p| p.display().to_string())
        );
        let (root, near) = (&found.files[0], &found.files[1]);
        assert!(!near.is_cut() && near.text == "s".repeat(60));
        assert!(root.is_cut() && root.size == 100 && root.kept == 40);
        assert!(root.text.starts_with(&"r".repeat(40)) && !root.text.contains(&"r".repeat(41)));
        assert!(root.text.contains("cut here: the file has 100 bytes"));
        assert_eq!(found.left_out, [t.home.join("AGENTS.md")]);
        assert!(
            warnings[0].contains("project_doc_max_bytes (100 bytes)"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let t = tree();
        write(&t.repo.join("AGENTS.md"), "ééééé");
        let found = discover(&t.home, &t.repo, &[], 3, &mut Vec::new());
        assert!(
            found.files[0].text.starts_with("é\n"),
            "{:?}",
            found.files[0]
        );
        assert_eq!(found.files[0].kept, 2);
    }

    #[test]
    fn a_huge_file_is_read_only_as_far_as_the_budget() {
        let t = tree();
        // 3 MB of a two-byte character: read is 11 bytes, cut at 10.
        write(&t.repo.join("AGENTS.md"), &"é".repeat(1_500_000));
        let found = discover(&t.home, &t.repo, &[], 11, &mut Vec::new());
        let file = &found.files[0];
        assert_eq!((file.size, file.kept), (3_000_000, 10));
        assert!(file.text.starts_with(&"é".repeat(5)) && file.text.len() < 200);
    }

    #[test]
    fn zero_bytes_reads_nothing() {
        let t = tree();
        write(&t.repo.join("AGENTS.md"), "rules\n");
        let found = discover(&t.home, &t.repo, &[], 0, &mut Vec::new());
        assert!(found.files.is_empty() && found.left_out.is_empty());
        assert_eq!(found.prompt_block(), None);
    }

    #[test]
    fn a_file_that_is_not_text_is_named_and_the_next_name_is_tried() {
        let t = tree();
        fs_err::write(t.repo.join("AGENTS.override.md"), [0xff, 0xfe, 0x00]).unwrap();
        write(&t.repo.join("AGENTS.md"), "rules\n");
        let mut warnings = Vec::new();
        let found = discover(&t.home, &t.repo, &[], 1000, &mut warnings);
        assert_eq!(found.files[0].text, "rules\n");
        assert_eq!(found.left_out, [t.repo.join("AGENTS.override.md")]);
        assert!(warnings[0].contains("not UTF-8"), "{warnings:?}");
    }

    #[test]
    fn oi_home_inside_the_project_is_read_once() {
        let t = tree();
        write(&t.repo.join("AGENTS.md"), "rules\n");
        let found = discover(&t.repo, &t.repo, &[], 1000, &mut Vec::new());
        assert_eq!(found.files.len(), 1);
    }
}
