"""A package with no fit: its head line, the builds the user may pin instead (the
nearest release first), and its refusal said short."""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import Version

from resolver_hook.manifest.model import Flavour, IndexFlavour, WheelFlavour
from resolver_hook.resolve.model import (
    Alternative,
    NoFit,
    Rejection,
    coupling_by,
    flavour_platforms,
    os_arch_of,
    pinned_release,
)
from resolver_hook.resolve.rules import Machine
from resolver_hook.resolve.solve import Slot
from resolver_hook.resolve.words import (
    OUTSIDE_YOUR_SPECIFIER,
    WITHOUT_THE_GPU,
    nearest_words,
    no_fit_words,
    pin_refusal_words,
)

__all__ = [
    "alternatives_for",
    "nearest_pin",
    "no_fit_reason",
    "short_refusal",
]


def _head(slot: Slot, m: Machine) -> NoFit:
    """Which head line a package with no fit gets (:data:`~.model.NoFit`)."""
    if slot.candidates:
        return "conflict"
    if any(coupling_by(fails, "pinned", "held") is not None for _, fails in slot.rejected):
        return "pinned"
    if (
        slot.rejected
        and all(any(x.rule == "tags" for x in fails) for _, fails in slot.rejected)
        and all(isinstance(f, WheelFlavour) or f.platforms for f in slot.manifest.flavours)
        and not any(
            x == "any" or os_arch_of(x)[0] == m.profile.os
            for f in slot.manifest.flavours
            for x in flavour_platforms(f)
        )
    ):
        return "no-os"
    return "unfit"


def alternatives_for(slot: Slot) -> list[Alternative]:
    """Builds the user may pin on purpose: one that runs without the GPU, or one
    outside their specifier, nearest to the release asked for first (the first newer
    release that runs, then the newest older one). (Changes to the machine are hints:
    :func:`with_hints`.)"""
    out = []
    name = slot.manifest.display_name
    outside = []
    for f, fails in slot.rejected:
        rules = {x.rule for x in fails}
        if isinstance(f, IndexFlavour) and f.versions is not None and not _one_release(f):
            continue  # a pattern: no pin tells it apart
        if rules == {"accelerator"}:
            out.append(Alternative(pin=f"{name}=={f.version}", why=WITHOUT_THE_GPU))
        elif rules == {"specifier"} and f.unjudged is None:
            outside.append(f)  # (an unjudged build is not known to run here)
    asked = pinned_release(slot.spec)
    if asked is not None:  # newer releases first, the nearest first; then the newest older
        newer = sorted((f for f in outside if _release(f) > asked), key=_release)
        older = sorted((f for f in outside if _release(f) <= asked), key=_release, reverse=True)
        outside = newer + older
    out.extend(Alternative(pin=f"{name}=={f.version}", why=OUTSIDE_YOUR_SPECIFIER) for f in outside)
    return list(dict.fromkeys(out))[:3]


def _one_release(f: IndexFlavour) -> bool:
    """Whether a pattern names one release exactly (``versions = "==0.0.30"``), so the
    pin of its floor tells it apart."""
    assert f.versions is not None
    return [(s.operator, s.version) for s in f.versions] == [("==", str(f.version))]


def no_fit_reason(slot: Slot, m: Machine, alternatives: Sequence[Alternative]) -> str:
    """Why nothing fits, led by the nearest release that runs when the user pinned one
    (``torch==2.2.2+cu121 has no build that runs here; the nearest that does: ...``)."""
    reason = no_fit_words(_head(slot, m), slot.manifest, m.profile)
    nearest = nearest_pin(slot, alternatives)
    if nearest is None:
        return reason
    asked = slot.entry.text if slot.entry else ""
    return nearest_words(slot.manifest.display_name, asked, nearest, reason)


def short_refusal(slot: Slot, rejected: Sequence[Rejection], nearest: str | None) -> str:
    """A pinned release's refusal in short: the first rule that its build failing fewest
    rules fails, and the ``nearest`` pin that runs; "" when no other release runs."""
    asked = [r for r in rejected if "specifier" not in r.rules]
    if nearest is None or not asked:
        return ""
    rule = min(asked, key=lambda r: len(r.rules)).failures[0].reason
    return pin_refusal_words(f"{slot.manifest.display_name}{slot.spec}", rule, nearest)


def nearest_pin(slot: Slot, alternatives: Sequence[Alternative]) -> str | None:
    """The pin nearest to the release the user pinned that runs here; None when they
    pinned none, or no other release runs."""
    runs = [a for a in alternatives if a.why == OUTSIDE_YOUR_SPECIFIER]
    return runs[0].pin if runs and pinned_release(slot.spec) is not None else None


def _release(f: Flavour) -> Version:
    return Version(f.version.public)
