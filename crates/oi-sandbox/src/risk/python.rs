//! The risks of Python code: the shell commands it runs (`subprocess`,
//! `os.system` …), the files it deletes, writes or changes the permissions
//! of, the processes it stops, and what it hides behind built names
//! (`getattr(os, 'ki' + 'll')`, `__import__(name)`, `exec(decoded)`).
//!
//! The code is first *unfolded*: concatenated literals joined, and
//! `getattr(x, 'name')`, `__import__('m')`, `importlib.import_module('m')`
//! and `x.__dict__['name']` written as the plain names they stand for, so
//! the ordinary rules see `shutil.rmtree`. What cannot be unfolded because
//! the name is computed is itself a finding.

use std::collections::HashMap;

use super::expr::{self, Call, PYTHON, argv_command, fold, literal_value, split_args};
use super::{
    DYNAMIC, Place, Risk, STARTUP_FILES, Scope, deletion_risk, is_startup_file, place_of, risk,
};

/// Modules whose attributes, looked up by a computed name, could be
/// anything dangerous.
const POWERFUL_MODULES: &[&str] = &[
    "os",
    "shutil",
    "subprocess",
    "sys",
    "pathlib",
    "builtins",
    "__builtins__",
    "importlib",
    "signal",
    "ctypes",
    "pty",
    "socket",
    "psutil",
];

/// Calls that delete their first argument.
const DELETES: &[&str] = &[
    "shutil.rmtree",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "send2trash.send2trash",
];

/// Calls that run a shell command (a string) or a program (a list).
const RUNS: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "pty.spawn",
    "os.execv",
    "os.execvp",
    "os.execl",
    "os.execlp",
    "os.execve",
    "os.execvpe",
    "os.spawnv",
    "os.spawnvp",
    "os.spawnl",
    "os.spawnlp",
    "asyncio.create_subprocess_shell",
    "asyncio.create_subprocess_exec",
];

/// Calls that change permissions, owners or times of their first argument.
const CHANGES_MODE: &[&str] = &[
    "os.chmod",
    "os.lchmod",
    "os.chown",
    "os.lchown",
    "shutil.chown",
    "os.utime",
];

/// The risks of `code`, run as Python.
pub(crate) fn risks(code: &str, scope: &Scope, depth: usize, risks: &mut Vec<Risk>) {
    if depth > 4 {
        return;
    }
    // Jupyter-style shell lines and cells.
    let mut python = String::with_capacity(code.len());
    let mut cell_is_shell = false;
    for (n, line) in code.lines().enumerate() {
        let trimmed = line.trim_start();
        if n == 0 && matches!(trimmed.trim_end(), "%%bash" | "%%sh" | "%%script bash") {
            cell_is_shell = true;
            continue;
        }
        if cell_is_shell {
            continue;
        }
        if let Some(command) = trimmed.strip_prefix('!') {
            super::shell_rules::risks(command, scope, depth + 1, risks);
            python.push('\n');
        } else {
            python.push_str(line);
            python.push('\n');
        }
    }
    if cell_is_shell {
        let body: Vec<&str> = code.lines().skip(1).collect();
        super::shell_rules::risks(&body.join("\n"), scope, depth + 1, risks);
        return;
    }
    let unfolded = unfold(&python, risks);
    let names = Names::new(&unfolded);
    let values = Values::new(&unfolded, &names);
    for call in expr::find_calls(&unfolded, PYTHON, &[]) {
        call_risks(&call, &unfolded, &names, &values, scope, depth, risks);
    }
    if let Some(text) = fork_in_a_loop(&unfolded) {
        risks.push(risk(
            "fork-bomb",
            "starts processes in a loop without end (os.fork)",
            text,
        ));
    }
    startup_file_writes(&unfolded, risks);
}

