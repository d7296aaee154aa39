"""``CUDA_VISIBLE_DEVICES``: which GPUs a CUDA program sees, the way the runtime reads it.

Pure and standard-library only: a generated placeholder embeds this file verbatim, so
it must run on any Python >= 3.8 with nothing installed. resolver-hook's detection and
the placeholder runtime both call :func:`select`, so one value means the same GPUs in
both (docs/facts.md section 1.4):

- unset: every GPU; the empty string: none;
- a comma-separated list of indices (nvidia-smi's order) or GPU UUIDs
  (``GPU-8932f937-...``, or any prefix of one that names exactly one GPU);
- reading stops at the first invalid entry (``0,2,-1,1`` shows GPUs 0 and 2);
- ``MIG-GPU-<uuid>/<gi>/<ci>`` selects its parent GPU; a ``MIG-<uuid>`` instance cannot
  be mapped to its GPU without MIG enumeration, so every GPU is considered;
- an index named twice counts once (the documentation does not say).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["VARIABLE", "select"]

VARIABLE = "CUDA_VISIBLE_DEVICES"


def _match_uuid(entry: str, gpus: Sequence[tuple[int, str | None]]) -> int | None:
    want = entry.lower()
    found = [i for i, (_, u) in enumerate(gpus) if u and u.lower().startswith(want)]
    return found[0] if len(found) == 1 else None


def select(value: str | None, gpus: Sequence[tuple[int, str | None]]) -> tuple[list[int], str]:
    """The positions (into ``gpus``) of the GPUs a CUDA program would see, in its order.

    ``value`` is ``CUDA_VISIBLE_DEVICES`` (None when unset); ``gpus`` holds each
    detected GPU as ``(index, uuid)``: its index in nvidia-smi's order and its UUID
    (``GPU-...``, None where unknown). Returns the positions, in the order CUDA
    enumerates them, and a note in words ("" when the variable changes nothing).
    """
    every = list(range(len(gpus)))
    if value is None:
        return every, ""
    shown = "%s=%r" % (VARIABLE, value)
    if not value.strip():
        return [], "%s is empty: no GPU is visible to CUDA" % VARIABLE
    picked: list[int] = []
    stopped = ""
    for raw in value.split(","):
        entry = raw.strip()
        position = None
        upper = entry.upper()
        if entry.isdigit():
            position = next((i for i, (n, _) in enumerate(gpus) if n == int(entry)), None)
        elif upper.startswith("MIG-GPU-"):
            # Older drivers: MIG-<GPU-UUID>/<GPU instance>/<compute instance>.
            position = _match_uuid(entry[4:].split("/")[0], gpus)
        elif upper.startswith("MIG-"):
            return every, (
                "%s names MIG instances, which are not mapped to their GPU: every GPU is "
                "considered" % shown
            )
        elif upper.startswith("GPU-") and len(entry) > 4:
            position = _match_uuid(entry, gpus)
        if position is None:
            stopped = entry
            break
        if position not in picked:
            picked.append(position)
    if picked == every and not stopped:
        return every, ""
    note = "%s shows %d of %d GPU(s)" % (shown, len(picked), len(gpus))
    if stopped:
        note += " (CUDA stops at the invalid entry %r)" % stopped
    return picked, note
