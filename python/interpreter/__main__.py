"""`python -m interpreter`: the `interpreter` command."""

import os
import sys

from ._backend import find_binary


def main() -> None:
    binary = find_binary()
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
