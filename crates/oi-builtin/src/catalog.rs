//! The models oi can download by name, and how a `model` setting names
//! one: a name from this list, or a path to a GGUF file.

use std::path::{Path, PathBuf};

use crate::BuiltinError;

/// A model oi knows how to fetch and check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// What `--model` calls it.
    pub name: &'static str,
    /// One line for lists.
    pub description: &'static str,
    /// The Hugging Face repository that publishes it.
    pub repo: &'static str,
    /// The file in that repository (and in the cache).
    pub file: &'static str,
    /// The file's size in bytes.
    pub size: u64,
    /// The file's SHA-256, lowercase hex: a download that does not match
    /// is not kept.
    pub sha256: &'static str,
}

impl KnownModel {
    /// Where the file is downloaded from: `base` (a mirror with Hugging
    /// Face's paths) or Hugging Face.
    pub fn url(&self, base: Option<&str>) -> String {
        let base = base
            .filter(|b| !b.trim().is_empty())
            .unwrap_or(HUGGING_FACE)
            .trim_end_matches('/');
        format!("{base}/{}/resolve/main/{}", self.repo, self.file)
    }
}

/// Where models come from when no mirror is set.
pub const HUGGING_FACE: &str = "https://huggingface.co";

/// The models oi downloads by name (Qwen2.5-Coder Instruct, the official
/// Q4_K_M GGUF files).
pub const KNOWN: &[KnownModel] = &[
    KnownModel {
        name: "qwen2.5-coder-1.5b",
        description: "Qwen2.5-Coder 1.5B Instruct, Q4_K_M, 1.1 GB; the default",
        repo: "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    },
    KnownModel {
        name: "qwen2.5-coder-0.5b",
        description: "Qwen2.5-Coder 0.5B Instruct, Q4_K_M, 491 MB; fastest, weakest",
        repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    },
];

/// The known model called `name` (its file name, with or without
/// `.gguf`, is accepted too).
pub fn known(name: &str) -> Option<&'static KnownModel> {
    let name = name.trim();
    KNOWN.iter().find(|m| {
        m.name.eq_ignore_ascii_case(name)
            || m.file.eq_ignore_ascii_case(name)
            || m.file
                .strip_suffix(".gguf")
                .is_some_and(|f| f.eq_ignore_ascii_case(name))
    })
}

/// What a `model` setting names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelRef {
    /// A GGUF file on disk, ready to load.
    File(PathBuf),
    /// A known model, in the cache already.
    Cached(&'static KnownModel, PathBuf),
    /// A known model that must be downloaded to `PathBuf` first.
    Missing(&'static KnownModel, PathBuf),
}

impl ModelRef {
    /// The weights file (which may not exist yet for `Missing`).
    pub fn path(&self) -> &Path {
        match self {
            Self::File(p) | Self::Cached(_, p) | Self::Missing(_, p) => p,
        }
    }
}

/// What `model` names: a path to a GGUF file (relative to `cwd`, `~/`
/// allowed), or a known model looked up in `cache`.
pub fn resolve(model: &str, cwd: &Path, cache: &Path) -> Result<ModelRef, BuiltinError> {
    let model = model.trim();
    if let Some(entry) = known(model) {
        let path = cache.join(entry.file);
        return Ok(if path.is_file() {
            ModelRef::Cached(entry, path)
        } else {
            ModelRef::Missing(entry, path)
        });
    }
    let looks_like_path = model.to_ascii_lowercase().ends_with(".gguf")
        || model.contains('/')
        || model.contains('\\');
    if !looks_like_path {
        return Err(BuiltinError::UnknownModel {
            model: model.to_owned(),
        });
    }
    let path = expand_home(model).unwrap_or_else(|| cwd.join(model));
    if !path.is_file() {
        return Err(BuiltinError::NoSuchFile { path });
    }
    Ok(ModelRef::File(path))
}

fn expand_home(path: &str) -> Option<PathBuf> {
    if let Some(rest) = path.strip_prefix("~/") {
        return std::env::var_os("HOME").map(|home| PathBuf::from(home).join(rest));
    }
    let path = PathBuf::from(path);
    path.is_absolute().then_some(path)
}

/// The models in `cache`: the known ones first, then any other GGUF file
/// put there, with their sizes.
pub fn cached(cache: &Path) -> Vec<(String, PathBuf, u64)> {
    let mut found = Vec::new();
    for entry in KNOWN {
        let path = cache.join(entry.file);
        if let Ok(meta) = fs_err::metadata(&path) {
            found.push((entry.name.to_owned(), path, meta.len()));
        }
    }
    let Ok(dir) = fs_err::read_dir(cache) else {
        return found;
    };
    let mut others: Vec<(String, PathBuf, u64)> = dir
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
                && !KNOWN
                    .iter()
                    .any(|k| p.file_name().is_some_and(|n| n == k.file))
        })
        .filter_map(|p| {
            let size = fs_err::metadata(&p).ok()?.len();
            Some((p.display().to_string(), p, size))
        })
        .collect();
    others.sort();
    found.extend(others);
    found
}

