//! A list some records of a JSON input lack, read as if every record had
//! it (small models). Real documents leave a key out where it would be
//! empty: a post without tags, an order without items. Code written from
//! the first record (`tags = post['meta']['tags']`, then `for tag in
//! tags:`) fails with `KeyError: 'tags'` at the first record without it;
//! told so, a small model writes a guard that runs alone and does nothing,
//! or explains the error back. Where the missing value is only looped
//! over, reading it with `.get('tags', [])` is the one fix: a record
//! without the key has none of them. oi runs the block again with that
//! change.

use std::collections::BTreeMap;

use super::coach::quoted;
use super::error_hint::{LineChange, last_error};

/// The change of the line that failed, when a Python run (`output`) of
/// `code` ended with `KeyError: 'key'` at a line that reads `['key']` last
/// — the list a `for` loop goes over (`for tag in post['meta']['tags']:`),
/// or a name set to it (`tags = post['meta']['tags']`) that the code loops
/// over —, where the code reads JSON with the `json` module and one of the
/// `inputs` (name and text) holds the key: other records have it, this
/// one does not. With the input's name and the key.
pub(super) fn fix(
    output: &str,
    code: &str,
    inputs: &BTreeMap<String, String>,
) -> Option<(LineChange, String, String)> {
    let key = quoted(last_error(output)?.strip_prefix("KeyError: ")?)?;
    if key.is_empty() || !code.contains("json.load") {
        return None;
    }
    let input = inputs
        .iter()
        .find(|(name, text)| is_json(name) && holds_key(text, key))
        .map(|(name, _)| name.clone())?;
    let subscripts = [format!("['{key}']"), format!("[\"{key}\"]")];
    // The failed line as the traceback shows it, and as the code has it.
    let line = output.lines().map(str::trim).find(|l| {
        subscripts.iter().any(|s| l.contains(s.as_str()))
            && !l.starts_with("File ")
            && !l.starts_with("KeyError")
            && code.lines().any(|c| c.trim() == *l)
    })?;
    let fixed =
        looped_over(line, &subscripts).or_else(|| set_and_looped(line, &subscripts, code))?;
    Some((LineChange::new(line, fixed), input, key.to_owned()))
}

/// Whether a file's name says it holds JSON.
fn is_json(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".json") || lower.ends_with(".jsonl") || lower.ends_with(".ndjson")
}

/// Whether JSON `text` has `key` as a key (`"key":`).
fn holds_key(text: &str, key: &str) -> bool {
    let quoted = format!("\"{key}\"");
    text.match_indices(&quoted)
        .any(|(at, _)| text[at + quoted.len()..].trim_start().starts_with(':'))
}

/// `for tag in post['meta']['tags']:` as `for tag in
/// post['meta'].get('tags', []):`.
fn looped_over(line: &str, subscripts: &[String; 2]) -> Option<String> {
    let body = line.strip_prefix("for ")?.strip_suffix(':')?;
    let (names, source) = body.split_once(" in ")?;
    let fixed = read_with_get(source.trim(), subscripts)?;
    Some(format!("for {names} in {fixed}:"))
}

/// `tags = post['meta']['tags']`, where the code loops over `tags` (`for
/// tag in tags:`, `… for tag in tags]`), as `tags = post['meta'].get('tags',
/// [])`.
fn set_and_looped(line: &str, subscripts: &[String; 2], code: &str) -> Option<String> {
    let (target, op, value) = super::splice::assignment(line)?;
    if !op.is_empty() || !target.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let looped = [":", "]", ")"]
        .iter()
        .any(|end| code.contains(&format!(" in {target}{end}")));
    if !looped {
        return None;
    }
    Some(format!("{target} = {}", read_with_get(value, subscripts)?))
}

