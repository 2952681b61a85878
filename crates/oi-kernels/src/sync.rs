//! The workspace of a container on another machine: copied there before
//! each run and back after it, through the engine's `cp` (a tar stream;
//! nothing needed in the image).
//!
//! Both sides are compared with what they held after the last copy (size
//! and modification time, to the second): only what changed on this
//! machine is sent, and after a run only what the code changed is written
//! here — files, folders, symbolic links, deletions. A file changed on
//! both sides keeps this machine's version; the container's is saved
//! beside it (`NAME.from-container`) and named in a note. Files larger
//! than the limit are neither sent nor brought back (a note names them).
//! Folders kept read-only (`.git`) are sent but never brought back; oi's
//! own folder is never sent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use crate::container::Container;

/// What a path held after the last copy.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Dir,
    File { size: u64, mtime: u64 },
    Link(PathBuf),
}

/// The synced folders of a session's container and what they held.
#[derive(Debug)]
pub(crate) struct Sync {
    roots: Vec<PathBuf>,
    /// Sent, never brought back (read-only folders such as `.git`).
    keep: Vec<PathBuf>,
    /// Never sent (oi's own folder).
    skip: Vec<PathBuf>,
    max_file: u64,
    state: tokio::sync::Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    seen: BTreeMap<PathBuf, Seen>,
    /// Files already named as too large (each is named once).
    too_large: BTreeSet<PathBuf>,
}

impl Sync {
    pub(crate) fn new(
        roots: Vec<PathBuf>,
        keep: Vec<PathBuf>,
        skip: Vec<PathBuf>,
        max_file: u64,
    ) -> Self {
        Self {
            roots,
            keep,
            skip,
            max_file,
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// Sends what changed here since the last copy; notes for the user.
    pub(crate) async fn push(&self, container: &Container) -> Result<Vec<String>, String> {
        let mut state = self.state.lock().await;
        let roots = self.roots.clone();
        let skip = self.skip.clone();
        let max_file = self.max_file;
        let (here, large) = tokio::task::spawn_blocking(move || scan(&roots, &skip, max_file))
            .await
            .map_err(|e| e.to_string())?;
        let mut notes = Vec::new();
        for (path, size) in large {
            if state.too_large.insert(path.clone()) {
                notes.push(format!(
                    "oi: {} ({} MB) is not copied to the container: it is larger than {} MB",
                    path.display(),
                    size >> 20,
                    self.max_file >> 20
                ));
            }
        }
        let changed: Vec<(PathBuf, Seen)> = here
            .iter()
            .filter(|(p, s)| state.seen.get(*p) != Some(*s))
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect();
        let removed: Vec<PathBuf> = state
            .seen
            .keys()
            .filter(|p| !here.contains_key(*p) && !self.is_skipped(p))
            .cloned()
            .collect();
        for root in &self.roots {
            let entries: Vec<(PathBuf, Seen)> = changed
                .iter()
                .filter(|(p, _)| {
                    p.starts_with(root) && p != root && !self.under_other_root(p, root)
                })
                .cloned()
                .collect();
            if entries.is_empty() {
                continue;
            }
            let root_owned = root.clone();
            let archive = tokio::task::spawn_blocking(move || archive(&root_owned, &entries))
                .await
                .map_err(|e| e.to_string())??;
            let target = format!("{}:{}", container.name, root.display());
            container
                .engine
                .output_with_input(&["cp", "-", &target], archive)
                .await
                .map_err(|e| format!("copying {} to the container: {e}", root.display()))?;
        }
        if !removed.is_empty() {
            let mut args: Vec<String> = vec!["rm -rf -- \"$@\"".to_owned(), "rm".to_owned()];
            args.extend(removed.iter().map(|p| p.display().to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            container
                .sh(args[0], &args[1..])
                .await
                .map_err(|e| format!("removing files in the container: {e}"))?;
        }
        state.seen = here;
        Ok(notes)
    }

    /// Brings back what the code changed in the container; notes for the
    /// user.
    pub(crate) async fn pull(&self, container: &Container) -> Result<Vec<String>, String> {
        let mut state = self.state.lock().await;
        let mut notes = Vec::new();
        for root in &self.roots {
            let source = format!("{}:{}", container.name, root.display());
            let archive = container
                .engine
                .output_bytes(&["cp", &source, "-"])
                .await
                .map_err(|e| format!("copying {} back from the container: {e}", root.display()))?;
            let root = root.clone();
            let seen = std::mem::take(&mut state.seen);
            let too_large = std::mem::take(&mut state.too_large);
            let plan = Plan {
                root: root.clone(),
                keep: self.keep.clone(),
                skip: self.skip.clone(),
                others: self
                    .roots
                    .iter()
                    .filter(|r| **r != root && r.starts_with(&root))
                    .cloned()
                    .collect(),
                max_file: self.max_file,
            };
            let (seen, too_large, mut more) = tokio::task::spawn_blocking(move || {
                let mut seen = seen;
                let mut too_large = too_large;
                let notes = plan.apply(&archive, &mut seen, &mut too_large);
                (seen, too_large, notes)
            })
            .await
            .map_err(|e| e.to_string())?;
            state.seen = seen;
            state.too_large = too_large;
            notes.append(&mut more);
        }
        Ok(notes)
    }

    fn is_skipped(&self, path: &Path) -> bool {
        self.skip.iter().any(|s| path.starts_with(s))
    }

    /// Whether `path` lies in another synced folder inside `root` (sent
    /// with that one).
    fn under_other_root(&self, path: &Path, root: &Path) -> bool {
        self.roots
            .iter()
            .any(|r| r != root && r.starts_with(root) && path.starts_with(r))
    }
}

/// Every path under `roots` (not under `skip`) and what it is; and the
/// files over `max_file` bytes, left out.
fn scan(
    roots: &[PathBuf],
    skip: &[PathBuf],
    max_file: u64,
) -> (BTreeMap<PathBuf, Seen>, Vec<(PathBuf, u64)>) {
    let mut seen = BTreeMap::new();
    let mut large = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if skip.iter().any(|s| path.starts_with(s)) {
                continue;
            }
            let Some(what) = seen_of(&path) else {
                continue;
            };
            match &what {
                Seen::Dir => stack.push(path.clone()),
                Seen::File { size, .. } if *size > max_file => {
                    large.push((path, *size));
                    continue;
                }
                _ => {}
            }
            seen.insert(path, what);
        }
    }
    (seen, large)
}

/// What `path` is here now, if anything.
fn seen_of(path: &Path) -> Option<Seen> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return std::fs::read_link(path).ok().map(Seen::Link);
    }
    if kind.is_dir() {
        return Some(Seen::Dir);
    }
    if !kind.is_file() {
        return None;
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    Some(Seen::File {
        size: meta.len(),
        mtime,
    })
}

/// A tar archive of `entries` (under `root`, named relative to it).
fn archive(root: &Path, entries: &[(PathBuf, Seen)]) -> Result<Vec<u8>, String> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    for (path, _) in entries {
        let Ok(name) = path.strip_prefix(root) else {
            continue;
        };
        // Gone since the scan: the next push sees it.
        if let Err(e) = builder.append_path_with_name(path, name)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(format!("reading {}: {e}", path.display()));
        }
    }
    builder
        .into_inner()
        .map_err(|e| format!("making the archive: {e}"))
}

