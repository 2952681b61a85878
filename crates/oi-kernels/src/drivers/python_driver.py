# oi's Python kernel driver: runs cells in one persistent namespace.
#
# Protocol (see oi-kernels/src/kernel.rs): requests arrive as JSON lines on
# fd 3, replies leave as JSON lines on fd 4. User output goes to the real
# stdout/stderr; after each cell a marker carrying a per-kernel token is
# written to both, so the parent knows where the cell's output ends.
import ast
import builtins
import json
import linecache
import os
import signal
import site
import sys
import traceback
import types
import weakref

_TOKEN = os.environ.pop("OI_KERNEL_TOKEN", "")
_IMAGE_DIR = os.environ.pop("OI_IMAGE_DIR", "")
_CTRL_IN = 3
_CTRL_OUT = 4
_DRIVER_FILE = sys._getframe().f_code.co_filename
_running = False
# The request channel and the running cell (the `computer` module asks the
# parent on it in the middle of a cell).
_requests = None
_cell = None
# An interrupt that arrived between `started` and the start of the code.
_pending_interrupt = False
_loop = None


def _send(message):
    data = (json.dumps(message) + "\n").encode("utf-8")
    while data:
        written = os.write(_CTRL_OUT, data)
        data = data[written:]


def _flush_output():
    # Output written so far goes out before a control message that follows it.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _write_all(fd, data):
    while data:
        try:
            written = os.write(fd, data)
        except OSError:
            return
        data = data[written:]


def _on_sigint(signum, frame):
    # Only user code is interruptible; the driver's own bookkeeping is not.
    # The parent signals only after `started`; one that lands just before the
    # code starts is kept and stops the code as soon as it starts. A late
    # one for an earlier run is dropped when the next request is read.
    global _pending_interrupt
    if _running:
        raise KeyboardInterrupt
    _pending_interrupt = True


def _user_traceback(tb):
    # Drop the driver's own frames from the top of the traceback.
    while tb is not None and tb.tb_frame.f_code.co_filename == _DRIVER_FILE:
        tb = tb.tb_next
    return tb


def _report(exc):
    sys.last_type, sys.last_value = type(exc), exc
    if isinstance(exc, SyntaxError):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        tb = _user_traceback(exc.__traceback__)
        sys.last_traceback = tb
        report = traceback.TracebackException(type(exc), exc, tb)
        # An interrupt is raised in the driver's signal handler: not the
        # user's code either.
        while report.stack and report.stack[-1].filename == _DRIVER_FILE:
            report.stack.pop()
        lines = list(report.format())
    try:
        sys.stderr.write("".join(lines))
        sys.stderr.flush()
    except Exception:
        _write_all(2, "".join(lines).encode("utf-8", "replace"))
    name = type(exc).__name__
    text = str(exc)
    return f"{name}: {text}" if text else name


def _evaluate(code_obj, namespace):
    global _loop
    import inspect

    if code_obj.co_flags & inspect.CO_COROUTINE:
        import asyncio

        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
        return _loop.run_until_complete(eval(code_obj, namespace))
    return eval(code_obj, namespace)


def _rewrite_shell_lines(code):
    """IPython-style lines that models often write in Python code: `!cmd`
    runs a shell command, `%pip …` installs into this interpreter, `%cd dir`
    changes directory, and display magics such as `%matplotlib inline` are
    dropped. Returns None when there is nothing to rewrite."""
    import re
    import shlex

    changed = False
    lines = []
    for line in code.split("\n"):
        match = re.match(r"^(\s*)(!|%{1,2})(.*)$", line)
        if not match:
            lines.append(line)
            continue
        indent, sigil, rest = match.groups()
        words = rest.split(None, 1)
        magic = words[0] if words else ""
        argument = words[1] if len(words) > 1 else ""
        if sigil == "!":
            command = rest
        elif magic == "pip":
            command = f"{shlex.quote(sys.executable)} -m pip {argument}"
        elif magic == "cd":
            lines.append(f"{indent}__import__('os').chdir(__import__('os').path.expanduser({argument.strip()!r}))")
            changed = True
            continue
        elif magic in ("matplotlib", "load_ext", "config", "autoreload"):
            lines.append(f"{indent}pass")
            changed = True
            continue
        else:
            return None
        lines.append(f"{indent}if __import__('os').system({command!r}): pass")
        changed = True
    return "\n".join(lines) if changed else None


def _parse(code, filename):
    try:
        return ast.parse(code, filename, "exec")
    except SyntaxError as exc:
        rewritten = _rewrite_shell_lines(code)
        if rewritten is None:
            raise
        try:
            return ast.parse(rewritten, filename, "exec")
        except SyntaxError:
            raise exc from None