fn call_risks(
    call: &Call,
    code: &str,
    names: &Names,
    values: &Values,
    scope: &Scope,
    depth: usize,
    risks: &mut Vec<Risk>,
) {
    let name = names.canonical(&call.name);
    let args = split_args(&call.args, PYTHON);
    let first = args.first().map(String::as_str).unwrap_or("");
    let value = |expr: &str| values.value(expr, 0);
    // A receiver's path: `Path("x").unlink()`, `p.unlink()`.
    let receiver_path = || {
        if call.receiver.is_empty() {
            call.name
                .rsplit_once('.')
                .and_then(|(object, _)| value(object))
        } else {
            value(&call.receiver)
        }
    };
    if RUNS.contains(&name.as_str()) || name.ends_with(".system") && name != "os.system" {
        let command = run_command(first, values);
        super::shell_rules::risks(&command, scope, depth + 1, risks);
        return;
    }
    if DELETES.contains(&name.as_str()) {
        let place = value(first).map_or(Place::Unknown, |p| place_of(&p, false, scope));
        risks.extend(deletion_risk(place, &call.text));
        return;
    }
    let method = call.name.rsplit('.').next().unwrap_or("");
    let is_method =
        call.name.contains('.') && !name.starts_with("os.") && !name.starts_with("shutil.");
    if is_method && matches!(method, "unlink" | "rmdir") && !name.starts_with("os.path") {
        let place = receiver_path().map_or(Place::Unknown, |p| place_of(&p, false, scope));
        risks.extend(deletion_risk(place, &call.text));
        return;
    }
    if CHANGES_MODE.contains(&name.as_str()) || is_method && matches!(method, "chmod" | "lchmod") {
        let target = if CHANGES_MODE.contains(&name.as_str()) {
            value(first)
        } else {
            receiver_path()
        };
        if target.is_some_and(|p| place_of(&p, false, scope) == Place::Outside) {
            risks.push(risk(
                "permissions",
                "changes permissions, owners or times outside the workspace",
                &call.text,
            ));
        }
        return;
    }
    match name.as_str() {
        "os.kill" | "os.killpg" | "signal.pthread_kill" => {
            risks.push(risk("kill", "stops running processes", &call.text));
        }
        _ if is_method
            && matches!(method, "kill" | "terminate" | "send_signal")
            && code.contains("psutil") =>
        {
            risks.push(risk("kill", "stops running processes", &call.text));
        }
        "open" | "io.open" | "builtins.open" => {
            let mode = args
                .get(1)
                .and_then(|m| literal_value(m, PYTHON))
                .or_else(|| {
                    args.iter().find_map(|a| {
                        a.strip_prefix("mode=")
                            .and_then(|m| literal_value(m, PYTHON))
                    })
                })
                .unwrap_or_default();
            if mode.contains(['w', 'a', 'x', '+']) {
                writes(value(first), &call.text, scope, risks);
            }
        }
        "shutil.copy" | "shutil.copy2" | "shutil.copyfile" | "shutil.copytree" => {
            writes(args.get(1).and_then(|a| value(a)), &call.text, scope, risks);
        }
        "shutil.move" | "os.rename" | "os.replace" => {
            let from = value(first).map_or(Place::Unknown, |p| place_of(&p, false, scope));
            if matches!(from, Place::Outside | Place::WorkspaceRoot) {
                risks.extend(deletion_risk(from, &call.text));
            } else {
                writes(args.get(1).and_then(|a| value(a)), &call.text, scope, risks);
            }
        }
        "exec" | "eval" | "compile" | "builtins.exec" | "builtins.eval" => {
            match literal_value(first, PYTHON).filter(|v| !v.contains(DYNAMIC)) {
                Some(inner) => self::risks(&inner, scope, depth + 1, risks),
                None if !first.is_empty() => risks.push(risk(
                    "generated-code",
                    "runs code it builds while running (exec/eval)",
                    &call.text,
                )),
                None => {}
            }
        }
        _ if is_method
            && matches!(
                method,
                "write_text" | "write_bytes" | "touch" | "symlink_to"
            ) =>
        {
            writes(receiver_path(), &call.text, scope, risks);
        }
        _ => {}
    }
}

