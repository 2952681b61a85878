//! Reading one layer (a file, a profile, `-c` arguments) into entries: dotted
//! keys with their values and the place each was set.

use std::path::Path;

use serde_json::Value;
use toml_edit::{Document, Item, Table};

use crate::error::ConfigError;
use crate::origin::{Origin, line_of};
use crate::schema;

/// One value and where it was set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub path: Vec<String>,
    pub value: Value,
    pub origin: Origin,
}

/// The entries of a layer, and the tables it opened (with their header lines).
#[derive(Debug, Default, Clone)]
pub(crate) struct Layer {
    pub entries: Vec<Entry>,
    pub tables: Vec<(Vec<String>, Origin)>,
}

/// Parses TOML `text` read from `path`; `origin` turns a line into an origin.
pub(crate) fn parse_toml(
    path: &Path,
    text: &str,
    origin: &dyn Fn(usize) -> Origin,
) -> Result<Layer, ConfigError> {
    let doc = Document::parse(text.to_owned()).map_err(|e| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let line = line_of(text, offset);
        let line_start = text[..offset.min(text.len())]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        ConfigError::Syntax {
            path: path.to_owned(),
            line,
            column: offset.saturating_sub(line_start) + 1,
            message: e.message().trim().to_owned(),
            source_line: text.lines().nth(line - 1).unwrap_or("").to_owned(),
        }
    })?;
    let mut layer = Layer::default();
    walk_table(doc.as_table(), &[], text, origin, &mut layer);
    Ok(layer)
}

fn walk_table(
    table: &Table,
    prefix: &[String],
    text: &str,
    origin: &dyn Fn(usize) -> Origin,
    layer: &mut Layer,
) {
    for (key, item) in table.iter() {
        let key_span = table.key(key).and_then(|k| k.span());
        let line = key_span
            .or_else(|| item.span())
            .map(|s| line_of(text, s.start))
            .unwrap_or(1);
        let mut path = prefix.to_vec();
        path.push(key.to_owned());
        match item {
            Item::None => {}
            Item::Table(inner) => {
                let header = inner.span().map(|s| line_of(text, s.start)).unwrap_or(line);
                layer.tables.push((path.clone(), origin(header)));
                walk_table(inner, &path, text, origin, layer);
            }
            Item::Value(toml_edit::Value::InlineTable(inline)) => {
                layer.tables.push((path.clone(), origin(line)));
                for (inner_key, value) in inline.iter() {
                    let inner_line = inline
                        .key(inner_key)
                        .and_then(|k| k.span())
                        .map(|s| line_of(text, s.start))
                        .unwrap_or(line);
                    let mut inner_path = path.clone();
                    inner_path.push(inner_key.to_owned());
                    push_value(&inner_path, value, inner_line, origin, layer);
                }
            }
            Item::Value(value) => push_value(&path, value, line, origin, layer),
            Item::ArrayOfTables(array) => layer.entries.push(Entry {
                path,
                value: Value::Array(
                    array
                        .iter()
                        .map(|t| Value::Object(table_to_json(t)))
                        .collect(),
                ),
                origin: origin(line),
            }),
        }
    }
}

fn push_value(
    path: &[String],
    value: &toml_edit::Value,
    line: usize,
    origin: &dyn Fn(usize) -> Origin,
    layer: &mut Layer,
) {
    if let toml_edit::Value::InlineTable(inline) = value {
        layer.tables.push((path.to_vec(), origin(line)));
        for (key, inner) in inline.iter() {
            let mut inner_path = path.to_vec();
            inner_path.push(key.to_owned());
            push_value(&inner_path, inner, line, origin, layer);
        }
        return;
    }
    layer.entries.push(Entry {
        path: path.to_vec(),
        value: to_json(value),
        origin: origin(line),
    });
}

/// A TOML value as JSON (dates become strings).
pub(crate) fn to_json(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => serde_json::Number::from_f64(*f.value())
            .map(Value::Number)
            .unwrap_or(Value::Null),
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        toml_edit::Value::InlineTable(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.to_owned(), to_json(v))).collect())
        }
    }
}

fn table_to_json(table: &Table) -> serde_json::Map<String, Value> {
    table
        .iter()
        .filter_map(|(k, item)| {
            let value = match item {
                Item::Value(v) => to_json(v),
                Item::Table(t) => Value::Object(table_to_json(t)),
                _ => return None,
            };
            Some((k.to_owned(), value))
        })
        .collect()
}

