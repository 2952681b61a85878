//! Loading the layers and merging them into the effective configuration.
//!
//! Layers, lowest to highest precedence:
//!
//! 1. built-in defaults (and built-in model providers), then the front
//!    end's own defaults (`interpreter exec --json` runs code without
//!    asking unless told otherwise: its client cannot answer);
//! 2. the user file, `$INTERPRETER_HOME/config.toml` (default
//!    `~/.openinterpreter/config.toml`);
//! 3. the profile chosen with `--profile NAME`: `[profiles.NAME]` in the user
//!    file, else `$INTERPRETER_HOME/profiles/NAME.toml`;
//! 4. project files, `.openinterpreter/config.toml` in each folder from the
//!    repository root (the nearest folder upward with `.git`) down to the
//!    working directory, only when the project is trusted; they may not set
//!    `model_provider`, `model_providers` (where requests and keys go) or
//!    `projects`;
//! 5. environment variables: `OI_MODEL` (model) and `OPENAI_BASE_URL` (the
//!    base URL of the built-in `openai` provider);
//! 6. `-c key=value` arguments, in order;
//! 7. dedicated flags (`--model`, `--harness`, `--api-base` …).
//!
//! Tables merge key by key; any other value replaces the one below. A
//! `[model_providers.ID]` table in a file replaces a built-in provider of the
//! same id as a whole; `-c`, environment variables and flags change single
//! fields of whichever provider results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::{Config, TrustLevel};
use crate::error::ConfigError;
use crate::instructions::Instructions;
use crate::layers::{Entry, Layer, parse_override, parse_toml};
use crate::origin::Origin;
use crate::schema::{self, Problem, Scope};

/// A value set by a dedicated flag.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagSetting {
    /// The flag as the user typed it, e.g. `--max-turns`.
    pub flag: String,
    /// The dotted key it sets, e.g. `max_turns`.
    pub key: String,
    pub value: Value,
}

impl FlagSetting {
    pub fn new(flag: &str, key: &str, value: impl Into<Value>) -> Self {
        Self {
            flag: flag.to_owned(),
            key: key.to_owned(),
            value: value.into(),
        }
    }
}

/// Everything `load` reads besides the files themselves.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// oi's folder: `$INTERPRETER_HOME`, else `~/.openinterpreter`.
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub profile: Option<String>,
    /// `-c` arguments, in the order given.
    pub overrides: Vec<String>,
    pub flags: Vec<FlagSetting>,
    /// The front end's defaults, below every file: `flag` says why (shown
    /// as where the value came from).
    pub defaults: Vec<FlagSetting>,
    /// `--api-base`: the active provider's base URL, or an OpenAI-compatible
    /// chat server when no provider is configured.
    pub api_base: Option<String>,
    /// The environment (a snapshot, so tests need not touch the real one).
    pub env: BTreeMap<String, String>,
}

/// A project whose configuration file was not applied because it is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntrustedProject {
    pub root: PathBuf,
    pub files: Vec<PathBuf>,
}

/// The result of loading: the configuration and where each value came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Dotted key → the layer that set its value.
    pub origins: BTreeMap<String, Origin>,
    /// Things the user should know (ignored keys, unenforced settings).
    pub warnings: Vec<String>,
    pub untrusted: Option<UntrustedProject>,
    /// The `AGENTS.md` files the model gets (see [`crate::instructions`]).
    pub instructions: Instructions,
    pub home: PathBuf,
    pub user_file: PathBuf,
    pub env: BTreeMap<String, String>,
}

/// oi's folder: `$INTERPRETER_HOME`, else `$HOME/.openinterpreter`.
pub fn home_dir(env: &BTreeMap<String, String>) -> Result<PathBuf, ConfigError> {
    if let Some(home) = env.get("INTERPRETER_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    env.get("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(h).join(".openinterpreter"))
        .ok_or(ConfigError::NoHome)
}

/// The project root for `dir`: the nearest folder upward holding `.git`, or
/// `dir` itself outside a repository.
pub fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_owned()
}

