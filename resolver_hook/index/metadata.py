"""Core metadata files (PEP 658/714): ``<file-url>.metadata``, hash-checked, parsed.

A page that offers the file (``Link.core_metadata`` is not None) lets a planner read a
wheel's ``Requires-Dist`` and ``Requires-Python`` without downloading the wheel. The
file is the wheel's ``METADATA`` (the core metadata format: RFC 822 style headers),
read as :mod:`email.parser` reads it (policy compat32), as the packaging specification
describes. The hash the page gives is checked before a byte of it is used; a mismatch
is a PageError.

Importing :mod:`email.parser` costs ~12 ms (``-X importtime``, cumulative: the
feedparser, email.utils, socket, email.header, email.message...), ~3% of a plan of five
packages that reads the shipped snapshot's metadata. So a header block made only of
``Name: value`` lines and their continuation lines is read here, each field exactly as
the feedparser and compat32 read it (tests/test_index_metadata.py holds the two
together); any other file, or a field read here that holds non-ASCII bytes, goes to
:mod:`email.parser`, imported then.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from resolver_hook.ground.valueclass import valueclass
from resolver_hook.index.errors import PageError

__all__ = ["HashMismatch", "Metadata", "check_hashes", "parse_metadata"]


class HashMismatch(PageError):
    """A file whose hash is not the one its page gives; ``data`` is what was served."""

    def __init__(self, message: str, *, data: bytes, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.data = data


@valueclass
class Metadata:
    """What a planner needs of one wheel's core metadata."""

    url: str  # the .metadata file's URL
    name: str
    version: str
    requires_dist: tuple[str, ...] = ()
    requires_python: str | None = None


def check_hashes(data: bytes, hashes: Mapping[str, str], shown: str) -> None:
    """PageError unless ``data`` matches every hash given (names hashlib knows)."""
    import hashlib  # any name a page gives, so OpenSSL's: loaded when a file is checked

    for name, want in sorted(hashes.items()):
        got = hashlib.new(name, data).hexdigest()
        if got != want:
            raise HashMismatch(
                f"{shown}: its {name} is {got}, not the {want} the page gives",
                data=data,
                hint="the mirror or the index is serving another file; nothing was used",
            )


# The fields a planner reads, by lower-case name.
_READ = ("name", "version", "requires-dist", "requires-python")
# Where str.splitlines ends a line and the feedparser does not (\r\n, \r and \n end one
# for both; the non-ASCII ends cannot occur: a non-ASCII byte is decoded to a surrogate).
_NOT_LINE_ENDS = "\x0b\x0c\x1c\x1d\x1e"


def _starts_a_field(line: str) -> bool:
    """Whether ``line`` is a name of the characters the feedparser's headerRE allows in
    one (printable ASCII but space and colon; not empty here), then a colon. A "From "
    line (the feedparser's envelope header) has a space before any colon: not one."""
    name, colon, _ = line.partition(":")
    return bool(colon and name) and name.isascii() and name.isprintable() and " " not in name


def _fields(text: str) -> dict[str, list[str]] | None:
    """The header fields of ``text`` by lower-case name, each value as compat32 reads it
    (the first line's rest less leading blanks, the continuation lines as they are, less
    the last line end); None where the feedparser would do more than that (a "From "
    line, a line it reads as a defect, one that starts the body without an empty line)."""
    lines: list[list[str]] = []  # each field's lines, with their ends
    for line in text.splitlines(keepends=True):
        if line[0] in "\r\n":  # the empty line that ends the header block
            break
        if line[-1] in _NOT_LINE_ENDS:
            return None
        if line[0] in " \t" and lines:
            lines[-1].append(line)
        elif _starts_a_field(line):
            lines.append([line])
        else:
            return None
    fields: dict[str, list[str]] = {}
    for first, *rest in lines:
        name, value = first.split(":", 1)
        value = value.lstrip(" \t") + "".join(rest)
        fields.setdefault(name.lower(), []).append(value.rstrip("\r\n"))
    return fields


# Threads read metadata files at once (inventory.expand.prefetch): one of them could see
# the email package before another had set its parser submodule on it ("module 'email'
# has no attribute 'parser'", seen on a loaded machine), so the first import is held.
_IMPORT = threading.Lock()


def _email_fields(data: bytes) -> dict[str, Sequence[object]]:
    """The fields a planner reads, as :mod:`email.parser` gives them (a value with
    non-ASCII bytes is an ``email.header.Header``)."""
    with _IMPORT:
        import email.parser  # only here (see above)

    # The parser's default policy is compat32, the one the core metadata format is
    # read with (email.policy, which the others need, is not imported for it).
    message = email.parser.BytesParser().parsebytes(data, headersonly=True)
    return {name: message.get_all(name) or () for name in _READ}


def parse_metadata(data: bytes, url: str) -> Metadata:
    """The fields of a METADATA file; PageError when it has no Name or Version."""
    # Decoded as email.parser decodes it: a non-ASCII byte becomes a lone surrogate.
    fields = _fields(data.decode("ascii", "surrogateescape"))
    found: Mapping[str, Sequence[object]]
    if fields is not None and all(v.isascii() for k in _READ for v in fields.get(k, ())):
        found = fields
    else:
        found = _email_fields(data)
    name, version, requires_python = (
        next(iter(found.get(key, ())), None) for key in ("name", "version", "requires-python")
    )
    if not isinstance(name, str) or not isinstance(version, str) or not name or not version:
        raise PageError(f"{url}: not a core metadata file (no Name or Version)")
    return Metadata(
        url=url,
        name=name.strip(),
        version=version.strip(),
        requires_dist=tuple(str(v).strip() for v in found.get("requires-dist", ())),
        requires_python=str(requires_python).strip() if requires_python else None,
    )
