"""The ``resolver-hook`` program: a warm ``detect --json`` at once, else the command line.

Kept apart from :mod:`resolver_hook.cli` so that the warm path
(:func:`resolver_hook._hostkey.cached_detect_json`) runs before ``argparse`` and the
command modules are imported.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def main() -> int:
    from resolver_hook._hostkey import cached_detect_json

    text = cached_detect_json(sys.argv[1:], os.environ)
    if text is None:
        from resolver_hook.cli import main as cli_main

        return cli_main()
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `detect --json | head -1`: the rest is dropped, as on the full path
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0
