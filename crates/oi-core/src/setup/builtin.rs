//! The built-in model (`model_provider = "builtin"`): which weights, where
//! they are cached and downloaded from, and the client that runs them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oi_builtin::{BuiltinClient, EngineOptions, KnownModel, ModelRef, Sampling};
use oi_config::Loaded;
use oi_protocol::HarnessKind;
use oi_providers::ModelClient;

use super::{SetupError, origin_prefix};

/// Whether the configuration runs the built-in model.
pub fn selected(loaded: &Loaded) -> bool {
    loaded.config.provider.base_url == oi_config::BUILTIN_BASE_URL
}

/// Where downloaded models are kept: `$XDG_CACHE_HOME/oi/models`, else
/// `~/.cache/oi/models`.
pub fn cache_dir(loaded: &Loaded) -> Result<PathBuf, SetupError> {
    oi_builtin::catalog::cache_dir(&|name| loaded.env.get(name).cloned()).ok_or_else(|| {
        SetupError::Builtin(oi_builtin::BuiltinError::Io {
            path: PathBuf::from("~/.cache/oi/models"),
            message: "neither HOME nor XDG_CACHE_HOME is set, so there is no model cache".into(),
        })
    })
}

/// The weights the configuration names (cached, missing, or a file; a
/// relative path is read from `cwd`, the session's folder).
pub fn model_ref(loaded: &Loaded, cwd: &Path) -> Result<ModelRef, SetupError> {
    let model = loaded
        .config
        .model
        .clone()
        .unwrap_or_else(|| oi_config::BUILTIN_DEFAULT_MODEL.to_owned());
    oi_builtin::catalog::resolve(&model, cwd, &cache_dir(loaded)?).map_err(SetupError::Builtin)
}

/// Where `model` is downloaded from: `[builtin] mirror`, else
/// `HF_ENDPOINT`, else Hugging Face.
pub fn download_url(loaded: &Loaded, model: &KnownModel) -> String {
    let mirror = loaded
        .config
        .builtin
        .mirror
        .clone()
        .or_else(|| loaded.env.get("HF_ENDPOINT").cloned());
    model.url(mirror.as_deref())
}

/// The models the built-in engine can run without a download: those in
/// the cache (known names, then other GGUF files there), for pickers.
pub fn models(loaded: &Loaded) -> Result<Vec<String>, SetupError> {
    Ok(oi_builtin::catalog::cached(&cache_dir(loaded)?)
        .into_iter()
        .map(|(name, _, _)| name)
        .collect())
}

/// The client that runs the configured weights.
pub(super) fn client(loaded: &Loaded, cwd: &Path) -> Result<Arc<dyn ModelClient>, SetupError> {
    if !oi_builtin::AVAILABLE {
        return Err(SetupError::NoBuiltinEngine);
    }
    let c = &loaded.config;
    if c.harness == HarnessKind::Native {
        return Err(SetupError::BuiltinNeedsMarkdown {
            origin: origin_prefix(loaded, "harness"),
        });
    }
    let name = c
        .model
        .clone()
        .unwrap_or_else(|| oi_config::BUILTIN_DEFAULT_MODEL.to_owned());
    let path = match model_ref(loaded, cwd)? {
        ModelRef::File(path) | ModelRef::Cached(_, path) => path,
        ModelRef::Missing(known, _) => {
            return Err(SetupError::BuiltinNotDownloaded {
                name: known.name.to_owned(),
                size: known.size,
            });
        }
    };
    Ok(Arc::new(BuiltinClient::new(EngineOptions {
        path,
        name,
        threads: c
            .builtin
            .threads
            .unwrap_or_else(oi_builtin::default_threads),
        context: c.builtin.context,
        sampling: Sampling::default(),
    })))
}