/// A finding for writing `path`, if it is outside the workspace.
fn writes(path: Option<String>, text: &str, scope: &Scope, risks: &mut Vec<Risk>) {
    let Some(path) = path else { return };
    if is_startup_file(&path) {
        risks.push(risk(
            "startup-file",
            format!("changes {path}, a file run at every login or shell start"),
            text,
        ));
    } else if place_of(&path, false, scope) == Place::Outside && !path.starts_with("/dev/") {
        risks.push(risk(
            "write-outside",
            format!("writes {path}, outside the workspace"),
            text,
        ));
    }
}

/// The shell command a run call stands for: its string, or its list of
/// words, with unknown parts as [`DYNAMIC`].
fn run_command(arg: &str, values: &Values) -> String {
    let arg = arg.trim();
    if let Some(list) = arg
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .or_else(|| arg.strip_prefix('(').and_then(|r| r.strip_suffix(')')))
    {
        let items: Vec<Option<String>> = split_args(list, PYTHON)
            .iter()
            .map(|w| values.value(w, 0))
            .collect();
        return argv_command(&items);
    }
    match values.value(arg, 0) {
        // A list held in a variable.
        Some(v) if v.starts_with('[') => run_command(&v, values),
        Some(v) => v,
        None => DYNAMIC.to_owned(),
    }
}

/// What modules and names are called in the code: `import shutil as sh`
/// makes `sh.rmtree` `shutil.rmtree`; `from os import remove` makes
/// `remove` `os.remove`.
struct Names {
    aliases: HashMap<String, String>,
}

impl Names {
    fn new(code: &str) -> Self {
        let mut aliases = HashMap::new();
        for line in code.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("import ") {
                for part in rest.split(',') {
                    let mut words = part.split_whitespace();
                    if let (Some(module), Some("as"), Some(alias)) =
                        (words.next(), words.next(), words.next())
                    {
                        aliases.insert(alias.to_owned(), module.to_owned());
                    }
                }
            } else if let Some(rest) = line.strip_prefix("from ")
                && let Some((module, names)) = rest.split_once(" import ")
            {
                let names = names.trim().trim_start_matches('(').trim_end_matches(')');
                for part in names.split(',') {
                    let mut words = part.split_whitespace();
                    match (words.next(), words.next(), words.next()) {
                        (Some(name), Some("as"), Some(alias)) => {
                            aliases.insert(alias.to_owned(), format!("{}.{name}", module.trim()));
                        }
                        (Some(name), None, None) if name != "*" => {
                            aliases.insert(name.to_owned(), format!("{}.{name}", module.trim()));
                        }
                        _ => {}
                    }
                }
                if names.trim() == "*" {
                    for known in DELETES.iter().chain(RUNS).chain(CHANGES_MODE) {
                        if let Some((m, n)) = known.rsplit_once('.')
                            && m == module.trim()
                        {
                            aliases.insert(n.to_owned(), (*known).to_owned());
                        }
                    }
                }
            }
        }
        Self { aliases }
    }

    /// `name` with its first part's alias resolved.
    fn canonical(&self, name: &str) -> String {
        let (head, tail) = match name.split_once('.') {
            Some((h, t)) => (h, Some(t)),
            None => (name, None),
        };
        match (self.aliases.get(head), tail) {
            (Some(full), Some(tail)) => format!("{full}.{tail}"),
            (Some(full), None) => full.clone(),
            (None, _) => name.to_owned(),
        }
    }
}

/// What the code assigns to names, for the values of paths and commands.
struct Values {
    /// Name → the expression last assigned to it (or a loop's entries).
    assigned: HashMap<String, String>,
}

/// The value of an entry of a folder listing whose folder is `A`: a name
/// inside it.
const ENTRY: &str = "__entry__";

