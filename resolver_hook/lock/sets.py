"""Lock sets for a fleet: one lock file per machine class, and an index that says which.

No lock format has a GPU dimension (markers cannot tell an A100 from an H100, or a
Jetson Thor from a GB10: docs/facts.md section 3), so ``resolver-hook lock -o
'DIR/{target}.EXT'`` writes one file per target and ``DIR/index.toml`` beside them:
for each file its sha256, the target it was planned for, and every flavoured build it
pins with what that build needs (its manifest entry: tags or platforms, Python, CUDA
floor, kernel targets, ROCm, L4T). ``resolver-hook sync DIR`` reads the index, judges
each lock's builds on this machine with the resolver's own rules
(:func:`~resolver_hook.resolve.evaluate_flavour`, the choosing rules left out), checks
the chosen file's sha256 and installs it.

A lock also serves only the platform uv resolved it for: the index keeps each lock's
OS, CPU arch and Python (``os``, ``arch``, ``python``; from its target where an older
index does not say), and a lock of another platform fails that rule, whatever its
flavoured builds would do here (a pure wheel, a package without a manifest).

An AMD target's GPUs (its gfx ISAs, ``gfx = ["gfx942"]``) are kept beside ``gpus``, and
each ROCm build's ``gfx`` with it: on an AMD machine a lock planned for other AMD GPUs
fails that rule (its builds were chosen for those GPUs' code), and one planned for
exactly this machine's GPUs is the most specific.

Two locks fit: the more specific wins (:func:`choose`): the one planned for exactly
this machine's GPUs, then the one with more builds that need a GPU runtime, then the
higher CUDA floor. None fits: the nearest (:func:`nearest`: fewest failed rules, then
this OS, CPU arch and Python, then these GPUs) is named with each rule it fails.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import tomli_w

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.input import read_input, read_text_input
from resolver_hook.ground.patterns import GFX_NAME, is_sha256
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.host import HostProfile, parse_target
from resolver_hook.manifest import Manifest, ManifestError, parse_manifest
from resolver_hook.manifest.model import Flavour, IndexFlavour
from resolver_hook.manifest.tables import TableReader
from resolver_hook.portable.cuda import format_cc, parse_cc
from resolver_hook.portable.platforms import OS_NAMES, OS_WORDS, canonical_arch
from resolver_hook.resolve import Plan, evaluate_flavour

__all__ = [
    "INDEX_NAME",
    "LockClass",
    "LockPlatform",
    "choose",
    "failures",
    "lock_set_files",
    "nearest",
    "read_index",
    "verified_file",
]

INDEX_NAME = "index.toml"
_SCHEMA = 1
# Rules that choose among builds that run, not whether one runs (see resolve/).
_CHOOSING = frozenset({"accelerator", "specifier"})
_PYTHON = re.compile(r"\d+\.\d+t?")  # a Python as index flavours spell it: 3.12, 3.13t


@valueclass
class LockPlatform:
    """The platform uv resolved a lock for: OS, CPU arch and Python (None: not known)."""

    os: str
    arch: str
    python: str | None  # "3.12", "3.13t"

    @classmethod
    def of(cls, profile: HostProfile) -> LockPlatform:
        return cls(os=profile.os, arch=profile.arch, python=profile.python_label)

    @classmethod
    def from_target(cls, spec: str) -> LockPlatform | None:
        """What a target spec names (an index written before ``os``/``arch``/``python``
        were kept); its Python only where the spec names one (else it was assumed)."""
        try:
            profile = parse_target(spec)
        except ValueError:
            return None  # "detected", or no spec
        named = any(re.fullmatch(r"(?:py|cp)\d+t?", f.lower()) for f in spec.split("-")[2:])
        return cls(os=profile.os, arch=profile.arch, python=profile.python_label if named else None)

    def miss(self, profile: HostProfile) -> str | None:
        """The rule ``profile`` fails, in words; None where it is this platform."""
        here = LockPlatform.of(profile)
        was, now = [], []
        if (self.os, self.arch) != (here.os, here.arch):
            was.append(f"{OS_WORDS.get(self.os, self.os)} {self.arch}")
            now.append(f"{OS_WORDS.get(here.os, here.os)} {here.arch}")
        if self.python is not None and self.python != here.python:
            was.append(_python_words(self.python))
            now.append(_python_words(here.python or ""))
        if not was:
            return None
        return f"the lock was resolved for {', '.join(was)}; this machine is {', '.join(now)}"

    def distance(self, profile: HostProfile) -> tuple[bool, bool, bool]:
        """How far ``profile`` is: another OS, another CPU arch, another Python."""
        here = LockPlatform.of(profile)
        python = self.python is not None and self.python != here.python
        return self.os != here.os, self.arch != here.arch, python


def _python_words(label: str) -> str:
    return f"Python {label[:-1]} (free-threaded)" if label.endswith("t") else f"Python {label}"


@valueclass
class LockClass:
    """One lock file of a set and the machines it serves."""

    file: str  # the file's name, in the index's folder
    sha256: str
    target: str  # the target it was planned for
    machine: str  # that target in words
    gpus: tuple[str, ...]  # the target's compute capabilities, "9.0"
    gfx: tuple[str, ...] = ()  # the target's AMD GPUs, "gfx942" (none: not an AMD target)
    builds: tuple[Manifest, ...]  # one manifest per flavoured package, holding its build
    platform: LockPlatform | None = None  # what uv resolved it for; None: not known

    @property
    def flavours(self) -> tuple[Flavour, ...]:
        return tuple(m.flavours[0] for m in self.builds)


def _entry(f: Flavour, url: str | None) -> dict[str, Any]:
    """The manifest entry of one build: what it needs, in the manifest's own keys."""
    needs: dict[str, Any] = {}
    n = f.needs
    if n.cuda is not None:
        needs["cuda"] = str(n.cuda)
    if n.rocm is not None:
        needs["rocm"] = str(n.rocm)
    if n.l4t is not None:
        needs["l4t"] = str(n.l4t)
    if n.gpu:
        needs["gpu"] = [str(t) for t in n.gpu]
    if n.gfx:
        needs["gfx"] = list(n.gfx)
    if isinstance(f, IndexFlavour):
        entry: dict[str, Any] = {"version": str(f.version), **needs}
        if url is not None:
            entry["url"] = url
        if f.platforms:
            entry["platforms"] = list(f.platforms)
        if f.python:
            entry["python"] = list(f.python)
        return {"index": [entry]}
    return {"wheel": [{"url": f.url, **({"sha256": f.sha256} if f.sha256 else {}), **needs}]}


