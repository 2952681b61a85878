//! The risks of code in the other languages (JavaScript, Ruby, Perl, PHP,
//! Lua, R): each language's own calls that run shell commands, delete
//! files, stop processes, change permissions or run code built at run
//! time, with their arguments' values folded from literals and plain
//! variables; and, as a last resort, string literals that read like risky
//! shell commands.

use std::collections::HashMap;

use super::expr::{self, Syntax, argv_command, fold, literal_value, split_args};
use super::{DYNAMIC, Place, Risk, Scope, basename, deletion_risk, place_of, risk};

/// What a language's calls do, by name (the last part of a dotted name
/// unless the entry has a dot or `::` itself).
struct Calls {
    /// Run a shell command (a string) or a program (an argument list).
    run: &'static [&'static str],
    /// Delete their first argument.
    delete: &'static [&'static str],
    /// Stop processes.
    kill: &'static [&'static str],
    /// Change permissions, owners or times of their first argument (of the
    /// second for Perl's `chmod MODE, FILES`).
    mode: &'static [&'static str],
    /// Run code given as a string.
    eval: &'static [&'static str],
    /// Names called without parentheses (Perl, Ruby).
    bare: &'static [&'static str],
}

fn calls(language: &str) -> Calls {
    match language {
        "javascript" | "typescript" => Calls {
            run: &[
                "exec",
                "execSync",
                "spawn",
                "spawnSync",
                "execFile",
                "execFileSync",
                "execa",
                "execaSync",
            ],
            delete: &[
                "rmSync",
                "rm",
                "rmdirSync",
                "rmdir",
                "unlinkSync",
                "unlink",
                "remove",
                "removeSync",
                "emptyDirSync",
            ],
            kill: &["process.kill"],
            mode: &[
                "chmodSync",
                "chmod",
                "chownSync",
                "chown",
                "lchownSync",
                "utimesSync",
                "utimes",
            ],
            eval: &["eval", "Function", "vm.runInThisContext", "runInNewContext"],
            bare: &[],
        },
        "perl" => Calls {
            run: &["system", "exec", "qx", "readpipe"],
            delete: &[
                "unlink",
                "rmtree",
                "remove_tree",
                "rmdir",
                "File::Path::rmtree",
                "File::Path::remove_tree",
            ],
            kill: &["kill"],
            mode: &["chmod", "chown", "utime"],
            eval: &["eval"],
            bare: &[
                "system",
                "exec",
                "unlink",
                "rmtree",
                "remove_tree",
                "rmdir",
                "kill",
                "chmod",
                "chown",
                "eval",
            ],
        },
        "ruby" => Calls {
            run: &[
                "system",
                "exec",
                "spawn",
                "Open3.capture2",
                "Open3.capture3",
                "Open3.popen3",
                "IO.popen",
                "Kernel.system",
            ],
            delete: &[
                "FileUtils.rm_rf",
                "FileUtils.rm_r",
                "FileUtils.rm",
                "FileUtils.rm_f",
                "FileUtils.remove_dir",
                "FileUtils.remove_entry",
                "FileUtils.remove_entry_secure",
                "FileUtils.rmtree",
                "File.delete",
                "File.unlink",
                "Dir.rmdir",
                "Dir.delete",
                "rm_rf",
                "rm_r",
            ],
            kill: &["Process.kill"],
            mode: &[
                "File.chmod",
                "FileUtils.chmod",
                "FileUtils.chmod_R",
                "FileUtils.chown",
                "FileUtils.chown_R",
                "File.chown",
            ],
            eval: &["eval", "instance_eval", "class_eval"],
            bare: &["system", "exec", "spawn", "eval", "rm_rf"],
        },
        "php" => Calls {
            run: &[
                "system",
                "exec",
                "shell_exec",
                "passthru",
                "popen",
                "proc_open",
            ],
            delete: &["unlink", "rmdir"],
            kill: &["posix_kill"],
            mode: &["chmod", "chown", "touch"],
            eval: &["eval", "assert", "create_function"],
            bare: &[],
        },
        "lua" => Calls {
            run: &["os.execute", "io.popen"],
            delete: &["os.remove"],
            kill: &[],
            mode: &[],
            eval: &["load", "loadstring", "dostring"],
            bare: &[],
        },
        "r" => Calls {
            run: &["system", "system2", "shell"],
            delete: &["unlink", "file.remove"],
            kill: &["tools::pskill", "pskill"],
            mode: &["Sys.chmod", "Sys.setFileTime"],
            eval: &[],
            bare: &[],
        },
        _ => Calls {
            run: &["system", "exec", "popen"],
            delete: &["unlink", "remove", "rmdir"],
            kill: &["kill"],
            mode: &["chmod"],
            eval: &["eval"],
            bare: &[],
        },
    }
}

