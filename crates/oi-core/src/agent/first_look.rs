//! A first look for small models: how the files a task names begin, given
//! with the task, so that the model does not guess a file's shape (how a
//! JSON document nests, which columns and separator a CSV has, a log's
//! format) before it has seen it.
//!
//! Only the named files: a listing of the whole folder, measured on
//! `evals/basic`, made a 0.5B model put every listed name into its commands
//! (`rm` of the file it was told to keep, every file into an archive of
//! `.log` files).
//!
//! Bounded: a few lines of each named file, a JSON document's shape rather
//! than its text, at most [`MAX_CHARS`] in all.

use std::path::Path;

use serde_json::Value;

use super::coach::{first_lines, read_head};

/// The whole look, at most (about 500 tokens).
const MAX_CHARS: usize = 2000;
/// Named files previewed, at most.
const MAX_FILES: usize = 3;
/// Lines of a text file shown, and their width.
const LINES: usize = 6;
const WIDTH: usize = 160;
/// How much of a file is read: its start, or a whole JSON document up to
/// this size.
const READ: u64 = 256 * 1024;

/// The look to give with a task that names `named` files, in `cwd`; `None`
/// when none of them is a file there.
pub(super) fn first_look(cwd: &Path, named: &[String]) -> Option<String> {
    let previews: Vec<String> = named
        .iter()
        .filter(|name| cwd.join(name.as_str()).is_file())
        .take(MAX_FILES)
        .filter_map(|name| preview(name, &cwd.join(name.as_str())))
        .collect();
    if previews.is_empty() {
        return None;
    }
    let mut look = String::from("[oi: how the files the task names begin, so you need not guess:");
    for (i, preview) in previews.iter().enumerate() {
        // The first is always shown (cut below if it is too long).
        if i > 0 && look.len() + preview.len() + 2 > MAX_CHARS {
            break;
        }
        look.push('\n');
        look.push_str(preview);
    }
    if look.len() > MAX_CHARS {
        let mut cut = MAX_CHARS;
        while !look.is_char_boundary(cut) {
            cut -= 1;
        }
        look.truncate(cut);
        look.push('…');
    }
    look.push(']');
    Some(look)
}

fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// How a named file begins: a JSON document's shape, a text file's first
/// lines, or what kind of binary file it is.
fn preview(name: &str, path: &Path) -> Option<String> {
    let len = fs_err::metadata(path).ok()?.len();
    let head = read_head(path, READ)?;
    if head.starts_with(b"SQLite format 3\0") {
        return Some(format!(
            "`{name}` is a SQLite database ({}): list its tables and their columns before querying it.",
            size(len)
        ));
    }
    let text = match std::str::from_utf8(&head) {
        Ok(text) => text,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
        Err(_) => return Some(format!("`{name}` is a binary file ({}).", size(len))),
    };
    if text.contains('\0') {
        return Some(format!("`{name}` is a binary file ({}).", size(len)));
    }
    let (bom, text) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (" It starts with a UTF-8 byte-order mark.", rest),
        None => ("", text),
    };
    let trimmed = text.trim_start();
    if len <= READ
        && (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        let mut shape = String::new();
        json_shape(&value, 0, &mut shape);
        return Some(format!(
            "`{name}` is a JSON document shaped like this:{bom}\n{shape}"
        ));
    }
    let count = text.lines().count();
    let shown = first_lines(text, LINES, WIDTH);
    let more = if count > LINES { "\n…" } else { "" };
    let lines = if count == 1 { "line" } else { "lines" };
    let counted = if len > READ {
        format!("{} in all", size(len))
    } else {
        format!("{count} {lines}")
    };
    Some(format!(
        "`{name}` ({counted}) begins:{bom}\n{}{more}",
        shown.join("\n")
    ))
}