/// Loads and merges every layer. Errors name the file and line (or flag, or
/// variable), the key and the problem.
pub fn load(options: &LoadOptions) -> Result<Loaded, ConfigError> {
    let user_file = options.home.join("config.toml");
    let mut warnings = Vec::new();
    let (user, profiles_in_file) = user_layer(&user_file)?;
    let profile = match &options.profile {
        None => Layer::default(),
        Some(name) => {
            let (layer, note) = load_profile(options, name, &user_file, profiles_in_file)?;
            warnings.extend(note);
            layer
        }
    };
    // `-c` arguments are read before the project files: they may trust one.
    let overrides = override_layer(&options.overrides)?;
    let trust = trust_map(&[&user, &profile, &overrides]);
    let (project, untrusted) = project_layer(options, &user_file, &trust, &mut warnings)?;
    let env = env_layer(&options.env)?;
    let flags = flag_layer(&options.flags)?;
    let defaults = defaults_layer(&options.defaults)?;
    // Keys pasted at first run stand in for unset variables.
    let (stored_keys, keys_warning) = crate::keys::read(&options.home);
    warnings.extend(keys_warning);
    let mut environment = options.env.clone();
    for (var, key) in stored_keys {
        if environment.get(&var).is_none_or(|v| v.trim().is_empty()) {
            environment.insert(var, key);
        }
    }
    let (config, origins) = crate::resolve::resolve(
        &[
            &defaults, &user, &profile, &project, &env, &overrides, &flags,
        ],
        &[&user, &profile],
        options.api_base.as_deref(),
    )?;
    let instructions = crate::instructions::discover(
        &options.home,
        &options.cwd,
        &config.project_doc_fallback_filenames,
        config.project_doc_max_bytes,
        &mut warnings,
    );
    Ok(Loaded {
        config,
        origins,
        warnings,
        untrusted,
        instructions,
        home: options.home.clone(),
        user_file,
        env: environment,
    })
}

/// Every profile `--profile` can name for `loaded`'s user (see
/// [`crate::profiles::list`]).
pub fn list_profiles(loaded: &Loaded) -> Result<Vec<crate::profiles::ProfileInfo>, ConfigError> {
    let (_, in_file) = user_layer(&loaded.user_file)?;
    let names: Vec<String> = in_file.into_keys().collect();
    Ok(crate::profiles::list(
        &loaded.home,
        &loaded.user_file,
        &names,
        &loaded.env,
    ))
}

/// Layer 2, the user file, without its profiles (returned apart, by name).
fn user_layer(user_file: &Path) -> Result<(Layer, BTreeMap<String, Layer>), ConfigError> {
    let user = read_layer(user_file, &|line| Origin::File {
        path: user_file.to_owned(),
        line,
    })?;
    let mut user_layer = Layer::default();
    let mut profiles_in_file: BTreeMap<String, Layer> = BTreeMap::new();
    if let Some(layer) = user {
        for entry in layer.entries {
            validate(&entry, Scope::User)?;
            if entry.path[0] == "profiles" {
                let name = entry.path[1].clone();
                let (path, line) = entry
                    .origin
                    .file()
                    .map(|(p, l)| (p.to_owned(), l))
                    .unwrap_or_default();
                profiles_in_file
                    .entry(name.clone())
                    .or_default()
                    .entries
                    .push(Entry {
                        path: entry.path[2..].to_vec(),
                        value: entry.value,
                        origin: Origin::Profile { name, path, line },
                    });
            } else {
                user_layer.entries.push(entry);
            }
        }
        for (path, origin) in layer.tables {
            if path.first().is_some_and(|p| p == "profiles") {
                if path.len() > 2 {
                    let name = path[1].clone();
                    let (file, line) = origin
                        .file()
                        .map(|(p, l)| (p.to_owned(), l))
                        .unwrap_or_default();
                    profiles_in_file
                        .entry(name.clone())
                        .or_default()
                        .tables
                        .push((
                            path[2..].to_vec(),
                            Origin::Profile {
                                name,
                                path: file,
                                line,
                            },
                        ));
                } else if path.len() == 2 {
                    profiles_in_file.entry(path[1].clone()).or_default();
                }
            } else {
                user_layer.tables.push((path, origin));
            }
        }
    }
    Ok((user_layer, profiles_in_file))
}

/// Layer 6, `-c` arguments, in order.
fn override_layer(overrides: &[String]) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for argument in overrides {
        let (path, value) = parse_override(argument)?;
        let entry = Entry {
            path,
            value,
            origin: Origin::Override,
        };
        validate(&entry, Scope::Override)?;
        layer.entries.push(entry);
    }
    Ok(layer)
}

