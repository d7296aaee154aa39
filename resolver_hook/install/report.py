"""Where an install session's words go (:class:`Reporter`); the command line prints them.

Apart from the session (:mod:`resolver_hook.install.session`) so that what it calls,
the dry run (:mod:`resolver_hook.install.checked`), speaks through it without importing
the session back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from resolver_hook.resolve import Plan

__all__ = ["Reporter"]


class Reporter(Protocol):
    """Where a session's words go; the command line prints them."""

    def say(self, text: str) -> None:
        """A progress line of ours."""

    def error(self, text: str, hint: str | None = None) -> None:
        """An ``error:`` line (and ``hint:``) that does not stop the session by itself."""

    def warning(self, text: str) -> None:
        """A ``warning:`` line."""

    def output(self, text: str) -> None:
        """The installer's own stdout, passed through as it comes."""

    def installer_stderr(self, text: str) -> None:
        """The installer's own stderr, where it was read (uv's dry run), passed through."""

    def no_fit(self, plan: Plan) -> None:
        """The plan's packages that no build fits, with the reasons."""

    def refused(self, text: str) -> None:
        """Why nothing was installed: said even when progress lines are not (``-q``)."""
