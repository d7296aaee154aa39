"""The plan's pins as a failed install's output is read: :class:`Pinned` values, which a
stored plan carries, made from the :class:`~resolver_hook.resolve.Plan` by :func:`pinned`.

Below both the installer's run (:mod:`resolver_hook.install.launch`) and the dry run
that checks it (:mod:`resolver_hook.install.checked`), which each read them.
"""

from __future__ import annotations

# typing is not imported at run time: a replayed install reads these.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from resolver_hook.resolve import Plan

__all__ = ["Pinned", "pinned"]


class Pinned:
    """One package the plan pinned (rewritten), as a failed install's output is read."""

    __slots__ = ("find_links", "name", "reason", "url", "version", "wheel")

    def __init__(  # noqa: PLR0917 - the fields, as stored
        self,
        name: str,
        version: str,
        reason: str,
        find_links: str | None,
        url: str | None,
        wheel: bool,
    ) -> None:
        self.name = name
        self.version = version
        self.reason = reason
        self.find_links = find_links
        self.url = url
        self.wheel = wheel  # a wheel flavour: pinned to one file by URL

    def as_list(self) -> list[Any]:
        return [self.name, self.version, self.reason, self.find_links, self.url, self.wheel]

    @classmethod
    def from_list(cls, item: Sequence[Any]) -> Pinned:
        name, version, reason, find_links, url, wheel = item
        return cls(str(name), str(version), str(reason), find_links, url, bool(wheel))


def pinned(plan: Plan) -> tuple[Pinned, ...]:
    """The plan's rewritten packages with a version."""
    return tuple(
        Pinned(
            p.name,
            p.version,
            p.reason,
            p.find_links,
            p.url,
            p.flavour is not None and p.flavour.kind == "wheel",
        )
        for p in plan.packages
        if p.action == "rewrite" and p.version is not None
    )
