"""The ``resolver-hook`` program: ``detect --json`` at once, else the command line.

Kept apart from :mod:`resolver_hook.cli` so that the plain ``detect --json`` runs before
``argparse`` and the command modules are imported: warm, from the cache
(:func:`resolver_hook._hostkey.cached_detect_json`); cold (a miss, ``--no-cache``),
detection itself, printed as the command line prints it.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def main() -> int:
    from resolver_hook._hostkey import cached_detect_json, plain_detect

    argv = sys.argv[1:]
    text = cached_detect_json(argv, os.environ)
    if text is None:
        use_cache = plain_detect(argv, os.environ)
        if use_cache is None:
            from resolver_hook.cli import main as cli_main

            return cli_main()
        try:
            text = _detect_json(use_cache=use_cache)
        except KeyboardInterrupt:  # as the command line says it
            sys.stderr.write("error: interrupted\n")
            return 130
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `detect --json | head -1`: the rest is dropped, as on the full path
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0


def _detect_json(*, use_cache: bool) -> str:
    """``detect --json [--no-cache]`` on a cache miss: detection (which writes the
    cache), printed as ``resolver_hook/cli/detect.py`` prints it, without ``argparse``
    and the command modules. No override variable is set (:func:`plain_detect`), so
    detection cannot fail."""
    from resolver_hook._hostkey import profile_json
    from resolver_hook.host.detect import detect

    return profile_json(detect(use_cache=use_cache).to_dict())
