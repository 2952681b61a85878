//! Profiles `--profile` takes besides `[profiles.NAME]` and
//! `~/.openinterpreter/profiles/NAME.toml`: a file's path, oi's own (shipped
//! in the binary), and Open Interpreter's YAML profiles, whose keys oi
//! knows are converted and the others named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use yaml_rust2::{Yaml, YamlLoader};

use crate::error::ConfigError;
use crate::layers::{Entry, Layer};
use crate::origin::Origin;

/// oi's own profiles: name, TOML text.
pub(crate) const BUILT_IN: &[(&str, &str)] = &[
    ("fast", include_str!("../profiles/fast.toml")),
    ("local", include_str!("../profiles/local.toml")),
    ("os", include_str!("../profiles/os.toml")),
    ("vision", include_str!("../profiles/vision.toml")),
];

/// Where a profile comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileSource {
    /// `[profiles.NAME]` in the user file.
    UserFile(PathBuf),
    /// A TOML file of oi's (`~/.openinterpreter/profiles/NAME.toml`).
    File(PathBuf),
    /// An Open Interpreter YAML profile.
    OpenInterpreter(PathBuf),
    /// Shipped with oi.
    BuiltIn,
}

/// A profile `--profile` can name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileInfo {
    pub name: String,
    pub source: ProfileSource,
}

/// Open Interpreter's profiles folder: `$XDG_CONFIG_HOME/open-interpreter/profiles`,
/// else `~/.config/…` (on macOS `~/Library/Application Support/…`).
pub fn open_interpreter_dir(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    open_interpreter_folder(env, "profiles")
}

/// A folder of Open Interpreter's configuration folder (`profiles`,
/// `conversations`), where it keeps it on this system.
pub fn open_interpreter_folder(env: &BTreeMap<String, String>, name: &str) -> Option<PathBuf> {
    let config = match env.get("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = Path::new(env.get("HOME").filter(|h| !h.is_empty())?);
            if cfg!(target_os = "macos") {
                home.join("Library/Application Support")
            } else {
                home.join(".config")
            }
        }
    };
    Some(config.join("open-interpreter").join(name))
}

/// Every profile `--profile` can name, in the order they are looked up
/// (the first of a name wins).
pub fn list(
    home: &Path,
    user_file: &Path,
    in_user_file: &[String],
    env: &BTreeMap<String, String>,
) -> Vec<ProfileInfo> {
    let mut found: Vec<ProfileInfo> = in_user_file
        .iter()
        .map(|name| ProfileInfo {
            name: name.clone(),
            source: ProfileSource::UserFile(user_file.to_owned()),
        })
        .collect();
    let add = |found: &mut Vec<ProfileInfo>, info: ProfileInfo| {
        if !found.iter().any(|f| f.name == info.name) {
            found.push(info);
        }
    };
    for path in files_in(&home.join("profiles"), &["toml"]) {
        if let Some(name) = stem(&path) {
            add(
                &mut found,
                ProfileInfo {
                    name,
                    source: ProfileSource::File(path),
                },
            );
        }
    }
    if let Some(dir) = open_interpreter_dir(env) {
        for path in files_in(&dir, &["yaml", "yml"]) {
            if let Some(name) = stem(&path) {
                add(
                    &mut found,
                    ProfileInfo {
                        name,
                        source: ProfileSource::OpenInterpreter(path),
                    },
                );
            }
        }
    }
    for (name, _) in BUILT_IN {
        add(
            &mut found,
            ProfileInfo {
                name: (*name).to_owned(),
                source: ProfileSource::BuiltIn,
            },
        );
    }
    found
}

fn files_in(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| extensions.contains(&e))
        })
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> Option<String> {
    path.file_stem().map(|s| s.to_string_lossy().into_owned())
}