/// Whether the call `name` is one of `list` (by its whole name, or by its
/// last part for plain entries).
fn is_one_of(name: &str, list: &[&str]) -> bool {
    let last = name
        .rsplit(['.', ':'])
        .next()
        .unwrap_or(name)
        .trim_start_matches('$');
    list.iter().any(|entry| {
        if entry.contains('.') || entry.contains("::") {
            name == *entry || name.ends_with(&format!(".{entry}"))
        } else {
            last == *entry
        }
    })
}

/// The risks of `code` in `language`.
pub(crate) fn risks(language: &str, code: &str, scope: &Scope, risks: &mut Vec<Risk>) {
    let syntax = expr::syntax(language);
    let table = calls(language);
    let vars = assignments(code, syntax);
    let lookup = |name: &str| {
        let name = name.trim();
        vars.get(name)
            .and_then(|v| fold(v, syntax, &|_| None))
            .or_else(|| well_known(name))
    };
    let value = |e: &str| {
        let e = e.trim();
        fold(e, syntax, &lookup).or_else(|| path_value(e, syntax, &lookup))
    };
    let found_before = risks.len();
    for call in expr::find_calls(code, syntax, table.bare) {
        let args = split_args(&call.args, syntax);
        let first = args.first().map(String::as_str).unwrap_or("");
        let name = call.name.as_str();
        if is_one_of(name, table.run) {
            let command = command_of(&args, syntax, &value);
            super::shell_rules::risks(&command, scope, 1, risks);
        } else if is_one_of(name, table.delete) {
            // `unlink` of one named file in the workspace can be undone;
            // a recursive removal or an unknown place is asked about.
            let paths: Vec<&String> = if language == "perl" {
                args.iter().collect()
            } else {
                args.iter().take(1).collect()
            };
            for path in paths {
                let place = value(path).map_or(Place::Unknown, |p| place_of(&p, false, scope));
                if let Some(found) = deletion_risk(place, &call.text) {
                    risks.push(found);
                    break;
                }
            }
        } else if is_one_of(name, table.kill) {
            risks.push(risk("kill", "stops running processes", &call.text));
        } else if is_one_of(name, table.mode) {
            let targets: Vec<&String> = if language == "perl" {
                args.iter().skip(1).collect()
            } else {
                args.iter().take(1).collect()
            };
            if targets
                .iter()
                .any(|t| value(t).is_some_and(|p| place_of(&p, false, scope) == Place::Outside))
            {
                risks.push(risk(
                    "permissions",
                    "changes permissions, owners or times outside the workspace",
                    &call.text,
                ));
            }
        } else if is_one_of(name, table.eval) && !first.is_empty() {
            let literal = literal_value(first, syntax).filter(|v| !v.contains(DYNAMIC));
            let is_block = first.trim_start().starts_with('{');
            match literal {
                Some(inner) => self::risks(language, &inner, scope, risks),
                None if !is_block => risks.push(risk(
                    "generated-code",
                    "runs code it builds while running (eval)",
                    &call.text,
                )),
                None => {}
            }
        } else if matches!(name, "require" | "import") && language == "javascript" {
            if literal_value(first, syntax).is_none() && !first.is_empty() {
                risks.push(risk(
                    "dynamic-command",
                    "loads a module whose name is only known when it runs",
                    &call.text,
                ));
            }
        } else if language == "php"
            && name.starts_with('$')
            && !name.contains("->")
            && !name.contains('.')
        {
            // `$f("rm -rf …")`: a function named by a variable.
            risks.push(risk(
                "dynamic-command",
                "calls a function whose name is only known when it runs",
                &call.text,
            ));
        }
    }
    // Backticks and `qx{}` / `%x()` run shell commands in Perl, Ruby, PHP.
    if matches!(language, "perl" | "ruby" | "php") {
        for command in backtick_commands(code) {
            let command = fold(&format!("\"{command}\""), syntax, &lookup).unwrap_or(command);
            super::shell_rules::risks(&command, scope, 1, risks);
        }
    }
    if language == "perl" && perl_fork_bomb(code) {
        risks.push(risk(
            "fork-bomb",
            "starts processes without end (fork in a loop)",
            code,
        ));
    }
    // Last resort: string literals that read like risky shell commands.
    if risks.len() == found_before {
        literal_commands(code, syntax, scope, risks);
    }
}