impl Values {
    fn new(code: &str, names: &Names) -> Self {
        let mut assigned = HashMap::new();
        for line in code.lines() {
            let line = line.trim();
            // for NAME in LISTING(A):  /  for ROOT, DIRS, FILES in os.walk(A):
            if let Some(rest) = line.strip_prefix("for ")
                && let Some((targets, iterable)) = rest.split_once(" in ")
            {
                let iterable = iterable.trim_end_matches(':').trim();
                let folder = listing_folder(iterable, names);
                let targets: Vec<&str> = targets
                    .trim_matches(['(', ')'])
                    .split(',')
                    .map(str::trim)
                    .collect();
                for (i, target) in targets.iter().enumerate() {
                    let value = match &folder {
                        Some((folder, Listing::Walk)) if i > 0 => format!("'{ENTRY}'"),
                        Some((folder, Listing::Glob)) => folder.clone(),
                        Some((folder, _)) => format!("{folder} + '/{ENTRY}'"),
                        // `for f in files:` over a list named before.
                        None if targets.len() == 1 && assigned.contains_key(iterable) => {
                            iterable.to_owned()
                        }
                        None => String::new(),
                    };
                    assigned.insert((*target).to_owned(), value);
                }
                continue;
            }
            // fd, path = tempfile.mkstemp()
            if let Some((targets, value)) = line.split_once('=')
                && targets.contains(',')
                && value.trim().starts_with("tempfile.mk")
            {
                for target in targets.split(',') {
                    assigned.insert(target.trim().to_owned(), format!("'/tmp/{ENTRY}'"));
                }
                continue;
            }
            // NAME = EXPR (not ==, not +=)
            if let Some((name, value)) = line.split_once('=')
                && !value.starts_with('=')
                && !name.ends_with(['!', '<', '>', '+', '-', '*', '/', '%', ':'])
            {
                let name = name.trim();
                if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    assigned.insert(name.to_owned(), value.trim().to_owned());
                }
            }
        }
        Self { assigned }
    }

    /// The string value of `expr`: a literal, a name holding one, a path
    /// built with `Path`, `/`, `os.path.join`, `expanduser` and friends,
    /// a concatenation; unknown parts as [`DYNAMIC`]. `None` when nothing
    /// of it is known.
    fn value(&self, expr: &str, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        let expr = expr.trim().trim_end_matches(',');
        let expr = strip_suffixes(expr);
        if expr.is_empty() {
            return None;
        }
        if let Some(v) = literal_value(expr, PYTHON) {
            return Some(v);
        }
        if let Some(inner) = parenthesized(expr) {
            return self.value(inner, depth + 1);
        }
        let well_known = match expr {
            "Path.home()" | "pathlib.Path.home()" => Some("~"),
            "os.getcwd()" | "Path.cwd()" | "pathlib.Path.cwd()" | "Path()" => Some("."),
            "tempfile.gettempdir()" => Some("/tmp"),
            "sys.executable" => Some("python3"),
            "os.environ['HOME']"
            | "os.environ[\"HOME\"]"
            | "os.environ.get('HOME')"
            | "os.environ.get(\"HOME\")"
            | "os.getenv('HOME')"
            | "os.getenv(\"HOME\")"
            | "os.path.expanduser('~')"
            | "os.path.expanduser(\"~\")" => Some("~"),
            _ => None,
        };
        if let Some(v) = well_known {
            return Some(v.to_owned());
        }
        if let Some(value) = self.assigned.get(expr) {
            return self.value(value, depth + 1);
        }
        // A new temporary file or folder.
        if [
            "tempfile.mkdtemp(",
            "tempfile.mktemp(",
            "tempfile.gettempdir(",
            "mkdtemp(",
        ]
        .iter()
        .any(|p| expr.starts_with(p))
        {
            return Some(format!("/tmp/{ENTRY}"));
        }
        // Wrappers that keep the path.
        for wrapper in [
            "Path(",
            "pathlib.Path(",
            "PurePath(",
            "os.path.expanduser(",
            "expanduser(",
            "os.path.abspath(",
            "abspath(",
            "os.path.realpath(",
            "realpath(",
            "os.path.normpath(",
            "normpath(",
            "os.fspath(",
            "str(",
        ] {
            if let Some(inner) = expr.strip_prefix(wrapper).and_then(|r| r.strip_suffix(')')) {
                let parts = split_args(inner, PYTHON);
                if parts.len() > 1 && wrapper.contains("Path") {
                    return self.join(&parts, depth);
                }
                return self.value(inner, depth + 1);
            }
        }
        for join in ["os.path.join(", "join(", "posixpath.join("] {
            if let Some(inner) = expr.strip_prefix(join).and_then(|r| r.strip_suffix(')')) {
                return self.join(&split_args(inner, PYTHON), depth);
            }
        }
        if let Some(object) = expr.strip_suffix(".parent") {
            let path = self.value(object, depth + 1)?;
            return Some(match path.rsplit_once('/') {
                Some((parent, _)) if !parent.is_empty() => parent.to_owned(),
                Some(_) => "/".to_owned(),
                None => ".".to_owned(),
            });
        }
        // `Path(a) / "b" / c`
        let slashes = expr::split_top(expr, &["/"], PYTHON);
        if slashes.len() > 1 {
            return self.join(&slashes, depth);
        }
        let pluses = expr::split_top(expr, &["+"], PYTHON);
        if pluses.len() > 1 {
            let mut known = false;
            let mut out = String::new();
            for part in &pluses {
                match self.value(part, depth + 1) {
                    Some(v) => {
                        known = true;
                        out.push_str(&v);
                    }
                    None => out.push_str(DYNAMIC),
                }
            }
            return known.then_some(out);
        }
        fold(expr, PYTHON, &|name| {
            self.assigned
                .get(name)
                .and_then(|v| self.value(v, depth + 1))
        })
    }

    /// `os.path.join` of `parts`: an absolute part starts over.
    fn join(&self, parts: &[String], depth: usize) -> Option<String> {
        let mut path = String::new();
        let mut known = false;
        for part in parts {
            let value = match self.value(part, depth + 1) {
                Some(v) => {
                    known = true;
                    v
                }
                None => DYNAMIC.to_owned(),
            };
            if value.starts_with('/') || value.starts_with('~') || path.is_empty() {
                path = value;
            } else {
                if !path.ends_with('/') {
                    path.push('/');
                }
                path.push_str(&value);
            }
        }
        known.then_some(path)
    }
}