def _index_text(rows: Sequence[tuple[Path, str, str, HostProfile, Plan]]) -> str:
    """``index.toml`` for ``(path, sha256, target, profile, plan)`` rows."""
    locks = []
    for path, digest, target, profile, plan in rows:
        packages = []
        for p in plan.packages:
            if p.flavour is None or p.action not in ("rewrite", "pass"):
                continue
            packages.append({"name": str(p.name), **_entry(p.flavour, p.find_links or p.url)})
        locks.append(
            {
                "file": path.name,
                "sha256": digest,
                "target": target,
                "machine": profile.describe(),
                "os": profile.os,
                "arch": profile.arch,
                "python": profile.python_label,
                "gpus": [format_cc(cc) for cc in profile.gpu_ccs],
                **({"gfx": list(_gfx_of(profile))} if _gfx_of(profile) else {}),
                "package": packages,
            }
        )
    head = (
        "# Generated by resolver-hook lock: which lock file serves which machine class.\n"
        "# 'resolver-hook sync FOLDER' picks this machine's file; do not edit by hand.\n"
    )
    return head + tomli_w.dumps({"schema": _SCHEMA, "lock": locks})


def read_index(folder: Path) -> tuple[LockClass, ...]:
    """The lock classes of ``folder/index.toml``; one error naming every problem with its
    key path (``lock[0].sha256``)."""
    path = folder / INDEX_NAME
    try:
        data = toml_loads(read_text_input(path))
    except TomlError as exc:
        raise UsageError(f"{path}: not TOML: {exc}") from None
    if data.get("schema") != _SCHEMA or not isinstance(data.get("lock"), list):
        raise UsageError(
            f"{path}: not a resolver-hook lock index (schema {_SCHEMA} with [[lock]] tables)",
            hint="write lock sets with 'resolver-hook lock -o \"DIR/{target}.txt\" --target ...'",
        )
    r = TableReader(str(path))
    out = []
    for i, lock in enumerate(data["lock"]):
        where = f"lock[{i}]"
        if not isinstance(lock, dict) or not all(
            isinstance(lock.get(k), str) for k in ("file", "sha256", "target", "machine")
        ):
            r.bad(where, "needs file, sha256, target and machine strings")
            continue
        name = lock["file"]
        if Path(name).name != name or name in ("", ".", ".."):
            r.bad(f"{where}.file", f"{name!r} is not a file name in {folder}")
        if not is_sha256(lock["sha256"]):
            r.bad(f"{where}.sha256", f"{lock['sha256'][:80]!r} is not a sha256 (64 hex digits)")
        gpus = _gpus(r, lock.get("gpus", []), f"{where}.gpus")
        gfx = _gfx(r, lock.get("gfx", []), f"{where}.gfx")
        packages = lock.get("package", [])
        if not isinstance(packages, list):
            r.bad(f"{where}.package", f"needs [[lock.package]] tables, not {packages!r}")
            packages = []
        builds = []
        for j, package in enumerate(packages):
            if not isinstance(package, dict) or not isinstance(package.get("name"), str):
                r.bad(f"{where}.package[{j}]", "needs a name")
                continue
            table = {k: v for k, v in package.items() if k != "name"}
            try:
                builds.append(
                    parse_manifest(
                        {"schema": 1, "package": {"name": package["name"]}, **table},
                        source=f"{path}: {where}.package[{j}]",
                        allow_insecure=True,  # read, never fetched: the lock file names the URLs
                    )
                )
            except ManifestError as exc:
                r.include(exc, f"{where}.package[{j}]")
        out.append(
            LockClass(
                file=name,
                sha256=lock["sha256"].lower(),
                target=lock["target"],
                machine=lock["machine"],
                gpus=gpus,
                gfx=gfx,
                builds=tuple(builds),
                platform=_platform(r, lock, where),
            )
        )
    if r.found:
        raise ManifestError(r.problems, where=str(path))
    return tuple(out)


