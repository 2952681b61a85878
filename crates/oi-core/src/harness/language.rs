//! Telling Python from shell when a model did not say, or said wrong.
//!
//! Small models fence Python as `bash`, put `pip install` in a Python block,
//! or leave the language out. A confident guess here saves a wasted turn on
//! a syntax error; an unsure one changes nothing.

/// Commands that, first on a line, mark the line as shell.
const SHELL_COMMANDS: &[&str] = &[
    "ls", "cd", "pwd", "echo", "cat", "grep", "find", "mkdir", "rm", "rmdir", "cp", "mv", "touch",
    "chmod", "chown", "head", "tail", "wc", "sort", "uniq", "du", "df", "ps", "kill", "export",
    "apt", "apt-get", "brew", "pip", "pip3", "npm", "npx", "yarn", "git", "curl", "wget", "tar",
    "unzip", "zip", "sed", "awk", "which", "whoami", "uname", "date", "env", "source", "sudo",
    "cargo", "make", "docker", "ln", "file", "stat", "free", "top", "history", "python", "python3",
    "node",
];

/// The language `code` is most likely written in, if it is clear:
/// `"python"` or `"shell"`.
pub(crate) fn guess(code: &str) -> Option<&'static str> {
    let (py, sh) = scores(code);
    if py > sh && py > 0 {
        Some("python")
    } else if sh > py && sh > 0 {
        Some("shell")
    } else {
        None
    }
}

/// The language to run `code` in, given that the model said `declared`
/// (a canonical name). Switches only when the code is clearly the other
/// language: every meaningful line looks like it and none like `declared`.
/// Other languages are left as declared.
pub(crate) fn correct<'a>(declared: &'a str, code: &str) -> &'a str {
    if declared != "python" && declared != "shell" {
        return declared;
    }
    let (py, sh) = scores(code);
    match declared {
        "shell" if py > 0 && sh == 0 => "python",
        "python" if sh > 0 && py == 0 && !parses_as_simple_python(code) => "shell",
        _ => declared,
    }
}

/// `(python_lines, shell_lines)`: how many lines look unmistakably like each.
fn scores(code: &str) -> (usize, usize) {
    let mut py = 0;
    let mut sh = 0;
    for line in code.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if looks_python(line) {
            py += 1;
        } else if looks_shell(line) {
            sh += 1;
        }
    }
    (py, sh)
}

fn looks_python(line: &str) -> bool {
    let starts = |p: &str| line.starts_with(p);
    (starts("import ") && !line.contains(" -"))
        || (starts("from ") && line.contains(" import "))
        || (starts("def ") && line.ends_with(':'))
        || (starts("class ") && line.ends_with(':'))
        || starts("print(")
        || (starts("for ") && line.contains(" in ") && line.ends_with(':'))
        || (starts("if ") && line.ends_with(':'))
        || (starts("with ") && line.ends_with(':'))
        || starts("elif ")
        || line == "else:"
        || line == "try:"
        || starts("except")
        || starts("return ")
        || (line.contains(" = ")
            && (line.contains('(') || line.contains('['))
            && !line.contains('$'))
}

fn looks_shell(line: &str) -> bool {
    let line = line.strip_prefix("$ ").unwrap_or(line);
    let first = line.split_whitespace().next().unwrap_or("");
    if SHELL_COMMANDS.contains(&first) {
        // `print(x)` never lands here; `ls` vs a Python name `ls = 3` does.
        return !line.contains(" = ") && !line.contains('(');
    }
    line.starts_with("./")
        || line.contains(" | ")
        || line.contains(" && ")
        || line.starts_with("for ") && line.contains("; do")
        || line.starts_with("if [")
        || (line.contains('=')
            && line.split('=').next().is_some_and(|v| {
                v.chars().all(|c| c.is_ascii_uppercase() || c == '_') && !v.is_empty()
            })
            && !line.contains(' '))
}

/// Whether `code` is a bare Python expression or call that a shell-like scan
/// could mistake (e.g. `ls = 3`); used to keep Python where unsure.
fn parses_as_simple_python(code: &str) -> bool {
    code.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .all(|l| l.contains('(') && l.ends_with(')') && !l.contains(" -"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_clear_cases() {
        assert_eq!(
            guess("import pandas as pd\ndf = pd.read_csv('a.csv')"),
            Some("python")
        );
        assert_eq!(guess("ls -la\ncd /tmp && pwd"), Some("shell"));
        assert_eq!(guess("pip install requests"), Some("shell"));
        assert_eq!(guess("$ echo hi"), Some("shell"));
        assert_eq!(guess("hello world"), None);
        assert_eq!(guess(""), None);
    }

    #[test]
    fn corrects_python_fenced_as_shell_and_the_reverse() {
        assert_eq!(correct("shell", "import os\nprint(os.getcwd())"), "python");
        assert_eq!(correct("python", "pip install matplotlib"), "shell");
        assert_eq!(correct("python", "ls -la"), "shell");
    }

    #[test]
    fn keeps_the_declared_language_when_unsure_or_mixed() {
        assert_eq!(correct("shell", "echo hi\npython3 -c 'import os'"), "shell");
        assert_eq!(correct("shell", "x=1\necho $x"), "shell");
        assert_eq!(correct("python", "x = 1\nprint(x)"), "python");
        assert_eq!(
            correct("python", "import os\nos.system('ls -la')"),
            "python"
        );
        assert_eq!(correct("python", "find(a)"), "python");
        assert_eq!(correct("shell", "python3 script.py"), "shell");
    }

    #[test]
    fn leaves_other_languages_alone() {
        assert_eq!(correct("javascript", "const x = 40"), "javascript");
        assert_eq!(correct("ruby", "import os"), "ruby");
        assert_eq!(correct("zsh", "print(1)"), "zsh");
    }
}
