//! The model catalog: context windows, output limits, prices and
//! capabilities of common models, from the data file `catalog/models.toml`.

use std::sync::OnceLock;

use oi_protocol::Usage;
use serde::Deserialize;

const DATA: &str = include_str!("../catalog/models.toml");

/// What oi knows about a model. Every field but `id` may be missing.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    pub id: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
    /// USD per million input tokens.
    pub input_price: Option<f64>,
    /// USD per million input tokens read from the prompt cache.
    pub cached_input_price: Option<f64>,
    /// USD per million input tokens written to the prompt cache.
    pub cache_write_price: Option<f64>,
    /// USD per million output tokens.
    pub output_price: Option<f64>,
    pub tools: Option<bool>,
    pub vision: Option<bool>,
}

impl ModelInfo {
    /// The model's prices, when both the input and output price are known.
    pub fn pricing(&self) -> Option<Pricing> {
        let input = self.input_price?;
        let output = self.output_price?;
        Some(Pricing {
            input,
            output,
            cached_input: self.cached_input_price.unwrap_or(input),
            cache_write: self.cache_write_price.unwrap_or(input),
        })
    }

    /// Fields of `other` that are set replace those of `self`.
    pub fn overridden_by(mut self, other: &ModelInfo) -> Self {
        macro_rules! take {
            ($($field:ident),*) => {$(
                if other.$field.is_some() {
                    self.$field = other.$field;
                }
            )*};
        }
        take!(
            context_window,
            max_output_tokens,
            input_price,
            cached_input_price,
            cache_write_price,
            output_price,
            tools,
            vision
        );
        self
    }
}

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pricing {
    pub input: f64,
    pub output: f64,
    pub cached_input: f64,
    pub cache_write: f64,
}

impl Pricing {
    /// Free: models served on this machine.
    pub const FREE: Pricing = Pricing {
        input: 0.0,
        output: 0.0,
        cached_input: 0.0,
        cache_write: 0.0,
    };