/// Parses a `-c KEY=VALUE` argument. The key may be dotted (quoted parts
/// allowed: `projects."/a/b".trust_level`); the value is read as TOML, and
/// as plain text when it is not TOML or when the key takes a string.
pub(crate) fn parse_override(argument: &str) -> Result<(Vec<String>, Value), ConfigError> {
    let malformed = |problem: &str| ConfigError::MalformedOverride {
        argument: argument.to_owned(),
        problem: problem.to_owned(),
    };
    let Some((key, raw)) = argument.split_once('=') else {
        return Err(malformed(
            "write it as `-c key=value`, e.g. `-c model=gpt-5` or `-c max_turns=20`",
        ));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(malformed(
            "the key before `=` is empty, e.g. `-c model=gpt-5`",
        ));
    }
    let path: Vec<String> = toml_edit::Key::parse(key)
        .map_err(|_| {
            malformed("the key is not a valid TOML key; quote parts with dots or slashes, e.g. `projects.\"/my/repo\".trust_level=trusted`")
        })?
        .iter()
        .map(|k| k.get().to_owned())
        .collect();
    Ok((path.clone(), parse_value_text(&path, raw)))
}

/// A value typed on the command line, read as TOML where that fits the key.
pub(crate) fn parse_value_text(path: &[String], raw: &str) -> Value {
    let raw_trimmed = raw.trim();
    match raw_trimmed.parse::<toml_edit::Value>() {
        Ok(value) if value.is_str() || !schema::expects_string(path) => to_json(&value),
        _ => Value::String(raw_trimmed.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn at(line: usize) -> Origin {
        Origin::File {
            path: "/c.toml".into(),
            line,
        }
    }

    #[test]
    fn flattens_tables_with_the_line_of_each_key() {
        let text =
            "model = \"m\"\n\n[model_providers.k]\nname = \"K\"\nhttp_headers = { X-A = \"1\" }\n";
        let layer = parse_toml(Path::new("/c.toml"), text, &at).unwrap();
        let entries: Vec<(String, Value, usize)> = layer
            .entries
            .iter()
            .map(|e| {
                (
                    e.path.join("."),
                    e.value.clone(),
                    e.origin.file().unwrap().1,
                )
            })
            .collect();
        assert_eq!(
            entries,
            vec![
                ("model".into(), json!("m"), 1),
                ("model_providers.k.name".into(), json!("K"), 4),
                ("model_providers.k.http_headers.X-A".into(), json!("1"), 5),
            ]
        );
        let tables: Vec<(String, usize)> = layer
            .tables
            .iter()
            .map(|(p, o)| (p.join("."), o.file().unwrap().1))
            .collect();
        assert!(
            tables.contains(&("model_providers.k".into(), 3)),
            "{tables:?}"
        );
    }

    #[test]
    fn syntax_errors_name_the_line_and_column() {
        let err = parse_toml(
            Path::new("/c.toml"),
            "model = \"m\"\nmax_turns = = 3\n",
            &at,
        )
        .unwrap_err();
        match err {
            ConfigError::Syntax {
                line,
                column,
                source_line,
                ..
            } => {
                assert_eq!((line, column), (2, 13));
                assert_eq!(source_line, "max_turns = = 3");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn overrides_parse_as_toml_or_text() {
        let cases = [
            ("model=gpt-5", "model", json!("gpt-5")),
            ("model=1.5", "model", json!("1.5")),
            ("max_turns=20", "max_turns", json!(20)),
            ("temperature=0.5", "temperature", json!(0.5)),
            (
                "custom_instructions=be brief",
                "custom_instructions",
                json!("be brief"),
            ),
            (
                "model_providers.kunavo.wire_api=chat",
                "model_providers.kunavo.wire_api",
                json!("chat"),
            ),
            (
                "languages.python.command=[\"/v/bin/python\", \"-u\"]",
                "languages.python.command",
                json!(["/v/bin/python", "-u"]),
            ),
            (
                "projects.\"/a/b.c\".trust_level=trusted",
                "projects./a/b.c.trust_level",
                json!("trusted"),
            ),
            ("model=\"quoted\"", "model", json!("quoted")),
            ("flag=true", "flag", json!(true)),
            ("model= spaced ", "model", json!("spaced")),
        ];
        for (argument, key, value) in cases {
            let (path, parsed) = parse_override(argument).unwrap();
            assert_eq!(
                (path.join("."), parsed),
                (key.to_owned(), value),
                "{argument}"
            );
        }
        assert_eq!(
            parse_override("projects.\"/a/b.c\".trust_level=trusted")
                .unwrap()
                .0,
            vec!["projects", "/a/b.c", "trust_level"]
        );
    }

    #[test]
    fn malformed_overrides_say_how_to_write_them() {
        for argument in ["model", "=x", "a..b=1"] {
            assert!(
                matches!(
                    parse_override(argument),
                    Err(ConfigError::MalformedOverride { .. })
                ),
                "{argument}"
            );
        }
    }
}
