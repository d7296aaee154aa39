"""A small TOML writer for the documents resolver-hook generates (manifests, reports).

The standard library reads TOML (``tomllib``) but does not write it. This module writes
the subset we need: tables of strings, integers, booleans, arrays of those, nested
tables and arrays of tables. ``tomllib.loads(dumps(doc)) == doc`` holds for every
document it accepts (property-tested); anything else raises :class:`TypeError` or
:class:`ValueError` rather than writing something that reads back differently.

Spec: TOML 1.0.0, https://toml.io/en/v1.0.0 (basic strings, keys, tables, arrays of tables).
Key order is kept as given, except that a table's plain values come before its sub-tables,
as TOML requires.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from resolver_hook.errors import OperationalError

__all__ = ["dumps", "quote_key", "quote_string", "write_atomic"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def quote_string(text: str) -> str:
    """``text`` as a TOML basic string (control characters escaped)."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04X}")
        elif "\ud800" <= ch <= "\udfff":
            raise ValueError(f"lone surrogate {ch!r} cannot be written as TOML (UTF-8)")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def quote_key(key: str) -> str:
    """``key`` bare when TOML allows it, quoted otherwise."""
    if not isinstance(key, str):
        raise TypeError(f"TOML keys are strings, not {type(key).__name__}")
    return key if _BARE_KEY.fullmatch(key) else quote_string(key)


def _is_table_array(value: object) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(item, Mapping) for item in value)
    )


def _inline(value: object, path: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise ValueError(f"{path}: integer {value} does not fit TOML's 64 bits")
        return str(value)
    if isinstance(value, str):
        return quote_string(value)
    if isinstance(value, (list, tuple)):
        if any(isinstance(item, Mapping) for item in value):
            raise TypeError(f"{path}: an array mixes tables and other values")
        return "[" + ", ".join(_inline(item, f"{path}[]") for item in value) + "]"
    raise TypeError(f"{path}: cannot write {type(value).__name__} as TOML")


def _table(doc: Mapping[str, object], prefix: tuple[str, ...], lines: list[str]) -> None:
    subtables: list[tuple[str, object]] = []
    for key, value in doc.items():
        if isinstance(value, Mapping) or _is_table_array(value):
            subtables.append((key, value))
        else:
            lines.append(f"{quote_key(key)} = {_inline(value, '.'.join((*prefix, key)))}")
    for key, value in subtables:
        path = (*prefix, key)
        header = ".".join(quote_key(part) for part in path)
        if isinstance(value, Mapping):
            if lines:
                lines.append("")
            lines.append(f"[{header}]")
            _table(value, path, lines)
        else:
            assert isinstance(value, Sequence)
            for item in value:
                if lines:
                    lines.append("")
                lines.append(f"[[{header}]]")
                _table(item, path, lines)


def dumps(doc: Mapping[str, object]) -> str:
    """Serialise ``doc`` as a TOML document (ends with a newline)."""
    if not isinstance(doc, Mapping):
        raise TypeError(f"a TOML document is a mapping, not {type(doc).__name__}")
    lines: list[str] = []
    _table(doc, (), lines)
    return "\n".join(lines) + "\n" if lines else ""


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` so readers see the old file or the new, never half.

    The temporary file is made in the target's directory so ``os.replace`` is a rename
    on one file system; it is removed if anything fails. A file system error (no such
    folder, no permission, the target is a folder) is an :class:`OperationalError`
    naming ``path``.
    """
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise _cannot_write(target, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            # mkstemp makes the file 0600; keep the old file's mode, else the usual 0644.
            try:
                mode = target.stat().st_mode & 0o7777
            except FileNotFoundError:
                mode = 0o644
            os.chmod(tmp, mode)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _cannot_write(target, exc) from None
        raise


def _cannot_write(target: Path, exc: OSError) -> OperationalError:
    return OperationalError(f"{target}: cannot write: {exc.strerror or exc}")
