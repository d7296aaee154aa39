"""Core metadata files (PEP 658/714): ``<file-url>.metadata``, hash-checked, parsed.

A page that offers the file (``Link.core_metadata`` is not None) lets a planner read a
wheel's ``Requires-Dist`` and ``Requires-Python`` without downloading the wheel. The
file is the wheel's ``METADATA`` (the core metadata format: RFC 822 style headers),
read with :mod:`email.parser` as the packaging specification describes. The hash the
page gives is checked before a byte of it is used; a mismatch is a PageError.
:mod:`email.parser` is imported when a file is parsed: the planner imports this module
on every plan, and most plans read no metadata file.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping

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
    for name, want in sorted(hashes.items()):
        got = hashlib.new(name, data).hexdigest()
        if got != want:
            raise HashMismatch(
                f"{shown}: its {name} is {got}, not the {want} the page gives",
                data=data,
                hint="the mirror or the index is serving another file; nothing was used",
            )


# Threads read metadata files at once (inventory.expand.prefetch): one of them could see
# the email package before another had set its parser submodule on it ("module 'email'
# has no attribute 'parser'", seen on a loaded machine), so the first import is held.
_IMPORT = threading.Lock()


def parse_metadata(data: bytes, url: str) -> Metadata:
    """The fields of a METADATA file; PageError when it has no Name or Version."""
    with _IMPORT:
        import email.parser  # only here (see above)

    # The parser's default policy is compat32, the one the core metadata format is
    # read with (email.policy, which the others need, is not imported for it).
    message = email.parser.BytesParser().parsebytes(data, headersonly=True)
    name, version = message.get("Name"), message.get("Version")
    if not isinstance(name, str) or not isinstance(version, str) or not name or not version:
        raise PageError(f"{url}: not a core metadata file (no Name or Version)")
    requires_python = message.get("Requires-Python")
    return Metadata(
        url=url,
        name=name.strip(),
        version=version.strip(),
        requires_dist=tuple(str(v).strip() for v in message.get_all("Requires-Dist") or ()),
        requires_python=str(requires_python).strip() if requires_python else None,
    )
