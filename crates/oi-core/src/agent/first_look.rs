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

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::coach::{first_lines, read_head, task_words};
use super::table;

/// The whole look, at most (about 500 tokens).
const MAX_CHARS: usize = 2100;
/// Named files previewed, at most.
const MAX_FILES: usize = 3;
/// Lines of a text file shown, and their width.
const LINES: usize = 6;
const WIDTH: usize = 160;
/// A text file that is neither a table nor a set of records is shown
/// whole when it is this short: a script to fix, a checklist, a
/// configuration, a note. Its first lines alone hide what a small model
/// guesses wrong (the example in a code block further down, the line
/// that fails).
const WHOLE_LINES: usize = 30;
const WHOLE_CHARS: usize = 1200;
/// How much of a file is read: its start, or a whole JSON document up to
/// this size.
const READ: u64 = 256 * 1024;
/// A JSON string this short is shown as it is.
const SAMPLE: usize = 24;

/// The look to give with a task that names `named` files and `folders`, in
/// `cwd`, and asks to change the scripts `rewrites`; `None` when none of
/// them is there.
pub(super) fn first_look(
    cwd: &Path,
    named: &[String],
    folders: &[String],
    rewrites: &[String],
) -> Option<String> {
    // A task about a script works on the tables through the script: code
    // the model copies from a pandas line would make the script need a
    // library it did without.
    let pandas = !named.iter().any(|name| super::save_as::is_script(name));
    // A task that names a file not there yet writes it: a configuration it
    // names is read (converted, summed up), not changed in place, and the
    // function that changes one key would be copied as the answer.
    let edits = named.iter().all(|name| cwd.join(name.as_str()).exists());
    let previews: Vec<String> = folders
        .iter()
        .take(MAX_FILES)
        .filter_map(|name| listing(name, &cwd.join(name.as_str())))
        .chain(
            named
                .iter()
                .filter(|name| cwd.join(name.as_str()).is_file())
                .take(MAX_FILES)
                .filter_map(|name| {
                    preview(
                        name,
                        &cwd.join(name.as_str()),
                        pandas,
                        rewrites.contains(name),
                        edits,
                    )
                }),
        )
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
        // Whole lines only: half a line of code would be copied as it is.
        if let Some(line_end) = look[..cut].rfind('\n').filter(|end| *end > MAX_CHARS / 2) {
            cut = line_end + 1;
        }
        look.truncate(cut);
        look.push('…');
    }
    look.push(']');
    Some(look)
}

/// How to change the script `name` the task asks to change: a small
/// model asked to fix a script answers with the lines it changes, run on
/// their own (`average = total / count` fails for lack of `total`), or
/// with a diff; its whole new version given as a block is saved over the
/// script and run (see `save_as::save_rewritten_scripts`).
fn rewrite_hint(name: &str) -> Option<String> {
    let language = super::save_as::language_of(name)?;
    Some(format!(
        "To change `{name}`, send all of it, changed, in one ```{language} block (every line, not only the ones you change, and no `+`/`-` marks): oi saves it as `{name}` and runs it."
    ))
}

/// Folders a task names as such (`photos/`, `logs/2026/`) that exist in
/// `cwd`: the folder a task works on is listed, not the workspace around it.
pub(super) fn named_folders(task: &str, cwd: &Path) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for word in task_words(task) {
        let Some(stem) = word.strip_suffix('/') else {
            continue;
        };
        if stem.is_empty() || stem.starts_with('/') || stem.split('/').any(|p| p == "..") {
            continue;
        }
        let name = format!("{stem}/");
        if cwd.join(stem).is_dir() && !found.contains(&name) {
            found.push(name);
        }
    }
    found
}

/// What a folder the task names holds: its entries' names (a folder's with
/// a `/`), sorted, at most [`MAX_ENTRIES`].
pub(super) fn listing(name: &str, path: &Path) -> Option<String> {
    const MAX_ENTRIES: usize = 20;
    let entries = listing_names(path)?;
    let count = entries.len();
    if count == 0 {
        return Some(format!("`{name}` is an empty folder."));
    }
    let spaces = entries.iter().any(|e| e.contains(' '));
    let shown: Vec<String> = entries
        .iter()
        .take(MAX_ENTRIES)
        .map(|e| format!("`{e}`"))
        .collect();
    let more = if count > MAX_ENTRIES { ", …" } else { "" };
    let quote = if spaces {
        " Some names have spaces: quote them in shell commands."
    } else {
        ""
    };
    // What its subfolders hold, and how to reach it: small models read
    // a folder with `os.listdir` and miss the files below.
    let subfolders: Vec<String> = entries
        .iter()
        .filter(|e| e.ends_with('/'))
        .take(MAX_SUBFOLDERS)
        .filter_map(|sub| {
            let inner = listing_names(&path.join(sub.trim_end_matches('/')))?;
            let shown: Vec<String> = inner
                .iter()
                .take(MAX_INNER)
                .map(|e| format!("`{e}`"))
                .collect();
            let more = if inner.len() > MAX_INNER { ", …" } else { "" };
            Some(if inner.is_empty() {
                format!("`{sub}` is empty")
            } else {
                format!("`{sub}` holds {}{more}", shown.join(", "))
            })
        })
        .collect();
    let below = if subfolders.is_empty() {
        String::new()
    } else {
        let root = table::python_string(name.trim_end_matches('/'));
        format!(
            " In it, {}. To reach every file below `{name}`, walk it: `for root, dirs, files in os.walk({root}):`, each file's path `os.path.join(root, f)` (`os.listdir` and `glob('*')` see only the top).",
            subfolders.join("; ")
        )
    };
    Some(format!(
        "`{name}` holds {count} entr{}: {}{more}.{quote}{below}",
        if count == 1 { "y" } else { "ies" },
        shown.join(", ")
    ))
}

/// Subfolders of a listed folder described, at most, and entries of each.
const MAX_SUBFOLDERS: usize = 5;
const MAX_INNER: usize = 8;

/// The entries of the folder `path`, a folder's with a `/`, sorted.
fn listing_names(path: &Path) -> Option<Vec<String>> {
    let mut entries: Vec<String> = fs_err::read_dir(path)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| {
            let mut entry_name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                entry_name.push('/');
            }
            entry_name
        })
        .collect();
    entries.sort();
    Some(entries)
}

fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// How the named file `name` at `path` begins: a JSON document's shape, a
/// text file's first lines, or what kind of binary file it is; each JSON
/// file and (when `pandas`) each table with the code that reads it; a
/// script the task asks to change (`rewrite`), shown whole, with how to
/// send its new version.
fn preview(name: &str, path: &Path, pandas: bool, rewrite: bool, edit: bool) -> Option<String> {
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
    let (bom, encoding, text) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (
            " It starts with a UTF-8 byte-order mark.",
            "utf-8-sig",
            rest,
        ),
        None => ("", "utf-8", text),
    };
    let file = table::python_string(name);
    let trimmed = text.trim_start();
    if len <= READ
        && (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        let mut shape = String::new();
        json_shape(&value, 0, &mut shape);
        return Some(format!(
            "`{name}` is a JSON document shaped like this:{bom}\n{shape}\nRead it with `import json`, `data = json.load(open({file}, encoding='{encoding}'))`{}.",
            json_lists(&value, "data")
        ));
    }
    if let Some((objects, others)) = json_lines(text, len <= READ) {
        let value = Value::Array(objects);
        let mut shape = String::new();
        json_shape(&value, 0, &mut shape);
        let loops = json_lists(&value, "rows");
        let Some(example) = others.first() else {
            return Some(format!(
                "`{name}` holds one JSON object per line; as a list they are shaped like this:{bom}\n{shape}\nRead it with `import json`, `rows = [json.loads(line) for line in open({file}, encoding='{encoding}') if line.strip()]` (not `json.load`){loops}."
            ));
        };
        // Lines that are not JSON (a note, a cut line): the loop that
        // reads the rest, since `json.loads` fails on them.
        let count = others.len();
        let (lines, are) = if count == 1 {
            ("line is", "it")
        } else {
            ("lines are", "them")
        };
        let example: String = example.chars().take(WIDTH).collect();
        return Some(format!(
            "`{name}` holds one JSON object per line, but {count} {lines} not JSON (like `{example}`), so `json.loads` fails on {are}; as a list the objects are shaped like this:{bom}\n{shape}\nRead it with this loop, which skips the lines that are not JSON{loops}:\n```python\nimport json\nrows = []\nfor line in open({file}, encoding='{encoding}'):\n    try:\n        rows.append(json.loads(line))\n    except ValueError:\n        continue\n```"
        ));
    }
    let count = text.lines().count();
    let lines = if count == 1 { "line" } else { "lines" };
    let counted = if len > READ {
        format!("{} in all", size(len))
    } else {
        format!("{count} {lines}")
    };
    let table = table::profile(text, len <= READ, false)
        .map(|profile| format!("\nAs a table: {profile}"))
        .or_else(|| {
            super::records::profile(&file, text, len <= READ)
                .map(|profile| format!("\nIn it {profile}"))
        })
        .unwrap_or_default();
    // A table aligned in columns among other lines: shown with the lines,
    // which stay whole when short.
    let aligned = if table.is_empty() {
        super::records::markdown_tables(text, &file)
            .or_else(|| super::records::aligned(text))
            .map(|how| format!("\nIn it {how}"))
            .unwrap_or_default()
    } else {
        String::new()
    };
    let whole = table.is_empty()
        && len as usize <= WHOLE_CHARS
        && count <= WHOLE_LINES
        && text.lines().all(|line| line.chars().count() <= WIDTH);
    let outline = xml_outline(name, text)
        .or_else(|| super::markdown::outline(name, text, whole))
        .map(|outline| format!("\n{outline}"))
        .unwrap_or_default();
    let (shown, more, begins) = if whole {
        (first_lines(text, count, WIDTH), "", ", all of it")
    } else {
        let more = if count > LINES { "\n…" } else { "" };
        (first_lines(text, LINES, WIDTH), more, " begins")
    };
    let read = table::read_with(name, text, len <= READ)
        .filter(|_| pandas)
        .map(|code| format!("\nRead it with `import pandas as pd`, {code}."))
        .or_else(|| ini_edit(name, text).filter(|_| edit))
        .unwrap_or_default();
    let read = format!("{}{read}", toml_read(name, &file).unwrap_or_default());
    // Only a script shown whole can be sent whole.
    let hint = rewrite_hint(name)
        .filter(|_| whole && rewrite)
        .map(|hint| format!("\n{hint}"))
        .unwrap_or_default();
    Some(format!(
        "`{name}` ({counted}){begins}:{bom}\n{}{more}{table}{aligned}{outline}{read}{hint}",
        shown.join("\n")
    ))
}

/// Element names of an XML outline listed, at most.
const MAX_ELEMENTS: usize = 8;

/// For an XML document (`.xml`, or text opening with `<?xml`; not HTML):
/// its elements with how many times each stands, and the ElementTree
/// code that finds the repeated ones. A default namespace
/// (`xmlns="…"`) is named with its trap: ElementTree names every tag
/// `{namespace}book`, so `findall('.//book')` finds nothing and a small
/// model wrote an empty result; `{*}` matches any namespace.
fn xml_outline(name: &str, text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    let xml_name = Path::new(name)
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("xml"));
    if !(trimmed.starts_with("<?xml") || (xml_name && trimmed.starts_with('<'))) {
        return None;
    }
    // Comments may quote tags (`<!-- listed in <author> -->`).
    let mut uncommented = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        uncommented.push_str(&rest[..open]);
        rest = rest[open..]
            .find("-->")
            .map_or("", |close| &rest[open + close + 3..]);
    }
    uncommented.push_str(rest);
    let text = uncommented.as_str();
    // Element names in the order they first stand, with their counts.
    let mut elements: Vec<(&str, usize)> = Vec::new();
    let mut root_tag = None;
    for (at, _) in text.match_indices('<') {
        let rest = &text[at + 1..];
        let Some(tag) = tag_name(rest) else {
            continue;
        };
        if root_tag.is_none() {
            root_tag = Some(&rest[..rest.find('>').unwrap_or(rest.len())]);
        }
        match elements.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, n)) => *n += 1,
            None => elements.push((tag, 1)),
        }
    }
    let (root, _) = *elements.first()?;
    if root.eq_ignore_ascii_case("html") {
        return None;
    }
    let namespace = root_tag
        .and_then(|tag| tag.split_once("xmlns=\""))
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(ns, _)| ns);
    // The record: the first of the elements that stand most often, and
    // the first element inside it.
    let most = elements[1..].iter().map(|(_, n)| *n).max()?;
    let at = elements[1..].iter().position(|(_, n)| *n == most)? + 1;
    let (record, _) = elements[at];
    let child = elements.get(at + 1).map(|(t, _)| *t);
    let listed: Vec<String> = elements
        .iter()
        .take(MAX_ELEMENTS)
        .map(|(tag, n)| format!("`{tag}` ×{n}"))
        .collect();
    let any = if namespace.is_some() || record.contains(':') {
        "{*}"
    } else {
        ""
    };
    let var = record
        .rsplit(':')
        .next()
        .filter(|v| v.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .unwrap_or("item")
        .to_lowercase();
    let local = |tag: &str| tag.rsplit(':').next().unwrap_or(tag).to_owned();
    let inner = child
        .map(|c| format!(", and inside it `{var}.find('{any}{}').text`", local(c)))
        .unwrap_or_default();
    let trap = namespace
        .map(|ns| {
            format!(
                " Its root sets a default namespace (`xmlns=\"{ns}\"`), so ElementTree names every tag `{{{ns}}}{}`: `findall('.//{}')` finds nothing; `{{*}}` before a name matches any namespace.",
                local(record),
                local(record)
            )
        })
        .unwrap_or_default();
    let spelled = xml_variants(text)
        .map(|(tag, a, b, case)| {
            format!(
                "\nThe text of `{tag}` holds one value written with other {} (`{a}`, `{b}`): compare it as `' '.join({var}.find('{any}{tag}').text.split()){}`.",
                if case { "case or spacing" } else { "spacing" },
                if case { ".lower()" } else { "" },
                tag = local(tag),
            )
        })
        .unwrap_or_default();
    Some(format!(
        "It is XML: elements {}.{trap}\nRead it with `import xml.etree.ElementTree as ET`, `root = ET.parse({}).getroot()`, then `for {var} in root.findall('.//{any}{}'):`{inner}.{spelled}",
        listed.join(", "),
        table::python_string(name),
        local(record)
    ))
}