/// oi's model cache: `$XDG_CACHE_HOME/oi/models`, else
/// `~/.cache/oi/models`.
pub fn cache_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = env("XDG_CACHE_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Some(PathBuf::from(dir).join("oi").join("models"));
    }
    env("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".cache").join("oi").join("models"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_paths_and_unknown_names() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        assert!(matches!(
            resolve("qwen2.5-coder-0.5b", dir.path(), &cache).unwrap(),
            ModelRef::Missing(m, _) if m.name == "qwen2.5-coder-0.5b"
        ));
        fs_err::create_dir_all(&cache).unwrap();
        fs_err::write(cache.join(KNOWN[0].file), b"x").unwrap();
        assert!(matches!(
            resolve("QWEN2.5-coder-1.5b-instruct-q4_k_m", dir.path(), &cache).unwrap(),
            ModelRef::Cached(m, _) if m.name == "qwen2.5-coder-1.5b"
        ));
        fs_err::write(dir.path().join("mine.gguf"), b"x").unwrap();
        assert_eq!(
            resolve("mine.gguf", dir.path(), &cache).unwrap(),
            ModelRef::File(dir.path().join("mine.gguf"))
        );
        assert!(matches!(
            resolve("other.gguf", dir.path(), &cache),
            Err(BuiltinError::NoSuchFile { .. })
        ));
        assert!(matches!(
            resolve("gpt-5", dir.path(), &cache),
            Err(BuiltinError::UnknownModel { .. })
        ));
        fs_err::write(cache.join("extra.gguf"), b"xy").unwrap();
        let listed = cached(&cache);
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].0, "qwen2.5-coder-1.5b");
        assert_eq!(listed[1].2, 2);
    }

    #[test]
    fn urls_follow_the_mirror() {
        let m = known("qwen2.5-coder-0.5b").unwrap();
        assert_eq!(
            m.url(None),
            "https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
        );
        assert!(
            m.url(Some("http://127.0.0.1:9/hf/"))
                .starts_with("http://127.0.0.1:9/hf/Qwen/")
        );
    }

    #[test]
    fn the_cache_follows_xdg() {
        let env = |k: &str| match k {
            "XDG_CACHE_HOME" => Some("/x/cache".to_owned()),
            "HOME" => Some("/home/u".to_owned()),
            _ => None,
        };
        assert_eq!(
            cache_dir(&env).unwrap(),
            PathBuf::from("/x/cache/oi/models")
        );
        let env = |k: &str| (k == "HOME").then(|| "/home/u".to_owned());
        assert_eq!(
            cache_dir(&env).unwrap(),
            PathBuf::from("/home/u/.cache/oi/models")
        );
    }
}
