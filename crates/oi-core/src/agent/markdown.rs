//! A Markdown document's outline for small models: which lines are its
//! headings, at which level, and which lines look like headings but are
//! not.
//!
//! Small models read a Markdown heading with `line.startswith('#')`: they
//! test `#` before `##` (so every heading is level 1), count the comment
//! lines of a shell example inside a ``` block, and take `#hashtag` text
//! for a heading. The first look names the headings as a reader sees them
//! and the two lines of Python that read one, so the model need not guess.
//!
//! Bounded like the other profiles: the lines the first look already read,
//! at most [`MAX_LINES`] of them, at most [`MAX_HEADINGS`] headings named.

/// Lines read, at most.
const MAX_LINES: usize = 2000;
/// Headings named, at most.
const MAX_HEADINGS: usize = 12;
/// The longest heading shown whole.
const WIDTH: usize = 80;

/// A line that looks like a heading, with its 1-based line number.
struct Line<'a> {
    number: usize,
    text: &'a str,
}

/// What a Markdown text's lines are, as far as headings go.
#[derive(Default)]
struct Outline<'a> {
    /// ATX headings (`## Title`) and underlined ones (`Title` over `===`),
    /// in order, each with its level.
    headings: Vec<(Line<'a>, usize)>,
    /// Lines starting with `#` inside a fenced code block.
    fenced: Vec<Line<'a>>,
    /// Lines starting with `#` not followed by a space (`#hashtag`).
    unspaced: Vec<Line<'a>>,
    /// Whether a heading is written as a title over `===` or `---`.
    underlined: bool,
}

