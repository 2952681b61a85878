//! Keeping secrets out of what oi writes and prints.

use std::borrow::Cow;

/// What every secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values that must never be shown or stored (API keys, header tokens):
/// [`Secrets::redact`] replaces each in a text. Values shorter than
/// [`Secrets::MIN_LEN`] are ignored, since replacing them would mangle
/// ordinary text.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// Longest first, so a secret containing another is replaced whole.
    values: Vec<String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}

impl Secrets {
    /// The shortest value taken for a secret.
    pub const MIN_LEN: usize = 6;

    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut values: Vec<String> = values
            .into_iter()
            .map(Into::into)
            .map(|v| v.trim().to_owned())
            .filter(|v| v.len() >= Self::MIN_LEN)
            .collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Self { values }
    }

    /// These secrets and `other`'s.
    pub fn with(mut self, other: &Secrets) -> Self {
        self.values.extend(other.values.iter().cloned());
        Self::new(self.values)
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in &self.values {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_is_replaced_longest_first_and_short_values_are_ignored() {
        let secrets = Secrets::new(["sk-abc123", "sk-abc123-long-tail", "abc", "  "]);
        assert_eq!(
            secrets.redact("a sk-abc123-long-tail and a sk-abc123, abc"),
            "a [redacted] and a [redacted], abc"
        );
        assert!(matches!(secrets.redact("nothing here"), Cow::Borrowed(_)));
        assert!(Secrets::new(["x"]).is_empty());
    }
}