/// Layer 4, the project files from the repository root down to the working
/// folder, when the project is trusted (else the files that were not
/// applied). Keys a project may not set are left out, with a warning.
fn project_layer(
    options: &LoadOptions,
    user_file: &Path,
    trust: &BTreeMap<PathBuf, TrustLevel>,
    warnings: &mut Vec<String>,
) -> Result<(Layer, Option<UntrustedProject>), ConfigError> {
    let root = project_root(&options.cwd);
    let mut project_layer = Layer::default();
    let mut untrusted_files = Vec::new();
    for dir in dirs_from_root(&root, &options.cwd) {
        let file = dir.join(".openinterpreter").join("config.toml");
        if file == user_file || !file.is_file() {
            continue;
        }
        if trust_of(trust, &root) != Some(TrustLevel::Trusted) {
            untrusted_files.push(file);
            continue;
        }
        let origin_file = file.clone();
        let Some(layer) = read_layer(&file, &|line| Origin::Project {
            path: origin_file.clone(),
            line,
        })?
        else {
            continue;
        };
        for entry in layer.entries {
            match schema::check(&entry.path, &entry.value, Scope::Project) {
                Ok(()) => project_layer.entries.push(entry),
                Err(Problem::Denied { key, reason }) => {
                    warnings.push(format!("{}: `{key}` is ignored: {reason}", entry.origin))
                }
                Err(problem) => return Err(to_error(problem, &entry)),
            }
        }
    }
    let untrusted = (!untrusted_files.is_empty()
        && trust_of(trust, &root) != Some(TrustLevel::Untrusted))
    .then(|| UntrustedProject {
        root: root.clone(),
        files: untrusted_files,
    });
    Ok((project_layer, untrusted))
}

/// Layer 5, environment variables: `OI_MODEL`, `OPENAI_BASE_URL`.
fn env_layer(env: &BTreeMap<String, String>) -> Result<Layer, ConfigError> {
    let mut env_layer = Layer::default();
    if let Some(model) = env.get("OI_MODEL").filter(|v| !v.is_empty()) {
        env_layer.entries.push(Entry {
            path: vec!["model".into()],
            value: Value::String(model.clone()),
            origin: Origin::Env {
                var: "OI_MODEL".into(),
            },
        });
    }
    if let Some(url) = env.get("OPENAI_BASE_URL").filter(|v| !v.is_empty()) {
        let entry = Entry {
            path: ["model_providers", "openai", "base_url"]
                .map(String::from)
                .to_vec(),
            value: Value::String(url.clone()),
            origin: Origin::Env {
                var: "OPENAI_BASE_URL".into(),
            },
        };
        validate(&entry, Scope::Override)?;
        env_layer.entries.push(entry);
    }
    Ok(env_layer)
}

/// Layer 7, the front end's own settings (dedicated flags).
fn flag_layer(flags: &[FlagSetting]) -> Result<Layer, ConfigError> {
    let mut flag_layer = Layer::default();
    for flag in flags {
        let entry = Entry {
            path: flag.key.split('.').map(str::to_owned).collect(),
            value: flag.value.clone(),
            origin: Origin::Flag {
                flag: flag.flag.clone(),
            },
        };
        validate(&entry, Scope::Override)?;
        flag_layer.entries.push(entry);
    }
    Ok(flag_layer)
}

/// Layer 1, after the built-in defaults: the front end's.
fn defaults_layer(defaults: &[FlagSetting]) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for default in defaults {
        let entry = Entry {
            path: default.key.split('.').map(str::to_owned).collect(),
            value: default.value.clone(),
            origin: Origin::Auto {
                reason: default.flag.clone(),
            },
        };
        validate(&entry, Scope::Override)?;
        layer.entries.push(entry);
    }
    Ok(layer)
}

fn read_layer(path: &Path, origin: &dyn Fn(usize) -> Origin) -> Result<Option<Layer>, ConfigError> {
    match read_config_text(path)? {
        Some(text) => parse_toml(path, &text, origin).map(Some),
        None => Ok(None),
    }
}

/// The text of the configuration file at `path`; `None` when there is none.
pub(crate) fn read_config_text(path: &Path) -> Result<Option<String>, ConfigError> {
    match fs_err::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(ConfigError::NotText {
            path: path.to_owned(),
        }),
        Err(e) => Err(ConfigError::Read {
            path: path.to_owned(),
            source: e,
        }),
    }
}

