//! Changing the user's configuration file (`config set`, `trust`, the model
//! picked with `/model`) with `toml_edit`, so the user's comments, order and
//! formatting stay as they were.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toml_edit::{DocumentMut, Item, TableLike};

use crate::error::ConfigError;
use crate::layers::{Entry, parse_value_text};
use crate::load::to_error;
use crate::origin::Origin;
use crate::schema::{self, Scope};

/// Sets the dotted `key` to `raw` (read as TOML where it fits the key, else
/// as text) in `home/config.toml`, creating the file if needed. The value is
/// checked like any other before anything is written. Returns the file and
/// the value as written.
pub fn set(home: &Path, key: &str, raw: &str) -> Result<(PathBuf, String), ConfigError> {
    let origin = Origin::Flag {
        flag: "config set".into(),
    };
    let path: Vec<String> = toml_edit::Key::parse(key)
        .map_err(|_| ConfigError::UnknownKey {
            origin: Box::new(origin.clone()),
            key: key.to_owned(),
            suggestion: None,
            valid: Vec::new(),
        })?
        .iter()
        .map(|k| k.get().to_owned())
        .collect();
    let value = parse_value_text(&path, raw);
    let entry = Entry {
        path: path.clone(),
        value: value.clone(),
        origin,
    };
    schema::check(&path, &value, Scope::User).map_err(|p| to_error(p, &entry))?;
    let file = home.join("config.toml");
    let written = to_toml(&value).to_string();
    update(&file, |doc| {
        let (last, parents) = path.split_last().unwrap_or((&path[0], &[]));
        let table = table_at(doc, parents)?;
        table.insert(last, Item::Value(to_toml(&value)));
        Ok(())
    })?;
    Ok((file, written.trim().to_owned()))
}

/// Marks `root` as trusted (or untrusted) in `home/config.toml`:
/// `[projects."<root>"] trust_level = "trusted"`.
pub fn trust(home: &Path, root: &Path, trusted: bool) -> Result<PathBuf, ConfigError> {
    let file = home.join("config.toml");
    let root = root.display().to_string();
    update(&file, |doc| {
        let table = table_at(doc, &["projects".to_owned(), root.clone()])?;
        table.insert(
            "trust_level",
            toml_edit::value(if trusted { "trusted" } else { "untrusted" }),
        );
        Ok(())
    })?;
    Ok(file)
}

/// Writes `[mcp_servers.NAME]` with `fields` (each checked like any other
/// key) to `home/config.toml`, replacing a server of that name. Returns the
/// file and whether a server was replaced.
pub fn add_mcp_server(
    home: &Path,
    name: &str,
    fields: &[(&str, Value)],
) -> Result<(PathBuf, bool), ConfigError> {
    let origin = Origin::Flag {
        flag: "mcp add".into(),
    };
    for (field, value) in fields {
        let path = vec![
            "mcp_servers".to_owned(),
            name.to_owned(),
            (*field).to_owned(),
        ];
        let entry = Entry {
            path: path.clone(),
            value: value.clone(),
            origin: origin.clone(),
        };
        // A table value (env, headers) is checked entry by entry.
        match value.as_object() {
            Some(map) => {
                for (k, v) in map {
                    let mut deeper = path.clone();
                    deeper.push(k.clone());
                    schema::check(&deeper, v, Scope::User).map_err(|p| to_error(p, &entry))?;
                }
            }
            None => schema::check(&path, value, Scope::User).map_err(|p| to_error(p, &entry))?,
        }
    }
    let file = home.join("config.toml");
    let mut replaced = false;
    update(&file, |doc| {
        let servers = doc
            .entry("mcp_servers")
            .or_insert_with(|| {
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                Item::Table(t)
            })
            .as_table_like_mut()
            .ok_or("`mcp_servers` is a value, not a table")?;
        replaced = servers.remove(name).is_some();
        let mut table = toml_edit::Table::new();
        for (field, value) in fields {
            table.insert(field, Item::Value(to_toml(value)));
        }
        servers.insert(name, Item::Table(table));
        Ok(())
    })?;
    Ok((file, replaced))
}

/// Removes `[mcp_servers.NAME]` from `home/config.toml`.
pub fn remove_mcp_server(home: &Path, name: &str) -> Result<PathBuf, ConfigError> {
    let file = home.join("config.toml");
    let text = crate::load::read_config_text(&file)?.unwrap_or_default();
    let doc: DocumentMut = text.parse().unwrap_or_default();
    let known: Vec<String> = doc
        .get("mcp_servers")
        .and_then(Item::as_table_like)
        .map(|t| t.iter().map(|(k, _)| k.to_owned()).collect())
        .unwrap_or_default();
    if !known.iter().any(|k| k == name) {
        return Err(ConfigError::UnknownMcpServer {
            name: name.to_owned(),
            path: file,
            known,
        });
    }
    update(&file, |doc| {
        if let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) {
            servers.remove(name);
            if servers.is_empty() {
                doc.remove("mcp_servers");
            }
        }
        Ok(())
    })?;
    Ok(file)
}

/// Reads the file (or starts an empty one), applies `change`, and writes it
/// back atomically.
fn update(
    file: &Path,
    change: impl FnOnce(&mut DocumentMut) -> Result<(), String>,
) -> Result<(), ConfigError> {
    let text = crate::load::read_config_text(file)?.unwrap_or_default();
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let line = crate::origin::line_of(&text, offset);
        ConfigError::Syntax {
            path: file.to_owned(),
            line,
            column: 1,
            message: e.message().trim().to_owned(),
            source_line: text.lines().nth(line - 1).unwrap_or("").to_owned(),
        }
    })?;
    change(&mut doc).map_err(|problem| ConfigError::Write {
        path: file.to_owned(),
        source: std::io::Error::other(problem),
    })?;
    let write_error = |source: std::io::Error| ConfigError::Write {
        path: file.to_owned(),
        source,
    };
    if let Some(dir) = file.parent() {
        fs_err::create_dir_all(dir).map_err(write_error)?;
    }
    let tmp = file.with_extension("toml.tmp");
    fs_err::write(&tmp, doc.to_string()).map_err(write_error)?;
    fs_err::rename(&tmp, file).map_err(write_error)
}

/// The table at `path`, creating missing tables (as `[a.b]` headers, without
/// empty parent headers).
fn table_at<'a>(
    doc: &'a mut DocumentMut,
    path: &[String],
) -> Result<&'a mut dyn TableLike, String> {
    let mut table: &mut dyn TableLike = doc.as_table_mut();
    for (depth, segment) in path.iter().enumerate() {
        let is_last = depth + 1 == path.len();
        let item = table.entry(segment).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(!is_last);
            Item::Table(t)
        });
        table = item
            .as_table_like_mut()
            .ok_or_else(|| format!("`{}` is a value, not a table", path[..=depth].join(".")))?;
    }
    Ok(table)
}

fn to_toml(value: &Value) -> toml_edit::Value {
    match value {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or(0.0).into(),
        },
        Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(to_toml(item));
            }
            toml_edit::Value::Array(array)
        }
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                table.insert(k, to_toml(v));
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::Null => "".into(),
    }
}
