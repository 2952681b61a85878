//! A first look for small models: what the working folder holds and how
//! the files a task names begin, given with the task, so that the model
//! does not guess a file's shape (how a JSON document nests, which columns
//! and separator a CSV has, a log's format) before it has seen it.
//!
//! Bounded: a few dozen names, a few lines of each named file, a JSON
//! document's shape rather than its text, at most [`MAX_CHARS`] in all.

use std::io::Read as _;
use std::path::Path;

use serde_json::Value;

use super::coach::first_lines;

/// The whole look, at most (about 500 tokens).
const MAX_CHARS: usize = 2000;
/// Entries of the working folder listed, at most.
const MAX_ENTRIES: usize = 25;
/// Names listed inside each of its folders, at most.
const MAX_CHILDREN: usize = 8;
/// Named files previewed, at most.
const MAX_FILES: usize = 3;
/// Lines of a text file shown, and their width.
const LINES: usize = 6;
const WIDTH: usize = 160;
/// How much of a file is read: its start, or a whole JSON document up to
/// this size.
const READ: u64 = 256 * 1024;

/// The look to give with a task that names `named` files, in `cwd`; `None`
/// when the folder is empty and the task names no file here.
pub(super) fn first_look(cwd: &Path, named: &[String]) -> Option<String> {
    let listing = listing(cwd);
    let previews: Vec<String> = named
        .iter()
        .filter(|name| cwd.join(name.as_str()).is_file())
        .take(MAX_FILES)
        .filter_map(|name| preview(name, &cwd.join(name.as_str())))
        .collect();
    if listing.is_empty() && previews.is_empty() {
        return None;
    }
    let mut look = String::from(
        "[oi: a first look at the working folder, so you need not guess (check anything else yourself):",
    );
    if listing.is_empty() {
        look.push_str("\nThe folder is empty.");
    }
    for line in listing {
        look.push('\n');
        look.push_str(&line);
    }
    for preview in previews {
        if look.len() + preview.len() + 2 > MAX_CHARS {
            break;
        }
        look.push('\n');
        look.push_str(&preview);
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

/// The working folder's entries, a line each (folders with their first
/// names), hidden ones included but not `.git`.
fn listing(cwd: &Path) -> Vec<String> {
    let entries = sorted_entries(cwd);
    let total = entries.len();
    let mut lines: Vec<String> = entries
        .into_iter()
        .take(MAX_ENTRIES)
        .map(|(name, is_dir, len)| {
            if is_dir {
                let children = sorted_entries(&cwd.join(&name));
                let shown: Vec<String> = children
                    .iter()
                    .take(MAX_CHILDREN)
                    .map(|(child, dir, _)| {
                        if *dir {
                            format!("`{child}/`")
                        } else {
                            format!("`{child}`")
                        }
                    })
                    .collect();
                let more = if children.len() > MAX_CHILDREN {
                    ", …"
                } else {
                    ""
                };
                let count = children.len();
                let entries = if count == 1 { "entry" } else { "entries" };
                if count == 0 {
                    format!("- `{name}/` (empty)")
                } else {
                    format!(
                        "- `{name}/` ({count} {entries}): {}{more}",
                        shown.join(", ")
                    )
                }
            } else {
                format!("- `{name}` ({})", size(len))
            }
        })
        .collect();
    if total > MAX_ENTRIES {
        lines.push(format!("- … and {} more", total - MAX_ENTRIES));
    }
    lines
}

/// A folder's entries (name, is a folder, size), sorted by name; `.git`
/// and unreadable entries left out.
fn sorted_entries(dir: &Path) -> Vec<(String, bool, u64)> {
    let Ok(read) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut entries: Vec<(String, bool, u64)> = read
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                return None;
            }
            let meta = entry.metadata().ok()?;
            Some((name, meta.is_dir(), meta.len()))
        })
        .collect();
    entries.sort();
    entries
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
    let mut head = Vec::new();
    fs_err::File::open(path)
        .ok()?
        .take(READ)
        .read_to_end(&mut head)
        .ok()?;
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
            "[oi: a first look at the working folder, so you need not guess (check anything else yourself):\n\
             - `orders.json` (120 bytes)\n\
             `orders.json` is a JSON document shaped like this:\n\
             {\"data\": {\"orders\": [{\"customer\": {\"name\": string}, \"id\": number, \"items\": [{\"ok\": bool, \"qty\": number}, …] (1 item)}, …] (2 items)}, \"note\": null}]"
        );
    }

    #[test]
    fn a_text_file_shows_its_first_lines_and_a_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (0..20).map(|i| format!("{i};x\n")).collect();
        fs_err::write(
            dir.path().join("data.csv"),
            format!("\u{feff} Name ;Amount\n{lines}"),
        )
        .unwrap();
        fs_err::create_dir(dir.path().join("in box")).unwrap();
        fs_err::write(dir.path().join("in box/A B.TXT"), "x").unwrap();
        fs_err::create_dir(dir.path().join("in box/sub")).unwrap();
        fs_err::create_dir(dir.path().join(".git")).unwrap();
        let look = first_look(
            dir.path(),
            &["data.csv".to_owned(), "result.txt".to_owned()],
        )
        .unwrap();
        assert_eq!(
            look,
            "[oi: a first look at the working folder, so you need not guess (check anything else yourself):\n\
             - `data.csv` (107 bytes)\n\
             - `in box/` (2 entries): `A B.TXT`, `sub/`\n\
             `data.csv` (21 lines) begins: It starts with a UTF-8 byte-order mark.\n Name ;Amount\n0;x\n1;x\n2;x\n3;x\n4;x\n…]"
        );
    }

    #[test]
    fn an_empty_folder_and_a_task_without_files_get_no_look() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(first_look(dir.path(), &["out.txt".to_owned()]), None);
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
        for i in 0..40 {
            fs_err::write(dir.path().join(format!("file-{i:02}.txt")), "x").unwrap();
        }
        let wide = "y".repeat(1000);
        fs_err::write(dir.path().join("wide.txt"), format!("{wide}\n{wide}\n")).unwrap();
        let look = first_look(dir.path(), &["wide.txt".to_owned()]).unwrap();
        assert!(look.contains("- … and 16 more"), "{look}");
        assert!(look.chars().count() <= MAX_CHARS + 2, "{}", look.len());
        assert!(look.contains(&format!("{}…", "y".repeat(WIDTH))), "{look}");
    }
}