    /// The cost of `usage` in USD. Cached and cache-write tokens are part of
    /// `input_tokens` and priced at their own rates.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let plain = usage
            .input_tokens
            .saturating_sub(usage.cached_input_tokens)
            .saturating_sub(usage.cache_write_input_tokens);
        (plain as f64 * self.input
            + usage.cached_input_tokens as f64 * self.cached_input
            + usage.cache_write_input_tokens as f64 * self.cache_write
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

#[derive(Deserialize)]
struct CatalogFile {
    models: Vec<ModelInfo>,
}

/// The catalog shipped with oi.
#[derive(Debug)]
pub struct Catalog {
    models: Vec<ModelInfo>,
}

impl Catalog {
    /// The built-in catalog (parsed once). The data file is part of the
    /// source and checked by the tests, so an error here is a build defect;
    /// it is still reported, never a panic.
    pub fn builtin() -> Result<&'static Catalog, String> {
        static CATALOG: OnceLock<Result<Catalog, String>> = OnceLock::new();
        CATALOG
            .get_or_init(|| Catalog::parse(DATA))
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn parse(text: &str) -> Result<Catalog, String> {
        toml_edit::de::from_str::<CatalogFile>(text)
            .map(|file| Catalog {
                models: file.models,
            })
            .map_err(|e| format!("the model catalog is invalid: {e}"))
    }

    /// What the catalog knows about `model`: by exact id or alias, then
    /// without a provider prefix, then without a date suffix, then by the
    /// longest catalog id that starts the name.
    pub fn lookup(&self, model: &str) -> Option<&ModelInfo> {
        let lower = model.trim().to_ascii_lowercase();
        let bare = lower.rsplit('/').next().unwrap_or(&lower).to_owned();
        let undated = strip_date(&bare);
        for candidate in [lower.as_str(), bare.as_str(), undated.as_str()] {
            if let Some(found) = self.exact(candidate) {
                return Some(found);
            }
        }
        self.models
            .iter()
            .flat_map(|m| {
                std::iter::once(&m.id)
                    .chain(&m.aliases)
                    .map(move |name| (m, name))
            })
            .filter(|(_, name)| {
                undated.len() > name.len()
                    && undated.starts_with(name.as_str())
                    && undated[name.len()..].starts_with(['-', ':', '.', '@', '_'])
            })
            .max_by_key(|(_, name)| name.len())
            .map(|(m, _)| m)
    }

    fn exact(&self, name: &str) -> Option<&ModelInfo> {
        self.models.iter().find(|m| {
            m.id.eq_ignore_ascii_case(name)
                || m.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }

    pub fn models(&self) -> &[ModelInfo] {
        &self.models
    }
}

/// `gpt-4o-2024-08-06` → `gpt-4o`; `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`.
fn strip_date(name: &str) -> String {
    let bytes = name.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if bytes.len() > 11 {
        let tail = &bytes[bytes.len() - 11..];
        if tail[0] == b'-'
            && digits(&tail[1..5])
            && tail[5] == b'-'
            && digits(&tail[6..8])
            && tail[8] == b'-'
            && digits(&tail[9..])
        {
            return name[..name.len() - 11].to_owned();
        }
    }
    if bytes.len() > 9 {
        let tail = &bytes[bytes.len() - 9..];
        if tail[0] == b'-' && digits(&tail[1..]) && (tail[1] == b'2') {
            return name[..name.len() - 9].to_owned();
        }
    }
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn catalog() -> &'static Catalog {
        Catalog::builtin().unwrap()
    }

    #[test]
    fn the_data_file_parses_and_is_complete_enough() {
        let c = catalog();
        assert!(c.models().len() >= 40);
        let mut ids: Vec<&str> = c
            .models()
            .iter()
            .flat_map(|m| {
                std::iter::once(m.id.as_str()).chain(m.aliases.iter().map(String::as_str))
            })
            .collect();
        let before = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), before, "ids and aliases are unique");
        for m in c.models() {
            assert!(
                m.context_window.is_some() && m.max_output_tokens.is_some(),
                "{}",
                m.id
            );
            assert!(m.pricing().is_some(), "{} has prices", m.id);
            assert!(m.tools.is_some() && m.vision.is_some(), "{}", m.id);
        }
        for family in [
            "gpt-5",
            "claude-sonnet-4-5",
            "gemini-2.5-pro",
            "deepseek-chat",
            "mistral-large-latest",
            "qwen2.5-coder:7b",
            "llama-3.3-70b-versatile",
            "kimi-k2",
            "glm-4.6",
        ] {
            assert!(c.lookup(family).is_some(), "{family}");
        }
    }

    #[test]
    fn finds_models_by_the_names_providers_use() {
        let c = catalog();
        let id = |name: &str| c.lookup(name).map(|m| m.id.as_str());
        assert_eq!(id("gpt-5-mini"), Some("gpt-5-mini"));
        assert_eq!(id("GPT-5"), Some("gpt-5"));
        assert_eq!(id("openai/gpt-5-mini"), Some("gpt-5-mini"));
        assert_eq!(id("gpt-4o-2024-08-06"), Some("gpt-4o"));
        assert_eq!(id("claude-sonnet-4-5-20250929"), Some("claude-sonnet-4-5"));
        assert_eq!(id("anthropic/claude-haiku-4-5"), Some("claude-haiku-4-5"));
        assert_eq!(
            id("qwen2.5-coder:7b-instruct-q4_K_M"),
            Some("qwen2.5-coder:7b")
        );
        assert_eq!(
            id("Qwen2.5-Coder-1.5B-Instruct"),
            Some("qwen2.5-coder:1.5b")
        );
        assert_eq!(
            id("meta-llama/Llama-3.3-70B-Instruct-Turbo"),
            Some("llama-3.3-70b-versatile")
        );
        assert_eq!(id("moonshotai/kimi-k2-instruct"), Some("kimi-k2"));
        assert_eq!(id("my-own-finetune"), None);
        assert_eq!(id("gpt"), None);
    }

    #[test]
    fn costs_count_cached_and_cache_write_tokens_at_their_rates() {
        let sonnet = catalog()
            .lookup("claude-sonnet-4-5")
            .unwrap()
            .pricing()
            .unwrap();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cached_input_tokens: 600_000,
            cache_write_input_tokens: 100_000,
            reasoning_output_tokens: 0,
        };
        // 300k plain × $3 + 600k read × $0.30 + 100k written × $3.75 + 100k out × $15
        let expected = 0.9 + 0.18 + 0.375 + 1.5;
        assert!(
            (sonnet.cost(&usage) - expected).abs() < 1e-9,
            "{}",
            sonnet.cost(&usage)
        );
        let plain = Pricing {
            input: 2.0,
            output: 8.0,
            cached_input: 2.0,
            cache_write: 2.0,
        };
        let usage = Usage {
            input_tokens: 1500,
            output_tokens: 500,
            ..Usage::default()
        };
        assert!((plain.cost(&usage) - (0.003 + 0.004)).abs() < 1e-12);
        assert_eq!(Pricing::FREE.cost(&usage), 0.0);
    }

    #[test]
    fn overrides_replace_only_what_they_set() {
        let base = catalog().lookup("gpt-5").unwrap().clone();
        let changed = base.clone().overridden_by(&ModelInfo {
            input_price: Some(1.0),
            ..ModelInfo::default()
        });
        assert_eq!(changed.input_price, Some(1.0));
        assert_eq!(changed.output_price, base.output_price);
        assert_eq!(changed.context_window, base.context_window);
    }

    #[test]
    fn strips_dates() {
        assert_eq!(strip_date("gpt-4o-2024-08-06"), "gpt-4o");
        assert_eq!(strip_date("claude-3-5-haiku-20241022"), "claude-3-5-haiku");
        assert_eq!(strip_date("gpt-4o"), "gpt-4o");
        assert_eq!(strip_date("qwen2.5-coder:7b"), "qwen2.5-coder:7b");
    }
}
