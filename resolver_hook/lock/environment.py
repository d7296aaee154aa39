"""A requirements lock of one target's whole environment, every line with its sha256.

The flavoured packages keep the plan's lines (their exact files: a URL with
``#sha256=``, or ``name==version --hash=...`` on a flavour's find-links page:
:mod:`resolver_hook.lock.hashes`); every other package of the environment, the
flavoured packages' own dependencies included, is resolved by uv for the target
(:func:`~resolver_hook.lock.resolved.resolve_environment`) and pinned as
``name==version`` with the hash of each file uv lists for that version, as
``pip-compile --generate-hashes`` and ``uv pip compile --generate-hashes`` write them;
a requirement given as a URL stays that URL (``name @ URL --hash=...``), a VCS one pinned
to its commit (it cannot be hashed: an :class:`~resolver_hook.lock.hashes.Unhashed` line).

``whole=False`` (``lock --flavoured-only``) is the partial form: the flavoured lines
hashed, the others as the user wrote them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.utils import NormalizedName

from resolver_hook.ground.valueclass import replace, valueclass
from resolver_hook.host import HostProfile
from resolver_hook.lock.hashes import Unhashed, flavoured_hashes, is_flavoured_line
from resolver_hook.lock.indexes import LockIndexes
from resolver_hook.lock.lines import lock_lines, with_hash
from resolver_hook.lock.resolved import ResolvedPackage, resolve_environment, unfit_direct
from resolver_hook.lock.wheels import DEFAULT_INDEX, Fetcher
from resolver_hook.resolve import Plan

__all__ = ["TargetLines", "target_lines"]


@valueclass
class TargetLines:
    """One target's lock lines, the lines without a sha256, and the indexes uv's
    answer says the rest came from."""

    lines: tuple[str, ...]
    unhashed: tuple[Unhashed, ...] = ()
    indexes: tuple[str, ...] = ()


def target_lines(
    spec: str,
    profile: HostProfile,
    plan: Plan,
    fetcher: Fetcher,
    *,
    indexes: LockIndexes,
    env: Mapping[str, str],
    whole: bool = True,
    offline: bool = False,
    keep: Mapping[NormalizedName, str] | None = None,
    upgrade: Sequence[str] | bool = False,
    timeout: float | None = None,
) -> TargetLines:
    """The lock lines of ``plan`` for its target (``spec`` names it in messages);
    ``keep`` and ``upgrade``: the pins of the lock already written, and which to move;
    ``timeout``: uv's wait for each read
    (:func:`~resolver_hook.lock.resolved.resolve_environment`)."""
    found, lost = flavoured_hashes(
        plan, spec, fetcher, index_url=indexes.index_url or DEFAULT_INDEX
    )
    hashes = {str(n): [w.sha256] for n, w in found.items()}
    if not whole:
        return TargetLines(lines=tuple(lock_lines(plan, hashes)), unhashed=tuple(lost))
    flavoured = [p for p in plan.packages if is_flavoured_line(p)]
    ours = {n for p in flavoured for n in (p.name, p.distribution)}
    ours |= {w.name for w in found.values()}
    resolved = resolve_environment(
        plan,
        profile,
        indexes=indexes,
        env=env,
        leave_out=[u.name for u in lost],
        only_binary=False,  # a requirements lock may hold an sdist: pip builds it
        offline=offline,
        keep=keep,
        upgrade=upgrade,
        timeout=timeout,
    )
    rest = [r for r in resolved if r.name not in ours]
    unhashed = list(lost)
    for r in rest:
        unfit = unfit_direct(r, profile, wheels_only=False)
        if unfit is not None:
            raise unfit
        if not r.files or any(f.sha256 is None for f in r.files):
            why = (
                "a VCS checkout or a folder has no sha256 (pip --require-hashes refuses it)"
                if r.source_only
                else "uv's answer gives a file of it no sha256 (its index lists none)"
            )
            unhashed.append(
                Unhashed(name=r.name, line=_pin(r), target=spec, why=why, source=r.source_only)
            )
    own = lock_lines(replace(plan, packages=tuple(flavoured)), hashes)
    pinned = [with_hash(_pin(r), [f.sha256 for f in r.files if f.sha256]) for r in rest]
    return TargetLines(
        lines=(*own, *pinned),
        unhashed=tuple(unhashed),
        indexes=tuple(dict.fromkeys(r.index for r in rest if r.index)),
    )


def _pin(r: ResolvedPackage) -> str:
    """The lock line of a resolved package: ``name==version`` from an index; a URL
    requirement as its URL (a VCS one pinned to its commit), the file the user asked for."""
    return f"{r.name} @ {r.direct}" if r.direct else f"{r.name}=={r.version}"