/// The profile `name` names: a file's path; else `[profiles.NAME]` in the
/// user file, `profiles/NAME.toml`, Open Interpreter's `NAME.yaml`, or oi's
/// own, the first found. With it, a line about keys it does not use.
fn load_profile(
    options: &LoadOptions,
    name: &str,
    user_file: &Path,
    mut in_file: BTreeMap<String, Layer>,
) -> Result<(Layer, Option<String>), ConfigError> {
    let dir = options.home.join("profiles");
    let toml_origin = |path: &Path, name: &str| {
        let (path, name) = (path.to_owned(), name.to_owned());
        move |line| Origin::Profile {
            name: name.clone(),
            path: path.clone(),
            line,
        }
    };
    let checked = |layer: Layer| -> Result<Layer, ConfigError> {
        for entry in &layer.entries {
            validate(entry, Scope::Profile)?;
        }
        Ok(layer)
    };
    let is_yaml = |path: &Path| path.extension().is_some_and(|e| e == "yaml" || e == "yml");
    let read_yaml =
        |path: &Path, name: &str| -> Result<Option<(Layer, Option<String>)>, ConfigError> {
            let Some(text) = read_config_text(path)? else {
                return Ok(None);
            };
            let (layer, note) = crate::profiles::from_yaml(name, path, &text)?;
            Ok(Some((checked(layer)?, note)))
        };
    if name.ends_with(".py") {
        return Err(ConfigError::PythonProfile {
            name: name.to_owned(),
        });
    }
    // A path: the file itself, TOML or Open Interpreter's YAML.
    let as_path = Path::new(name);
    let looks_like_path = name.contains(std::path::MAIN_SEPARATOR)
        || [".toml", ".yaml", ".yml"].iter().any(|e| name.ends_with(e));
    if looks_like_path && (name.contains(std::path::MAIN_SEPARATOR) || as_path.is_file()) {
        let path =
            std::path::absolute(options.cwd.join(as_path)).unwrap_or_else(|_| as_path.to_owned());
        let stem = path
            .file_stem()
            .map_or_else(|| name.to_owned(), |s| s.to_string_lossy().into_owned());
        let found = if is_yaml(&path) {
            read_yaml(&path, &stem)?
        } else {
            read_layer(&path, &toml_origin(&path, &stem))?
                .map(checked)
                .transpose()?
                .map(|layer| (layer, None))
        };
        return found.ok_or_else(|| ConfigError::UnknownProfile {
            name: name.to_owned(),
            searched: vec![path.clone()],
            available: Vec::new(),
        });
    }
    let valid_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    let oi_dir = crate::profiles::open_interpreter_dir(&options.env);
    if valid_name {
        if let Some(layer) = in_file.remove(name) {
            return Ok((layer, None));
        }
        let file = dir.join(format!("{name}.toml"));
        if let Some(layer) = read_layer(&file, &toml_origin(&file, name))? {
            return Ok((checked(layer)?, None));
        }
        if let Some(oi_dir) = &oi_dir {
            let stem = name
                .strip_suffix(".yaml")
                .or_else(|| name.strip_suffix(".yml"))
                .unwrap_or(name);
            for extension in ["yaml", "yml"] {
                if let Some(found) = read_yaml(&oi_dir.join(format!("{stem}.{extension}")), stem)? {
                    return Ok(found);
                }
            }
        }
        if let Some((_, text)) = crate::profiles::BUILT_IN.iter().find(|(n, _)| *n == name) {
            let path = PathBuf::from(format!("<oi>/profiles/{name}.toml"));
            let layer = crate::layers::parse_toml(&path, text, &toml_origin(&path, name))?;
            return Ok((checked(layer)?, None));
        }
    }
    let in_user_file: Vec<String> = in_file.into_keys().collect();
    let available = crate::profiles::list(&options.home, user_file, &in_user_file, &options.env)
        .into_iter()
        .map(|p| p.name)
        .collect();
    let mut searched = vec![user_file.to_owned(), dir.join(format!("{name}.toml"))];
    searched.extend(oi_dir.map(|d| d.join(format!("{name}.yaml"))));
    Err(ConfigError::UnknownProfile {
        name: name.to_owned(),
        searched,
        available,
    })
}

fn validate(entry: &Entry, scope: Scope) -> Result<(), ConfigError> {
    schema::check(&entry.path, &entry.value, scope).map_err(|p| to_error(p, entry))
}