/// How one synced folder's copy from the container is applied here.
struct Plan {
    root: PathBuf,
    keep: Vec<PathBuf>,
    skip: Vec<PathBuf>,
    /// Synced folders inside this one (brought back on their own).
    others: Vec<PathBuf>,
    max_file: u64,
}

impl Plan {
    fn ignored(&self, path: &Path) -> bool {
        self.keep
            .iter()
            .chain(&self.skip)
            .chain(&self.others)
            .any(|p| path.starts_with(p))
    }

    /// Applies `archive` (the folder as `cp` gives it: its own name first)
    /// here, against `seen`; returns notes.
    fn apply(
        &self,
        archive: &[u8],
        seen: &mut BTreeMap<PathBuf, Seen>,
        too_large: &mut BTreeSet<PathBuf>,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        let mut present: BTreeSet<PathBuf> = BTreeSet::new();
        let mut reader = tar::Archive::new(archive);
        let Ok(entries) = reader.entries() else {
            notes.push(format!(
                "oi: the container's copy of {} could not be read; nothing was brought back",
                self.root.display()
            ));
            return notes;
        };
        for entry in entries {
            let Ok(mut entry) = entry else {
                notes.push(format!(
                    "oi: the container's copy of {} ended early; what followed was not brought back",
                    self.root.display()
                ));
                // Nothing is deleted on a partial copy.
                return notes;
            };
            let Ok(name) = entry.path().map(|p| p.into_owned()) else {
                continue;
            };
            // `cp` names entries after the folder itself: drop that part.
            let rel: PathBuf = name.components().skip(1).collect();
            if rel.as_os_str().is_empty()
                || rel
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                continue;
            }
            let path = self.root.join(&rel);
            if self.ignored(&path) {
                continue;
            }
            present.insert(path.clone());
            let header = entry.header();
            let kind = header.entry_type();
            let theirs = if kind.is_dir() {
                Seen::Dir
            } else if kind.is_symlink() {
                match entry.link_name() {
                    Ok(Some(target)) => Seen::Link(target.into_owned()),
                    _ => continue,
                }
            } else if kind.is_file() {
                Seen::File {
                    size: header.size().unwrap_or(0),
                    mtime: header.mtime().unwrap_or(0),
                }
            } else {
                continue;
            };
            if let Seen::File { size, .. } = theirs
                && size > self.max_file
            {
                if too_large.insert(path.clone()) {
                    notes.push(format!(
                        "oi: {} ({} MB) stays in the container: it is larger than {} MB",
                        path.display(),
                        size >> 20,
                        self.max_file >> 20
                    ));
                }
                continue;
            }
            let before = seen.get(&path).cloned();
            if before.as_ref() == Some(&theirs) {
                continue;
            }
            let here = seen_of(&path);
            let changed_here = here.is_some() && here != before && here != Some(theirs.clone());
            let written = match &theirs {
                Seen::Dir => fs_err::create_dir_all(&path).map_err(|e| e.to_string()),
                Seen::Link(target) => {
                    if here.is_some() && !changed_here {
                        let _ = fs_err::remove_file(&path);
                    }
                    if changed_here {
                        Ok(())
                    } else {
                        std::os::unix::fs::symlink(target, &path).map_err(|e| e.to_string())
                    }
                }
                Seen::File { mtime, .. } => {
                    let destination = if changed_here {
                        let mut aside = path.clone().into_os_string();
                        aside.push(".from-container");
                        let aside = PathBuf::from(aside);
                        notes.push(format!(
                            "oi: {} changed here and in the container; kept this machine's, the container's is {}",
                            path.display(),
                            aside.display()
                        ));
                        aside
                    } else {
                        path.clone()
                    };
                    write_file(&mut entry, &destination, *mtime)
                }
            };
            match written {
                // After a conflict too: this machine's version, now newer
                // than what was last copied, goes to the container next.
                Ok(()) => {
                    // Folders made on the way are in the container too.
                    for parent in path.ancestors().skip(1) {
                        if parent == self.root || !parent.starts_with(&self.root) {
                            break;
                        }
                        seen.entry(parent.to_path_buf()).or_insert(Seen::Dir);
                        present.insert(parent.to_path_buf());
                    }
                    seen.insert(path, theirs);
                }
                Err(e) => notes.push(format!(
                    "oi: {} could not be brought back from the container: {e}",
                    path.display()
                )),
            }
        }
        // What the code deleted, unless it changed here meanwhile; deepest
        // first, so folders are empty when their turn comes.
        let gone: Vec<PathBuf> = seen
            .keys()
            .filter(|p| p.starts_with(&self.root) && !present.contains(*p) && !self.ignored(p))
            .cloned()
            .collect();
        for path in gone.into_iter().rev() {
            let before = seen.remove(&path);
            let here = seen_of(&path);
            if here.is_none() {
                continue;
            }
            if here != before {
                notes.push(format!(
                    "oi: {} was deleted in the container but changed here; kept it",
                    path.display()
                ));
                continue;
            }
            let removed = match here {
                Some(Seen::Dir) => fs_err::remove_dir(&path),
                _ => fs_err::remove_file(&path),
            };
            if let Err(e) = removed
                && e.kind() != std::io::ErrorKind::NotFound
            {
                notes.push(format!("oi: {} could not be deleted: {e}", path.display()));
            }
        }
        notes
    }
}

