"""The exceptions of resolver-hook.

Every expected failure is a :class:`ResolverHookError`. The command line maps the
two kinds to exit codes: :class:`UsageError` (bad input, exit 2) and
:class:`OperationalError` (nothing fits, an installer failed: exit 1).
"""

from __future__ import annotations

__all__ = ["OperationalError", "ResolverHookError", "UsageError"]


class ResolverHookError(Exception):
    """Root of every error resolver-hook raises on purpose.

    ``hint`` is an optional next step for a person, shown as ``hint: ...``.
    """

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(ResolverHookError, ValueError):
    """Bad input: a malformed file, flag, spec or environment variable (exit 2)."""

    exit_code = 2


class OperationalError(ResolverHookError):
    """The input was fine but the job could not be done (exit 1)."""

    exit_code = 1
