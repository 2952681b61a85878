//! The model providers oi knows without being told.

use oi_protocol::WireApi;

/// A built-in provider definition.
pub(crate) struct BuiltIn {
    pub id: &'static str,
    pub name: &'static str,
    pub base_url: &'static str,
    pub env_key: Option<&'static str>,
    pub wire_api: WireApi,
    /// The model used when none is configured.
    pub default_model: Option<&'static str>,
}

/// Environment variables that hold keys for model APIs, beyond the
/// `env_key` of the providers oi knows: code never needs them, and with the
/// network on it could send them anywhere, so kernels do not get them.
pub(crate) const KNOWN_KEY_VARIABLES: &[&str] = &[
    "OI_API_KEY",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "XAI_API_KEY",
    "COHERE_API_KEY",
    "FIREWORKS_API_KEY",
    "PERPLEXITY_API_KEY",
    "CEREBRAS_API_KEY",
    "HUGGINGFACE_API_KEY",
    "LITELLM_API_KEY",
    "OLLAMA_API_KEY",
];

/// The id of the provider `--api-base` selects when no `model_provider` is
/// configured: any OpenAI-compatible server, on the chat wire.
pub const API_BASE_PROVIDER: &str = "openai-compatible";

/// The id of the provider that is oi itself: GGUF weights run in oi's
/// own process (`--model FILE.gguf`, `--local` with no server running).
pub const BUILTIN_PROVIDER: &str = "builtin";

/// The built-in model's stand-in for a base URL: nothing is sent anywhere.
pub const BUILTIN_BASE_URL: &str = "builtin:";

/// The model the built-in provider runs when none is named.
pub const BUILTIN_DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";

pub(crate) const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        id: BUILTIN_PROVIDER,
        name: "the built-in model",
        base_url: BUILTIN_BASE_URL,
        env_key: None,
        wire_api: WireApi::Chat,
        default_model: Some(BUILTIN_DEFAULT_MODEL),
    },
    BuiltIn {
        id: "openai",
        name: "OpenAI",
        base_url: "https://api.openai.com/v1",
        env_key: Some("OPENAI_API_KEY"),
        wire_api: WireApi::Responses,
        default_model: Some("gpt-5-mini"),
    },
    BuiltIn {
        id: "anthropic",
        name: "Anthropic",
        base_url: "https://api.anthropic.com",
        env_key: Some("ANTHROPIC_API_KEY"),
        wire_api: WireApi::Messages,
        default_model: Some("claude-sonnet-4-5"),
    },
    BuiltIn {
        id: "ollama",
        name: "Ollama",
        base_url: "http://localhost:11434/v1",
        env_key: None,
        wire_api: WireApi::Chat,
        default_model: None,
    },
    BuiltIn {
        id: "lmstudio",
        name: "LM Studio",
        base_url: "http://localhost:1234/v1",
        env_key: None,
        wire_api: WireApi::Chat,
        default_model: None,
    },
    BuiltIn {
        id: "openrouter",
        name: "OpenRouter",
        base_url: "https://openrouter.ai/api/v1",
        env_key: Some("OPENROUTER_API_KEY"),
        wire_api: WireApi::Chat,
        default_model: Some("openai/gpt-5-mini"),
    },
    BuiltIn {
        id: "groq",
        name: "Groq",
        base_url: "https://api.groq.com/openai/v1",
        env_key: Some("GROQ_API_KEY"),
        wire_api: WireApi::Chat,
        default_model: Some("openai/gpt-oss-120b"),
    },
    BuiltIn {
        id: "deepseek",
        name: "DeepSeek",
        base_url: "https://api.deepseek.com/v1",
        env_key: Some("DEEPSEEK_API_KEY"),
        wire_api: WireApi::Chat,
        default_model: Some("deepseek-chat"),
    },
    BuiltIn {
        id: "mistral",
        name: "Mistral",
        base_url: "https://api.mistral.ai/v1",
        env_key: Some("MISTRAL_API_KEY"),
        wire_api: WireApi::Chat,
        default_model: Some("mistral-medium-latest"),
    },
    BuiltIn {
        id: "together",
        name: "Together AI",
        base_url: "https://api.together.xyz/v1",
        env_key: Some("TOGETHER_API_KEY"),
        wire_api: WireApi::Chat,
        default_model: Some("meta-llama/Llama-3.3-70B-Instruct-Turbo"),
    },
];

/// Whether a base URL points at this machine.
pub fn is_local_url(url: &str) -> bool {
    if url == BUILTIN_BASE_URL {
        return true;
    }
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .unwrap_or(url);
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_local_urls() {
        for url in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8080/v1",
            "http://[::1]:1234/v1",
            "http://127.0.1.1/v1",
            "http://[::ffff:127.0.0.1]:9/v1",
            "http://0.0.0.0:8000/v1",
        ] {
            assert!(is_local_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://localhost.example.com/v1",
            "http://10.0.0.2:8000/v1",
        ] {
            assert!(!is_local_url(url), "{url}");
        }
    }

    #[test]
    fn built_in_ids_are_unique() {
        let mut ids: Vec<&str> = BUILT_IN.iter().map(|b| b.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), BUILT_IN.len());
    }
}
