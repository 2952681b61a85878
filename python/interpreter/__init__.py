"""oi's Python API: Open Interpreter's, on oi's own core.

    from interpreter import interpreter
    interpreter.chat("How many lines does data.csv have?")

`interpreter` is a ready instance; `OpenInterpreter()` makes more, each
with its own session and kernels. See docs/python.md.
"""

from .core import Computer, Llm, OiError, OpenInterpreter

interpreter = OpenInterpreter()

__all__ = ["Computer", "Llm", "OiError", "OpenInterpreter", "interpreter"]