/// A compact description of a JSON value's structure: keys and the kinds
/// of their values, the first element of each array and the array's length.
fn json_shape(value: &Value, depth: usize, out: &mut String) {
    const MAX_KEYS: usize = 12;
    const MAX_DEPTH: usize = 6;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(_) => out.push_str("bool"),
        Value::Number(_) => out.push_str("number"),
        Value::String(_) => out.push_str("string"),
        Value::Array(items) if depth >= MAX_DEPTH => {
            out.push_str(&format!("[…] ({} items)", items.len()));
        }
        Value::Object(map) if depth >= MAX_DEPTH => {
            out.push_str(&format!("{{…}} ({} keys)", map.len()));
        }
        Value::Array(items) => match items.first() {
            None => out.push_str("[]"),
            Some(first) => {
                out.push('[');
                json_shape(first, depth + 1, out);
                let items = items.len();
                out.push_str(&format!(
                    ", …] ({items} item{})",
                    if items == 1 { "" } else { "s" }
                ));
            }
        },
        Value::Object(map) => {
            out.push('{');
            for (i, (key, value)) in map.iter().take(MAX_KEYS).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push_str(": ");
                json_shape(value, depth + 1, out);
            }
            if map.len() > MAX_KEYS {
                out.push_str(&format!(", … ({} keys)", map.len()));
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_json_document_is_shown_by_its_shape() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("orders.json"),
            // Keys in sorted order: the same shape whether or not the build's
            // serde_json keeps a document's own order.
            r#"{"data": {"orders": [{"customer": {"name": "A"}, "id": 1, "items": [{"ok": true, "qty": 2}]}, {"id": 2}]}, "note": null}"#,
        )
        .unwrap();
        let look = first_look(dir.path(), &["orders.json".to_owned()]).unwrap();
        assert_eq!(
            look,
            "[oi: how the files the task names begin, so you need not guess:\n\
             `orders.json` is a JSON document shaped like this:\n\
             {\"data\": {\"orders\": [{\"customer\": {\"name\": string}, \"id\": number, \"items\": [{\"ok\": bool, \"qty\": number}, …] (1 item)}, …] (2 items)}, \"note\": null}]"
        );
    }

    #[test]
    fn a_text_file_shows_its_first_lines_and_a_byte_order_mark_and_nothing_else_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (0..20).map(|i| format!("{i};x\n")).collect();
        fs_err::write(
            dir.path().join("data.csv"),
            format!("\u{feff} Name ;Amount\n{lines}"),
        )
        .unwrap();
        fs_err::write(dir.path().join("keep.db"), "x").unwrap();
        let look = first_look(
            dir.path(),
            &["data.csv".to_owned(), "result.txt".to_owned()],
        )
        .unwrap();
        assert_eq!(
            look,
            "[oi: how the files the task names begin, so you need not guess:\n\
             `data.csv` (21 lines) begins: It starts with a UTF-8 byte-order mark.\n Name ;Amount\n0;x\n1;x\n2;x\n3;x\n4;x\n…]"
        );
    }

    #[test]
    fn a_task_naming_no_file_here_gets_no_look() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("other.txt"), "x").unwrap();
        assert_eq!(first_look(dir.path(), &["out.txt".to_owned()]), None);
        assert_eq!(first_look(dir.path(), &[]), None);
        fs_err::write(dir.path().join("shop.db"), b"SQLite format 3\0\x10\0").unwrap();
        let look = first_look(dir.path(), &["shop.db".to_owned()]).unwrap();
        assert!(
            look.contains("`shop.db` is a SQLite database (18 bytes)"),
            "{look}"
        );
    }

    #[test]
    fn the_look_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let wide = "y".repeat(1000);
        for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
            fs_err::write(dir.path().join(name), format!("{wide}\n{wide}\n")).unwrap();
        }
        let named = ["a.txt", "b.txt", "c.txt", "d.txt"].map(str::to_owned);
        let look = first_look(dir.path(), &named).unwrap();
        assert!(look.chars().count() <= MAX_CHARS + 2, "{}", look.len());
        assert!(look.contains(&format!("{}…", "y".repeat(WIDTH))), "{look}");
        assert!(!look.contains("`d.txt`"), "{look}");
        // A document with many keys is shown by a bounded shape.
        let json: String = (0..300)
            .map(|i| format!("\"k{i}\": {{\"x\": 1}}, "))
            .collect();
        fs_err::write(dir.path().join("big.json"), format!("{{{json}\"end\": 1}}")).unwrap();
        let look = first_look(dir.path(), &["big.json".to_owned()]).unwrap();
        assert!(look.contains("`big.json` is a JSON document"), "{look}");
        assert!(look.chars().count() <= MAX_CHARS + 2, "{}", look.len());
    }
}
