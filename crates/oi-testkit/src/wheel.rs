//! A tiny Python package as a wheel, for tests of `pip install` that must
//! not need a package index or the network.

/// Python code that writes `oi_probe_pkg-0.1-py3-none-any.whl` (package
/// `oi_probe_pkg`, `ANSWER = 42`) into the current folder and prints
/// `wheel made`.
pub const MAKE_PROBE_WHEEL: &str = r#"
import zipfile, base64, hashlib
files = {
    "oi_probe_pkg/__init__.py": "ANSWER = 42\n",
    "oi_probe_pkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: oi-probe-pkg\nVersion: 0.1\n",
    "oi_probe_pkg-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(text):
    d = hashlib.sha256(text.encode()).digest()
    return "sha256=" + base64.urlsafe_b64encode(d).rstrip(b"=").decode()
record = "".join(f"{n},{digest(t)},{len(t.encode())}\n" for n, t in files.items())
record += "oi_probe_pkg-0.1.dist-info/RECORD,,\n"
with zipfile.ZipFile("oi_probe_pkg-0.1-py3-none-any.whl", "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
    z.writestr("oi_probe_pkg-0.1.dist-info/RECORD", record)
print("wheel made")
"#;

/// Python code that installs that wheel with the running Python's pip (no
/// index, no dependencies) and prints pip's exit code, then its output.
pub const INSTALL_PROBE_WHEEL: &str = "import subprocess, sys\nr = subprocess.run([sys.executable, '-m', 'pip', 'install', '--no-index', '--no-deps', '--disable-pip-version-check', './oi_probe_pkg-0.1-py3-none-any.whl'], capture_output=True, text=True)\nprint(r.returncode, r.stdout, r.stderr)";