/// For a Markdown file (`.md`, `.markdown`) with headings: its headings in
/// order, the lines that only look like headings, and how to read a
/// heading's level and title in Python. Not for a file the look shows
/// `whole` with no line that only looks like a heading: its lines say it
/// all.
pub(super) fn outline(name: &str, text: &str, whole: bool) -> Option<String> {
    if !is_markdown(name) {
        return None;
    }
    let outline = read(text);
    let plain = outline.fenced.is_empty() && outline.unspaced.is_empty();
    if outline.headings.is_empty() || (whole && plain) {
        return None;
    }
    let count = outline.headings.len();
    let mut named: Vec<String> = outline
        .headings
        .iter()
        .take(MAX_HEADINGS)
        .map(|(line, level)| {
            let shown = shown(line.text);
            if line.text.trim_start().starts_with('#') {
                format!("`{shown}` (line {})", line.number)
            } else {
                format!(
                    "`{shown}` (line {}, level {level}: underlined)",
                    line.number
                )
            }
        })
        .collect();
    if count > MAX_HEADINGS {
        named.push(format!("and {} more", count - MAX_HEADINGS));
    }
    let headings = if count == 1 { "heading" } else { "headings" };
    let not: Vec<String> = [
        look_alikes(&outline.fenced, " inside a ``` block"),
        look_alikes(&outline.unspaced, ", with no space after `#`"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let not = if not.is_empty() {
        String::new()
    } else {
        format!(" Not headings: {}.", not.join("; "))
    };
    let fences = if outline.fenced.is_empty() {
        ""
    } else {
        ", and skip the lines between ``` lines"
    };
    let underlined = if outline.underlined {
        " A line of `===` (`---`) under a line of text makes that text a level-1 (level-2) heading."
    } else {
        ""
    };
    Some(format!(
        "As Markdown it has {count} {headings}: {}.{not} A heading is 1 to 6 `#` and a space: its level is `level = len(line) - len(line.lstrip('#'))`, its title `line.strip().strip('#').strip()`{fences}.{underlined}",
        named.join(", ")
    ))
}

/// For a result that lists headings of the Markdown file `input` (`text`)
/// — one of its lines is the title of one of the file's headings —: its
/// first line that is instead the title of a line that only looks like a
/// heading (a `#` line inside a ``` block, `#hashtag` text), as a problem
/// to tell, with the line of the input and why it is none. A result line's
/// title is read past its indent, a list mark or `#`s, and a link's
/// brackets (`- [Install](#install)`).
pub(super) fn look_alike_listed(result: &str, input: &str, text: &str) -> Option<String> {
    if !is_markdown(input) {
        return None;
    }
    let outline = read(text);
    let title = |line: &str| line.trim().trim_matches('#').trim().to_owned();
    let headings: Vec<String> = outline
        .headings
        .iter()
        .map(|(line, _)| title(line.text))
        .collect();
    let listed: Vec<(&str, String)> = result
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| (line.trim(), listed_title(line)))
        .collect();
    if !listed.iter().any(|(_, t)| headings.contains(t)) {
        return None;
    }
    let alikes = outline
        .fenced
        .iter()
        .map(|line| (line, "it is inside a ``` block; skip the lines between ``` lines (a line that starts with ``` turns `in_code = not in_code`; `continue` while `in_code`)"))
        .chain(outline.unspaced.iter().map(|line| {
            (line, "its `#` has no space after it; a heading is 1 to 6 `#` and a space")
        }));
    for (line, why) in alikes {
        let alike = title(line.text);
        if alike.is_empty() || headings.contains(&alike) {
            continue;
        }
        if let Some((shown, _)) = listed.iter().find(|(_, t)| *t == alike) {
            return Some(format!(
                "`{shown}` comes from line {} of `{input}` (`{}`), which is not a heading: {why}",
                line.number,
                line.text.trim()
            ));
        }
    }
    None
}

/// Whether the file `name` is Markdown (`.md`, `.markdown`, in any case).
fn is_markdown(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// The title a line of a list of headings names: past its indent, a list
/// mark (`-`, `*`, `+`, `1.`), `#`s, and a link's brackets.
fn listed_title(line: &str) -> String {
    let mut rest = line.trim();
    if let Some(after) = rest.strip_prefix(['-', '*', '+']) {
        rest = after.trim_start();
    } else if let Some((number, after)) = rest.split_once(['.', ')'])
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
    {
        rest = after.trim_start();
    }
    let rest = rest.trim_matches('#').trim();
    match rest.strip_prefix('[').and_then(|r| r.split_once("](")) {
        Some((title, _)) => title.trim().to_owned(),
        None => rest.to_owned(),
    }
}

/// The first of `lines` that only look like headings, with how many more
/// there are and `why` they are not headings.
fn look_alikes(lines: &[Line<'_>], why: &str) -> Option<String> {
    let first = lines.first()?;
    let more = match lines.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "`{}` (line {}){more}{why}",
        shown(first.text),
        first.number
    ))
}

/// `text` cut to [`WIDTH`] characters, trimmed.
fn shown(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= WIDTH {
        return text.to_owned();
    }
    let cut: String = text.chars().take(WIDTH).collect();
    format!("{cut}…")
}

/// The headings of `text` and the lines that look like them, read the way
/// CommonMark reads them: up to three spaces before the `#`, a code block
/// fenced with ``` or `~~~` closed by a fence of the same character at
/// least as long.
fn read(text: &str) -> Outline<'_> {
    let mut outline = Outline::default();
    let mut fence: Option<(char, usize)> = None;
    let mut previous: Option<Line<'_>> = None;
    for (index, line) in text.lines().take(MAX_LINES).enumerate() {
        let number = index + 1;
        let body = line.trim_start_matches(' ');
        let indented = line.len() - body.len() > 3;
        let this = Line { number, text: line };
        if !indented && let Some((mark, length)) = fence_mark(body) {
            fence = match fence {
                None => Some((mark, length)),
                Some((open, least))
                    if mark == open
                        && length >= least
                        && body.trim_end().chars().all(|c| c == open) =>
                {
                    None
                }
                still => still,
            };
            previous = None;
            continue;
        }
        let hashes = body.len() - body.trim_start_matches('#').len();
        if fence.is_some() {
            if hashes > 0 && !indented {
                outline.fenced.push(this);
            }
            continue;
        }
        if hashes > 0 && !indented {
            let rest = &body[hashes..];
            if hashes <= 6 && (rest.is_empty() || rest.starts_with([' ', '\t'])) {
                outline.headings.push((this, hashes));
            } else {
                outline.unspaced.push(this);
            }
            previous = None;
            continue;
        }
        if !indented
            && let Some(level) = underline_level(body)
            && let Some(title) = previous.take()
        {
            outline.headings.push((title, level));
            outline.underlined = true;
            continue;
        }
        previous = paragraph_line(body, indented).then_some(this);
    }
    outline
}

/// A fence's character and length (```` ``` ```` or `~~~`, at least three).
fn fence_mark(body: &str) -> Option<(char, usize)> {
    let mark = body.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let length = body.chars().take_while(|&c| c == mark).count();
    (length >= 3).then_some((mark, length))
}

/// The level an underline line (`===`, `---`) gives the text above it.
fn underline_level(body: &str) -> Option<usize> {
    let body = body.trim_end();
    let first = body.chars().next()?;
    let level = match first {
        '=' => 1,
        '-' => 2,
        _ => return None,
    };
    body.chars().all(|c| c == first).then_some(level)
}

