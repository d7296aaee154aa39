"""Kernel lists read from the wheel files themselves: the evidence behind "verified".

A manifest entry names one release's kernel list; the inventory carries it forward,
marked ``kernels assumed from ...``, to newer releases of the same page, label and
platform. ``scripts/refresh_data.py`` downloads such a newer file, checks its sha256
against its page's, reads it with the project's scanner
(:func:`resolver_hook.binaries.scan.scan_wheel`) and records what it found here, in
``resolver_hook/inventory/data/kernels.json``: per file (keyed by its sha256, so a
mirror's URL finds it too) the distribution, file name, the URL it was read from, the
kernel targets and the date read. :mod:`resolver_hook.inventory.expand` then plans
that file with the recorded list, verified, and names the file as its evidence.

The document's ``sha256`` is the digest of its ``files`` member in canonical JSON, as
for the snapshot, so a hand edit shows. Records are facts about files: they are never
rewritten by a later scan (a differing one is reported for review instead).
"""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Mapping
from typing import Any

from packaging.utils import parse_wheel_filename

from resolver_hook._data import data_path
from resolver_hook.ground.patterns import is_sha256
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.inventory.snapshot import canonical_hash, read_hashed
from resolver_hook.limits import MAX_KERNEL_RECORDS_BYTES
from resolver_hook.portable.cuda import KernelTarget, parse_target

__all__ = [
    "FORMAT",
    "KernelRecord",
    "KernelRecords",
    "KernelRecordsError",
    "builtin_kernels",
    "dump_kernels",
    "load_kernels",
    "release_key",
]

FORMAT = 1


class KernelRecordsError(ValueError):
    """A kernel-record file that is not one: bad JSON, wrong format, hash mismatch."""


@valueclass
class KernelRecord:
    """The kernel targets one wheel file was found to carry, and where it was read."""

    distribution: str
    filename: str
    url: str
    sha256: str
    gpu: tuple[str, ...]
    read: datetime.date

    @property
    def targets(self) -> tuple[KernelTarget, ...]:
        return tuple(parse_target(t) for t in self.gpu)

    @property
    def release(self) -> tuple[str, str, str]:
        return release_key(self.filename)

    def to_dict(self) -> dict[str, Any]:
        return {
            "distribution": self.distribution,
            "filename": self.filename,
            "url": self.url,
            "gpu": list(self.gpu),
            "read": self.read.isoformat(),
        }


@valueclass(kw_only=False)
class KernelRecords:
    """Records by file sha256."""

    files: Mapping[str, KernelRecord] = field(default_factory=dict)

    def get(self, sha256: str | None, filename: str) -> KernelRecord | None:
        """The record of the file with ``sha256`` and ``filename``; None when none."""
        record = self.files.get(sha256 or "")
        return record if record is not None and record.filename == filename else None

    def of_release(self, key: tuple[str, str, str]) -> list[KernelRecord]:
        """Records of one release, label and platform (:func:`release_key`)."""
        return [r for r in self.files.values() if r.release == key]


def release_key(filename: str) -> tuple[str, str, str]:
    """``(distribution, version with its local label, platform tags)`` of a wheel file
    name: the unit a kernel list is stated for (every Python of it shares the list)."""
    name, version, _build, tags = parse_wheel_filename(filename)
    return str(name), str(version), ".".join(sorted({t.platform for t in tags}))


def load_kernels(text: str, *, where: str = "kernel records") -> KernelRecords:
    """Parse and check a kernel-record document; :class:`KernelRecordsError` if not one."""
    _doc, files = read_hashed(
        text,
        version=FORMAT,
        limit=MAX_KERNEL_RECORDS_BYTES,
        kind="a kernel-record file",
        table="files",
        where=where,
        error=KernelRecordsError,
    )
    out: dict[str, KernelRecord] = {}
    for sha, row in files.items():
        out[sha] = _record(sha, row, where)
    return KernelRecords(out)


def _record(sha: str, row: Any, where: str) -> KernelRecord:
    if not is_sha256(sha) or not isinstance(row, dict):
        raise KernelRecordsError(f"{where}: {str(sha)[:80]!r} is not a sha256 with a record")
    texts = [row.get(k) for k in ("distribution", "filename", "url", "read")]
    gpu = row.get("gpu")
    if not all(isinstance(t, str) for t in texts) or not isinstance(gpu, list) or not gpu:
        raise KernelRecordsError(f"{where}: the record of {sha} lacks a field")
    try:
        parsed = [str(parse_target(t)) for t in gpu]
        read = datetime.date.fromisoformat(row["read"])
        release_key(row["filename"])
    except (TypeError, ValueError) as exc:
        raise KernelRecordsError(f"{where}: the record of {sha}: {exc}") from None
    return KernelRecord(
        distribution=row["distribution"],
        filename=row["filename"],
        url=row["url"],
        sha256=sha,
        gpu=tuple(parsed),
        read=read,
    )


def dump_kernels(records: KernelRecords) -> str:
    """The document for ``records``, with its hash."""
    files = {sha: r.to_dict() for sha, r in sorted(records.files.items())}
    doc = {
        "format": FORMAT,
        "sha256": canonical_hash(files),
        "about": "Generated by scripts/refresh_data.py: the kernel targets each wheel file "
        "was read to carry (resolver_hook.binaries.scan), keyed by the file's sha256, with "
        "the URL it was downloaded from and the date read.",
        "files": files,
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


@functools.cache
def builtin_kernels() -> KernelRecords:
    """The records shipped with the package (read once, when a plan first needs them)."""
    with open(data_path("inventory", "data", "kernels.json"), encoding="utf-8") as f:
        text = f.read()
    return load_kernels(text, where="shipped kernel records")
