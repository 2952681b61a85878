//! Bounded walks below the working folder, for the notes and re-runs that
//! look for files the task's code missed or misplaced: in name order,
//! hidden folders left out, a few levels down and a few hundred entries a
//! folder at most, so a large tree costs little.

use std::path::Path;

/// Entries read in each folder, at most.
const ENTRIES: usize = 500;

/// The first `Some` that `found` gives for a file below `dir`, at most
/// `depth` folders down: entries in name order, each folder walked where
/// it stands among them.
pub(super) fn find_file<T>(
    dir: &Path,
    depth: usize,
    found: &mut dyn FnMut(&Path) -> Option<T>,
) -> Option<T> {
    let entries = fs_err::read_dir(dir).ok()?;
    let mut entries: Vec<_> = entries.flatten().take(ENTRIES).collect();
    entries.sort_by_key(|e| e.file_name());
    entries.into_iter().find_map(|entry| {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_file() => found(&path),
            Ok(t) if t.is_dir() && depth > 0 && !hidden(&entry.file_name()) => {
                find_file(&path, depth - 1, found)
            }
            _ => None,
        }
    })
}

/// Calls `each` with every file below `dir`, as [`find_file`] walks.
pub(super) fn each_file(dir: &Path, depth: usize, each: &mut dyn FnMut(&Path)) {
    find_file::<()>(dir, depth, &mut |path| {
        each(path);
        None
    });
}

fn hidden(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with('.')
}

/// A folder holding `files` (paths with their folders, each file holding
/// a word), for tests.
#[cfg(test)]
pub(super) fn folder_with(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let path = dir.path().join(file);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, "x").unwrap();
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_found_in_name_order_within_the_depth_and_not_in_hidden_folders() {
        let dir = folder_with(&["b/x.txt", "a/y/x.txt", "c.txt", ".git/x.txt", "d/e/f/x.txt"]);
        let mut seen = Vec::new();
        each_file(dir.path(), 1, &mut |path| {
            seen.push(path.strip_prefix(dir.path()).unwrap().to_owned());
        });
        let seen: Vec<&str> = seen.iter().map(|p| p.to_str().unwrap()).collect();
        // `a/y/x.txt` and `d/e/f/x.txt` lie deeper than one folder down.
        assert_eq!(seen, ["b/x.txt", "c.txt"]);
        let first = find_file(dir.path(), 4, &mut |path| {
            (path.file_name()? == "x.txt").then(|| path.to_owned())
        });
        assert_eq!(first, Some(dir.path().join("a/y/x.txt")));
        assert_eq!(find_file(dir.path(), 4, &mut |_| None::<()>), None);
    }
}
