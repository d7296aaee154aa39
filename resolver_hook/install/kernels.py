"""Reading the flavoured wheels' kernels before they are installed, from one download.

A manifest's kernel list is a claim. With ``--verify-kernels`` every flavoured wheel of
the session is read; by default, those whose kernel list the plan only assumes (a
release newer than its manifest's verified one, the list carried forward) are, on a
machine whose NVIDIA GPUs are detected. Each wheel is:

- downloaded once, through pip (``pip download --no-deps``, so its index settings,
  proxies and certificates apply; uv has no download command, so under uv the pip of
  the environment, else the hook's own, fetches it) into the session's private folder,
  and its sha256 compared with the one the plan or the resolution named;
- read with the project's own scanner (:func:`resolver_hook.binaries.scan.scan_wheel`)
  and refused when a library's SASS and PTX run on none of the visible GPUs under
  NVIDIA's rules (:meth:`resolver_hook.portable.cuda.KernelTarget.runs_on`,
  docs/facts.md section 1.9), naming the library and its targets, or when the wheel
  holds no GPU code at all while its manifest claims kernels, naming the file;
- then named by its local path (``name @ file://...#sha256=...``) before the installer's
  dry run (:meth:`KernelReader.localize`), so neither the dry run nor the install fetches
  it again, and the file installed is the file read. That holds for the wheels the plan
  pins by URL and for the builds it pins by version on their page (an index flavour,
  ``name==version`` with the page as ``--find-links``): those are fetched by
  ``pip download --no-deps name==version`` with the same index options and the page,
  so pip picks the file its install would. The dry run cannot be the one download: a
  pip before 25.3 fetches every wheel it resolves and throws it away, whether or not the
  index serves the wheel's core metadata apart (PEP 658/714; pip 25.3 and newer then
  fetch only the ``.metadata`` file; docs/facts.md section 3).

A build the plan does not pin to one version (a page's every release from a floor, a
package left to the installer, a dependency) is known once the dry run names it: under
pip its file (the report's URL) is downloaded to be read, a second fetch where the dry
run took the wheel whole; under uv, whose dry run names versions, not files, the version
uv chose is fetched from the plan's page. A package in scope that is not read (no wheel,
no page to take it from) is named in one note.

Scans are cached by sha256 (a private JSON file each, 0600, at most
:data:`~resolver_hook.limits.MAX_KERNEL_SCANS` kept, the oldest removed first);
``doctor`` reads them back for the installed wheels (:func:`cached_scan`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import unquote, urldefrag, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from resolver_hook.binaries.scan import ScanError, scan_wheel
from resolver_hook.errors import OperationalError
from resolver_hook.ground import cache as _cache
from resolver_hook.ground.fs import sha256_file
from resolver_hook.ground.valueclass import field, replace, valueclass
from resolver_hook.install.proof import Resolution
from resolver_hook.limits import MAX_KERNEL_SCANS
from resolver_hook.portable.cuda import describe_cc, parse_target, uncovered
from resolver_hook.process.foreground import foreground
from resolver_hook.reqfile import format_requirement

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
# And those that decide which file of a version pip takes from the pages it reads: for
# a build fetched by ``name==version``, as the install would choose it.
_CHOICE_OPTIONS = frozenset(("-f", "--find-links", "--only-binary", "--no-binary"))
_CHOICE_FLAGS = frozenset(("--no-index", "--prefer-binary"))


@valueclass
class Verified:
    """What reading the wheels found: ``problems`` (refuse), else ``files`` to install
    (name -> the downloaded wheel), and ``notes``."""

    problems: tuple[str, ...] = ()
    files: Mapping[str, Path] = field(default_factory=dict)
    sha256: Mapping[str, str] = field(default_factory=dict)  # of each file
    notes: tuple[str, ...] = ()


@valueclass
class _Wanted:
    """A wheel to fetch and read: the file at ``url``, else ``name==version`` from
    ``page`` (None: from the user's index options alone)."""

    name: str
    label: str  # "kgood 1.0+cu130"
    url: str | None = None  # without a fragment
    sha256: str | None = None
    version: str | None = None
    page: str | None = None

    @property
    def requirement(self) -> str:
        if self.url is None:
            return f"{self.name}=={self.version}"
        return f"{self.url}#sha256={self.sha256}" if self.sha256 else self.url


def library_problems(
    filename: str, objects: Sequence[tuple[str, Sequence[str]]], ccs: Sequence[tuple[int, int]]
) -> list[str]:
    """For each library with kernels ((path, targets)), the visible GPUs none runs on."""

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
    return Path(root) / "kernel-scans" if root is not None else None


def cached_scan(sha: str, cache: Path | None) -> list[tuple[str, list[str]]] | None:
    """(library, kernel targets) of the wheel of sha256 ``sha`` as scanned earlier, or
    None when it was not (or the entry is not ours)."""
    if cache is None or len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
        return None
    data, _why = _cache.read_private(cache / f"{sha}.json", _SCAN_CACHE_BYTES)
    if data is None:
        return None
    try:
        found = _cache.json_loads(data)
        if found.get("sha256") == sha:
            return [(str(p), [str(t) for t in ts]) for p, ts in found["objects"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        pass  # not ours: scanned again (and replaced) when the wheel is read
    return None


def scan_kernels(
    sha: str, path: Path, cache: Path | None, progress: Callable[[str], None] | None
) -> list[tuple[str, list[str]]]:
    """(library, kernel targets) of the wheel, from the cache by sha256 or by scanning."""

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


def fetch_options(tool: str, options: Sequence[str], *, choice: bool = False) -> list[str]:
    """The user's pip options that decide how a file is fetched (``--proxy X``,
    ``--cert X``, ``--index-url X`` whose credentials pip also uses for files on that
    host ...), for ``pip download``; with ``choice`` also those that decide which file
    of a version pip takes (``--find-links``, ``--no-index``, ``--only-binary`` ...).
    None of uv's (another program's options)."""
    if tool != "pip":
        return []
    valued = _FETCH_OPTIONS | _CHOICE_OPTIONS if choice else _FETCH_OPTIONS
    flags = _FETCH_FLAGS | _CHOICE_FLAGS if choice else _FETCH_FLAGS
    out: list[str] = []
    take = False
    for a in options:
        if take:
            out.append(a)
            take = False
        elif a in valued:
            out.append(a)
            take = True
        elif a in flags or a.split("=", 1)[0] in valued:
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
        self.kernel_free: set[str] = set()  # read, and holding no GPU kernels at all
        # The kernel targets each package's chosen build claims (its manifest's gpu),
        # taken from the plan: a wheel that claims some and holds none is refused.
        self.claims: dict[str, tuple[str, ...]] = {}
        self._notes: list[str] = []
        self._said: set[str] = set()
        self._options = fetch_options(tool, options)
        self._choice = fetch_options(tool, options, choice=True)
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
        """Download and read the wheels the plan pins by URL, and the builds it pins by
        version on their page (not yet read); problems."""
        wanted = []
        for p in plan.packages:
            if p.flavour is not None and p.flavour.needs.gpu:
                self.claims[p.name] = tuple(str(t) for t in p.flavour.needs.gpu)
            if not self.wants(p.name) or p.name in self.files:
                continue
            label = f"{p.name} {p.version}"
            if _url_pinned(p):
                url = urldefrag(p.url or "")[0]
                wanted.append(_Wanted(name=p.name, label=label, url=url, sha256=p.sha256))
            elif _version_pinned(p):
                wanted.append(
                    _Wanted(name=p.name, label=label, version=p.version, page=p.find_links)
                )
        return self._read(wanted)

    def localize(self, plan: Plan) -> Plan:
        """The plan with each wheel read named by its local file (same sha256 fragment)."""
        swap: dict[str, str] = {}
        packages: list[PackagePlan] = []
        for p in plan.packages:
            path = self.files.get(p.name)
            new = p
            if path is not None and _version_pinned(p):
                new = _as_file(p, f"{path.resolve().as_uri()}#sha256={self.sha256[p.name]}")
            elif path is not None and _url_pinned(p):
                assert p.url is not None
                old = urldefrag(p.url)[0]
                uri = path.resolve().as_uri()
                if not p.sha256:  # the installed direct_url.json then names the file's hash
                    uri += f"#sha256={self.sha256[p.name]}"
                new = replace(
                    p,
                    url=p.url.replace(old, uri, 1),
                    line=p.line.replace(old, uri, 1) if p.line else None,
                    constraint=p.constraint.replace(old, uri, 1) if p.constraint else None,
                )
            if new is not p:
                for before, after in ((p.line, new.line), (p.constraint, new.constraint)):
                    if before and after:
                        swap[before] = after
            packages.append(new)
        return replace(
            plan,
            packages=tuple(packages),
            requirements=tuple(swap.get(x, x) for x in plan.requirements),
            constraints=tuple(swap.get(x, x) for x in plan.constraints),
        )

    # --- after the dry run: what it named -----------------------------------------

    def verify(
        self, resolution: Resolution, names: Iterable[str], pages: Mapping[str, str]
    ) -> Verified:
        """Read the wheels of ``names`` (those in scope) the resolution names and that
        were not read from the plan already; ``pages``: the plan's page of each package
        (where a version the resolution names without a file is fetched from)."""
        chosen = frozenset(n for n in names if self.wants(n))
        wanted: list[_Wanted] = []
        unread: list[str] = []
        for r in resolution.items:
            if r.name not in chosen:
                continue
            read = self.files.get(r.name)
            if not r.url:
                # uv names the version it takes from a page, not the file: the plan's
                # page serves that version (the file read is then the file installed).
                p = pages.get(r.name)
                if read is not None:
                    continue
                if p is None or not r.version:
                    unread.append(
                        f"{r.label()} ({self.tool} names no file for it, and no page "
                        "of the plan serves it)"
                    )
                    continue
                wanted.append(_Wanted(name=r.name, label=r.label(), version=r.version, page=p))
                continue
            url = urldefrag(r.url)[0]
            if not url.endswith(".whl"):
                unread.append(f"{r.label()} (its file is not a wheel: {url})")
                continue
            if read is not None and _same_file(url, read):
                continue  # read before the dry run: the dry run took that very file
            wanted.append(_Wanted(name=r.name, label=r.label(), url=url, sha256=r.sha256))
        if unread and self.ccs:
            self._note(f"--verify-kernels: kernels not read: {'; '.join(unread)}")
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
        by_url = [w for w in wanted if w.url is not None]
        by_version = [w for w in wanted if w.url is None]
        for group, options in ((by_url, self._options), (by_version, self._version_options)):
            if not group:
                continue
            argv = [*self._pip, "download", "--no-deps", *self._target]
            argv += options(group) if callable(options) else options
            argv += ["-d", str(dest), *(w.requirement for w in group)]
            try:
                # On a terminal pip writes there itself (its progress bar); else through us.
                code, _ = foreground(
                    argv, env=self.env, tee=None if self.terminal else self.out, tail_lines=1
                )
            except OSError as exc:
                raise OperationalError(f"cannot run pip download: {exc.strerror or exc}") from None
            if code != 0:
                return [f"pip download of the wheels to read failed (exit {code})"]

        cache = scan_cache(self.env)
        problems: list[str] = []
        unread: list[str] = []
        for w in wanted:
            path = _downloaded(dest, w)
            if path is None:
                # pip took a source distribution (or nothing it could name): no wheel to read.
                unread.append(f"{w.label} (pip download fetched no wheel of it)")
                continue
            if not path.is_file():
                problems.append(f"{w.label}: pip download left no {path.name}")
                continue
            sha = sha256_file(path)
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
            claimed = self.claims.get(w.name)
            if not objects and claimed:
                # A claim the file does not bear out: what reading it exists to catch.
                problems.append(
                    f"{w.label}: {path.name} holds no GPU code (no SASS or PTX in any of "
                    f"its files), but its manifest says it carries {', '.join(claimed)}"
                )
                continue
            if not objects:
                self.kernel_free.add(w.name)
            self.files[w.name] = path
            self.sha256[w.name] = sha
        if unread:
            self._note(f"--verify-kernels: kernels not read: {'; '.join(unread)}")
        return problems

    def _version_options(self, group: Sequence[_Wanted]) -> list[str]:
        """pip download's options for builds fetched by ``name==version``: the user's that
        decide which file pip takes, and each build's page. Under uv, the pages only
        (``--no-index``): uv's index options are another program's."""
        out = list(self._choice) if self.tool == "pip" else ["--no-index"]
        for page in dict.fromkeys(w.page for w in group if w.page):
            out += ["--find-links", page]
        return out


def _downloaded(dest: Path, w: _Wanted) -> Path | None:
    """The file ``pip download`` left for ``w``: the URL's file name, or the one wheel of
    ``w``'s name and version in ``dest`` (None: none, or not one)."""
    if w.url is not None:
        return dest / unquote(urlsplit(w.url).path.rsplit("/", 1)[-1])
    assert w.version is not None
    found = []
    for path in dest.glob("*.whl"):
        try:
            name, version, _, _ = parse_wheel_filename(path.name)
            if name == canonicalize_name(w.name) and version == Version(w.version):
                found.append(path)
        except (InvalidWheelFilename, InvalidVersion):
            continue
    return found[0] if len(found) == 1 else None


def _as_file(p: PackagePlan, uri: str) -> PackagePlan:
    """``p`` (pinned by version on its page) with its line and constraint naming the
    local file ``uri`` instead (extras and marker kept)."""
    line = p.line
    if line:
        try:
            req = Requirement(line)
            line = format_requirement(req.name, url=uri, extras=req.extras, marker=req.marker)
        except InvalidRequirement:
            pass  # not a line this module wrote: left as it is (the constraint names the file)
    constraint = format_requirement(p.name, url=uri) if p.constraint else None
    return replace(p, line=line, constraint=constraint)


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


def _version_pinned(p: PackagePlan) -> bool:
    """A build the plan pins by version on its page (``name==version`` with the page as
    ``--find-links``), the package itself (not another distribution installed for it)."""
    return (
        p.action == "rewrite"
        and p.flavour is not None
        and p.flavour.kind == "index"
        and p.version is not None
        and p.versions is None
        and p.installs is None
        and p.find_links is not None
    )


def _url_pinned(p: PackagePlan) -> bool:
    """A wheel flavour the plan pins by its URL (``name @ https://...whl``)."""
    return (
        p.action == "rewrite"
        and p.wheel
        and p.url is not None
        and urldefrag(p.url)[0].endswith(".whl")
    )
