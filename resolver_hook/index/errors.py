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
    """A page that could not be fetched, was cut short, too large, or not an index page."""


class TooLarge(PageError):
    """A body larger than the bound it was read under (``limit`` bytes)."""

    def __init__(self, shown: str, limit: int) -> None:
        super().__init__(f"{shown}: larger than {limit} bytes")
        self.limit = limit
