//! The secrets a provider needs, read from the environment when a request is
//! about to be made (never stored in the configuration, never printed).

use crate::error::ConfigError;

/// The key variable of Codex clients (the Codex SDK sets it).
pub(crate) const CODEX_API_KEY: &str = "CODEX_API_KEY";
use crate::load::Loaded;

/// What authenticates requests to the active provider.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub api_key: Option<String>,
    /// `http_headers`, then `env_http_headers` whose variables are set.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("api_key", &self.api_key.as_ref().map(|_| "<hidden>"))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Loaded {
    /// The environment variables kernels must not get: every provider's
    /// key and header variables (built-in and configured) and other
    /// well-known model API key variables — except those `pass_env` names.
    /// Sorted, without duplicates.
    pub fn hidden_env(&self) -> Vec<String> {
        let mut names: Vec<String> = crate::providers::KNOWN_KEY_VARIABLES
            .iter()
            .map(|n| (*n).to_owned())
            .collect();
        for p in self
            .config
            .providers
            .values()
            .chain([&self.config.provider])
        {
            names.extend(p.env_key.iter().cloned());
            names.extend(p.env_http_headers.values().cloned());
        }
        names.sort();
        names.dedup();
        names.retain(|n| !self.config.pass_env.contains(n));
        names
    }

    /// The active provider's credentials: `api_key` (from `--api-key`) wins
    /// over the provider's `env_key` variable, which must be set when the
    /// provider needs a key. The built-in `openai` provider also takes
    /// `CODEX_API_KEY` when `OPENAI_API_KEY` is not set (the variable Codex
    /// clients set).
    pub fn credentials(&self, api_key: Option<&str>) -> Result<Credentials, ConfigError> {
        let provider = &self.config.provider;
        let set = |var: &str| self.env.get(var).filter(|v| !v.trim().is_empty()).cloned();
        let from_env = provider.env_key.as_deref().and_then(set).or_else(|| {
            (provider.id == "openai" && provider.env_key.as_deref() == Some("OPENAI_API_KEY"))
                .then(|| set(CODEX_API_KEY))
                .flatten()
        });
        let api_key = api_key
            .map(str::to_owned)
            .filter(|k| !k.trim().is_empty())
            .or(from_env);
        if api_key.is_none()
            && provider.key_required
            && let Some(var) = &provider.env_key
        {
            return Err(ConfigError::MissingApiKey {
                provider: format!("{} (`{}`)", provider.name, provider.id),
                var: var.clone(),
            });
        }
        let mut headers: Vec<(String, String)> = provider
            .http_headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (header, var) in &provider.env_http_headers {
            if let Some(value) = self.env.get(var).filter(|v| !v.is_empty()) {
                headers.push((header.clone(), value.clone()));
            }
        }
        Ok(Credentials { api_key, headers })
    }
}
