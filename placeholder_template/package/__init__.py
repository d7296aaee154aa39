"""A placeholder made by resolver-hook: importing it raises, on purpose, with an explanation.

The real project is published elsewhere; ``_placeholder_data.json`` says where, and
``_placeholder.py`` explains which of its builds would fit this machine. Every import
of this package, or of any module below it (``import NAME.sub``, ``python -m
NAME.sub``), runs this file first and stops here with PlaceholderError, an
ImportError that is never ModuleNotFoundError.
"""

import sys

from ._placeholder import PlaceholderError, message


def __getattr__(name: str) -> object:
    # Attribute access (``NAME.__version__``) on a module object obtained some other
    # way explains itself too.
    raise PlaceholderError(message())


def _show_cleanly(exc_type, exc, tb):  # type: ignore[no-untyped-def]
    if isinstance(exc, PlaceholderError):
        sys.stderr.write(str(exc) + "\n")
    else:
        _previous_hook(exc_type, exc, tb)


# While ``python -m MODULE`` locates MODULE, sys.argv[0] is "-m" (Python docs, sys.argv).
# runpy then re-raises our error with a traceback of its own internals; show just the
# message instead. Only an uncaught PlaceholderError is affected.
if sys.argv and sys.argv[0] == "-m":
    _previous_hook = sys.excepthook
    sys.excepthook = _show_cleanly

raise PlaceholderError(message())
