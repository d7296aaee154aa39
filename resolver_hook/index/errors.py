"""The index client's own error: a page (or metadata file) that could not be read.

:class:`PageError` is an :class:`~resolver_hook.errors.OperationalError` (exit 1), so a
command that lets it through prints one ``error:`` line; a caller that can do without
the page (a snapshot, another index) catches it and keeps the message as a note.
URL-policy refusals stay :class:`~resolver_hook.errors.UsageError` (exit 2): they are
the user's input, not the server's fault.
"""

from __future__ import annotations

from resolver_hook.errors import OperationalError

__all__ = ["PageError", "TooLarge"]


class PageError(OperationalError):
    """A page that could not be fetched, was cut short, too large, or not an index page.

    ``cause``: why, in a few words shared by every page that failed the same way
    (``name not resolved``, ``connection refused``, ``HTTP 404``), so that a plan can
    say it once per host; empty when the message alone says it.
    """

    def __init__(self, message: str, *, hint: str | None = None, cause: str = "") -> None:
        super().__init__(message, hint=hint)
        self.cause = cause


#: The causes that mean the host was not reached at all.
UNREACHABLE = frozenset(
    {"name not resolved", "connection refused", "connection reset", "no answer in time"}
)


class TooLarge(PageError):
    """A body larger than the bound it was read under (``limit`` bytes)."""

    def __init__(self, shown: str, limit: int) -> None:
        super().__init__(f"{shown}: larger than {limit} bytes")
        self.limit = limit