/// The shell command a run call's arguments stand for.
fn command_of(args: &[String], syntax: Syntax, value: &dyn Fn(&str) -> Option<String>) -> String {
    let Some(first) = args.first() else {
        return String::new();
    };
    let first = first.trim();
    if let Some(list) = first.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let items: Vec<Option<String>> =
            split_args(list, syntax).iter().map(|a| value(a)).collect();
        return argv_command(&items);
    }
    match value(first) {
        // spawn("rm", ["-rf", dir]) / system("rm", "-rf", dir)
        Some(program) if args.len() > 1 && !program.contains(' ') => {
            let mut items = vec![Some(program)];
            for arg in &args[1..] {
                let arg = arg.trim();
                match arg.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                    Some(list) => items.extend(split_args(list, syntax).iter().map(|a| value(a))),
                    None if arg.starts_with('{') => {}
                    None => items.push(value(arg)),
                }
            }
            argv_command(&items)
        }
        Some(command) => command,
        None => DYNAMIC.to_owned(),
    }
}

/// Values of expressions the languages use for well-known places.
fn well_known(expr: &str) -> Option<String> {
    let home = [
        "os.homedir()",
        "require('os').homedir()",
        "require(\"os\").homedir()",
        "process.env.HOME",
        "process.env['HOME']",
        "$ENV{HOME}",
        "$ENV{'HOME'}",
        "ENV['HOME']",
        "ENV[\"HOME\"]",
        "Dir.home",
        "getenv('HOME')",
        "getenv(\"HOME\")",
        "$_SERVER['HOME']",
        "os.getenv('HOME')",
        "os.getenv(\"HOME\")",
        "Sys.getenv('HOME')",
        "Sys.getenv(\"HOME\")",
        "path.expand('~')",
        "path.expand(\"~\")",
    ];
    if home.contains(&expr) {
        return Some("~".to_owned());
    }
    match expr {
        "process.cwd()" | "Dir.pwd" | "getcwd()" | "getwd()" => Some(".".to_owned()),
        "os.tmpdir()" | "Dir.tmpdir" | "sys_get_temp_dir()" | "tempdir()" => {
            Some("/tmp".to_owned())
        }
        _ => None,
    }
}

/// The value of a path expression: `path.join(a, b)`, `File.join(a, b)`,
/// `file.path(a, b)`, `"$HOME/x"`.
fn path_value(
    expr: &str,
    syntax: Syntax,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    for join in [
        "path.join(",
        "require('path').join(",
        "require(\"path\").join(",
        "path.resolve(",
        "File.join(",
        "file.path(",
        "File.expand_path(",
    ] {
        if let Some(inner) = expr.strip_prefix(join).and_then(|r| r.strip_suffix(')')) {
            let parts: Vec<String> = split_args(inner, syntax)
                .iter()
                .map(|p| {
                    fold(p, syntax, lookup)
                        .or_else(|| path_value(p, syntax, lookup))
                        .unwrap_or_else(|| DYNAMIC.to_owned())
                })
                .collect();
            if parts.iter().all(|p| p == DYNAMIC) {
                return None;
            }
            let mut path = String::new();
            for part in parts {
                if part.starts_with('/') || part.starts_with('~') || path.is_empty() {
                    path = part;
                } else {
                    path = format!("{}/{part}", path.trim_end_matches('/'));
                }
            }
            return Some(path);
        }
    }
    None
}

/// `NAME = literal` assignments in any of the languages' spellings
/// (`const x =`, `my $x =`, `$x =`, `local x =`, `x <-`).
fn assignments(code: &str, syntax: Syntax) -> HashMap<String, String> {
    let mut vars = HashMap::new();
    for line in code.lines().flat_map(|l| l.split(';')) {
        let line = line.trim();
        let line = ["const ", "let ", "var ", "my ", "our ", "local "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
            .unwrap_or(line);
        let split = line.split_once("<-").or_else(|| {
            line.split_once('=')
                .filter(|(_, v)| !v.starts_with(['=', '~', '>']))
        });
        if let Some((name, value)) = split {
            let name = name.trim();
            if !name.is_empty()
                && name
                    .trim_start_matches(['$', '@'])
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.ends_with(['!', '<', '>', '+', '-', '*', '/', '.'])
            {
                let value = value.trim().trim_end_matches(',');
                if fold(value, syntax, &|_| None).is_some() || value.starts_with("path.join(") {
                    vars.insert(name.to_owned(), value.to_owned());
                }
            }
        }
    }
    vars
}

/// The commands in backticks, `qx{…}`, `qx(…)` and `%x(…)`.
fn backtick_commands(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        out.push(after[..end].to_owned());
        rest = &after[end + 1..];
    }
    for (open, close) in [("qx{", '}'), ("qx(", ')'), ("%x(", ')'), ("%x{", '}')] {
        let mut rest = code;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len()..];
            let end = after.find(close).unwrap_or(after.len());
            out.push(after[..end].to_owned());
            rest = &after[end.min(after.len())..];
        }
    }
    out
}