def _platform(r: TableReader, lock: Mapping[str, Any], where: str) -> LockPlatform | None:
    """``os``, ``arch`` and ``python`` of a ``[[lock]]`` table, as :func:`lock_set_files`
    writes them; from its target where none is given (an index of an earlier version)."""
    if not any(k in lock for k in ("os", "arch", "python")):
        return LockPlatform.from_target(lock["target"])
    os_name = _text(r, lock.get("os"), f"{where}.os", lambda v: v in OS_NAMES,
                    f"one of {', '.join(OS_NAMES)}")  # fmt: skip
    arch = _text(r, lock.get("arch"), f"{where}.arch", lambda v: canonical_arch(v) == v,
                 "a CPU arch such as x86_64")  # fmt: skip
    python = _text(r, lock.get("python"), f"{where}.python", _PYTHON.fullmatch,
                   "a Python such as 3.12 or 3.13t")  # fmt: skip
    if os_name is None or arch is None or python is None:
        return None
    return LockPlatform(os=os_name, arch=arch, python=python)


def _text(
    r: TableReader, value: object, where: str, ok: Callable[[str], object], what: str
) -> str | None:
    """``value`` where it is a string that is ``ok``; else a problem at ``where``."""
    if isinstance(value, str) and ok(value):
        return value
    r.bad(where, f"{str(value)[:80]!r} is not {what}")
    return None


def _gpus(r: TableReader, value: object, where: str) -> tuple[str, ...]:
    """``gpus``: a list of compute capabilities (``"9.0"``), as :func:`lock_set_files` writes."""
    if not isinstance(value, list):
        r.bad(where, f'needs a list of compute capabilities such as ["9.0"], not {value!r}')
        return ()
    out = []
    for k, item in enumerate(value):
        try:
            if not isinstance(item, str):
                raise ValueError
            out.append(format_cc(parse_cc(item)))
        except ValueError:
            r.bad(f"{where}[{k}]", f'{str(item)[:80]!r} is not a compute capability such as "9.0"')
    return tuple(out)


def _gfx(r: TableReader, value: object, where: str) -> tuple[str, ...]:
    """``gfx``: a list of AMD GPU names (``"gfx942"``), as :func:`lock_set_files` writes."""
    if not isinstance(value, list):
        r.bad(where, f'needs a list of AMD GPU names such as ["gfx942"], not {value!r}')
        return ()
    out = []
    for k, item in enumerate(value):
        if isinstance(item, str) and re.fullmatch(GFX_NAME, item):
            out.append(item)
        else:
            r.bad(f"{where}[{k}]", f'{str(item)[:80]!r} is not an AMD GPU name such as "gfx942"')
    return tuple(out)


