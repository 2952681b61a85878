//! API keys pasted at first run (`interpreter setup`): kept apart from
//! `config.toml`, in `keys.toml` in oi's folder, readable only by the user.
//! Each is stored under the variable it stands in for (`OPENAI_API_KEY =
//! "…"`) and used when that variable is not set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::ConfigError;

/// The file's name in oi's folder.
pub const KEYS_FILE: &str = "keys.toml";

/// The stored keys (for keeping them out of what is printed).
pub fn stored(home: &Path) -> Vec<String> {
    read(home).0.into_values().collect()
}

/// The stored keys, and a warning when the file cannot be read or others
/// may read it.
pub(crate) fn read(home: &Path) -> (BTreeMap<String, String>, Option<String>) {
    let path = home.join(KEYS_FILE);
    let Ok(text) = fs_err::read_to_string(&path) else {
        return (BTreeMap::new(), None);
    };
    let doc = match text.parse::<toml_edit::DocumentMut>() {
        Ok(doc) => doc,
        Err(e) => {
            return (
                BTreeMap::new(),
                Some(format!(
                    "{}: not valid TOML, so no key stored there is used ({}); run `interpreter setup` to write it again",
                    path.display(),
                    e.message()
                )),
            );
        }
    };
    let keys = doc
        .iter()
        .filter_map(|(name, item)| Some((name.to_owned(), item.as_str()?.to_owned())))
        .collect();
    (keys, open_to_others(&path))
}

#[cfg(unix)]
fn open_to_others(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs_err::metadata(path).ok()?.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} holds API keys and others on this machine may read it: `chmod 600 {}`",
            path.display(),
            path.display()
        )
    })
}

#[cfg(not(unix))]
fn open_to_others(_: &Path) -> Option<String> {
    None
}

/// Stores `key` as the value of variable `var`, replacing an earlier one;
/// the file is created readable only by the user.
pub fn store(home: &Path, var: &str, key: &str) -> Result<PathBuf, ConfigError> {
    let path = home.join(KEYS_FILE);
    let io = |source: std::io::Error| ConfigError::Write {
        path: path.clone(),
        source,
    };
    fs_err::create_dir_all(home).map_err(io)?;
    let mut doc = fs_err::read_to_string(&path)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        .unwrap_or_default();
    doc[var] = toml_edit::value(key.trim());
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    std::io::Write::write_all(&mut file, doc.to_string().as_bytes()).map_err(io)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stored_privately_and_read_back() {
        let home = tempfile::tempdir().unwrap();
        let path = store(home.path(), "OPENAI_API_KEY", " sk-one \n").unwrap();
        store(home.path(), "GROQ_API_KEY", "gsk-two").unwrap();
        let (keys, warning) = read(home.path());
        assert_eq!(keys["OPENAI_API_KEY"], "sk-one");
        assert_eq!(keys["GROQ_API_KEY"], "gsk-two");
        assert_eq!(warning, None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs_err::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
            fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(read(home.path()).1.unwrap().contains("chmod 600"));
        }
        fs_err::write(&path, "OPENAI_API_KEY = ").unwrap();
        let (keys, warning) = read(home.path());
        assert!(keys.is_empty());
        assert!(warning.unwrap().contains("not valid TOML"));
    }
}