/// Whether a line is plain paragraph text, which an underline makes a
/// heading (not a blank line, a list item, a quote or a table row).
fn paragraph_line(body: &str, indented: bool) -> bool {
    let body = body.trim_end();
    let Some(first) = body.chars().next() else {
        return false;
    };
    let numbered = body
        .split_once(['.', ')'])
        .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    !indented && !matches!(first, '-' | '*' | '+' | '>' | '|' | '=' | '<') && !numbered
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = "# Project guide\n\nWelcome.\n\n## Install\n\nRun it:\n\n```bash\n# download first\ncurl -O https://example.com/i.sh\n## not a heading either\n```\n\n### On Linux\n\nUse apt.\n\n## Usage\n\n#hashtag lines are not headings.\n\n### Options ###\n\n    # indented: code\n\n## License\n";

    #[test]
    fn headings_are_named_in_order_and_look_alikes_are_named_as_not() {
        let look = outline("guide.md", GUIDE, false).unwrap();
        assert_eq!(
            look,
            "As Markdown it has 6 headings: `# Project guide` (line 1), `## Install` (line 5), \
             `### On Linux` (line 15), `## Usage` (line 19), `### Options ###` (line 23), \
             `## License` (line 27). Not headings: `# download first` (line 10) and 1 more \
             inside a ``` block; `#hashtag lines are not headings.` (line 21), with no space \
             after `#`. A heading is 1 to 6 `#` and a space: its level is \
             `level = len(line) - len(line.lstrip('#'))`, its title \
             `line.strip().strip('#').strip()`, and skip the lines between ``` lines."
        );
    }

    /// The Python the outline gives reads the same headings as the outline
    /// names, at the same levels.
    #[test]
    fn the_code_the_outline_gives_finds_the_headings_it_names() {
        let outline = read(GUIDE);
        let named: Vec<(usize, String)> = outline
            .headings
            .iter()
            .map(|(line, level)| (*level, line.text.trim().trim_matches('#').trim().to_owned()))
            .collect();
        assert_eq!(
            named,
            [
                (1, "Project guide"),
                (2, "Install"),
                (3, "On Linux"),
                (2, "Usage"),
                (3, "Options"),
                (2, "License"),
            ]
            .map(|(l, t)| (l, t.to_owned()))
        );
    }

    #[test]
    fn underlined_headings_and_fences_of_tildes_are_read() {
        let text = "Title\n=====\n\nIntro.\n\nPart one\n--------\n\n- item\n---\n\n~~~\n# shell\n```\n~~~\n\n1. step\n---\n";
        let outline = read(text);
        let found: Vec<(usize, usize)> = outline
            .headings
            .iter()
            .map(|(line, level)| (line.number, *level))
            .collect();
        // The `---` under a list item is a rule; the ``` inside the `~~~`
        // block does not close it.
        assert_eq!(found, [(1, 1), (6, 2)]);
        assert_eq!(outline.fenced.len(), 1);
        let look = super::outline("notes.markdown", text, false).unwrap();
        assert!(
            look.contains("`Title` (line 1, level 1: underlined)"),
            "{look}"
        );
        assert!(
            look.ends_with("makes that text a level-1 (level-2) heading."),
            "{look}"
        );
    }

    #[test]
    fn a_look_alike_listed_among_the_headings_is_told() {
        let toc = "- Install\n- not a heading either\n  - On Linux\n- Usage\n";
        assert_eq!(
            look_alike_listed(toc, "guide.md", GUIDE).unwrap(),
            "`- not a heading either` comes from line 12 of `guide.md` (`## not a heading either`), which is not a heading: it is inside a ``` block; skip the lines between ``` lines (a line that starts with ``` turns `in_code = not in_code`; `continue` while `in_code`)"
        );
        let linked = "1. [Install](#install)\n2. [hashtag lines are not headings.](#x)\n";
        assert!(
            look_alike_listed(linked, "guide.md", GUIDE)
                .unwrap()
                .contains("line 21 of `guide.md` (`#hashtag lines are not headings.`), which is not a heading: its `#` has no space after it"),
        );
        // Only the real headings: nothing to tell.
        let right = "- Install\n  - On Linux\n- Usage\n  - Options\n- License\n";
        assert_eq!(look_alike_listed(right, "guide.md", GUIDE), None);
        // A result that lists no heading (the comments of the examples,
        // asked for) is not a list of headings.
        assert_eq!(
            look_alike_listed("download first\nnot a heading either\n", "guide.md", GUIDE),
            None
        );
        assert_eq!(look_alike_listed(toc, "guide.txt", GUIDE), None);
    }

    #[test]
    fn other_files_and_markdown_without_headings_get_no_outline() {
        assert_eq!(outline("script.sh", "# a comment\necho hi\n", false), None);
        assert_eq!(outline("notes.md", "Just text.\n\n- a list\n", false), None);
        assert_eq!(outline("tags.md", "#one #two\n", false), None);
    }

    #[test]
    fn the_outline_is_bounded() {
        let text: String = (1..=40)
            .map(|i| format!("## Part {i}\n\ntext\n\n"))
            .collect();
        let look = outline("long.md", &text, false).unwrap();
        assert!(
            look.contains("`## Part 12` (line 45), and 28 more."),
            "{look}"
        );
        assert!(!look.contains("Part 13"), "{look}");
        let wide = format!("# {}\n", "word ".repeat(40));
        let look = outline("wide.md", &wide, false).unwrap();
        assert!(look.contains(" wor…` (line 1)"), "{look}");
        // Shown whole: only when a line only looks like a heading.
        assert_eq!(
            outline("todo.md", "# Release\n\n- [x] Freeze\n", true),
            None
        );
        assert!(outline("todo.md", "# Release\n\n#freeze\n", true).is_some());
    }
}
