"""Reading the flavoured wheels' kernels before they are installed, from one download.

A manifest's kernel list is a claim. With ``--verify-kernels`` every flavoured wheel of
the session is read; by default, those whose kernel list the plan only assumes (a
release newer than its manifest's verified one, the list carried forward) are, on a
machine whose NVIDIA GPUs are detected. Each wheel is:

- downloaded once, through pip (``pip download --no-deps``, so its index settings,
  proxies and certificates apply; uv has no download command, so under uv the pip of
  the environment, else the hook's own, fetches it) into the session's private folder,
  and its sha256 compared with the one the plan or the resolution named;
- read with the project's own scanner (:func:`resolver_hook.publish.scan.scan_wheel`)
  and refused when a library's SASS and PTX run on none of the visible GPUs under
  NVIDIA's rules (:meth:`resolver_hook.portable.cuda.KernelTarget.runs_on`,
  docs/facts.md section 1.9), naming the library and its targets;
- then named by its local path (``name @ file://...#sha256=...``): the plan's URL pin
  is replaced by the file before the installer's dry run (:meth:`KernelReader.localize`),
  so neither the dry run nor the install fetches it again, and the file installed is
  the file read. A wheel the plan pins only by version (an index flavour) is known once
  the dry run names it; pip's dry run fetched it whole unless the index serves its core
  metadata apart (PEP 658/714), and it is downloaded once more to be read.

Scans are cached by sha256 (a private JSON file each, 0600, at most
:data:`~resolver_hook.limits.MAX_KERNEL_SCANS` kept, the oldest removed first);
``doctor`` reads them back for the installed wheels (:func:`cached_scan`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import unquote, urldefrag, urlsplit

from resolver_hook import _cache
from resolver_hook._proc import foreground
from resolver_hook.errors import OperationalError
from resolver_hook.install.proof import Resolution
from resolver_hook.limits import MAX_KERNEL_SCANS

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import PackagePlan, Plan

__all__ = [
    "KernelReader",
    "Verified",
    "assumed_scope",
    "cached_scan",
    "is_terminal",
    "library_problems",
    "scan_cache",
    "scan_kernels",
    "terminal_lines",
]

_SCAN_CACHE_BYTES = 1 << 20

# pip options that ``pip download`` reads as ``pip install`` does and that decide how a
# file is fetched (where credentials come from, proxies, certificates); with a value.
_FETCH_OPTIONS = frozenset(
    (
        "-i",
        "--index-url",
        "--extra-index-url",
        "--proxy",
        "--cert",
        "--client-cert",
        "--trusted-host",
        "--timeout",
        "--retries",
        "--keyring-provider",
        "--cache-dir",
    )
)
_FETCH_FLAGS = frozenset(("--isolated", "--no-cache-dir", "--no-input"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Verified:
    """What reading the wheels found: ``problems`` (refuse), else ``files`` to install
    (name -> the downloaded wheel), and ``notes``."""

    problems: tuple[str, ...] = ()
    files: Mapping[str, Path] = field(default_factory=dict)
    sha256: Mapping[str, str] = field(default_factory=dict)  # of each file
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Wanted:
    name: str
    label: str  # "kgood 1.0+cu130"
    url: str  # without a fragment
    sha256: str | None


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


def scan_cache(env: Mapping[str, str]) -> Path | None:
    """The folder of cached kernel scans (``kernel-scans`` in the user cache)."""
    root = _cache.cache_dir(env)
    return root / "kernel-scans" if root is not None else None


def cached_scan(sha: str, cache: Path | None) -> list[tuple[str, list[str]]] | None:
    """(library, kernel targets) of the wheel of sha256 ``sha`` as scanned earlier, or
    None when it was not (or the entry is not ours)."""
    if cache is None or len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
        return None
    data, _why = _cache.read_private(cache / f"{sha}.json", _SCAN_CACHE_BYTES)
    if data is None:
        return None
    try:
        found = json.loads(data)
        if found.get("sha256") == sha:
            return [(str(p), [str(t) for t in ts]) for p, ts in found["objects"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        pass  # not ours: scanned again (and replaced) when the wheel is read
    return None


def scan_kernels(
    sha: str, path: Path, cache: Path | None, progress: Callable[[str], None] | None
) -> list[tuple[str, list[str]]]:
    """(library, kernel targets) of the wheel, from the cache by sha256 or by scanning."""
    from resolver_hook.publish.scan import scan_wheel

    found = cached_scan(sha, cache)
    if found is not None:
        return found
    if progress is not None:
        progress(f"reading kernels of {path.name} ({path.stat().st_size / 1e6:.1f} MB)...")
    report = scan_wheel(path)
    objects = [(o.path, list(o.targets)) for o in report.objects if o.targets]
    if cache is not None:
        payload = json.dumps({"sha256": sha, "objects": objects}).encode()
        if _cache.write_private(cache / f"{sha}.json", payload):
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


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def terminal_lines(stream: TextIO) -> Callable[[str], None] | None:
    """A writer of ``resolver-hook:`` progress lines to ``stream`` when it is a terminal;
    None otherwise (nothing extra in a log or a pipe)."""
    if not is_terminal(stream):
        return None

    def say(text: str) -> None:
        stream.write(f"resolver-hook: {text}\n")
        stream.flush()

    return say


def fetch_options(tool: str, options: Sequence[str]) -> list[str]:
    """The user's pip options that decide how a file is fetched (``--proxy X``,
    ``--cert X``, ``--index-url X`` whose credentials pip also uses for files on that
    host ...), for ``pip download``; none of uv's (another program's options)."""
    if tool != "pip":
        return []
    out: list[str] = []
    take = False
    for a in options:
        if take:
            out.append(a)
            take = False
        elif a in _FETCH_OPTIONS:
            out.append(a)
            take = True
        elif a in _FETCH_FLAGS or a.split("=", 1)[0] in _FETCH_OPTIONS:
            out.append(a)
    return out


def _has_pip(python: str) -> bool:
    prefix = Path(python).parent.parent
    return any(prefix.glob("lib/python*/site-packages/pip/__init__.py")) or any(
        prefix.glob("Lib/site-packages/pip/__init__.py")
    )


class KernelReader:
    """One session's kernel reading: which packages, the wheels downloaded so far.

    ``scope``: the names to read (None: every package the plan chose a build of);
    ``ccs``: the visible GPUs; ``python``: the interpreter of the environment installed
    into (its pip downloads; ``version`` its Python, for the hook's pip under uv).
    """

    def __init__(
        self,
        *,
        scope: frozenset[str] | None,
        ccs: Sequence[tuple[int, int]],
        tool: str,
        python: str,
        version: str,
        options: Sequence[str],
        folder: Path,
        env: Mapping[str, str],
        out: Callable[[str], None],
        terminal: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.scope = scope
        self.ccs = tuple(ccs)
        self.tool = tool
        self.folder = folder
        self.env = env
        self.out = out
        self.terminal = terminal
        self.progress = progress
        self.files: dict[str, Path] = {}
        self.sha256: dict[str, str] = {}
        self._notes: list[str] = []
        self._said: set[str] = set()
        self._options = fetch_options(tool, options)
        if tool == "pip" or _has_pip(python):
            self._pip = [python, "-m", "pip"]
            self._target: list[str] = []
        else:
            # The hook's own pip, for the environment's Python (the files are for it).
            self._pip = [sys.executable, "-m", "pip"]
            self._target = ["--python-version", version]

    def wants(self, name: str) -> bool:
        return self.scope is None or name in self.scope

    def take_notes(self) -> list[str]:
        """What reading said since the last call (each note once a session)."""
        out, self._notes = self._notes, []
        return out

    def _note(self, text: str) -> None:
        if text not in self._said:
            self._said.add(text)
            self._notes.append(text)

    # --- before the dry run: the plan's URL pins ---------------------------------

    def read_plan(self, plan: Plan) -> list[str]:
        """Download and read the wheels the plan pins by URL (not yet read); problems."""
        wanted = [
            _Wanted(
                name=p.name,
                label=f"{p.name} {p.version}",
                url=urldefrag(p.url or "")[0],
                sha256=p.sha256,
            )
            for p in plan.packages
            if _url_pinned(p) and self.wants(p.name) and p.name not in self.files
        ]
        return self._read(wanted)

    def localize(self, plan: Plan) -> Plan:
        """The plan with each wheel read named by its local file (same sha256 fragment)."""
        swap: dict[str, str] = {}
        packages: list[PackagePlan] = []
        for p in plan.packages:
            path = self.files.get(p.name)
            if path is None or not _url_pinned(p):
                packages.append(p)
                continue
            assert p.url is not None
            old = urldefrag(p.url)[0]
            uri = path.resolve().as_uri()
            if not p.sha256:  # the installed direct_url.json then names the file's hash
                uri += f"#sha256={self.sha256[p.name]}"
            new = dataclasses.replace(
                p,
                url=p.url.replace(old, uri, 1),
                line=p.line.replace(old, uri, 1) if p.line else None,
                constraint=p.constraint.replace(old, uri, 1) if p.constraint else None,
            )
            for before, after in ((p.line, new.line), (p.constraint, new.constraint)):
                if before and after:
                    swap[before] = after
            packages.append(new)
        return dataclasses.replace(
            plan,
            packages=tuple(packages),
            requirements=tuple(swap.get(x, x) for x in plan.requirements),
            constraints=tuple(swap.get(x, x) for x in plan.constraints),
        )

    # --- after the dry run: what it named -----------------------------------------

    def verify(self, resolution: Resolution, names: Iterable[str]) -> Verified:
        """Read the wheels of ``names`` (those in scope) the resolution names and that
        were not read from the plan already."""
        chosen = frozenset(n for n in names if self.wants(n))
        wanted: list[_Wanted] = []
        for r in resolution.items:
            if r.name not in chosen or not r.url:
                continue
            url = urldefrag(r.url)[0]
            if not url.endswith(".whl"):
                continue
            read = self.files.get(r.name)
            if read is not None and _same_file(url, read):
                continue  # read before the dry run: the dry run took that very file
            wanted.append(_Wanted(name=r.name, label=r.label(), url=url, sha256=r.sha256))
        problems = self._read(wanted)
        files = {n: p for n, p in self.files.items() if n in chosen}
        hashes = {n: self.sha256[n] for n in files}
        return Verified(problems=tuple(problems), files=files, sha256=hashes)

    # --- both -------------------------------------------------------------------

    def _read(self, wanted: Sequence[_Wanted]) -> list[str]:
        if not wanted:
            return []
        if not self.ccs:
            self._note("--verify-kernels: no NVIDIA GPU visible: no kernels checked")
            return []
        if self.tool == "uv":
            self._note(
                "uv has no download command: pip fetches the wheels to read, once, and uv "
                "installs those very files (uv's own index settings do not apply to that "
                "download)"
            )
        dest = self.folder / "wheels"
        dest.mkdir(exist_ok=True)
        argv = [*self._pip, "download", "--no-deps", *self._target, *self._options]
        argv += ["-d", str(dest)]
        argv += [f"{w.url}#sha256={w.sha256}" if w.sha256 else w.url for w in wanted]
        try:
            # On a terminal pip writes there itself (its progress bar); else through us.
            code, _ = foreground(
                argv, env=self.env, tee=None if self.terminal else self.out, tail_lines=1
            )
        except OSError as exc:
            raise OperationalError(f"cannot run pip download: {exc.strerror or exc}") from None
        if code != 0:
            return [f"pip download of the wheels to read failed (exit {code})"]
        from resolver_hook.publish.scan import ScanError

        cache = scan_cache(self.env)
        problems: list[str] = []
        for w in wanted:
            path = dest / unquote(urlsplit(w.url).path.rsplit("/", 1)[-1])
            if not path.is_file():
                problems.append(f"{w.label}: pip download left no {path.name}")
                continue
            sha = _sha256(path)
            if w.sha256 and sha != w.sha256.lower():
                problems.append(
                    f"{w.label}: the file downloaded has sha256 {sha}, not the {w.sha256} "
                    "named for it"
                )
                continue
            try:
                objects = scan_kernels(sha, path, cache, self.progress)
            except ScanError as exc:
                problems.append(f"{w.label}: its kernels cannot be read: {exc.message}")
                continue
            problems += library_problems(path.name, objects, self.ccs)
            self.files[w.name] = path
            self.sha256[w.name] = sha
        return problems


def _same_file(url: str, path: Path) -> bool:
    """Whether ``url`` (a ``file:`` URL, however quoted) names ``path``."""
    parts = urlsplit(url)
    return parts.scheme == "file" and Path(unquote(parts.path)) == path.resolve()


def assumed_scope(plan: Plan, profile: HostProfile) -> frozenset[str]:
    """The packages whose wheel is read by default: those the plan pins with a kernel
    list it only assumes, on a machine whose NVIDIA GPUs were detected (not a target,
    a profile file or a GPU override: a described machine has no GPU to hold them to)."""
    if profile.origin != "detected" or "sm" in profile.overridden or not profile.gpu_ccs:
        return frozenset()
    return frozenset(p.name for p in plan.packages if _url_pinned(p) and p.kernels_assumed)


def _url_pinned(p: PackagePlan) -> bool:
    """A wheel flavour the plan pins by its URL (``name @ https://...whl``)."""
    return (
        p.action == "rewrite"
        and p.flavour is not None
        and p.flavour.kind == "wheel"
        and p.url is not None
        and urldefrag(p.url)[0].endswith(".whl")
    )
