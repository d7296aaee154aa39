"""``--verify-kernels``: the flavoured wheels read before they are installed.

A manifest's kernel list is a claim. With ``--verify-kernels`` every wheel of the
checked resolution that has a manifest is downloaded once, through pip (``pip download
--no-deps``, so its index settings, proxies and certificates apply; uv has no download
command), into the session's private folder; its sha256 is compared with the one the
resolution named; it is read with the project's own scanner
(:func:`resolver_hook.publish.scan.scan_wheel`); and it is refused when a library's
SASS and PTX run on none of the visible GPUs under NVIDIA's rules
(:meth:`resolver_hook.portable.cuda.KernelTarget.runs_on`, docs/facts.md section 1.9),
naming the library and its targets. The file installed is then that very file.

Scans are cached by sha256 (a private JSON file each, 0600, at most
:data:`~resolver_hook.limits.MAX_KERNEL_SCANS` kept, the oldest removed first).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from resolver_hook import _cache
from resolver_hook._proc import foreground
from resolver_hook.errors import OperationalError
from resolver_hook.install.proof import Resolution, Resolved
from resolver_hook.limits import MAX_KERNEL_SCANS

__all__ = ["Verified", "library_problems", "verify_kernels"]

_SCAN_CACHE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Verified:
    """What reading the wheels found: ``problems`` (refuse), else ``files`` to install
    (name -> the downloaded wheel), and ``notes``."""

    problems: tuple[str, ...] = ()
    files: Mapping[str, Path] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def library_problems(
    filename: str, objects: Sequence[tuple[str, Sequence[str]]], ccs: Sequence[tuple[int, int]]
) -> list[str]:
    """For each library with kernels ((path, targets)), the visible GPUs none runs on."""
    from resolver_hook.portable.cuda import describe_cc, parse_target, uncovered

    out = []
    for path, targets in objects:
        if not targets:
            continue
        missing = uncovered([parse_target(t) for t in targets], ccs)
        if missing:
            gpus = ", ".join(describe_cc(cc) for cc in missing)
            out.append(
                f"{filename}: {path} carries {', '.join(targets)}, none of which runs on {gpus}"
            )
    return out


def _cached_scan(sha: str, path: Path, cache: Path | None) -> list[tuple[str, list[str]]]:
    """(library, kernel targets) of the wheel, from the cache by sha256 or by scanning."""
    from resolver_hook.publish.scan import scan_wheel

    entry = cache / f"{sha}.json" if cache is not None else None
    if entry is not None:
        data, _why = _cache.read_private(entry, _SCAN_CACHE_BYTES)
        if data is not None:
            try:
                found = json.loads(data)
                if found.get("sha256") == sha:
                    return [(str(p), [str(t) for t in ts]) for p, ts in found["objects"]]
            except (ValueError, KeyError, TypeError, AttributeError):
                pass  # not ours: scan again and replace it
    report = scan_wheel(path)
    objects = [(o.path, list(o.targets)) for o in report.objects if o.targets]
    if entry is not None and cache is not None:
        payload = json.dumps({"sha256": sha, "objects": objects}).encode()
        if _cache.write_private(entry, payload):
            _bound(cache)
    return objects


def _bound(cache: Path) -> None:
    """Keep at most MAX_KERNEL_SCANS entries: the oldest go first."""
    try:
        entries = sorted(cache.glob("*.json"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for old in entries[: max(0, len(entries) - MAX_KERNEL_SCANS)]:
        old.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(4 << 20):
            h.update(chunk)
    return h.hexdigest()


def verify_kernels(
    resolution: Resolution,
    names: frozenset[str],
    ccs: Sequence[tuple[int, int]],
    *,
    folder: Path,
    env: Mapping[str, str],
    out: Callable[[str], None],
) -> Verified:
    """Download, hash-check, scan and judge the wheels of ``names`` in the resolution."""
    items = [r for r in resolution.items if r.name in names and r.url and r.url.endswith(".whl")]
    if not items:
        return Verified()
    if not ccs:
        return Verified(notes=("--verify-kernels: no NVIDIA GPU visible: no kernels checked",))
    dest = folder / "wheels"
    dest.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(dest)]
    argv += [_url(r) for r in items]
    try:
        code, _ = foreground(argv, env=env, tee=out, tail_lines=1)
    except OSError as exc:
        raise OperationalError(f"cannot run pip download: {exc.strerror or exc}") from None
    if code != 0:
        return Verified(problems=(f"pip download of the wheels to check failed (exit {code})",))
    cache_root = _cache.cache_dir(env)
    cache = cache_root / "kernel-scans" if cache_root is not None else None
    problems: list[str] = []
    files: dict[str, Path] = {}
    for r in items:
        path = dest / unquote(urlsplit(r.url or "").path.rsplit("/", 1)[-1])
        if not path.is_file():
            problems.append(f"{r.label()}: pip download left no {path.name}")
            continue
        sha = _sha256(path)
        if r.sha256 and sha != r.sha256:
            problems.append(
                f"{r.label()}: the file downloaded has sha256 {sha}, not the {r.sha256} "
                "the resolution named"
            )
            continue
        problems += library_problems(path.name, _cached_scan(sha, path, cache), ccs)
        files[r.name] = path
    return Verified(problems=tuple(problems), files=files)


def _url(r: Resolved) -> str:
    assert r.url is not None
    return f"{r.url}#sha256={r.sha256}" if r.sha256 and "#" not in r.url else r.url