/// The first element of the XML `text` whose texts (`<author>Mara
/// Quinn</author>`) hold one value written two ways (` Mara  Quinn`):
/// its tag, the two ways, and whether they differ in case (else only in
/// spacing).
fn xml_variants(text: &str) -> Option<(&str, &str, &str, bool)> {
    let mut texts: Vec<(&str, Vec<&str>)> = Vec::new();
    for (at, _) in text.match_indices('<') {
        let rest = &text[at + 1..];
        let (Some(tag), Some(close)) = (tag_name(rest), rest.find('>')) else {
            continue;
        };
        let inside = &rest[close + 1..];
        let Some(end) = inside.find('<') else {
            continue;
        };
        let value = &inside[..end];
        if value.trim().is_empty() || !inside[end..].starts_with(&format!("</{tag}>")) {
            continue;
        }
        match texts.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, values)) => values.push(value),
            None => texts.push((tag, vec![value])),
        }
    }
    texts.iter().find_map(|(tag, values)| {
        let (a, b) = table::variants(values)?;
        // More spellings with spaces made one than with case folded too.
        let spaced: BTreeSet<String> = values
            .iter()
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let folded: BTreeSet<String> = values.iter().map(|v| table::fold(v)).collect();
        Some((*tag, a, b, spaced.len() > folded.len()))
    })
}

/// The element name an XML tag opens with (`book` of `<book id="1">`),
/// given the text after its `<`; `None` for a closing tag, a comment or
/// a declaration.
fn tag_name(rest: &str) -> Option<&str> {
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .unwrap_or(rest.len());
    let tag = &rest[..end];
    tag.starts_with(|c: char| c.is_alphabetic() || c == '_')
        .then_some(tag)
}

/// For a TOML file (`.toml`, `file` its name as a Python string): the
/// standard library's reader (Python 3.11 on) and the loops over what it
/// gives, so a model converting it reads the values, types and all,
/// instead of typing them in or splitting lines by hand.
fn toml_read(name: &str, file: &str) -> Option<String> {
    name.to_ascii_lowercase().ends_with(".toml").then(|| {
        format!(
            "\nRead it with `import tomllib`, `data = tomllib.load(open({file}, 'rb'))`: a dict of its tables, in the file's order (`for section, keys in data.items():`, then `for key, value in keys.items():`), each value typed (`True`, `8080`, `'db.internal'`)."
        )
    })
}