/// `source` that ends with one of `subscripts` read from a value (`post`,
/// `post['meta']`), with that subscript written as `.get(key, [])`.
fn read_with_get(source: &str, subscripts: &[String; 2]) -> Option<String> {
    let (base, subscript) = subscripts
        .iter()
        .find_map(|s| Some((source.strip_suffix(s.as_str())?, s)))?;
    let readable = base.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ']');
    if !readable {
        return None;
    }
    let key = &subscript[1..subscript.len() - 1];
    Some(format!("{base}.get({key}, [])"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> BTreeMap<String, String> {
        BTreeMap::from([(
            "posts.json".to_owned(),
            "{\"posts\": [{\"id\": 1, \"meta\": {\"tags\": [\"Rust\"]}}, {\"id\": 2, \"meta\": {}}]}"
                .to_owned(),
        )])
    }

    fn failed(line: &str) -> String {
        format!(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 5, in <module>\n    {line}\n           ~~~~~~~~~~~~^^^^^^^^\nKeyError: 'tags'\n"
        )
    }

    #[test]
    fn a_list_set_from_a_key_some_records_lack_and_looped_over_is_read_with_get() {
        let line = "tags = post['meta']['tags']";
        let code = format!(
            "import json\ndata = json.load(open('posts.json'))\nfor post in data['posts']:\n    {line}\n    for tag in tags:\n        print(tag)\n"
        );
        let (change, input, key) = fix(&failed(line), &code, &inputs()).unwrap();
        assert_eq!(change.line, line);
        assert_eq!(change.fixed, "tags = post['meta'].get('tags', [])");
        assert_eq!((input.as_str(), key.as_str()), ("posts.json", "tags"));
        // In a comprehension too.
        let code = format!(
            "import json\ndata = json.load(open('posts.json'))\nfor post in data['posts']:\n    {line}\n    seen = [t.lower() for t in tags]\n"
        );
        assert!(fix(&failed(line), &code, &inputs()).is_some());
    }

    #[test]
    fn a_loop_over_a_key_some_records_lack_reads_it_with_get() {
        let line = "for tag in post[\"meta\"][\"tags\"]:";
        let code = format!(
            "import json\nposts = json.load(open('posts.json'))['posts']\nfor post in posts:\n    {line}\n        print(tag)\n"
        );
        let (change, ..) = fix(&failed(line), &code, &inputs()).unwrap();
        assert_eq!(change.fixed, "for tag in post[\"meta\"].get(\"tags\", []):");
    }

    #[test]
    fn other_key_errors_are_left_alone() {
        let line = "tags = post['meta']['tags']";
        let looped = format!(
            "import json\ndata = json.load(open('posts.json'))\nfor post in data['posts']:\n    {line}\n    for tag in tags:\n        print(tag)\n"
        );
        // A key no input holds: a wrong name, not a record without it.
        let other = BTreeMap::from([("posts.json".to_owned(), "{\"labels\": []}".to_owned())]);
        assert_eq!(fix(&failed(line), &looped, &other), None);
        // A key only a value holds, not a key.
        let valued = BTreeMap::from([("posts.json".to_owned(), "{\"kind\": \"tags\"}".to_owned())]);
        assert_eq!(fix(&failed(line), &looped, &valued), None);
        // Not read with `json` (a pandas table's column).
        let pandas = looped.replace("json.load", "pd.read_json");
        assert_eq!(fix(&failed(line), &pandas, &inputs()), None);
        // A value used, not looped over: what a missing one means is the
        // task's to say.
        let used = format!(
            "import json\ndata = json.load(open('posts.json'))\nfor post in data['posts']:\n    {line}\n    print(len(tags))\n"
        );
        assert_eq!(fix(&failed(line), &used, &inputs()), None);
        // The key read in the middle of the line.
        let middle = "n = len(post['meta']['tags'])";
        let code = format!(
            "import json\ndata = json.load(open('posts.json'))\nfor post in data['posts']:\n    {middle}\n"
        );
        assert_eq!(fix(&failed(middle), &code, &inputs()), None);
        // Another error.
        let code = looped.clone();
        let out = failed(line).replace(
            "KeyError: 'tags'",
            "TypeError: 'NoneType' object is not iterable",
        );
        assert_eq!(fix(&out, &code, &inputs()), None);
        // A line the code does not have (another run's).
        assert_eq!(
            fix(&failed("x = post['meta']['tags']"), &looped, &inputs()),
            None
        );
    }
}
