//! Where a configuration value came from.

use std::fmt;
use std::path::{Path, PathBuf};

/// The layer (and place) that set a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// oi's own default.
    Default,
    /// A built-in model provider definition.
    BuiltIn,
    /// The user file (`~/.openinterpreter/config.toml`), at a line.
    File { path: PathBuf, line: usize },
    /// A profile: `[profiles.NAME]` in the user file, or `profiles/NAME.toml`.
    Profile {
        name: String,
        path: PathBuf,
        line: usize,
    },
    /// A trusted project's `.openinterpreter/config.toml`.
    Project { path: PathBuf, line: usize },
    /// An environment variable.
    Env { var: String },
    /// `-c key=value` on the command line.
    Override,
    /// A dedicated flag such as `--model`.
    Flag { flag: String },
    /// Chosen by oi from other settings; `reason` says how.
    Auto { reason: String },
}

impl Origin {
    /// The file this origin points into, if any.
    pub fn file(&self) -> Option<(&Path, usize)> {
        match self {
            Self::File { path, line }
            | Self::Profile { path, line, .. }
            | Self::Project { path, line } => Some((path, *line)),
            _ => None,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::BuiltIn => f.write_str("built-in"),
            Self::File { path, line } => write!(f, "{}:{line}", display_path(path)),
            Self::Profile { name, path, line } => {
                write!(f, "profile {name} ({}:{line})", display_path(path))
            }
            Self::Project { path, line } => {
                write!(f, "project {}:{line}", display_path(path))
            }
            Self::Env { var } => write!(f, "${var}"),
            Self::Override => f.write_str("-c"),
            Self::Flag { flag } => f.write_str(flag),
            Self::Auto { reason } => write!(f, "auto: {reason}"),
        }
    }
}

/// A path for messages: under the home directory it starts with `~`.
pub fn display_path(path: &Path) -> String {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based() {
        let text = "a = 1\nb = 2\n\nc = 3";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 6), 2);
        assert_eq!(line_of(text, text.find('c').unwrap()), 4);
    }

    #[test]
    fn origins_read_well() {
        assert_eq!(Origin::Override.to_string(), "-c");
        assert_eq!(
            Origin::Flag {
                flag: "--model".into()
            }
            .to_string(),
            "--model"
        );
        assert_eq!(
            Origin::Env {
                var: "OI_MODEL".into()
            }
            .to_string(),
            "$OI_MODEL"
        );
        assert_eq!(
            Origin::File {
                path: "/etc/oi.toml".into(),
                line: 3
            }
            .to_string(),
            "/etc/oi.toml:3"
        );
    }
}
