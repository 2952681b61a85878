//! A collection a Python block fills under the name of its own loop
//! variable: `files = []`, then `for root, dirs, files in os.walk('.'):`
//! and `files.append(…)` in the loop. The loop rebinds the name at each
//! step, so the block appends to what it walks (a `TypeError` on a tuple,
//! or a loop that never ends) or loses what it gathered. A small model
//! reads the error and changes every line but that one.

use super::script::is_name;
use super::splice::assignment;

/// The empty collections a statement may start with.
const EMPTY: [&str; 6] = ["[]", "{}", "set()", "list()", "dict()", "()"];

/// How a collection is filled.
const FILLS: [&str; 4] = [".append(", ".add(", ".extend(", ".update("];

/// In Python `code`, the first name set to an empty collection and then
/// also bound by a later `for` that fills it after: that name, the line
/// that starts the collection and the `for` line (trimmed).
pub(super) fn shadowed(code: &str) -> Option<(String, String, String)> {
    let lines: Vec<&str> = code.lines().map(str::trim).collect();
    lines.iter().enumerate().find_map(|(at, line)| {
        let (name, op, value) = assignment(line)?;
        if !op.is_empty() || !is_name(&name) || !EMPTY.contains(&value) {
            return None;
        }
        let (loop_at, for_line) = lines
            .iter()
            .enumerate()
            .skip(at + 1)
            .find(|(_, l)| loop_targets(l).contains(&name))?;
        let fills: Vec<String> = FILLS.iter().map(|how| format!("{name}{how}")).collect();
        let filled = lines[loop_at + 1..]
            .iter()
            .any(|l| fills.iter().any(|f| l.contains(f.as_str())));
        filled.then(|| (name, (*line).to_owned(), (*for_line).to_owned()))
    })
}

/// The names a `for` line binds (`for root, dirs, files in …:`), or none
/// for any other line.
fn loop_targets(line: &str) -> Vec<String> {
    let Some(rest) = line
        .strip_prefix("for ")
        .or_else(|| line.strip_prefix("async for "))
    else {
        return Vec::new();
    };
    let Some((targets, _)) = rest.split_once(" in ") else {
        return Vec::new();
    };
    targets
        .split(',')
        .map(|t| t.trim_matches(|c: char| c.is_whitespace() || "()[]".contains(c)))
        .filter(|t| is_name(t))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_filled_under_its_loop_variables_name_is_found() {
        let walk = "import os\nfiles = []\nfor root, dirs, files in os.walk('.'):\n    for file in files:\n        files.append((os.path.getsize(os.path.join(root, file)), file))\nprint(files[:3])\n";
        assert_eq!(
            shadowed(walk),
            Some((
                "files".to_owned(),
                "files = []".to_owned(),
                "for root, dirs, files in os.walk('.'):".to_owned()
            ))
        );
        let set = "seen = set()\nfor (key, seen) in pairs:\n    seen.add(key)\n";
        assert_eq!(
            shadowed(set).map(|(name, ..)| name).as_deref(),
            Some("seen")
        );
        // Its own name, or a loop that only reads it: nothing.
        let fine = "import os\nfound = []\nfor root, dirs, files in os.walk('.'):\n    for f in files:\n        found.append(f)\n";
        assert_eq!(shadowed(fine), None);
        let reads = "rows = []\nfor rows in groups:\n    print(rows)\n";
        assert_eq!(shadowed(reads), None);
        // Set to something else than an empty collection.
        let counted = "total = 0\nfor total in range(3):\n    total.append(1)\n";
        assert_eq!(shadowed(counted), None);
        assert_eq!(shadowed(""), None);
    }

    #[test]
    fn a_for_lines_targets_are_its_names() {
        assert_eq!(loop_targets("for (a, b) in x:"), ["a", "b"]);
        assert_eq!(
            loop_targets("for i, [k, v] in enumerate(d):"),
            ["i", "k", "v"]
        );
        assert!(loop_targets("print('for a in b')").is_empty());
        assert!(loop_targets("for x.y in z:").is_empty());
    }
}
