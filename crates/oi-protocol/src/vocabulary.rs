//! The words oi's settings are spelled with, defined once for every crate
//! and front end: how far code may reach ([`SandboxMode`]), when the user
//! is asked ([`ApprovalPolicy`]), how the model is asked to run code
//! ([`HarnessKind`]) and which API a provider speaks ([`WireApi`]).
//!
//! Each is a plain enum that reads and writes itself as its name
//! (`"workspace-write"`) — in TOML, JSON, flags and ops alike — and also
//! accepts the spellings other tools use for the same meaning
//! (`danger-full-access`, Codex's name for `full-access`). An unknown word
//! is an [`UnknownWord`] error that lists the valid ones.

use std::fmt;
use std::str::FromStr;

/// A word that is not one of a vocabulary's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWord {
    /// What the word was meant to name, e.g. `sandbox mode`.
    pub what: &'static str,
    pub word: String,
    /// The valid words (without aliases).
    pub valid: &'static [&'static str],
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let valid: Vec<String> = self.valid.iter().map(|v| format!("`{v}`")).collect();
        write!(
            f,
            "there is no {} `{}`: use {}",
            self.what,
            self.word,
            valid.join(", ")
        )
    }
}

impl std::error::Error for UnknownWord {}

/// Defines a vocabulary: the enum, its names and aliases, `as_str`,
/// `Display`, `FromStr`, serde as the name, and (feature `clap`) clap's
/// `ValueEnum`.
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $word:literal $(| $alias:literal)*
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];
            /// The name of every value (what `as_str` gives).
            pub const NAMES: &'static [&'static str] = &[$($word),+];
            /// Every spelling accepted: the names, then the aliases.
            pub const ACCEPTED: &'static [&'static str] = &[$($word,)+ $($($alias,)*)+];

            /// The value's name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $word,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownWord;

            fn from_str(word: &str) -> Result<Self, UnknownWord> {
                match word.trim() {
                    $($word $(| $alias)* => Ok(Self::$variant),)+
                    other => Err(UnknownWord {
                        what: $what,
                        word: other.to_owned(),
                        valid: Self::NAMES,
                    }),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let word = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                word.parse().map_err(serde::de::Error::custom)
            }
        }

        #[cfg(feature = "clap")]
        impl clap::ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                Self::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(match self {
                    $(Self::$variant => clap::builder::PossibleValue::new($word) $(.alias($alias))*,)+
                })
            }
        }
    };
}

vocabulary! {
    /// How far code may reach.
    #[derive(Default)]
    pub enum SandboxMode ("sandbox mode") {
        /// Reads anywhere; writes nowhere but the kernel's own temporary
        /// folder.
        ReadOnly = "read-only",
        /// Reads anywhere; writes in the workspace, the temporary folder and
        /// the added folders (not the workspace's `.git` and
        /// `.openinterpreter`, nor oi's own folder).
        #[default]
        WorkspaceWrite = "workspace-write",
        /// No confinement.
        FullAccess = "full-access" | "danger-full-access",
        /// Code runs in a container (Docker or Podman, `[container]`):
        /// the workspace and the added folders are mounted at their own
        /// paths and are the only places it can write, besides the
        /// container's own temporary folder; no network unless allowed.
        Container = "container",
    }
}

vocabulary! {
    /// When the user is asked before code runs.
    #[derive(Default)]
    pub enum ApprovalPolicy ("approval policy") {
        /// Every run waits for the user's decision (`Op::Approve`).
        #[default]
        Ask = "ask",
        /// Runs start without asking, except risky ones (`--yes`).
        Auto = "auto",
        /// Nothing is asked, not even for risky runs
        /// (`--dangerously-allow-all`).
        Never = "never",
    }
}

vocabulary! {
    /// How the model is asked to run code, and how its reply becomes code.
    #[derive(Default)]
    pub enum HarnessKind ("harness") {
        /// One `execute {language, code}` function tool.
        #[default]
        Native = "native",
        /// No tools: the fenced code blocks of the reply are the code.
        Markdown = "markdown",
        /// The tools Claude models are trained on: `bash` (a persistent
        /// shell) and the `str_replace_based_edit_tool` text editor, plus
        /// `execute` for other languages.
        ClaudeCode = "claude-code",
        /// The tools GPT-5 and Codex models are trained on: `shell` and
        /// `apply_patch` (Codex's patch format), plus `execute`.
        Codex = "codex",
    }
}

vocabulary! {
    /// The API a model provider speaks.
    #[derive(Default)]
    pub enum WireApi ("wire API") {
        /// OpenAI Chat Completions (`/chat/completions`); nearly every server.
        #[default]
        Chat = "chat",
        /// OpenAI Responses (`/responses`).
        Responses = "responses",
        /// Anthropic Messages (`/v1/messages`).
        Messages = "messages",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_word_reads_back_as_its_value() {
        for mode in SandboxMode::ALL {
            assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(*mode));
            let json = serde_json::to_string(mode).unwrap();
            assert_eq!(json, format!("\"{mode}\""));
            assert_eq!(serde_json::from_str::<SandboxMode>(&json).unwrap(), *mode);
        }
        for policy in ApprovalPolicy::ALL {
            assert_eq!(policy.as_str().parse::<ApprovalPolicy>(), Ok(*policy));
        }
        for kind in HarnessKind::ALL {
            assert_eq!(kind.as_str().parse::<HarnessKind>(), Ok(*kind));
        }
        for wire in WireApi::ALL {
            assert_eq!(wire.as_str().parse::<WireApi>(), Ok(*wire));
        }
    }

    #[test]
    fn codex_spellings_of_the_same_meaning_are_accepted() {
        assert_eq!("danger-full-access".parse(), Ok(SandboxMode::FullAccess));
        assert_eq!(
            serde_json::from_str::<SandboxMode>("\"danger-full-access\"").unwrap(),
            SandboxMode::FullAccess
        );
        // Written back under oi's own name.
        assert_eq!(SandboxMode::FullAccess.to_string(), "full-access");
        assert_eq!(
            SandboxMode::ACCEPTED,
            [
                "read-only",
                "workspace-write",
                "full-access",
                "container",
                "danger-full-access"
            ]
        );
    }

    #[test]
    fn an_unknown_word_lists_the_valid_ones() {
        let error = "sometimes".parse::<ApprovalPolicy>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "there is no approval policy `sometimes`: use `ask`, `auto`, `never`"
        );
        let error = serde_json::from_str::<HarnessKind>("\"xml\"").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("there is no harness `xml`: use `native`, `markdown`"),
            "{error}"
        );
    }
}
