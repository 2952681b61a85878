//! The languages oi can run: how to find their interpreters, the names
//! models use for them, and what to install when one is missing.

use std::path::PathBuf;

use crate::{KernelKind, LanguageSpec};

/// A language oi has a driver for.
struct Known {
    name: &'static str,
    kind: KernelKind,
    /// Interpreters to look for on `PATH`, in order of preference.
    programs: &'static [&'static str],
    aliases: &'static [&'static str],
    /// What to install, for the message when it is missing.
    install: &'static str,
}

const KNOWN: &[Known] = &[
    Known {
        name: "python",
        kind: KernelKind::Python,
        programs: &["python3"],
        aliases: &["py", "python3", "ipython", "jupyter", "pycon"],
        install: "Python 3 (`python3`; e.g. `apt-get install python3`)",
    },
    Known {
        name: "shell",
        kind: KernelKind::Bash,
        programs: &["bash"],
        aliases: &["bash", "sh", "console", "terminal", "shell-session", "zsh"],
        install: "bash",
    },
    Known {
        name: "javascript",
        kind: KernelKind::Node,
        programs: &["node", "nodejs"],
        aliases: &["js", "node", "nodejs", "jsx"],
        install: "Node.js (`node`; e.g. `apt-get install nodejs`)",
    },
    Known {
        name: "ruby",
        kind: KernelKind::Ruby,
        programs: &["ruby"],
        aliases: &["rb", "irb"],
        install: "Ruby (`ruby`; e.g. `apt-get install ruby`)",
    },
    Known {
        name: "r",
        kind: KernelKind::R,
        programs: &["Rscript"],
        aliases: &["rscript", "rlang"],
        install: "R (`Rscript`; e.g. `apt-get install r-base-core`)",
    },
    Known {
        name: "perl",
        kind: KernelKind::Perl,
        programs: &["perl"],
        aliases: &["pl"],
        install: "Perl (`perl`; e.g. `apt-get install perl`)",
    },
    Known {
        name: "lua",
        kind: KernelKind::Lua,
        programs: &["lua5.4", "lua", "lua5.3"],
        aliases: &["luajit"],
        install: "Lua (`lua5.4`; e.g. `apt-get install lua5.4`)",
    },
    Known {
        name: "php",
        kind: KernelKind::Php,
        programs: &["php"],
        aliases: &[],
        install: "PHP (`php`; e.g. `apt-get install php-cli`)",
    },
    Known {
        name: "zsh",
        kind: KernelKind::Zsh,
        programs: &["zsh"],
        aliases: &[],
        install: "zsh (e.g. `apt-get install zsh`)",
    },
];

impl LanguageSpec {
    /// The spec of a language oi knows, run by `program`.
    pub fn known(name: &str, program: impl Into<PathBuf>) -> Option<Self> {
        let known = KNOWN.iter().find(|k| k.name == name)?;
        Some(Self {
            name: known.name.to_owned(),
            kind: known.kind,
            program: program.into(),
            args: Vec::new(),
            aliases: known.aliases.iter().map(|a| (*a).to_owned()).collect(),
        })
    }
}

/// The languages whose interpreters are on `PATH`, Python and the shell
/// first.
pub fn detect_languages() -> Vec<LanguageSpec> {
    KNOWN
        .iter()
        .filter_map(|k| {
            let program = k.programs.iter().find_map(|p| which::which(p).ok())?;
            LanguageSpec::known(k.name, program)
        })
        .collect()
}

/// The interpreters that run languages of `kind`, in order of preference
/// (what is looked for on `PATH`).
pub(crate) fn programs_of(kind: KernelKind) -> &'static [&'static str] {
    KNOWN
        .iter()
        .find(|k| k.kind == kind)
        .map_or(&[], |k| k.programs)
}

/// The names of every language oi has a driver for.
pub fn known_languages() -> Vec<&'static str> {
    KNOWN.iter().map(|k| k.name).collect()
}

/// What to install to run `name` (a language name or alias), if oi knows it.
pub fn install_hint(name: &str) -> Option<&'static str> {
    let name = name.trim().to_ascii_lowercase();
    KNOWN
        .iter()
        .find(|k| k.name == name || k.aliases.contains(&name.as_str()))
        .map(|k| k.install)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_a_unique_name_and_install_hint() {
        let names = known_languages();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert_eq!(
            install_hint("rb"),
            Some("Ruby (`ruby`; e.g. `apt-get install ruby`)")
        );
        assert_eq!(install_hint("cobol"), None);
    }
}