pub(crate) fn to_error(problem: Problem, entry: &Entry) -> ConfigError {
    match problem {
        Problem::Unknown {
            key,
            suggestion,
            valid,
        } => ConfigError::UnknownKey {
            origin: Box::new(entry.origin.clone()),
            key,
            suggestion,
            valid,
        },
        Problem::Invalid { key, expected } => ConfigError::InvalidValue {
            origin: Box::new(entry.origin.clone()),
            // Where a variable's name belongs, the value given is likely
            // the secret itself: never repeat it.
            value: if key.ends_with(".env_key") || key.contains(".env_http_headers.") {
                "(not shown)".to_owned()
            } else {
                entry.value.to_string()
            },
            key,
            expected,
        },
        Problem::Denied { key, reason } => ConfigError::InvalidValue {
            origin: Box::new(entry.origin.clone()),
            key,
            value: entry.value.to_string(),
            expected: format!("nothing here: {reason}"),
        },
    }
}

/// Project trust from the layers that may grant it (never a project file).
fn trust_map(layers: &[&Layer]) -> BTreeMap<PathBuf, TrustLevel> {
    let mut map = BTreeMap::new();
    for layer in layers {
        for entry in &layer.entries {
            if let [section, root, field] = entry.path.as_slice()
                && section == "projects"
                && field == "trust_level"
            {
                let level = if entry.value.as_str() == Some("trusted") {
                    TrustLevel::Trusted
                } else {
                    TrustLevel::Untrusted
                };
                map.insert(normalize(Path::new(root)), level);
            }
        }
    }
    map
}

/// The trust of `root`: its own entry, else that of the nearest folder above
/// it that has one (trusting `~/work` trusts every project below it).
fn trust_of(map: &BTreeMap<PathBuf, TrustLevel>, root: &Path) -> Option<TrustLevel> {
    let root = normalize(root);
    root.ancestors().find_map(|dir| map.get(dir).copied())
}

fn normalize(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

/// The folders from `root` down to `cwd`, root first.
fn dirs_from_root(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .map(Path::to_owned)
        .collect();
    dirs.reverse();
    dirs
}

/// Whether a model id names a model of at most 4 billion parameters
/// (`qwen2.5-coder:1.5b`, `Llama-3.2-3B-Instruct`, `phi3:mini` …).
pub fn is_small_model(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let sized = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter_map(|token| token.strip_suffix('b'))
        .filter_map(|size| size.parse::<f64>().ok())
        .any(|size| size > 0.0 && size <= 4.0);
    sized
        || [
            "tinyllama",
            "smollm",
            "phi3:mini",
            "phi-3-mini",
            "phi4-mini",
            "gemma3:1b",
        ]
        .iter()
        .any(|family| lower.contains(family))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::display_path;

    #[test]
    fn recognises_small_models() {
        for model in [
            "qwen2.5-coder:1.5b",
            "Qwen2.5-Coder-0.5B-Instruct",
            "llama3.2:3b",
            "phi3:mini",
            "smollm2:360m",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        ] {
            assert!(is_small_model(model), "{model}");
        }
        for model in [
            "gpt-5-mini",
            "qwen2.5-coder:7b",
            "llama3.1:70b",
            "gpt-oss-20b",
            "claude-sonnet-5",
            "mistral",
        ] {
            assert!(!is_small_model(model), "{model}");
        }
    }

    #[test]
    fn folders_from_the_root_down() {
        assert_eq!(
            dirs_from_root(Path::new("/r"), Path::new("/r/a/b")),
            vec![
                PathBuf::from("/r"),
                PathBuf::from("/r/a"),
                PathBuf::from("/r/a/b")
            ]
        );
        assert_eq!(
            dirs_from_root(Path::new("/r"), Path::new("/r")),
            vec![PathBuf::from("/r")]
        );
    }

    #[test]
    fn the_home_folder_comes_from_the_environment() {
        let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            home_dir(&env(&[("HOME", "/h")])).unwrap(),
            PathBuf::from("/h/.openinterpreter")
        );
        assert_eq!(
            home_dir(&env(&[("HOME", "/h"), ("INTERPRETER_HOME", "/oi")])).unwrap(),
            PathBuf::from("/oi")
        );
        assert!(matches!(home_dir(&env(&[])), Err(ConfigError::NoHome)));
    }

    #[test]
    fn display_paths_are_readable() {
        assert_eq!(display_path(Path::new("/etc/x")), "/etc/x");
    }
}
