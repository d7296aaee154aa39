"""``pylock.toml`` (PEP 751) for one or more targets. Pure.

One ``[[packages]]`` entry per (package, wheel URL): an entry every target installs has
no marker; the others carry the markers of their targets, so each target selects
exactly its own wheels. ``environments`` lists the targets' markers: an installer on
another machine refuses the file instead of installing a wrong flavour. Targets that
markers cannot tell apart (same OS, CPU and Python; other GPU) need one file each.

:func:`check` reads the document back with ``packaging.pylock`` (``Pylock.from_dict``
validates it) and runs ``Pylock.select()`` for every target: it must return exactly
the planned wheels (docs/facts.md section 3: ``select`` exists from packaging 26.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import tomli_w
from packaging.pylock import Pylock, PylockValidationError
from packaging.tags import parse_tag

from resolver_hook.errors import OperationalError
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.lock.lines import target_markers
from resolver_hook.resolve import marker_environment

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.lock.wheels import LockedWheel

__all__ = ["LOCK_VERSION", "TargetWheels", "check", "pylock_document", "render"]

LOCK_VERSION = "1.0"  # PEP 751


@valueclass
class TargetWheels:
    """The wheels one target installs."""

    spec: str
    profile: HostProfile
    wheels: tuple[LockedWheel, ...]


def pylock_document(targets: Sequence[TargetWheels]) -> dict[str, Any]:
    """The PEP 751 document (a mapping ready for a TOML writer)."""
    markers = target_markers(
        ((t.spec, t.profile) for t in targets),
        clash="a pylock.toml holds one of them",
        hint="run lock once per target, each with its own -o pylock.NAME.toml",
    )
    order: list[tuple[str, str]] = []
    info: dict[tuple[str, str], tuple[LockedWheel, list[str]]] = {}
    for t in targets:
        for w in t.wheels:
            key = (str(w.name), w.url)
            if key not in info:
                order.append(key)
                info[key] = (w, [])
            info[key][1].append(t.spec)
    packages: list[dict[str, Any]] = []
    for key in order:
        w, specs = info[key]
        entry: dict[str, Any] = {"name": str(w.name), "version": w.version}
        if len(specs) < len(targets):
            entry["marker"] = " or ".join(f"({markers[s]})" for s in specs)
        if w.index:
            entry["index"] = w.index
        entry["wheels"] = [{"name": w.filename, "url": w.url, "hashes": {"sha256": w.sha256}}]
        packages.append(entry)
    return {
        "lock-version": LOCK_VERSION,
        "environments": [markers[t.spec] for t in targets],
        "created-by": "resolver-hook",
        "packages": packages,
    }


def render(doc: dict[str, Any], header: Sequence[str] = ()) -> str:
    comments = "".join(f"# {line}\n" for line in header)
    return comments + tomli_w.dumps(doc)


def check(doc: dict[str, Any], targets: Sequence[TargetWheels]) -> None:
    """Validate with ``packaging.pylock`` and select per target; raise if anything differs."""

    try:
        lock = Pylock.from_dict(doc)
    except PylockValidationError as exc:
        raise OperationalError(f"the pylock.toml made is not valid PEP 751: {exc}") from None
    for t in targets:
        tags = [tag for text in t.profile.tags for tag in parse_tag(text)]
        try:
            chosen = {
                (str(pkg.name), str(getattr(dist, "url", "")))
                for pkg, dist in lock.select(
                    environment=marker_environment(t.profile),  # type: ignore[arg-type]
                    tags=tags,
                )
            }
        except Exception as exc:  # packaging raises its own select errors
            raise OperationalError(
                f"packaging's Pylock.select() fails for {t.spec}: {exc}"
            ) from None
        planned = {(str(w.name), w.url) for w in t.wheels}
        if chosen != planned:
            extra = sorted(f"{n} {u}" for n, u in chosen - planned)
            missing = sorted(f"{n} {u}" for n, u in planned - chosen)
            raise OperationalError(
                f"pylock.toml does not select the planned wheels for {t.spec}: "
                f"extra {extra or 'none'}, missing {missing or 'none'}"
            )
