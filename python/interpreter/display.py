"""Rendering LMC chunks in the terminal, as `interpreter` shows a session."""

import os
import sys


# The width of the rules around code, as the `interpreter` command draws them.
RULE = 40


def _styles(stream):
    plain = not stream.isatty() or os.environ.get("NO_COLOR")
    if plain:
        return {"code": "", "output": "", "dim": "", "warn": "", "reset": ""}
    return {
        "code": "\033[36m",
        "output": "\033[2m",
        "dim": "\033[2m",
        "warn": "\033[33m",
        "reset": "\033[0m",
    }


class Display:
    """Writes chunks as they come, as the `interpreter` command's plain
    session shows them: the reply's text, code between rules headed by its
    language, output dimmed, images named."""

    def __init__(self, stream=None):
        self.out = stream or sys.stdout
        self.style = _styles(self.out)
        self.at_line_start = True

    def write(self, text, style=""):
        if not text:
            return
        s = self.style
        self.out.write(f"{s[style]}{text}{s['reset']}" if style else text)
        self.out.flush()
        self.at_line_start = text.endswith("\n")

    def newline(self):
        if not self.at_line_start:
            self.write("\n")

    def chunk(self, chunk):
        role, kind = chunk.get("role"), chunk.get("type")
        content = chunk.get("content")
        if role == "server":
            if kind in ("warning", "notice"):
                self.newline()
                self.write(f"note: {content}\n", "warn")
            elif kind == "error":
                self.newline()
                hint = chunk.get("hint")
                self.write(f"error: {content}\n" + (f"hint: {hint}\n" if hint else ""), "warn")
            return
        if kind == "code":
            if chunk.get("start"):
                self.newline()
                header = f"── {chunk.get('format', '')} "
                self.write(header + "─" * max(4, RULE - len(header)) + "\n", "dim")
            elif chunk.get("end"):
                self.newline()
                self.write("─" * RULE + "\n", "dim")
            else:
                self.write(content or "", "code")
        elif kind == "console":
            if chunk.get("start"):
                self.newline()
            elif chunk.get("format") == "output":
                self.write(content or "", "output")
        elif kind == "message":
            if chunk.get("start"):
                self.newline()
            elif chunk.get("end"):
                self.newline()
            else:
                self.write(content or "")
        elif kind == "image" and not chunk.get("start") and not chunk.get("end"):
            self.newline()
            self.write(f"[image: {chunk.get('format', '')}, {len(content or '') * 3 // 4} bytes]\n", "dim")

    def ask(self, chunk):
        """Asks whether to run the code of a confirmation chunk; returns
        `approve`, `approve_for_session` or `decline`."""
        self.newline()
        risks = chunk.get("risks")
        if risks:
            self.write("Risky: " + "; ".join(risks) + "\n", "warn")
        try:
            language = chunk.get("content", {}).get("format", "")
            answer = input(
                f"Run this {language} code? [y]es, [n]o, [a]lways (this session): "
            ).strip().lower()
        except (EOFError, OSError):
            # No one can answer (stdin closed or captured).
            return "decline"
        if answer in ("y", "yes"):
            return "approve"
        if answer in ("a", "always"):
            return "approve_for_session"
        return "decline"