def _gfx_of(profile: HostProfile) -> tuple[str, ...]:
    """The AMD GPUs of ``profile`` by ISA (``gfx90a:sramecc+:xnack-`` is ``gfx90a``)."""
    gfx = profile.rocm.gfx if profile.rocm is not None else ()
    return tuple(dict.fromkeys(g.partition(":")[0] for g in gfx))


def _gfx_miss(lock: LockClass, profile: HostProfile) -> str | None:
    """The rule an AMD machine fails when ``lock`` was planned for other AMD GPUs: its
    GPUs must be among the lock's (the builds were chosen for those); None: it passes."""
    here = _gfx_of(profile)
    other = [g for g in here if g not in lock.gfx]
    if not lock.gfx or not here or not other:
        return None
    return (
        f"the lock was planned for AMD {', '.join(lock.gfx)}; this machine's GPU "
        f"{', '.join(other)} is not among them"
    )


def failures(lock: LockClass, profile: HostProfile) -> list[str]:
    """Why ``lock`` does not serve ``profile``: the platform it was resolved for first,
    then the AMD GPUs it was planned for (:func:`_gfx_miss`), then one line per build and
    failed rule."""
    miss = lock.platform.miss(profile) if lock.platform is not None else None
    out = [x for x in (miss, _gfx_miss(lock, profile)) if x is not None]
    for manifest in lock.builds:
        flavour = manifest.flavours[0]
        for rule, outcome in evaluate_flavour(flavour, manifest, profile).items():
            if outcome.status == "fail" and rule not in _CHOOSING:
                out.append(f"{flavour.describe()}: {outcome.reason}")
    return out


def _specificity(lock: LockClass, profile: HostProfile) -> tuple[bool, int, Any]:
    exact = set(lock.gpus) == {format_cc(cc) for cc in profile.gpu_ccs} and set(lock.gfx) == set(
        _gfx_of(profile)
    )
    gpu_builds = sum(
        1 for f in lock.flavours if f.needs.cuda or f.needs.rocm or f.needs.gpu or f.needs.l4t
    )
    floors = [s.version for f in lock.flavours for s in f.needs.cuda or () if s.operator == ">="]
    return exact, gpu_builds, max(floors, default="")


def choose(
    locks: Sequence[LockClass], profile: HostProfile
) -> tuple[LockClass | None, Mapping[str, list[str]]]:
    """The lock for ``profile`` (None when none fits) and, per file, why it does not fit."""
    why = {lock.file: failures(lock, profile) for lock in locks}
    fitting = [lock for lock in locks if not why[lock.file]]
    if not fitting:
        return None, why
    return max(fitting, key=lambda lock: _specificity(lock, profile)), why


def nearest(
    locks: Sequence[LockClass], profile: HostProfile, why: Mapping[str, list[str]]
) -> LockClass:
    """The lock nearest to serving ``profile`` when none does (``why``: :func:`choose`'s
    reasons): the fewest failed rules, then this OS, this CPU arch, this Python, then
    this machine's GPUs."""

    def distance(lock: LockClass) -> tuple[int, tuple[bool, bool, bool], bool]:
        platform = lock.platform.distance(profile) if lock.platform else (False, False, False)
        return len(why[lock.file]), platform, not _specificity(lock, profile)[0]

    return min(locks, key=distance)


def verified_file(folder: Path, lock: LockClass) -> Path:
    """``folder/lock.file`` when its sha256 is the one the index holds; else an error."""
    path = folder / lock.file
    digest = hashlib.sha256(read_input(path, limit=1 << 30)).hexdigest()
    if digest != lock.sha256:
        raise OperationalError(
            f"{path}: sha256 {digest} is not the {lock.sha256} that {INDEX_NAME} holds: "
            "the lock file changed after it was written",
            hint="write the lock set again with 'resolver-hook lock', or restore the file",
        )
    return path


def lock_set_files(
    folder: Path, locks: Sequence[tuple[Path, str, str, HostProfile, Plan]]
) -> list[tuple[Path, str]]:
    """Every file of a lock set: each lock of ``locks`` (``(path, text, target, profile,
    plan)``, each in ``folder``), then ``folder/index.toml`` naming their sha256."""
    rows = [
        (path, hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest(), t, p, plan)
        for path, text, t, p, plan in locks
    ]
    return [*((path, text) for path, text, *_ in locks), (folder / INDEX_NAME, _index_text(rows))]
