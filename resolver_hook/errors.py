"""The exceptions of resolver-hook.

Every expected failure is a :class:`ResolverHookError`. The command line maps the
two kinds to exit codes: :class:`UsageError` (bad input, exit 2) and
:class:`OperationalError` (nothing fits, an installer failed: exit 1).
"""

from __future__ import annotations

# typing is not imported at run time: a replay's start-up imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ManifestError", "OperationalError", "ResolverHookError", "UsageError"]


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


class ManifestError(UsageError):
    """A manifest is malformed. ``problems`` lists each one as ``source: key.path: what``;
    ``where`` names what holds them all (an app-env declaration's table, say). Raised by
    :mod:`resolver_hook.manifest.tables`' readers, and kept here so that a plan over the
    built-in manifests, which reads no table, catches it without importing them."""

    def __init__(
        self, problems: Sequence[str], *, hint: str | None = None, where: str = "manifests"
    ) -> None:
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = f"{len(self.problems)} problems in {where}:\n" + "\n".join(
                f"  {p}" for p in self.problems
            )
        super().__init__(message, hint=hint)
