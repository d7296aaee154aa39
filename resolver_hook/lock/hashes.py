"""The sha256 of each flavoured line of a requirements lock, or why it is unknown.

A lock line without a hash lets an installer take whatever file the URL or page serves
on the day; ``pip install --require-hashes`` refuses such a file outright. A plan knows
the hash of a manifest wheel with ``sha256`` and of a file its page listed with
``#sha256=``; the others are read at lock time as for a pylock.toml
(:func:`~resolver_hook.lock.wheels.lock_wheels`: the page, else the file hashed). What
cannot be read (the page unreachable, ``--offline`` with a snapshot that lacks it) is an
:class:`Unhashed` line, named with the reason; ``lock`` refuses the file unless
``--allow-unhashed`` (``cli/lock.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.utils import NormalizedName

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.userinfo import redact_text
from resolver_hook.ground.valueclass import replace, valueclass
from resolver_hook.index.model import Link
from resolver_hook.lock.wheels import DEFAULT_INDEX, Fetcher, LockedWheel, lock_wheels
from resolver_hook.resolve import PackagePlan, Plan

__all__ = ["OfflineFetcher", "Unhashed", "flavoured_hashes", "is_flavoured_line", "refusal"]


@valueclass
class Unhashed:
    """A lock line whose file has no known sha256, and why."""

    name: NormalizedName
    line: str
    target: str
    why: str
    source: bool = False  # a VCS checkout or a folder: no file, so no sha256 anywhere


class OfflineFetcher:
    """A :class:`~resolver_hook.lock.wheels.Fetcher` for ``--offline``: reads nothing."""

    def prefetch(self, page_urls: Sequence[str]) -> None:
        return None

    def links(self, page_url: str) -> tuple[Link, ...]:
        raise OperationalError(
            f"--offline: known only as the page {page_url}, and the shipped snapshot "
            "lists no file of it"
        )

    def sha256(self, url: str) -> str:
        raise OperationalError(f"--offline: its manifest gives {url} no sha256")

    def check(self, url: str) -> None:
        return None

    def left_out(self, page_url: str) -> list[str]:
        return []  # no page is read


def is_flavoured_line(p: PackagePlan) -> bool:
    """Whether the package is a flavoured line the plan pins (a file or a version)."""
    if p.cause == "marker" or not (p.line or p.constraint):
        return False
    return p.action == "rewrite" or (p.action == "pass" and p.entry_version is not None)


def flavoured_hashes(
    plan: Plan, target: str, fetcher: Fetcher, *, index_url: str = DEFAULT_INDEX
) -> tuple[dict[NormalizedName, LockedWheel], list[Unhashed]]:
    """The locked wheel of each flavoured line of the plan, by package, and the lines
    whose sha256 cannot be had (each with the reason)."""
    wanted = [p for p in plan.packages if is_flavoured_line(p)]
    # Every page at once (concurrently), then each package on its own: one that fails
    # is named, the others still locked.
    fetcher.prefetch(
        [p.find_links or f"{index_url.rstrip('/')}/{p.name}/" for p in wanted if not _is_file(p)]
    )
    found: dict[NormalizedName, LockedWheel] = {}
    missing = []
    for p in wanted:
        line = p.line or p.constraint
        assert line is not None
        try:
            one = lock_wheels(replace(plan, packages=(p,)), fetcher,
                              index_url=index_url)  # fmt: skip
        except UsageError:
            raise  # a page pointing the lock at another scheme: not a missing hash
        except (OperationalError, OSError) as exc:
            missing.append(Unhashed(name=p.name, line=line, target=target, why=str(exc)))
            continue
        if not one:
            why = "resolver-hook knows no file for it"
            missing.append(Unhashed(name=p.name, line=line, target=target, why=why))
            continue
        found[p.name] = one[0]
    return found, missing


def _is_file(p: PackagePlan) -> bool:
    """A flavour that is one wheel URL: no page to read."""
    return p.action == "rewrite" and p.url is not None and p.find_links is None


def refusal(missing: Sequence[Unhashed]) -> OperationalError:
    """The error for lock lines without a sha256: each line, for which target and why."""
    # A URL requirement's line is the user's URL: shown without its credentials.
    lines = "".join(f"\n  {redact_text(u.line)} (for {u.target}): {u.why}" for u in missing)
    hint = (
        "ask for a wheel or sdist URL of it (a file, hashed), or --allow-unhashed writes "
        "it pinned to its commit"
        if all(u.source for u in missing)
        else "run lock where those pages and files are reachable (not --offline), or read "
        "them through a mirror (--mirror UPSTREAM=MIRROR); --allow-unhashed writes them "
        "without a hash"
    )
    return OperationalError(
        f"{len(missing)} lock line{'s' if len(missing) != 1 else ''} without a sha256 "
        f"(an installer would take whatever file is served):{lines}",
        hint=hint,
    )