/// Perl's `fork while 1`, `fork while fork`, `1 while fork`.
fn perl_fork_bomb(code: &str) -> bool {
    let compact: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    compact.contains("fork while")
        || compact.contains("while fork")
        || compact.contains("while(1){fork")
        || compact.contains("while (1) { fork")
}

/// String literals that read like risky shell commands (`"rm -rf ~"`),
/// judged as shell code.
fn literal_commands(code: &str, syntax: Syntax, scope: &Scope, risks: &mut Vec<Risk>) {
    const COMMANDS: &[&str] = &[
        "rm",
        "sudo",
        "su",
        "dd",
        "mkfs",
        "git",
        "kill",
        "killall",
        "pkill",
        "chmod",
        "chown",
        "shutdown",
        "reboot",
        "curl",
        "wget",
        "find",
        "apt",
        "apt-get",
        "pip",
        "npm",
        "crontab",
        "systemctl",
        "shred",
        "doas",
        "truncate",
    ];
    for literal in expr::literals(code, syntax) {
        let first = literal.split_whitespace().next().unwrap_or("");
        if COMMANDS.contains(&basename(first)) || first.starts_with("mkfs") {
            super::shell_rules::risks(&literal, scope, 1, risks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(language: &str, code: &str) -> Vec<&'static str> {
        let mut found = Vec::new();
        risks(
            language,
            code,
            &Scope::new(&super::super::tests::ctx()),
            &mut found,
        );
        found.iter().map(|r| r.rule).collect()
    }

    #[test]
    fn node_deletions_commands_and_kills() {
        assert_eq!(
            rules(
                "javascript",
                "const fs = require('fs'); const path = require('path'); const os = require('os');\nfs.rmSync(path.join(os.homedir(), 'old'), { recursive: true, force: true });"
            ),
            ["delete-outside"]
        );
        assert!(
            rules(
                "javascript",
                "const fs = require('fs');\nfs.rmSync('dist', { recursive: true });"
            )
            .is_empty()
        );
        assert_eq!(
            rules(
                "javascript",
                "require('child_process').execSync('r' + 'm -rf ' + dir)"
            ),
            ["delete-unknown"]
        );
        assert_eq!(
            rules("javascript", "process.kill(process.ppid, 'SIGKILL')"),
            ["kill"]
        );
        assert_eq!(rules("javascript", "eval(atob(s))"), ["generated-code"]);
        assert_eq!(
            rules(
                "javascript",
                "const { spawnSync } = require('child_process');\nspawnSync('rm', ['-rf', '/srv/x'])"
            ),
            ["delete-outside"]
        );
    }

    #[test]
    fn perl_ruby_php_lua_and_r() {
        assert_eq!(
            rules("perl", "use File::Path qw(rmtree);\nrmtree('/srv/data');"),
            ["delete-outside"]
        );
        assert_eq!(
            rules(
                "perl",
                "use File::Path;\nmy $d = \"$ENV{HOME}/x\";\nrmtree $d;"
            ),
            ["delete-unknown"]
        );
        assert_eq!(rules("perl", "kill 9, getppid();"), ["kill"]);
        assert_eq!(rules("perl", "fork while 1;"), ["fork-bomb"]);
        assert_eq!(
            rules(
                "ruby",
                "require 'fileutils'\nFileUtils.rm_rf(File.join(Dir.home, 'x'))"
            ),
            ["delete-outside"]
        );
        assert_eq!(rules("ruby", "`rm -rf ~/x`"), ["delete-outside"]);
        assert_eq!(
            rules("php", "<?php unlink('/etc/hosts');"),
            ["delete-outside"]
        );
        assert_eq!(
            rules("php", "<?php $f = 'sys' . 'tem'; $f('ls');"),
            ["dynamic-command"]
        );
        assert_eq!(
            rules("lua", "os.execute('rm -rf ' .. os.getenv('HOME'))"),
            ["delete-workspace"]
        );
        assert_eq!(
            rules("r", "unlink('/srv/data', recursive = TRUE)"),
            ["delete-outside"]
        );
        assert!(rules("r", "write.csv(df, 'out.csv')").is_empty());
    }
}