def _run_cell(code, cell_id, namespace):
    global _running, _cell
    _cell = cell_id
    filename = f"<cell-{cell_id}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    try:
        tree = _parse(code, filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
        tail = None
        if last is not None:
            tail = compile(last, filename, "eval", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError) as exc:
        return {"status": "error", "error": _report(exc)}
    _send({"type": "started", "id": cell_id})
    try:
        _running = True
        if _pending_interrupt:
            raise KeyboardInterrupt
        _evaluate(body, namespace)
        if tail is not None:
            value = _evaluate(tail, namespace)
            _running = False
            if value is not None:
                sys.displayhook(value)
        return {"status": "ok"}
    except KeyboardInterrupt as exc:
        _running = False
        _report(exc)
        return {"status": "interrupted"}
    except SystemExit as exc:
        _running = False
        if exc.code is None or exc.code == 0:
            return {"status": "ok"}
        return {"status": "error", "error": _report(exc)}
    except BaseException as exc:
        _running = False
        return {"status": "error", "error": _report(exc)}
    finally:
        _running = False


# ── Files left open ────────────────────────────────────────────────────
# A file a cell opened for writing and never closed (`w =
# csv.writer(open("out.csv", "w"))`) holds what was written in its buffer:
# on disk the file stays empty until the session ends. At the end of each
# cell such files are flushed, so what a run wrote is on disk when it ends,
# as it would be when a script exits. The files stay open.
_written = weakref.WeakSet()
_builtin_open = builtins.open


def _open(file, mode="r", *args, **kwargs):
    handle = _builtin_open(file, mode, *args, **kwargs)
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        try:
            _written.add(handle)
        except TypeError:
            pass
    return handle


_open.__doc__ = _builtin_open.__doc__
_open.__name__ = "open"


def _flush_written():
    for handle in list(_written):
        try:
            if not handle.closed:
                handle.flush()
        except Exception:
            pass


# ── Images ─────────────────────────────────────────────────────────────
# Plots become PNG files in the session's image folder, announced on the
# control channel: figures shown with `plt.show()`, figures still open at the
# end of a cell, and images passed to `display()`.
_images = {"count": 0}


def _image_path():
    directory = _IMAGE_DIR or os.path.join(os.getcwd(), ".oi-images")
    os.makedirs(directory, exist_ok=True)
    _images["count"] += 1
    return os.path.join(directory, "image-%d-%d.png" % (os.getpid(), _images["count"]))


def _announce(path):
    # Output written so far comes first, as it did in the program.
    _flush_output()
    _send({"type": "image", "path": path, "media_type": "image/png"})


def _save_open_figures():
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in list(pyplot.get_fignums()):
        figure = pyplot.figure(number)
        path = _image_path()
        try:
            figure.savefig(path, format="png", bbox_inches="tight")
        except Exception as exc:
            sys.stderr.write("could not save figure %d: %s\n" % (number, exc))
            continue
        finally:
            pyplot.close(figure)
        _announce(path)


_BACKEND_SOURCE = """
from matplotlib.backends.backend_agg import FigureCanvasAgg as FigureCanvas
from matplotlib.backend_bases import FigureManagerBase as FigureManager


def show(*args, **kwargs):
    _oi_save()
"""


class _BackendFinder:
    """Provides `oi_matplotlib`, the matplotlib backend the kernel uses
    (`MPLBACKEND=module://oi_matplotlib`): it draws with Agg, and `show()`
    saves the open figures instead of opening windows."""

    def find_spec(self, name, path=None, target=None):
        if name != "oi_matplotlib":
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module._oi_save = _save_open_figures
        exec(_BACKEND_SOURCE, module.__dict__)


def display(*objects, **kwargs):
    """Shows objects as a notebook would: images are saved and announced,
    anything else is printed."""
    for obj in objects:
        png = None
        if hasattr(obj, "savefig") and hasattr(obj, "get_axes"):
            path = _image_path()
            obj.savefig(path, format="png", bbox_inches="tight")
            _announce(path)
            continue
        repr_png = getattr(obj, "_repr_png_", None)
        if callable(repr_png):
            try:
                png = repr_png()
            except Exception:
                png = None
        if isinstance(png, (bytes, bytearray)):
            path = _image_path()
            with open(path, "wb") as f:
                f.write(png)
            _announce(path)
        else:
            print(obj)


_IPYTHON_STANDIN = """
import os as _os

version_info = (8, 24, 0, "oi")
__version__ = "8.24.0"


def get_ipython():
    return None
"""

_IPYTHON_DISPLAY_STANDIN = """
import os as _os


class Image:
    def __init__(self, data=None, url=None, filename=None, **kwargs):
        if filename is None and isinstance(data, str) and _os.path.exists(data):
            filename, data = data, None
        if filename is not None:
            with open(filename, "rb") as f:
                data = f.read()
        self.data = data

    def _repr_png_(self):
        return self.data


class _Text:
    def __init__(self, data=None, **kwargs):
        self.data = data

    def __repr__(self):
        return str(self.data)


HTML = Markdown = Pretty = _Text


def clear_output(*args, **kwargs):
    return None
"""


class _IPythonStandIn:
    """Stands in for `IPython` and `IPython.display` when IPython is not
    installed, so notebook-style code (`from IPython.display import display,
    Image`) runs. It sits at the end of `sys.meta_path`: a real IPython is
    always found first, and nothing is imported until the code asks."""

    def find_spec(self, name, path=None, target=None):
        if name not in ("IPython", "IPython.display"):
            return None
        import importlib.util

        return importlib.util.spec_from_loader(
            name, self, is_package=(name == "IPython")
        )

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == "IPython":
            exec(_IPYTHON_STANDIN, module.__dict__)
        else:
            exec(_IPYTHON_DISPLAY_STANDIN, module.__dict__)
            module.display = display


# ── The screen (OS mode) ───────────────────────────────────────────────
# `computer.click(x, y)` and friends are answered by the parent (oi's own
# X11 backend) over the control channel; coordinates are real screen pixels.


def _host_request(kind, request):
    _flush_output()
    _send({"type": kind, "id": _cell, "request": request})
    while True:
        line = _requests.readline()
        if not line:
            raise SystemExit("oi went away")
        message = json.loads(line)
        if message.get("type") == kind + "_result":
            return message.get("reply") or {}


def _computer_request(request):
    return _host_request("computer", request)


_COMPUTER_SOURCE = r"""
import os as _os
import shutil as _shutil


class ComputerError(Exception):
    "An action on the screen failed (or OS mode is off)."


def _call(action, **arguments):
    request = {"action": action}
    request.update({k: v for k, v in arguments.items() if v is not None})
    reply = _request(request)
    if not reply.get("ok"):
        raise ComputerError(reply.get("error") or "the action failed")
    return reply


def _at(x, y):
    if x is None and y is None:
        return None
    if x is None or y is None:
        raise ValueError("give both x and y, or neither")
    return [int(round(x)), int(round(y))]


def _where(reply):
    return (reply.get("x"), reply.get("y"))


def size():
    "The screen's (width, height) in pixels."
    reply = _call("size")
    return (reply["width"], reply["height"])


def screenshot(path=None):
    "Saves a PNG of the whole screen (to `path` if given); returns its path."
    reply = _call("screenshot")
    saved = reply["path"]
    if path is not None:
        path = _os.path.abspath(_os.path.expanduser(str(path)))
        _shutil.copyfile(saved, path)
        saved = path
    _announce(saved)
    return saved


def click(x=None, y=None, button="left", clicks=1):
    "Clicks at (x, y), or where the pointer is."
    names = {1: button + "_click", 2: "double_click", 3: "triple_click"}
    if button not in ("left", "right", "middle") or clicks not in names:
        raise ValueError("button is left, right or middle; clicks is 1, 2 or 3")
    if clicks > 1 and button != "left":
        raise ValueError("double and triple clicks are left clicks")
    return _where(_call(names[clicks], coordinate=_at(x, y)))


def double_click(x=None, y=None):
    return click(x, y, clicks=2)


def right_click(x=None, y=None):
    return click(x, y, button="right")


def move(x, y):
    "Moves the pointer to (x, y)."
    return _where(_call("mouse_move", coordinate=_at(x, y)))


def drag(x1, y1, x2, y2):
    "Drags with the left button from (x1, y1) to (x2, y2)."
    return _where(_call("left_click_drag", start_coordinate=_at(x1, y1), coordinate=_at(x2, y2)))


def scroll(direction="down", amount=3, x=None, y=None):
    "Turns the wheel `amount` clicks up, down, left or right (at (x, y))."
    return _where(_call("scroll", scroll_direction=direction, scroll_amount=amount, coordinate=_at(x, y)))


def type(text):
    "Types `text` on the keyboard."
    _call("type", text=str(text))


def key(keys):
    "Presses a key or combination: 'Return', 'ctrl+s', 'alt+Tab'."
    _call("key", text=str(keys))


def cursor_position():
    "Where the pointer is: (x, y)."
    return _where(_call("cursor_position"))


write = type
press = key
hotkey = key
"""


def _install_computer():
    module = types.ModuleType("computer")
    module.__doc__ = "The screen, mouse and keyboard (oi's OS mode)."
    module._request = _computer_request
    module._announce = _announce
    exec(_COMPUTER_SOURCE, module.__dict__)
    sys.modules["computer"] = module
    return module


# ── MCP tools ──────────────────────────────────────────────────────────
# `mcp_tools.SERVER.TOOL(**arguments)` calls a tool of an MCP server that oi
# is connected to; oi makes the call (and applies its approval rules).

_MCP_TOOLS_SOURCE = r"""
class McpToolError(Exception):
    "The tool reported an error, or could not be called."


def call(server, tool, arguments=None, **keywords):
    "Calls `tool` of MCP server `server`; returns its result (text, or data when the tool gives structured data)."
    args = dict(arguments or {})
    args.update(keywords)
    reply = _request("tool", {"server": str(server), "tool": str(tool), "arguments": args})
    if not reply.get("ok"):
        raise McpToolError(reply.get("error") or "the tool call failed")
    if reply.get("structured") is not None:
        return reply["structured"]
    return reply.get("text", "")


def tools():
    "The tools oi offers: a list of (server, tool, description)."
    reply = _request("tool", {"list": True})
    if not reply.get("ok"):
        raise McpToolError(reply.get("error") or "the tools could not be listed")
    return [tuple(t) for t in reply.get("tools", [])]


class _Server:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, tool):
        if tool.startswith("__"):
            raise AttributeError(tool)

        def _tool(arguments=None, **keywords):
            return call(self._name, tool, arguments, **keywords)

        _tool.__name__ = tool
        return _tool

    def __repr__(self):
        return "<MCP server " + repr(self._name) + ">"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Server(name)
"""


def _install_mcp_tools():
    module = types.ModuleType("mcp_tools")
    module.__doc__ = "Tools of the MCP servers oi is connected to: mcp_tools.SERVER.TOOL(**arguments)."
    module._request = _host_request
    exec(_MCP_TOOLS_SOURCE, module.__dict__)
    sys.modules["mcp_tools"] = module
    return module


def _install_display():
    builtins.display = display
    sys.meta_path.append(_IPythonStandIn())


def _use_oi_user_site():
    """Under oi's sandbox, `PYTHONUSERBASE` is a folder of oi's that code may
    write, so that `pip install` works. Python puts its site folder on
    `sys.path` only if it existed at start: make it, so what pip installs
    there imports at once. A `.pth` file in it keeps the user's own user
    packages (~/.local) in reach, here and in every Python of this version
    that code starts."""
    if not os.environ.get("OI_PYTHON_USER_BASE") or not site.ENABLE_USER_SITE:
        return
    base = os.environ.pop("PYTHONUSERBASE", None)
    try:
        home_site = site._get_path(site._getuserbase())
    except Exception:
        home_site = None
    finally:
        if base is not None:
            os.environ["PYTHONUSERBASE"] = base
    try:
        user_site = site.getusersitepackages()
        os.makedirs(user_site, exist_ok=True)
        if home_site and home_site != user_site:
            pth = os.path.join(user_site, "oi-home-user-site.pth")
            wanted = home_site + "\n"
            try:
                with open(pth, encoding="utf-8") as f:
                    current = f.read()
            except OSError:
                current = None
            if current != wanted:
                with open(pth, "w", encoding="utf-8") as f:
                    f.write(wanted)
        if user_site not in sys.path:
            site.addsitedir(user_site)
    except OSError:
        pass


def _main():
    global _pending_interrupt, _requests
    os.set_inheritable(_CTRL_IN, False)
    os.set_inheritable(_CTRL_OUT, False)
    # Markers go to duplicates of the original stdout/stderr, so a cell that
    # redirects or closes fd 1/2 cannot hide the end of its output.
    out_fd = os.dup(1)
    err_fd = os.dup(2)
    requests = os.fdopen(_CTRL_IN, "rb")
    _requests = requests
    signal.signal(signal.SIGINT, _on_sigint)

    sys.meta_path.insert(0, _BackendFinder())
    os.environ["MPLBACKEND"] = "module://oi_matplotlib"
    _use_oi_user_site()
    _install_display()
    builtins.open = _open

    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    main.__dict__["computer"] = _install_computer()
    main.__dict__["mcp_tools"] = _install_mcp_tools()
    sys.modules["__main__"] = main
    sys.argv = [""]
    if "" not in sys.path:
        sys.path.insert(0, "")

    _send({"type": "ready", "pid": os.getpid()})
    while True:
        try:
            line = requests.readline()
        except KeyboardInterrupt:
            continue
        if not line:
            break
        _pending_interrupt = False
        request = json.loads(line)
        if request.get("type") in ("computer_result", "tool_result"):
            # The answer to a request of a cell that was interrupted.
            continue
        if request.get("type") != "run":
            break
        cell_id = request["id"]
        reply = _run_cell(request["code"], cell_id, main.__dict__)
        _flush_written()
        try:
            _save_open_figures()
        except Exception as exc:
            sys.stderr.write("could not save the figures: %s\n" % exc)
        _flush_output()
        marker = f"\x1b]oi;{_TOKEN};{cell_id}\x07".encode()
        _write_all(out_fd, marker)
        _write_all(err_fd, marker)
        reply.update({"type": "done", "id": cell_id})
        _send(reply)


_main()