/// The keys of an Open Interpreter profile oi converts: the YAML path and
/// oi's key.
const CONVERTED: &[(&str, &str)] = &[
    ("llm.model", "model"),
    ("llm.temperature", "temperature"),
    ("llm.max_tokens", "max_tokens"),
    ("llm.context_window", "context_window"),
    ("llm.max_budget", "max_budget"),
    ("max_budget", "max_budget"),
    ("llm.max_output", "max_output"),
    ("max_output", "max_output"),
    ("custom_instructions", "custom_instructions"),
    ("system_message", "system_message"),
    ("os", "os"),
];

/// Keys that describe the file, not a setting: read without a word.
const METADATA: &[&str] = &["version"];

/// An Open Interpreter YAML profile as a layer of oi's keys, and a line
/// naming the keys oi does not use (if any).
pub(crate) fn from_yaml(
    name: &str,
    path: &Path,
    text: &str,
) -> Result<(Layer, Option<String>), ConfigError> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| {
        let marker = e.marker();
        let line = marker.line().max(1);
        ConfigError::Syntax {
            path: path.to_owned(),
            line,
            column: marker.col() + 1,
            message: e.info().to_owned(),
            source_line: text.lines().nth(line - 1).unwrap_or("").to_owned(),
        }
    })?;
    let mut flat: Vec<(String, Value)> = Vec::new();
    if let Some(doc) = docs.first() {
        flatten(doc, "", &mut flat);
    }
    let origin = |key: &str| Origin::Profile {
        name: name.to_owned(),
        path: path.to_owned(),
        line: line_of_key(text, key),
    };
    let mut layer = Layer::default();
    let mut ignored: Vec<String> = Vec::new();
    let push = |layer: &mut Layer, oi_key: &[&str], value: Value, from: &str| {
        layer.entries.push(Entry {
            path: oi_key.iter().map(|s| (*s).to_owned()).collect(),
            value,
            origin: origin(from),
        });
    };
    for (key, value) in flat {
        if value.is_null() || METADATA.contains(&key.as_str()) {
            continue;
        }
        if let Some((_, oi_key)) = CONVERTED.iter().find(|(k, _)| *k == key) {
            let value = match (*oi_key, value) {
                // litellm's `openai/NAME` is NAME on an OpenAI-compatible server.
                ("model", Value::String(model)) => {
                    Value::String(model.strip_prefix("openai/").unwrap_or(&model).to_owned())
                }
                (_, value) => value,
            };
            push(&mut layer, &[oi_key], value, &key);
            continue;
        }
        match (key.as_str(), &value) {
            ("auto_run", Value::Bool(auto)) => {
                let approval = if *auto { "auto" } else { "ask" };
                push(&mut layer, &["approval"], json!(approval), &key);
            }
            ("offline", Value::Bool(true)) => {
                push(&mut layer, &["network"], json!(false), &key);
            }
            ("offline", Value::Bool(false)) => {}
            ("llm.supports_functions", Value::Bool(tools)) => {
                let harness = if *tools { "native" } else { "markdown" };
                push(&mut layer, &["harness"], json!(harness), &key);
            }
            ("llm.api_base", Value::String(url)) => {
                // An OpenAI-compatible server of its own, as `--api-base`.
                push(
                    &mut layer,
                    &["model_providers", "profile", "base_url"],
                    json!(url),
                    &key,
                );
                push(
                    &mut layer,
                    &["model_providers", "profile", "wire_api"],
                    json!("chat"),
                    &key,
                );
                push(&mut layer, &["model_provider"], json!("profile"), &key);
            }
            _ => ignored.push(key),
        }
    }
    let note = (!ignored.is_empty()).then(|| {
        format!(
            "profile {name} ({}): oi does not use {} (docs/coming-from.md says what it offers instead)",
            crate::display_path(path),
            ignored
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    Ok((layer, note))
}

/// `llm: {model: x}` as `("llm.model", "x")`; lists and scalars as JSON.
fn flatten(yaml: &Yaml, prefix: &str, out: &mut Vec<(String, Value)>) {
    match yaml {
        Yaml::Hash(map) => {
            for (key, value) in map {
                let key = match key {
                    Yaml::String(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    other => format!("{other:?}"),
                };
                let full = if prefix.is_empty() {
                    key
                } else {
                    format!("{prefix}.{key}")
                };
                if matches!(value, Yaml::Hash(_)) {
                    flatten(value, &full, out);
                } else {
                    out.push((full, to_json(value)));
                }
            }
        }
        other if !prefix.is_empty() => out.push((prefix.to_owned(), to_json(other))),
        _ => {}
    }
}

fn to_json(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::String(s) => json!(s),
        Yaml::Integer(i) => json!(i),
        Yaml::Real(r) => r.parse::<f64>().map_or_else(|_| json!(r), |f| json!(f)),
        Yaml::Boolean(b) => json!(b),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Hash(_) => {
            let mut flat = Vec::new();
            flatten(yaml, "", &mut flat);
            Value::Object(flat.into_iter().collect())
        }
        _ => Value::Null,
    }
}

/// The line of the last segment of the dotted `key` (1 when not found).
fn line_of_key(text: &str, key: &str) -> usize {
    let last = key.rsplit('.').next().unwrap_or(key);
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            !line.starts_with('#')
                && line
                    .strip_prefix(last)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const OI_DEFAULT: &str = "\
# Open Interpreter's default profile
llm:
  model: openai/gpt-4o
  temperature: 0
  supports_functions: false
  # api_key: ...
computer:
  import_computer_api: True
custom_instructions: \"Answer in French.\"
auto_run: true
offline: false
safe_mode: ask
version: 0.2.5
";

    fn keys(layer: &Layer) -> Vec<(String, Value, usize)> {
        layer
            .entries
            .iter()
            .map(|e| {
                let line = e.origin.file().map_or(0, |(_, l)| l);
                (e.path.join("."), e.value.clone(), line)
            })
            .collect()
    }

    #[test]
    fn an_open_interpreter_profile_becomes_oi_keys_and_names_the_rest() {
        let (layer, note) = from_yaml("default", Path::new("/p/default.yaml"), OI_DEFAULT).unwrap();
        assert_eq!(
            keys(&layer),
            vec![
                ("model".to_owned(), json!("gpt-4o"), 3),
                ("temperature".to_owned(), json!(0), 4),
                ("harness".to_owned(), json!("markdown"), 5),
                (
                    "custom_instructions".to_owned(),
                    json!("Answer in French."),
                    9
                ),
                ("approval".to_owned(), json!("auto"), 10),
            ]
        );
        let note = note.unwrap();
        assert!(note.contains("`computer.import_computer_api`"), "{note}");
        assert!(note.contains("`safe_mode`"), "{note}");
        assert!(!note.contains("version"), "{note}");
    }

    #[test]
    fn an_api_base_becomes_a_provider_of_its_own() {
        let text = "llm:\n  api_base: http://127.0.0.1:1234/v1\n  model: local-model\n";
        let (layer, note) = from_yaml("lm", Path::new("lm.yaml"), text).unwrap();
        assert_eq!(note, None);
        let keys: Vec<String> = keys(&layer).into_iter().map(|k| k.0).collect();
        assert_eq!(
            keys,
            [
                "model_providers.profile.base_url",
                "model_providers.profile.wire_api",
                "model_provider",
                "model"
            ]
        );
    }

    #[test]
    fn broken_yaml_is_an_error_at_its_line() {
        let Err(ConfigError::Syntax { line, .. }) =
            from_yaml("x", Path::new("x.yaml"), "llm:\n  model: [unclosed\n")
        else {
            panic!("broken YAML should be refused");
        };
        assert!(line >= 2, "line {line}");
    }

    #[test]
    fn every_shipped_profile_is_valid() {
        for (name, text) in BUILT_IN {
            let layer = crate::layers::parse_toml(Path::new(name), text, &|line| Origin::Profile {
                name: (*name).to_owned(),
                path: PathBuf::from(name),
                line,
            })
            .unwrap();
            assert!(!layer.entries.is_empty(), "{name} sets nothing");
            for entry in &layer.entries {
                crate::schema::check(&entry.path, &entry.value, crate::schema::Scope::Profile)
                    .unwrap_or_else(|p| panic!("{name}: {p:?}"));
            }
        }
    }
}