/// Writes `entry`'s contents to `path` (its folder made), through a
/// temporary file renamed over it, with the modification time `mtime`.
fn write_file(entry: &mut impl std::io::Read, path: &Path, mtime: u64) -> Result<(), String> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    fs_err::create_dir_all(parent).map_err(|e| e.to_string())?;
    let mut temp = tempfile::NamedTempFile::new_in(parent).map_err(|e| e.to_string())?;
    std::io::copy(entry, &mut temp).map_err(|e| e.to_string())?;
    let time = UNIX_EPOCH + Duration::from_secs(mtime);
    temp.as_file()
        .set_modified(time)
        .map_err(|e| e.to_string())?;
    temp.persist(path).map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An archive as `cp` gives it: the folder's own name first.
    fn from_container(name: &str, files: &[(&str, &[u8], u64)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let mut dir = tar::Header::new_gnu();
        dir.set_entry_type(tar::EntryType::Directory);
        dir.set_mode(0o755);
        dir.set_size(0);
        builder
            .append_data(&mut dir, name, std::io::empty())
            .unwrap();
        for (path, data, mtime) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(*mtime);
            builder
                .append_data(&mut header, format!("{name}/{path}"), *data)
                .unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn plan(root: &Path) -> Plan {
        Plan {
            root: root.to_path_buf(),
            keep: vec![root.join(".git")],
            skip: Vec::new(),
            others: Vec::new(),
            max_file: 1024,
        }
    }

    #[test]
    fn new_and_changed_files_come_back_and_deleted_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs_err::create_dir_all(root.join(".git")).unwrap();
        fs_err::write(root.join("old.txt"), "old").unwrap();
        fs_err::write(root.join("gone.txt"), "bye").unwrap();
        let (mut seen, _) = scan(std::slice::from_ref(&root), &[], 1024);
        let archive = from_container(
            "ws",
            &[
                ("old.txt", b"changed", 1_700_000_000),
                ("sub/new.txt", b"new", 1_700_000_001),
                (".git/HEAD", b"tampered", 1_700_000_002),
                ("big.bin", &[0u8; 2048], 1_700_000_003),
            ],
        );
        let mut large = BTreeSet::new();
        let notes = plan(&root).apply(&archive, &mut seen, &mut large);
        assert_eq!(
            fs_err::read_to_string(root.join("old.txt")).unwrap(),
            "changed"
        );
        assert_eq!(
            fs_err::read_to_string(root.join("sub/new.txt")).unwrap(),
            "new"
        );
        assert!(!root.join("gone.txt").exists());
        // Read-only folders are never brought back, nor large files.
        assert!(!root.join(".git/HEAD").exists());
        assert!(!root.join("big.bin").exists());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("big.bin (0 MB) stays in the container"),
            "{notes:?}"
        );
        // The times are the container's, so the next push sends nothing back.
        assert_eq!(
            seen_of(&root.join("sub/new.txt")),
            Some(Seen::File {
                size: 3,
                mtime: 1_700_000_001
            })
        );
        let (again, _) = scan(std::slice::from_ref(&root), &[], 1024);
        let differing: Vec<_> = again
            .iter()
            .filter(|(p, s)| seen.get(*p) != Some(*s) && !p.starts_with(root.join(".git")))
            .collect();
        assert_eq!(differing, Vec::<(&PathBuf, &Seen)>::new());
    }

    #[test]
    fn a_file_changed_on_both_sides_keeps_this_machines_version() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs_err::create_dir_all(&root).unwrap();
        fs_err::write(root.join("notes.txt"), "v1").unwrap();
        let (mut seen, _) = scan(std::slice::from_ref(&root), &[], 1024);
        // Changed here after the last copy (another size), and there.
        fs_err::write(root.join("notes.txt"), "mine, longer").unwrap();
        fs_err::write(root.join("kept.txt"), "new here").unwrap();
        let archive = from_container("ws", &[("notes.txt", b"theirs", 1_700_000_000)]);
        let notes = plan(&root).apply(&archive, &mut seen, &mut BTreeSet::new());
        assert_eq!(
            fs_err::read_to_string(root.join("notes.txt")).unwrap(),
            "mine, longer"
        );
        assert_eq!(
            fs_err::read_to_string(root.join("notes.txt.from-container")).unwrap(),
            "theirs"
        );
        assert!(
            notes[0].contains("changed here and in the container"),
            "{notes:?}"
        );
        // A file new here and not yet sent is not taken for a deletion.
        assert!(root.join("kept.txt").exists());
    }

    #[test]
    fn a_broken_copy_deletes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs_err::create_dir_all(&root).unwrap();
        fs_err::write(root.join("a.txt"), "a").unwrap();
        let (mut seen, _) = scan(std::slice::from_ref(&root), &[], 1024);
        let mut archive = from_container("ws", &[("b.txt", b"b", 1)]);
        archive.truncate(700);
        let notes = plan(&root).apply(&archive, &mut seen, &mut BTreeSet::new());
        assert!(root.join("a.txt").exists());
        assert!(!notes.is_empty());
    }

    #[test]
    fn the_archive_holds_the_changed_entries_relative_to_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        fs_err::create_dir_all(root.join("sub")).unwrap();
        fs_err::write(root.join("sub/a.txt"), "a").unwrap();
        std::os::unix::fs::symlink("sub/a.txt", root.join("link")).unwrap();
        let (seen, _) = scan(std::slice::from_ref(&root), &[], 1024);
        let entries: Vec<(PathBuf, Seen)> = seen.into_iter().collect();
        let bytes = archive(&root, &entries).unwrap();
        let mut names: Vec<String> = tar::Archive::new(&bytes[..])
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        names.sort();
        assert_eq!(names, vec!["link", "sub", "sub/a.txt"]);
    }
}