/// For an INI-style configuration (`[section]` lines, `key = value`
/// lines, `;` or `#` comments): a Python function that sets one key of one
/// section and leaves every other line as it is, comments included, in
/// the file's own `key = value` spacing. Small models edit such a file
/// with `sed` or a line index and add a second `port` to the section, or
/// with `configparser`, which drops the comments.
fn ini_edit(name: &str, text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with([';', '#']))
        .collect();
    let sections = lines
        .iter()
        .filter(|l| l.starts_with('[') && l.ends_with(']'))
        .count();
    let settings: Vec<&&str> = lines.iter().filter(|l| l.contains('=')).collect();
    if sections == 0 || settings.len() < 2 || sections + settings.len() < lines.len() {
        return None;
    }
    let spaced = settings.iter().filter(|l| l.contains(" = ")).count() * 2 >= settings.len();
    let equals = if spaced { "' = '" } else { "'='" };
    Some(format!(
        "\nTo change one key of one section and keep every other line as it is (comments too), run this block whole, its last line set to the section, key and value the task names:\n\
```python\n\
def set_key(path, section, key, value):\n    \
lines = open(path).read().split('\\n')\n    \
current = ''\n    \
for i, line in enumerate(lines):\n        \
text = line.strip()\n        \
if text.startswith('[') and text.endswith(']'):\n            \
current = text[1:-1].strip()\n        \
elif current == section and '=' in text and text.split('=')[0].strip() == key:\n            \
lines[i] = line[:len(line) - len(line.lstrip())] + key + {equals} + str(value)\n    \
open(path, 'w').write('\\n'.join(lines))\n\
set_key({}, 'section', 'key', 'value')\n\
```",
        table::python_string(name)
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
        // A short string is shown as it is: a number or a date kept as
        // text, or the case it is written in, matters to the code.
        Value::String(text) if text.chars().count() <= SAMPLE => {
            out.push_str(&serde_json::to_string(text).unwrap_or_default());
        }
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
                let count = items.len();
                out.push_str(&format!(
                    ", …] ({count} item{}{})",
                    if count == 1 { "" } else { "s" },
                    item_keys(items)
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

/// How to loop over the objects of `value` (read into the variable
/// `root`), as Python: over its first list of objects (`for order in
/// data['orders']:`), and over a list of objects its items hold (`for item
/// in order.get('items', []):` when only some items have it). Empty when
/// `value` holds no list of objects, or is one with none inside.
fn json_lists(value: &Value, root: &str) -> String {
    /// The path (keys) from `value` to its first list of objects, found
    /// breadth first, and that list.
    fn first_list(value: &Value) -> Option<(Vec<&str>, &[Value])> {
        let mut queue = std::collections::VecDeque::from([(Vec::new(), value)]);
        while let Some((path, value)) = queue.pop_front() {
            match value {
                Value::Array(items) if items.first().is_some_and(Value::is_object) => {
                    return Some((path, items));
                }
                Value::Object(map) if path.len() < 4 => {
                    for (key, child) in map {
                        let mut deeper = path.clone();
                        deeper.push(key.as_str());
                        queue.push_back((deeper, child));
                    }
                }
                _ => {}
            }
        }
        None
    }
    let Some((path, items)) = first_list(value) else {
        return String::new();
    };
    // A list of objects one key inside the items.
    let inner = items.iter().filter_map(Value::as_object).find_map(|item| {
        item.iter()
            .find(|(_, v)| {
                v.as_array()
                    .is_some_and(|a| a.first().is_some_and(Value::is_object))
            })
            .map(|(key, _)| key.clone())
    });
    let variant = variant_key(items);
    if path.is_empty() && inner.is_none() && variant.is_none() {
        // A loop over the top list says nothing the read does not.
        return String::new();
    }
    let list = path.iter().fold(root.to_owned(), |at, key| {
        format!("{at}[{}]", table::python_string(key))
    });
    let outer = path
        .last()
        .map_or("row".to_owned(), |key| singular(key, "row"));
    let mut out = format!(", then loop with `for {outer} in {list}:`");
    if let Some(key) = inner {
        let everywhere = items
            .iter()
            .all(|item| item.get(&key).is_some_and(Value::is_array));
        let mut name = singular(&key, "entry");
        if name == outer {
            name.push('2');
        }
        let quoted = table::python_string(&key);
        let at = if everywhere {
            format!("{outer}[{quoted}]")
        } else {
            format!("{outer}.get({quoted}, [])")
        };
        out.push_str(&format!(" and, inside it, `for {name} in {at}:`"));
    }
    if let Some(key) = variant {
        // One value typed in two cases (`shipped`, `Shipped`): the line
        // that compares it, which a small model copies where it ignores
        // "compare them normalised".
        let quoted = table::python_string(&key);
        let everywhere = items.iter().all(|item| item.get(&key).is_some());
        let at = if everywhere {
            format!("{outer}[{quoted}]")
        } else {
            format!("{outer}.get({quoted}, '')")
        };
        out.push_str(&format!(
            "; compare `{key}` as `{at}.strip().lower()` (its values differ in case or spacing)"
        ));
    }
    out
}

/// The first key of `items` whose text values include one value written
/// in different case or spacing (`shipped`, `Shipped`, `SHIPPED `).
fn variant_key(items: &[Value]) -> Option<String> {
    let objects: Vec<&serde_json::Map<String, Value>> = items
        .iter()
        .take(500)
        .filter_map(Value::as_object)
        .collect();
    let first = objects.first()?;
    first.keys().find_map(|key| {
        let values: Vec<&str> = objects
            .iter()
            .filter_map(|o| o.get(key.as_str()).and_then(Value::as_str))
            .collect();
        table::variants(&values).map(|_| key.clone())
    })
}

/// A variable name for one of the list `key` names (`orders` → `order`),
/// else `fallback`.
fn singular(key: &str, fallback: &str) -> String {
    let word = key.to_lowercase();
    if ["ss", "us", "is"].iter().any(|end| word.ends_with(end)) {
        // `status`, `address`, `analysis`: not plurals.
        return fallback.to_owned();
    }
    let one = word
        .strip_suffix("ies")
        .map(|stem| format!("{stem}y"))
        .or_else(|| word.strip_suffix('s').map(str::to_owned));
    match one {
        Some(one)
            if one.len() > 1
                && one.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && !matches!(
                    one.as_str(),
                    "data" | "in" | "is" | "for" | "if" | "or" | "as"
                ) =>
        {
            one
        }
        _ => fallback.to_owned(),
    }
}

/// The objects of a file of JSON lines (one object per line, two or
/// more), and its other lines that are not blank (a note, a line cut
/// short), which may be at most a third of them; `complete` when `text`
/// is the whole file, else its last, perhaps partial, line is left out.
fn json_lines(text: &str, complete: bool) -> Option<(Vec<Value>, Vec<&str>)> {
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if !complete {
        lines.pop();
    }
    let mut objects = Vec::new();
    let mut others = Vec::new();
    for line in &lines {
        match serde_json::from_str::<Value>(line) {
            Ok(value) if value.is_object() => objects.push(value),
            _ => others.push(line.trim()),
        }
    }
    (objects.len() >= 2 && others.len() * 3 <= lines.len()).then_some((objects, others))
}

/// What the first item of an array of objects does not show: keys that
/// only some items have, and the few values a text key takes.
fn item_keys(items: &[Value]) -> String {
    const MAX_ITEMS: usize = 500;
    const MAX_VALUES: usize = 6;
    let objects: Vec<&serde_json::Map<String, Value>> = items
        .iter()
        .take(MAX_ITEMS)
        .filter_map(Value::as_object)
        .collect();
    if objects.len() < 2 {
        return String::new();
    }
    let mut keys: Vec<&String> = Vec::new();
    for object in &objects {
        for key in object.keys() {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let mut notes = Vec::new();
    let partial: Vec<String> = keys
        .iter()
        .filter(|key| objects.iter().any(|o| !o.contains_key(key.as_str())))
        .map(|key| format!("`{key}`"))
        .collect();
    if !partial.is_empty() {
        notes.push(format!("only some have {}", partial.join(", ")));
    }
    for key in keys.iter().take(12) {
        let mut values: Vec<&str> = Vec::new();
        let mut all_text = true;
        for object in &objects {
            match object.get(key.as_str()) {
                Some(Value::String(text)) if !values.contains(&text.as_str()) => {
                    values.push(text);
                }
                Some(Value::String(_)) | None => {}
                Some(_) => all_text = false,
            }
        }
        let variants = table::variants(&values).is_some();
        if all_text
            && values.len() > 1
            && values.len() <= MAX_VALUES
            && (values.len() < objects.len() || variants)
            && values.iter().all(|v| v.chars().count() <= SAMPLE)
        {
            let listed: Vec<String> = values
                .iter()
                .map(|v| serde_json::to_string(v).unwrap_or_default())
                .collect();
            let case = if variants {
                " (one value in different case or spacing: compare them normalised, `value.strip().lower()`)"
            } else {
                ""
            };
            notes.push(format!("`{key}` is one of {}{case}", listed.join(", ")));
        } else if !all_text && values.iter().any(|v| v.parse::<f64>().is_ok()) {
            notes.push(format!("`{key}` is sometimes a number, sometimes text"));
        }
    }
    for (path, nulls) in null_in_some(&objects) {
        notes.push(format!(
            "`{path}` is null (`None`) in {nulls} of {}: leave those out before sorting or joining",
            objects.len()
        ));
    }
    notes.iter().map(|n| format!("; {n}")).collect()
}

/// The values inside `objects` (a key, or a key of an object a key holds:
/// `['profile']['email']`) that are null in some of them and set in
/// others, with how many are null. The first item, which the shape shows,
/// does not say that a value can be missing.
fn null_in_some(objects: &[&serde_json::Map<String, Value>]) -> Vec<(String, usize)> {
    const MAX_PATHS: usize = 3;
    // Path → (null, set), in the order first seen.
    let mut seen: Vec<(String, usize, usize)> = Vec::new();
    let mut count = |path: String, value: &Value| {
        let index = match seen.iter().position(|(p, _, _)| *p == path) {
            Some(i) => i,
            None => {
                seen.push((path, 0, 0));
                seen.len() - 1
            }
        };
        if value.is_null() {
            seen[index].1 += 1;
        } else {
            seen[index].2 += 1;
        }
    };
    for object in objects {
        for (key, value) in object.iter() {
            let path = format!("[{}]", table::python_string(key));
            if let Value::Object(inner) = value {
                for (key2, value2) in inner {
                    count(format!("{path}[{}]", table::python_string(key2)), value2);
                }
            } else {
                count(path, value);
            }
        }
    }
    seen.into_iter()
        .filter(|(_, null, set)| *null > 0 && *set > 0)
        .take(MAX_PATHS)
        .map(|(path, null, _)| (path, null))
        .collect()
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
        let look = first_look(dir.path(), &["orders.json".to_owned()], &[], &[]).unwrap();
        assert_eq!(
            look,
            "[oi: how the files the task names begin, so you need not guess:\n\
             `orders.json` is a JSON document shaped like this:\n\
             {\"data\": {\"orders\": [{\"customer\": {\"name\": \"A\"}, \"id\": number, \"items\": [{\"ok\": bool, \"qty\": number}, …] (1 item)}, …] (2 items; only some have `customer`, `items`)}, \"note\": null}\n\
             Read it with `import json`, `data = json.load(open('orders.json', encoding='utf-8'))`, then loop with `for order in data['data']['orders']:` and, inside it, `for item in order.get('items', []):`.]"
        );
    }

    #[test]
    fn values_null_in_some_items_are_named() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("users.json"),
            // Keys in sorted order, as in the test above.
            r#"{"users": [{"id": 1, "profile": {"email": "a@x.io"}}, {"id": 2, "profile": {"email": null}}, {"id": null, "profile": {"email": "c@x.io"}}, {"id": 4, "profile": {"email": null}}]}"#,
        )
        .unwrap();
        let look = first_look(dir.path(), &["users.json".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains("(4 items; `['id']` is null (`None`) in 1 of 4: leave those out before sorting or joining; `['profile']['email']` is null (`None`) in 2 of 4: leave those out before sorting or joining)"),
            "{look}"
        );
        // Null everywhere or nowhere says nothing the shape does not.
        fs_err::write(
            dir.path().join("users.json"),
            r#"{"users": [{"id": 1, "note": null}, {"id": 2, "note": null}]}"#,
        )
        .unwrap();
        let look = first_look(dir.path(), &["users.json".to_owned()], &[], &[]).unwrap();
        assert!(!look.contains("is null"), "{look}");
    }

    #[test]
    fn items_show_their_text_values_and_keys_only_some_have() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("events.jsonl"),
            concat!(
                // Keys in sorted order, as in the test above.
                "{\"action\": \"login\", \"user\": \"ana\"}\n",
                "{\"action\": \"buy\", \"amount\": 30, \"user\": \"ben\"}\n",
                "{\"action\": \"buy\", \"amount\": \"7.5\", \"user\": \"ana\"}\n",
            ),
        )
        .unwrap();
        let look = first_look(dir.path(), &["events.jsonl".to_owned()], &[], &[]).unwrap();
        assert_eq!(
            look,
            "[oi: how the files the task names begin, so you need not guess:\n\
             `events.jsonl` holds one JSON object per line; as a list they are shaped like this:\n\
             [{\"action\": \"login\", \"user\": \"ana\"}, …] (3 items; only some have `amount`; `action` is one of \"login\", \"buy\"; `user` is one of \"ana\", \"ben\"; `amount` is sometimes a number, sometimes text)\n\
             Read it with `import json`, `rows = [json.loads(line) for line in open('events.jsonl', encoding='utf-8') if line.strip()]` (not `json.load`).]"
        );
        // Lists inside the rows get a loop, named after their key.
        fs_err::write(
            dir.path().join("carts.jsonl"),
            "{\"entries\": [{\"sku\": \"a\"}], \"user\": 1}\n{\"entries\": [], \"user\": 2}\n",
        )
        .unwrap();
        let look = first_look(dir.path(), &["carts.jsonl".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains("(not `json.load`), then loop with `for row in rows:` and, inside it, `for entry in row['entries']:`."),
            "{look}"
        );
        // A text value written in different case is listed even when each
        // item has its own spelling.
        fs_err::write(
            dir.path().join("orders.json"),
            r#"[{"status": "shipped"}, {"status": "Shipped"}, {"status": "CANCELLED"}]"#,
        )
        .unwrap();
        let look = first_look(dir.path(), &["orders.json".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains(r#"(3 items; `status` is one of "shipped", "Shipped", "CANCELLED" (one value in different case or spacing: compare them normalised, `value.strip().lower()`))"#),
            "{look}"
        );
        // … with the line that compares it, in the loop over the list.
        assert!(
            look.contains("then loop with `for row in data:`; compare `status` as `row['status'].strip().lower()` (its values differ in case or spacing)."),
            "{look}"
        );
        fs_err::write(
            dir.path().join("orders.json"),
            r#"{"orders": [{"id": 1, "state": "open"}, {"id": 2}, {"id": 3, "state": "Open "}]}"#,
        )
        .unwrap();
        let look = first_look(dir.path(), &["orders.json".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains("then loop with `for order in data['orders']:`; compare `state` as `order.get('state', '').strip().lower()`"),
            "{look}"
        );
        // Lines that are not all objects are text.
        fs_err::write(dir.path().join("mixed.log"), "{\"a\": 1}\nplain text\n").unwrap();
        let look = first_look(dir.path(), &["mixed.log".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains("`mixed.log` (2 lines), all of it:\n{\"a\": 1}\nplain text"),
            "{look}"
        );
    }

    #[test]
    fn json_lines_with_lines_that_are_not_json_get_the_loop_that_skips_them() {
        let dir = tempfile::tempdir().unwrap();
        let text = "{\"service\": \"auth\", \"level\": \"ERROR\"}\n{\"service\": \"billing\", \"level\": \"info\"}\nnot json: the collector restarted here\n\n{\"service\": \"auth\", \"level\": \"error\"}\n{\"service\": \"mail\", \"level\": \"WARN\"}\n{\"service\": \"search\", \"lev\n";
        fs_err::write(dir.path().join("app.jsonl"), text).unwrap();
        let look = first_look(dir.path(), &["app.jsonl".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains("`app.jsonl` holds one JSON object per line, but 2 lines are not JSON (like `not json: the collector restarted here`), so `json.loads` fails on them;"),
            "{look}"
        );
        assert!(look.contains("`level`"), "{look}");
        // The loop runs in real Python and reads the objects only.
        let code = look
            .split("```python\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap_or_else(|| panic!("{look}"));
        if let Some(python) = oi_testkit::python3() {
            let script = format!("{code}print(sorted(r['service'] for r in rows))");
            assert_eq!(
                run_python(python, dir.path(), &script),
                "['auth', 'auth', 'billing', 'mail']\n"
            );
        }
        // More lines that are not JSON than a third: not JSON lines.
        fs_err::write(
            dir.path().join("mixed.txt"),
            "{\"a\": 1}\n{\"a\": 2}\nnote one\nnote two\n",
        )
        .unwrap();
        let look = first_look(dir.path(), &["mixed.txt".to_owned()], &[], &[]).unwrap();
        assert!(!look.contains("JSON object per line"), "{look}");
    }

    #[test]
    fn a_short_text_file_is_shown_whole_and_a_longer_one_by_its_first_lines() {
        let dir = tempfile::tempdir().unwrap();
        let checklist = "# Release\n\n- [x] Freeze\n- [ ] Fix parser\n\n```\n- [ ] an example\n```\n\n## Docs\n  - [ ] Changelog\n";
        fs_err::write(dir.path().join("TODO.md"), checklist).unwrap();
        let look = first_look(dir.path(), &["TODO.md".to_owned()], &[], &[]).unwrap();
        assert_eq!(
            look,
            format!(
                "[oi: how the files the task names begin, so you need not guess:\n`TODO.md` (11 lines), all of it:\n{}]",
                checklist.trim_end()
            )
        );
        // Past the line or size limit, the first lines only.
        let long: String = (0..WHOLE_LINES + 1)
            .map(|i| format!("line {i}\n"))
            .collect();
        fs_err::write(dir.path().join("notes.txt"), &long).unwrap();
        let look = first_look(dir.path(), &["notes.txt".to_owned()], &[], &[]).unwrap();
        assert!(look.contains("(31 lines) begins:\nline 0\n"), "{look}");
        assert!(look.contains("line 5\n…"), "{look}");
        assert!(!look.contains("line 6"), "{look}");
        let wide = format!("{}\n", "word ".repeat(WHOLE_CHARS / 5 + 1));
        fs_err::write(dir.path().join("wide.txt"), wide.repeat(2)).unwrap();
        let look = first_look(dir.path(), &["wide.txt".to_owned()], &[], &[]).unwrap();
        assert!(look.contains("(2 lines) begins:"), "{look}");
    }

    #[test]
    fn a_script_to_change_shown_whole_comes_with_how_to_send_its_new_version() {
        let dir = tempfile::tempdir().unwrap();
        let script = "import sys\nprint(sum(int(l) for l in open(sys.argv[1])))\n";
        fs_err::write(dir.path().join("add.py"), script).unwrap();
        fs_err::write(dir.path().join("run.sh"), "echo hi\n").unwrap();
        let named = ["add.py".to_owned(), "run.sh".to_owned()];
        let look = first_look(dir.path(), &named, &[], &["add.py".to_owned()]).unwrap();
        assert!(
            look.contains(&format!("{}\nTo change `add.py`, send all of it, changed, in one ```python block (every line, not only the ones you change, and no `+`/`-` marks): oi saves it as `add.py` and runs it.", script.trim_end())),
            "{look}"
        );
        // Only the scripts the task asks to change; a shell script so.
        assert!(!look.contains("To change `run.sh`"), "{look}");
        let look = first_look(dir.path(), &named, &[], &["run.sh".to_owned()]).unwrap();
        assert!(
            look.contains("To change `run.sh`, send all of it, changed, in one ```shell block"),
            "{look}"
        );
        assert!(!look.contains("To change `add.py`"), "{look}");
        // A script too long to be shown whole cannot be sent whole from it.
        let long: String = (0..WHOLE_LINES + 1)
            .map(|i| format!("print({i})\n"))
            .collect();
        fs_err::write(dir.path().join("long.py"), long).unwrap();
        let look = first_look(
            dir.path(),
            &["long.py".to_owned()],
            &[],
            &["long.py".to_owned()],
        )
        .unwrap();
        assert!(!look.contains("To change"), "{look}");
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
            &[],
            &[],
        )
        .unwrap();
        assert_eq!(
            look,
            "[oi: how the files the task names begin, so you need not guess:\n\
             `data.csv` (21 lines) begins: It starts with a UTF-8 byte-order mark.\n Name ;Amount\n0;x\n1;x\n2;x\n3;x\n4;x\n…\n\
             As a table: 20 rows under a header row, fields separated by `;`. Columns:\n\
             - ` Name ` (with the spaces): whole numbers\n\
             - `Amount`: text, 1 distinct: `x`\n\
             Read it with `import pandas as pd`, `df = pd.read_csv('data.csv', sep=';')`, then `df.columns = df.columns.str.strip()`.]"
        );
    }

    /// The code between backticks in the look's line that starts with
    /// `Read it with`.
    fn read_code(look: &str) -> Vec<String> {
        let line = look
            .lines()
            .find(|l| l.starts_with("Read it with"))
            .unwrap_or_else(|| panic!("no read line in {look}"));
        line.split('`')
            .skip(1)
            .step_by(2)
            // What not to use is named too.
            .filter(|code| *code != "json.load")
            .map(str::to_owned)
            .collect()
    }

    /// Runs `script` with `python`; its standard output.
    fn run_python(python: &str, dir: &Path, script: &str) -> String {
        let out = std::process::Command::new(python)
            .args(["-c", script])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Writes `text` as the file `name` in `dir`, then runs with `python`
    /// the code its look gives followed by `tail`; the output.
    fn read_as_told(python: &str, dir: &Path, name: &str, text: &str, tail: &str) -> String {
        fs_err::write(dir.join(name), text).unwrap();
        let script = format!("{}\n{tail}", read_code(&look_of(dir, name)).join("\n"));
        run_python(python, dir, &script)
    }

    #[test]
    fn markdown_gets_its_headings_after_its_first_lines() {
        let dir = tempfile::tempdir().unwrap();
        let guide: String = "# Guide\n\n```sh\n# a comment\n```\n\n## Install\n"
            .chars()
            .chain((0..30).flat_map(|_| "text\n".chars()))
            .chain("### On Linux\n".chars())
            .collect();
        fs_err::write(dir.path().join("guide.md"), guide).unwrap();
        let look = look_of(dir.path(), "guide.md");
        assert!(
            look.contains("\n`guide.md` (38 lines) begins:\n# Guide\n"),
            "{look}"
        );
        assert!(
            look.contains("\n…\nAs Markdown it has 3 headings: `# Guide` (line 1), `## Install` (line 7), `### On Linux` (line 38). Not headings: `# a comment` (line 4) inside a ``` block."),
            "{look}"
        );
    }

    #[test]
    fn xml_gets_its_elements_and_the_code_that_finds_them_namespace_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = "<?xml version=\"1.0\"?>\n<!-- authors listed in <author> -->\n<catalog xmlns=\"http://example.com/c\">\n  <book id=\"1\"><title>A</title><author>Mara</author></book>\n  <book id=\"2\"><title>B</title><author> Tom </author></book>\n</catalog>\n";
        fs_err::write(dir.path().join("catalog.xml"), catalog).unwrap();
        let look = look_of(dir.path(), "catalog.xml");
        assert!(
            look.contains("\nIt is XML: elements `catalog` ×1, `book` ×2, `title` ×2, `author` ×2. Its root sets a default namespace (`xmlns=\"http://example.com/c\"`), so ElementTree names every tag `{http://example.com/c}book`: `findall('.//book')` finds nothing; `{*}` before a name matches any namespace.\nRead it with `import xml.etree.ElementTree as ET`, `root = ET.parse('catalog.xml').getroot()`, then `for book in root.findall('.//{*}book'):`, and inside it `book.find('{*}title').text`."),
            "{look}"
        );
        let plain = catalog.replace(" xmlns=\"http://example.com/c\"", "");
        fs_err::write(dir.path().join("plain.xml"), &plain).unwrap();
        let look = look_of(dir.path(), "plain.xml");
        assert!(
            look.contains("then `for book in root.findall('.//book'):`, and inside it `book.find('title').text`."),
            "{look}"
        );
        assert!(!look.contains("namespace"), "{look}");
        // HTML and other text get no outline.
        assert_eq!(
            xml_outline("page.html", "<html><body><p>x</p></body></html>"),
            None
        );
        assert_eq!(xml_outline("a.xml", "not xml"), None);
        // The code given finds every record in real Python, both ways.
        let Some(python) = oi_testkit::python3() else {
            return;
        };
        for name in ["catalog.xml", "plain.xml"] {
            let code = read_code(&look_of(dir.path(), name));
            let script = printing_each_record(&code, &format!("{}.strip()", code[3]));
            assert_eq!(
                run_python(python, dir.path(), &script),
                "A\nB\n",
                "{script}"
            );
        }
    }

    #[test]
    fn xml_texts_written_two_ways_are_named_with_the_expression_that_makes_them_one() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = "<?xml version=\"1.0\"?>\n<catalog xmlns=\"http://example.com/c\">\n  <book><title>A</title><author>Mara Quinn</author></book>\n  <book><title>B</title><author> Tom Reyes </author></book>\n  <book><title>C</title><author>Mara  Quinn</author></book>\n</catalog>\n";
        fs_err::write(dir.path().join("catalog.xml"), catalog).unwrap();
        let look = look_of(dir.path(), "catalog.xml");
        assert!(
            look.contains("\nThe text of `author` holds one value written with other spacing (`Mara Quinn`, `Mara  Quinn`): compare it as `' '.join(book.find('{*}author').text.split())`."),
            "{look}"
        );
        // Other case too: `.lower()` as well.
        assert_eq!(
            xml_variants("<r><a><n>Ann</n></a><a><n>ANN </n></a></r>"),
            Some(("n", "Ann", "ANN ", true))
        );
        // Values each written one way, or only the one title: nothing.
        assert_eq!(
            xml_variants("<r><a><n>Ann</n></a><a><n>Bo</n></a></r>"),
            None
        );
        let plain = catalog.replace("Mara  Quinn", "Ada Okafor");
        let look = xml_outline("plain.xml", &plain).unwrap();
        assert!(!look.contains("written with other"), "{look}");
        // The expression makes them one in real Python.
        let Some(python) = oi_testkit::python3() else {
            return;
        };
        let look = look_of(dir.path(), "catalog.xml");
        let named = look.lines().find(|l| l.starts_with("The text of")).unwrap();
        let expression = named.split('`').rev().nth(1).unwrap();
        let script = printing_each_record(&read_code(&look), expression);
        assert_eq!(
            run_python(python, dir.path(), &script),
            "Mara Quinn\nTom Reyes\nMara Quinn\n",
            "{script}"
        );
    }

    /// The look at the one file `name` in `dir`.
    fn look_of(dir: &Path, name: &str) -> String {
        first_look(dir, &[name.to_owned()], &[], &[]).unwrap()
    }

    /// The XML look's import, parse and loop (`code`), printing
    /// `expression` for each record.
    fn printing_each_record(code: &[String], expression: &str) -> String {
        format!(
            "{}\n{}\n{}\n    print({expression})\n",
            code[0], code[1], code[2]
        )
    }

    /// The code the look gives runs in real Python, with real pandas, and
    /// reads each quirk right.
    #[test]
    fn the_code_the_look_gives_reads_the_files_right() {
        let Some(python) = oi_testkit::pip_package("pandas", "pandas") else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read_as_told(
                &python,
                dir.path(),
                "sales 2026.csv",
                "Order No;Region Name ;Amount;Price;When;Note\n\
                 1; north;$1,200.50;3,50;2026-01-15;-\n\
                 2;North ;$35.20;12,75;03/02/2026;ok\n\
                 3;South;NA;1.204,00;March 9, 2026;?\n\
                 4;south ;;2,25;2026-04-01;it's\n",
                "print(list(df.columns))\nprint(sorted(set(df['Region Name'])))\n\
                 print(round(df['Amount'].sum(), 2), round(df['Price'].sum(), 2), df['Note'].isna().sum())\n\
                 print(df['When'].dt.strftime('%Y-%m-%d').tolist())",
            ),
            "['Order No', 'Region Name', 'Amount', 'Price', 'When', 'Note']\n\
             ['north', 'south']\n\
             1235.7 1222.5 2\n\
             ['2026-01-15', '2026-03-02', '2026-03-09', '2026-04-01']\n"
        );
        // Dates day first beside ISO dates (which pandas' `dayfirst` swaps).
        assert_eq!(
            read_as_told(
                &python,
                dir.path(),
                "visits.csv",
                "who,on\nA,2025-07-04\nB,05/06/2025\nC,31/01/2025\nD,\nE,\"June 2, 2025\"\n",
                "print(df['on'].dt.strftime('%Y-%m-%d').tolist())",
            ),
            "['2025-07-04', '2025-06-05', '2025-01-31', nan, '2025-06-02']\n"
        );
        // Codes typed in two cases and with spaces come out as one.
        assert_eq!(
            read_as_told(
                &python,
                dir.path(),
                "paid.csv",
                "n,code ,sum\n1, k7 ,2\n2,K7,3\n3,K8 ,4\n",
                "print(df.groupby('code')['sum'].sum().to_dict())",
            ),
            "{'K7': 5, 'K8': 4}\n"
        );
        // A nested document and JSON lines, looped as the look says.
        fs_err::write(
            dir.path().join("orders.json"),
            r#"{"data": {"orders": [{"id": 1, "items": [{"qty": 2}, {"qty": 3}]}, {"id": 2}, {"id": 3, "items": [{"qty": 4}]}]}}"#,
        )
        .unwrap();
        fs_err::write(
            dir.path().join("carts.jsonl"),
            "{\"user\": 1, \"entries\": [{\"qty\": 1}]}\n\n{\"user\": 2, \"entries\": [{\"qty\": 5}]}\n",
        )
        .unwrap();
        for (name, total) in [("orders.json", "9"), ("carts.jsonl", "6")] {
            let look = first_look(dir.path(), &[name.to_owned()], &[], &[]).unwrap();
            let code = read_code(&look);
            let [import, read, outer, inner] = code.as_slice() else {
                panic!("{look}");
            };
            let variable = inner.split(' ').nth(1).unwrap();
            let script = format!(
                "{import}\n{read}\nn = 0\n{outer}\n    {inner}\n        n += {variable}['qty']\nprint(n)"
            );
            assert_eq!(
                run_python(&python, dir.path(), &script),
                format!("{total}\n"),
                "{look}"
            );
        }
        // A configuration's key set by the function the look gives, in
        // one section only, everything else kept.
        fs_err::write(dir.path().join("settings.ini"), SETTINGS).unwrap();
        let look = first_look(dir.path(), &["settings.ini".to_owned()], &[], &[]).unwrap();
        let function = look
            .split("```python\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap();
        let function = function.replace(
            "set_key('settings.ini', 'section', 'key', 'value')",
            "set_key('settings.ini', 'database', 'port', 5433)",
        );
        let script = format!("{function}print(open('settings.ini').read(), end='')");
        assert_eq!(
            run_python(&python, dir.path(), &script),
            SETTINGS.replace("  port = 5432", "  port = 5433")
        );
        // A log's records split in Python as the look says they do.
        fs_err::write(
            dir.path().join("access.log"),
            "10.0.0.1 - - [02/Nov/2026:10:00:00 +0000] \"GET /a/500 HTTP/1.1\" 200 500\n\
             10.0.0.2 - - [02/Nov/2026:10:01:00 +0000] \"GET /b HTTP/1.1\" 500 12\n\
             10.0.0.3 - - [02/Nov/2026:10:02:00 +0000] \"POST /c HTTP/1.1\" 404 7\n",
        )
        .unwrap();
        let look = first_look(dir.path(), &["access.log".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains("- `fields[5]`: whole numbers, like `200`, `500`, `404`"),
            "{look}"
        );
        let line = look
            .lines()
            .find(|l| l.starts_with("In it each line"))
            .unwrap();
        let code: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
        let [each_line, import, split, ..] = code.as_slice() else {
            panic!("{look}");
        };
        let script = format!(
            "{import}\n{each_line}\n    {split}\n    print(fields[5], fields[3], fields[4])"
        );
        assert_eq!(
            run_python(&python, dir.path(), &script),
            "200 [02/Nov/2026:10:00:00 +0000] \"GET /a/500 HTTP/1.1\"\n\
             500 [02/Nov/2026:10:01:00 +0000] \"GET /b HTTP/1.1\"\n\
             404 [02/Nov/2026:10:02:00 +0000] \"POST /c HTTP/1.1\"\n",
            "{look}"
        );
    }

    const SETTINGS: &str = "; app settings\n[server]\nhost = 0.0.0.0\nport = 8000\n\n[database]\n# the primary database\n  port = 5432\nname = shop\n";

    #[test]
    fn a_configuration_gets_the_function_that_sets_one_key() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("app.ini"), SETTINGS).unwrap();
        let look = first_look(dir.path(), &["app.ini".to_owned()], &[], &[]).unwrap();
        assert!(
            look.contains("run this block whole, its last line set to the section, key and value the task names:\n```python\ndef set_key(path, section, key, value):\n"),
            "{look}"
        );
        assert!(
            look.contains("\nset_key('app.ini', 'section', 'key', 'value')\n```]"),
            "{look}"
        );
        assert!(look.contains("+ key + ' = ' + str(value)"), "{look}");
        // Its own spacing; not for other text.
        fs_err::write(dir.path().join("tight.ini"), "[a]\nx=1\ny=2\n").unwrap();
        let look = first_look(dir.path(), &["tight.ini".to_owned()], &[], &[]).unwrap();
        assert!(look.contains("+ key + '=' + str(value)"), "{look}");
        for text in ["x = 1\ny = 2\n", "[a]\nx = 1\nsome prose here\ny = 2\n"] {
            fs_err::write(dir.path().join("other.txt"), text).unwrap();
            let look = first_look(dir.path(), &["other.txt".to_owned()], &[], &[]).unwrap();
            assert!(!look.contains("set_key"), "{look}");
        }
        // TOML also gets the standard library's reader, which reads it.
        let toml =
            "# deploy\n[server]\nport = 8080\ndebug = false\n\n[db]\nhost = \"db.internal\"\n";
        fs_err::write(dir.path().join("app.toml"), toml).unwrap();
        let look = first_look(dir.path(), &["app.toml".to_owned()], &[], &[]).unwrap();
        let code = read_code(&look);
        assert_eq!(
            code[..2],
            [
                "import tomllib",
                "data = tomllib.load(open('app.toml', 'rb'))"
            ],
            "{look}"
        );
        let read = format!(
            "{}\n{}\nprint(data['server']['port'] + 1, data['db']['host'])",
            code[0], code[1]
        );
        assert_eq!(
            run_python("python3", dir.path(), &read),
            "8081 db.internal\n"
        );
        assert!(
            !first_look(dir.path(), &["app.ini".to_owned()], &[], &[])
                .unwrap()
                .contains("tomllib")
        );
        // A task that writes another file reads the configuration: no
        // function to change it.
        let named = ["app.toml".to_owned(), "app.env".to_owned()];
        let look = first_look(dir.path(), &named, &[], &[]).unwrap();
        assert!(look.contains("tomllib.load"), "{look}");
        assert!(!look.contains("set_key"), "{look}");
        assert!(look_of(dir.path(), "app.toml").contains("set_key"));
    }

    #[test]
    fn a_task_about_a_script_gets_no_pandas_line() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("data.csv"), "a;b\n1;x\n2;y\n").unwrap();
        fs_err::write(dir.path().join("report.PY"), "import csv\n").unwrap();
        let alone = first_look(dir.path(), &["data.csv".to_owned()], &[], &[]).unwrap();
        assert!(
            alone.contains(
                "Read it with `import pandas as pd`, `df = pd.read_csv('data.csv', sep=';')`."
            ),
            "{alone}"
        );
        let named = ["report.PY".to_owned(), "data.csv".to_owned()];
        let with_script = first_look(dir.path(), &named, &[], &[]).unwrap();
        assert!(with_script.contains("As a table: 2 rows"), "{with_script}");
        assert!(!with_script.contains("pandas"), "{with_script}");
    }

    #[test]
    fn list_keys_name_the_loop_variable() {
        assert_eq!(singular("orders", "row"), "order");
        assert_eq!(singular("Categories", "row"), "category");
        assert_eq!(singular("line_items", "row"), "line_item");
        // Not a plural, a keyword, or not a name: the fallback.
        for key in [
            "data", "status", "address", "x", "fors", "2024s", "ids list",
        ] {
            assert_eq!(singular(key, "row"), "row", "{key}");
        }
    }

    #[test]
    fn a_folder_the_task_names_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let photos = dir.path().join("photos");
        fs_err::create_dir_all(photos.join("old/deeper")).unwrap();
        fs_err::write(photos.join("old/a.png"), "x").unwrap();
        for name in ["My Photo 01.JPG", "sunset.jpeg"] {
            fs_err::write(photos.join(name), "x").unwrap();
        }
        fs_err::create_dir_all(dir.path().join("empty")).unwrap();
        let task = "Rename the files in `photos/`, then empty/ and missing/ and ../up/.";
        let folders = named_folders(task, dir.path());
        assert_eq!(folders, ["photos/", "empty/"]);
        let look = first_look(dir.path(), &[], &folders, &[]).unwrap();
        assert_eq!(
            look,
            "[oi: how the files the task names begin, so you need not guess:\n\
             `photos/` holds 3 entries: `My Photo 01.JPG`, `old/`, `sunset.jpeg`. Some names have spaces: quote them in shell commands. In it, `old/` holds `a.png`, `deeper/`. To reach every file below `photos/`, walk it: `for root, dirs, files in os.walk('photos'):`, each file's path `os.path.join(root, f)` (`os.listdir` and `glob('*')` see only the top).\n\
             `empty/` is an empty folder.]"
        );
    }

    #[test]
    fn a_task_naming_no_file_here_gets_no_look() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("other.txt"), "x").unwrap();
        assert_eq!(
            first_look(dir.path(), &["out.txt".to_owned()], &[], &[]),
            None
        );
        assert_eq!(first_look(dir.path(), &[], &[], &[]), None);
        fs_err::write(dir.path().join("shop.db"), b"SQLite format 3\0\x10\0").unwrap();
        let look = first_look(dir.path(), &["shop.db".to_owned()], &[], &[]).unwrap();
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
        let look = first_look(dir.path(), &named, &[], &[]).unwrap();
        assert!(look.chars().count() <= MAX_CHARS + 2, "{}", look.len());
        assert!(look.contains(&format!("{}…", "y".repeat(WIDTH))), "{look}");
        assert!(!look.contains("`d.txt`"), "{look}");
        // A document with many keys is shown by a bounded shape.
        let json: String = (0..300)
            .map(|i| format!("\"k{i}\": {{\"x\": 1}}, "))
            .collect();
        fs_err::write(dir.path().join("big.json"), format!("{{{json}\"end\": 1}}")).unwrap();
        let look = first_look(dir.path(), &["big.json".to_owned()], &[], &[]).unwrap();
        assert!(look.contains("`big.json` is a JSON document"), "{look}");
        assert!(look.chars().count() <= MAX_CHARS + 2, "{}", look.len());
        // A look too long is cut at a line's end: no half line of code.
        let names: Vec<String> = (0..12).map(|i| format!("{i} {}", "n".repeat(60))).collect();
        let row = |v: &str| [v; 12].join(";");
        fs_err::write(
            dir.path().join("wide.csv"),
            format!(
                "{}\n{}\n{}\n{}\n",
                names.join(";"),
                row("-"),
                row(" $1,000.50 "),
                row("$2")
            ),
        )
        .unwrap();
        let look = first_look(dir.path(), &["wide.csv".to_owned()], &[], &[]).unwrap();
        assert!(look.chars().count() <= MAX_CHARS + 2, "{}", look.len());
        assert!(look.ends_with("\n…]"), "{look}");
        assert!(!look.contains("Read it with"), "{look}");
    }
}