/// The inside of `(…)` when the parentheses enclose all of `expr`.
fn parenthesized(expr: &str) -> Option<&str> {
    let inner = expr.strip_prefix('(')?.strip_suffix(')')?;
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    (depth == 0 && split_args(inner, PYTHON).len() == 1).then_some(inner)
}

/// `x.resolve()`, `x.absolute()`, `x.expanduser()` … name the same path.
fn strip_suffixes(expr: &str) -> &str {
    let mut expr = expr;
    loop {
        let stripped = [".resolve()", ".absolute()", ".expanduser()", ".as_posix()"]
            .iter()
            .find_map(|s| expr.strip_suffix(s));
        match stripped {
            Some(rest) => expr = rest,
            None => return expr,
        }
    }
}

enum Listing {
    /// `Path(A).glob(…)`, `os.listdir(A)`, `os.scandir(A)`, `iterdir()`.
    Entries,
    /// `os.walk(A)`: a folder, then names.
    Walk,
    /// `glob.glob(P)`: the pattern itself.
    Glob,
}

/// The folder a loop's iterable lists, as an expression.
fn listing_folder(iterable: &str, names: &Names) -> Option<(String, Listing)> {
    let calls = expr::find_calls(iterable, PYTHON, &[]);
    calls.iter().find_map(|call| listed_by(call, names))
}

