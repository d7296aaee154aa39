"""The one TOML reader: ``tomllib`` (``tomli`` on Python 3.10), failures as one error type."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["TomlError", "loads"]


class TomlError(ValueError):
    """The text is not TOML, or nests deeper than the parser can follow."""


def loads(text: str) -> dict[str, Any]:
    """Parse TOML text into a mapping; every failure is a :class:`TomlError`. The parser
    is imported on first use: a plan whose built-in files are read from the cache
    (:mod:`resolver_hook.manifest.document`) parses no TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(str(exc)) from None
    except RecursionError:  # ``x = [[[[...]]]]``: the parser recurses once per level
        raise TomlError("nested too deeply") from None
    except ValueError as exc:  # the one other the parser lets through: int()'s bound on digits
        if type(exc) is not ValueError:
            raise
        raise TomlError(f"a number of more than {sys.get_int_max_str_digits()} digits") from None
    return data