fn listed_by(call: &Call, names: &Names) -> Option<(String, Listing)> {
    let name = names.canonical(&call.name);
    let first = split_args(&call.args, PYTHON).into_iter().next();
    match name.as_str() {
        "os.listdir" | "os.scandir" => {
            Some((first.unwrap_or_else(|| "'.'".to_owned()), Listing::Entries))
        }
        "os.walk" | "x.walk" => Some((
            first.or_else(|| (!call.receiver.is_empty()).then(|| call.receiver.clone()))?,
            Listing::Walk,
        )),
        "glob.glob" | "glob.iglob" => Some((first?, Listing::Glob)),
        _ if ["x.glob", "x.rglob", "x.iterdir"].contains(&name.as_str()) => {
            Some((call.receiver.clone(), Listing::Entries))
        }
        _ => {
            // `p.glob(...)` on a named path.
            let (object, method) = call.name.rsplit_once('.')?;
            matches!(method, "glob" | "rglob" | "iterdir" | "walk")
                .then(|| (object.to_owned(), Listing::Entries))
        }
    }
}

/// The code with computed names written plainly where they are spelled out
/// (`getattr(os, 'ki' + 'll')` → `os.kill`); where they are not, a
/// `dynamic-command` finding.
fn unfold(code: &str, risks: &mut Vec<Risk>) -> String {
    let mut code = join_literals(code);
    for _ in 0..8 {
        let mut changed = false;
        for call in expr::find_calls(&code, PYTHON, &[]) {
            let args = split_args(&call.args, PYTHON);
            let literal = |i: usize| {
                args.get(i)
                    .and_then(|a| literal_value(a, PYTHON))
                    .filter(|v| {
                        v.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                    })
            };
            let replacement = match call.name.as_str() {
                "getattr" => literal(1).map(|attr| format!("{}.{attr}", args[0].trim())),
                "__import__" | "importlib.import_module" | "import_module" => literal(0),
                "vars" => None,
                _ => None,
            };
            if let Some(replacement) = replacement {
                let end = call.start + call.text.len();
                code.replace_range(call.start..end, &replacement);
                changed = true;
                break;
            }
        }
        // `x.__dict__['name']`, `vars(x)['name']`, `globals()['name']`
        for marker in [".__dict__[", "globals()[", "locals()["] {
            if let Some(at) = code.find(marker) {
                let open = at + marker.len() - 1;
                if let Some(close) = code[open..].find(']').map(|c| open + c)
                    && let Some(attr) = literal_value(&code[open + 1..close], PYTHON)
                    && attr.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    let replacement = if marker.starts_with('.') {
                        format!(".{attr}")
                    } else {
                        attr
                    };
                    code.replace_range(at..=close, &replacement);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    // What is left is computed.
    for call in expr::find_calls(&code, PYTHON, &[]) {
        let args = split_args(&call.args, PYTHON);
        let dynamic = match call.name.as_str() {
            "getattr" => {
                args.len() >= 2 && literal_value(&args[1], PYTHON).is_none() && {
                    let object = args[0].trim();
                    POWERFUL_MODULES.contains(&object)
                        || object.starts_with("__import__")
                        || object.contains("import_module")
                }
            }
            "__import__" | "importlib.import_module" | "import_module" => args
                .first()
                .is_some_and(|a| literal_value(a, PYTHON).is_none()),
            _ => false,
        };
        if dynamic {
            risks.push(risk(
                "dynamic-command",
                "calls a module or function whose name is only known when it runs",
                &call.text,
            ));
        }
    }
    for marker in [".__dict__[", "globals()[", "locals()["] {
        if let Some(at) = code.find(marker) {
            let end = code[at..].find(']').map_or(code.len(), |e| at + e + 1);
            risks.push(risk(
                "dynamic-command",
                "calls a function whose name is only known when it runs",
                &code[at.saturating_sub(20)..end],
            ));
        }
    }
    code
}

/// `'a' + 'b'` → `"ab"`, repeatedly (so `'r' + 'm -rf '` is one literal).
fn join_literals(code: &str) -> String {
    // The code as pieces: literals (with their plain value) and the rest.
    let mut pieces: Vec<(String, Option<String>)> = Vec::new();
    let mut other = String::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        if rest.starts_with('#') {
            let end = rest.find('\n').unwrap_or(rest.len());
            other.push_str(&rest[..end]);
            i += end;
            continue;
        }
        let after_name = other.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if let Some(len) = expr::literal_len(rest, PYTHON)
            && !(after_name && rest.starts_with(|c: char| c.is_ascii_alphabetic()))
        {
            if !other.is_empty() {
                pieces.push((std::mem::take(&mut other), None));
            }
            let literal = &rest[..len];
            let plain = literal_value(literal, PYTHON).filter(|v| !v.contains(DYNAMIC));
            pieces.push((literal.to_owned(), plain));
            i += len;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        other.push(c);
        i += c.len_utf8();
    }
    if !other.is_empty() {
        pieces.push((other, None));
    }
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for (text, plain) in pieces {
        if let Some(value) = &plain
            && out.len() >= 2
            && out[out.len() - 1].0.trim() == "+"
            && out[out.len() - 2].1.is_some()
        {
            out.pop();
            if let Some((joined_text, Some(joined))) = out.last_mut() {
                joined.push_str(value);
                *joined_text = format!("{joined:?}");
            }
            continue;
        }
        out.push((text, plain));
    }
    out.into_iter().map(|(text, _)| text).collect()
}

/// An `os.fork()` inside a loop, as an excerpt.
fn fork_in_a_loop(code: &str) -> Option<&str> {
    let mut loops: Vec<usize> = Vec::new();
    for line in code.lines() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        loops.retain(|l| *l < indent);
        let is_loop = trimmed.starts_with("while ") || trimmed.starts_with("for ");
        if trimmed.contains("os.fork(")
            && (!loops.is_empty() || is_loop && trimmed.find(':') < trimmed.find("os.fork("))
        {
            return Some(trimmed);
        }
        if is_loop && trimmed.ends_with(':') {
            loops.push(indent);
        }
    }
    None
}

/// Startup files named with a write anywhere in the code.
fn startup_file_writes(code: &str, risks: &mut Vec<Risk>) {
    if risks.iter().any(|r| r.rule == "startup-file") {
        return;
    }
    let writes = ["'a'", "\"a\"", "'w'", "\"w\"", "write_text", "write("]
        .iter()
        .any(|w| code.contains(w));
    let names_one = STARTUP_FILES.iter().any(|f| {
        !f.starts_with('/')
            && (code.contains(&format!("~/{f}"))
                || code.contains(&format!("/{f}'"))
                || code.contains(&format!("/{f}\""))
                || code.contains(&format!("'{f}'"))
                || code.contains(&format!("\"{f}\"")))
    });
    if writes && names_one {
        let line = code
            .lines()
            .find(|l| STARTUP_FILES.iter().any(|f| l.contains(f)))
            .unwrap_or(code);
        risks.push(risk(
            "startup-file",
            "changes a file run at every login or shell start",
            line,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(code: &str) -> Vec<&'static str> {
        let mut found = Vec::new();
        risks(
            code,
            &Scope::new(&super::super::tests::ctx()),
            0,
            &mut found,
        );
        found.iter().map(|r| r.rule).collect()
    }

    #[test]
    fn built_names_are_unfolded_or_asked_about() {
        assert_eq!(
            rules("import importlib\nimportlib.import_module('shu'+'til').rmtree('/srv/x')"),
            ["delete-outside"]
        );
        assert_eq!(
            rules("getattr(__import__('shutil'),'rmtree')('/srv/x')"),
            ["delete-outside"]
        );
        assert_eq!(
            rules("__import__('o'+'s').__dict__['un'+'link']('/etc/hosts')"),
            ["delete-outside"]
        );
        assert_eq!(rules("import os\ngetattr(os,'ki'+'ll')(123, 9)"), ["kill"]);
        assert_eq!(
            rules("import os\nf = getattr(os, name)\nf(p)"),
            ["dynamic-command"]
        );
        assert_eq!(rules("m = __import__(modname)"), ["dynamic-command"]);
        assert!(rules("for c in cols:\n    print(getattr(row, c))").is_empty());
    }

    #[test]
    fn commands_built_from_pieces_are_read() {
        assert_eq!(
            rules("import os\nos.system('r'+'m -rf '+p)"),
            ["delete-unknown"]
        );
        assert_eq!(
            rules("import subprocess\nsubprocess.run(['r'+'m', '-rf', '/srv/x'])"),
            ["delete-outside"]
        );
        assert_eq!(
            rules("import subprocess\nsubprocess.run([cmd, '-rf', 'x'])"),
            ["dynamic-command"]
        );
        assert!(rules("import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'pip', 'install', 'x'])").is_empty());
        assert_eq!(
            rules("import subprocess\nsubprocess.run(f'rm -rf {d}', shell=True)"),
            ["delete-unknown"]
        );
    }

    #[test]
    fn paths_are_followed_through_variables_joins_and_loops() {
        assert_eq!(
            rules("import os\nos.remove(os.path.expanduser('~/.bashrc'))"),
            ["delete-outside"]
        );
        assert_eq!(
            rules("from os.path import expanduser\nimport os\nos.remove(expanduser('~/.bashrc'))"),
            ["delete-outside"]
        );
        assert_eq!(
            rules(
                "from pathlib import Path\nfor p in Path('/srv/data').rglob('*'):\n    p.unlink()"
            ),
            ["delete-outside"]
        );
        assert!(
            rules("from pathlib import Path\nfor p in Path('out').glob('*.tmp'):\n    p.unlink()")
                .is_empty()
        );
        assert!(
            rules("import glob, os\nfor f in glob.glob('*.tmp'):\n    os.remove(f)").is_empty()
        );
        assert_eq!(
            rules(
                "import os\nfor root, dirs, files in os.walk('/srv'):\n    for f in files:\n        os.remove(os.path.join(root, f))"
            ),
            ["delete-outside"]
        );
        assert_eq!(rules("import os\nos.remove(path)"), ["delete-unknown"]);
        assert!(rules("import shutil\nshutil.rmtree('build')").is_empty());
        assert_eq!(
            rules("from pathlib import Path\n(Path.home() / 'notes').unlink()"),
            ["delete-outside"]
        );
    }

    #[test]
    fn permissions_forks_and_writes() {
        assert_eq!(
            rules("import os\nos.chmod('/srv/app', 0o777)"),
            ["permissions"]
        );
        assert!(rules("import os\nos.chmod('run.sh', 0o755)").is_empty());
        assert_eq!(
            rules("import os\nwhile True:\n    os.fork()"),
            ["fork-bomb"]
        );
        assert_eq!(rules("import os\nwhile True: os.fork()"), ["fork-bomb"]);
        assert!(rules("import os\npid = os.fork()").is_empty());
        assert_eq!(
            rules("open('/etc/hosts', 'a').write('x')"),
            ["write-outside"]
        );
        assert!(rules("open('out.csv', 'w').write('x')").is_empty());
        assert_eq!(rules("exec(base64.b64decode(s))"), ["generated-code"]);
        assert_eq!(
            rules("exec(\"import shutil; shutil.rmtree('/srv')\")"),
            ["delete-outside"]
        );
    }

    #[test]
    fn literals_join_only_across_plus() {
        assert_eq!(join_literals("x = 'a' + 'b' + c"), "x = \"ab\" + c");
        assert_eq!(join_literals("f('a', 'b')"), "f('a', 'b')");
        assert_eq!(
            join_literals("'r'+'m -rf '+p # 'x'+'y'"),
            "\"rm -rf \"+p # 'x'+'y'"
        );
    }
}
