"""Find out, with real pip and real uv, whether an sdist or wheel fails loudly.

``check_placeholder`` works on any artifact, ours or not. It installs it the way a
user would, ``pip install NAME==VERSION`` and ``uv pip install NAME==VERSION``, each
into its own throwaway virtual environment, offline (``--no-index``, a private
find-links folder holding only the artifact, plus any ``--find-links`` folders the
caller gives for build backends), with fresh caches (pip and uv cache built wheels and
would skip the build, docs/facts.md section 4) and a scrubbed environment (no pip or uv
configuration, no PYTHONPATH, HOME and TMPDIR inside the check's own folder). It
observes the exit code and output; if the install succeeded it imports the installed
top-level packages with the venv's own interpreter. One verdict per installer:

* ``fails loudly at install``: the install stops (for a resolver-hook placeholder:
  with its whole message and no traceback);
* ``installs, fails at import``: the install succeeds silently; only import complains;
* ``installs silently``: install and import both succeed;
* ``inconclusive``: the build backend or a dependency could not be had offline, or
  the artifact is not for this machine;
* ``fails at install without its message``: a resolver-hook placeholder whose install
  fails some other way.

Only "fails loudly at install" under both installers passes. Nothing from the
artifact is imported or run by this interpreter: an sdist is unpacked only to read
``PKG-INFO`` and, for a resolver-hook placeholder, ``_placeholder_data.json`` (JSON,
read as data: the expected message comes from resolver-hook's own copy of the
runtime). Every command runs in its own process group; the group is killed when the
command ends, times out, or the check is interrupted, so no build process outlives the
check, and the check's folder is removed last.
"""

from __future__ import annotations

import contextlib
import email.parser
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from types import FrameType
from typing import Any

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
)
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import UsageError
from resolver_hook.ground.cache import json_loads
from resolver_hook.ground.patterns import is_project_name
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.limits import (
    MAX_PLACEHOLDER_DATA_BYTES,
    MAX_SDIST_BYTES,
    MAX_SDIST_MEMBERS,
    MAX_SUBPROCESS_OUTPUT,
    parse_wheel_name,
)
from resolver_hook.manifest.urls import url_problem
from resolver_hook.process.proc import capture
from resolver_hook.process.which import find_uv, venv_python
from resolver_hook.publish.lint import lint_paths
from resolver_hook.publish.placeholder.data import import_name
from resolver_hook.publish.placeholder.render import runtime

__all__ = [
    "FAILS_AT_IMPORT",
    "FAILS_LOUDLY",
    "INCONCLUSIVE",
    "INSTALLS_SILENTLY",
    "NO_MESSAGE",
    "CheckInterrupted",
    "CheckReport",
    "CheckResult",
    "Runner",
    "Verdict",
    "check_placeholder",
    "extract_sdist",
    "run_subprocess",
    "shows_message",
]

# (argv, env, cwd) -> completed process with text stdout/stderr.
Runner = Callable[[Sequence[str], dict[str, str], Path], "subprocess.CompletedProcess[str]"]

FAILS_LOUDLY = "fails loudly at install"
FAILS_AT_IMPORT = "installs, fails at import"
INSTALLS_SILENTLY = "installs silently"
INCONCLUSIVE = "inconclusive"
NO_MESSAGE = "fails at install without its message"

TIMEOUT = 600
# How to add what the publish side needs (pyproject.toml's ``publish`` extra).
PUBLISH_EXTRA = "pip install 'resolver-hook[publish]'"
# Variables a scrubbed environment keeps: the command search path, the locale, and
# what a placeholder's own detection reads (its message names this machine; the
# override variables let a check describe another machine, and the tests fake GPUs).
_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "CUDA_VISIBLE_DEVICES")
_KEEP_PREFIX = ("RESOLVER_HOOK_OVERRIDE_",)


class CheckInterrupted(Exception):
    """SIGINT or SIGTERM arrived during a check; processes and folder are gone."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@valueclass
class CheckResult:
    """One step: its name, PASS / FAIL / SKIP, and what was seen."""

    name: str
    status: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "PASS"


@valueclass
class Verdict:
    """What one installer did with the artifact."""

    installer: str
    verdict: str
    detail: str = ""
    # What the end user sees: the install's own output (its last lines), for ``check -v``.
    output: str = ""


@valueclass(kw_only=False, frozen=False)
class CheckReport:
    """Every step and one verdict per installer that could run.

    ``passed`` when every installer that ran fails loudly at install, at least one ran,
    and no step failed; an installer that is not installed is listed in ``missing`` (a
    SKIP step says how to add it) and is neither a pass nor a failure.
    """

    results: list[CheckResult] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return (
            bool(self.verdicts)
            and all(v.verdict == FAILS_LOUDLY for v in self.verdicts)
            and not any(r.status == "FAIL" for r in self.results)
        )


# --- processes ----------------------------------------------------------------------------


def run_subprocess(
    argv: Sequence[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` through the one runner (:func:`resolver_hook.process.proc.capture`): its own
    process group, killed whole when it ends (a build backend's children with it), one
    deadline (``TIMEOUT``), output capped at ``MAX_SUBPROCESS_OUTPUT`` bytes per stream.

    A command that cannot start or runs past the deadline is reported as a failed
    process (exit 127 / 124, the reason on stderr), not raised, so it becomes a failed
    step or verdict.
    """
    result = capture(argv, timeout=TIMEOUT, env=env, cwd=str(cwd), limit=MAX_SUBPROCESS_OUTPUT)
    if result.timed_out:
        reason = f"{argv[0]}: no answer after {TIMEOUT:g} seconds; stopped"
        return subprocess.CompletedProcess(list(argv), 124, result.stdout, reason)
    if result.returncode is None:
        reason = f"{argv[0]}: cannot run: {result.error or 'unknown error'}"
        return subprocess.CompletedProcess(list(argv), 127, "", reason)
    stderr = result.stderr
    if result.truncated:
        stderr += f"\n{argv[0]}: printed more than {MAX_SUBPROCESS_OUTPUT} bytes; stopped"
    return subprocess.CompletedProcess(list(argv), result.returncode, result.stdout, stderr)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """While a check runs, SIGINT and SIGTERM raise :class:`CheckInterrupted` in the main
    thread. The runner then kills the running command's whole process group and waits
    for it, and only after that does the caller's ``with`` remove the folder, so nothing
    recreates files during the cleanup. Later signals are ignored until the cleanup is
    done. Only in the main thread (signals are delivered there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if seen:
            return  # already on the way out
        seen.append(signum)
        raise CheckInterrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old or signal.SIG_DFL)


# --- reading the artifact (as data only) -------------------------------------------------


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def shows_message(expected: str, output: str) -> bool:
    """Whether ``output`` shows every line of ``expected``, in order and together.

    Indentation is ignored (pip and uv indent a backend's output); the first line may
    carry a prefix such as ``tilert._placeholder.PlaceholderError: ``.
    """
    want, have = _lines(expected), _lines(output)
    if not want:
        return False
    for i, line in enumerate(have):
        if line.endswith(want[0]) and have[i + 1 : i + len(want)] == want[1:]:
            return True
    return False


def _why_unreadable(dist: Path, exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if zipfile.is_zipfile(dist):
        return "it is a zip file (a wheel renamed?), not a gzip-compressed tar file"
    if isinstance(exc, tarfile.ReadError):
        return "not a gzip-compressed tar file"
    return (str(exc).splitlines() or [type(exc).__name__])[0].rstrip(":") or type(exc).__name__


def extract_sdist(dist: Path, dest: Path) -> Path:
    """Extract the regular files of the sdist ``dist`` into ``dest``; return its one top folder.

    Bounded (at most ``MAX_SDIST_MEMBERS`` members and ``MAX_SDIST_BYTES`` of files: a
    placeholder is a few dozen kilobytes) and confined to ``dest``: an absolute name or a
    ``..`` part is refused, links and devices are skipped. UsageError names ``dist``.
    """
    try:
        with tarfile.open(dist, "r:gz") as tar:
            members: list[tarfile.TarInfo] = []
            total = 0
            for count, m in enumerate(tar, 1):  # headers only: stops before a bomb's data
                if count > MAX_SDIST_MEMBERS:
                    raise UsageError(f"{dist}: more than {MAX_SDIST_MEMBERS} members")
                if not m.isfile():
                    continue
                if m.name.startswith("/") or ".." in m.name.split("/"):
                    raise UsageError(f"{dist}: unsafe member {m.name!r}")
                total += m.size
                if total > MAX_SDIST_BYTES:
                    raise UsageError(f"{dist}: more than {MAX_SDIST_BYTES} bytes of files")
                members.append(m)
            # The "data" filter (where this Python has it) re-checks every member.
            extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(dest, members=members, **extra)  # type: ignore[arg-type]
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise UsageError(f"{dist}: not a readable sdist: {_why_unreadable(dist, exc)}") from None
    roots = [p for p in dest.iterdir() if p.is_dir()] if dest.is_dir() else []
    if len(roots) != 1:
        raise UsageError(f"{dist}: not an sdist: expected one top folder, found {len(roots)}")
    return roots[0]


@valueclass
class _Artifact:
    path: Path
    kind: str  # sdist, wheel
    name: str
    version: str
    metadata_version: str = ""
    dynamic: tuple[str, ...] = ()
    data: dict[str, Any] | None = None  # a resolver-hook placeholder's data
    data_dir: Path | None = None


def _read_artifact(dist: Path, tmp: Path) -> _Artifact:
    lower = dist.name.lower()
    if lower.endswith(".whl"):
        return _read_wheel(dist)
    if lower.endswith((".tar.gz", ".tgz")):
        return _read_sdist(dist, tmp / "sdist")
    raise UsageError(
        f"{dist}: not an sdist (.tar.gz) or a wheel (.whl)",
        hint="placeholder check installs a built artifact; build one first",
    )


def _read_wheel(dist: Path) -> _Artifact:
    try:
        name, version, _build, _tags = parse_wheel_name(dist.name)
    except InvalidWheelFilename as exc:
        raise UsageError(f"{dist}: not a wheel file name: {exc}") from None
    if not zipfile.is_zipfile(dist):
        raise UsageError(f"{dist}: not a readable wheel: not a zip file")
    return _Artifact(path=dist, kind="wheel", name=str(name), version=str(version))


def _read_sdist(dist: Path, dest: Path) -> _Artifact:
    if zipfile.is_zipfile(dist):
        raise UsageError(
            f"{dist}: not a readable sdist: it is a zip file (a wheel?), "
            "not a gzip-compressed tar file"
        )
    root = extract_sdist(dist, dest)
    pkg_info = root / "PKG-INFO"
    if pkg_info.is_file():
        msg = email.parser.HeaderParser().parsestr(
            pkg_info.read_text(encoding="utf-8", errors="replace")
        )
        name, version = str(msg.get("Name", "")), str(msg.get("Version", ""))
        meta, dynamic = str(msg.get("Metadata-Version", "")), msg.get_all("Dynamic") or []
    else:
        try:
            parsed_name, parsed_version = parse_sdist_filename(dist.name)
        except InvalidSdistFilename:
            raise UsageError(f"{dist}: no PKG-INFO and not an sdist file name") from None
        name, version, meta, dynamic = str(parsed_name), str(parsed_version), "", []
    # The name and version go into an installer's command line: a project name only.
    if not is_project_name(name):
        raise UsageError(f"{dist}: PKG-INFO Name: {name!r} is not a valid project name")
    try:
        version = str(Version(version))
    except InvalidVersion:
        raise UsageError(
            f"{dist}: PKG-INFO Version: {version!r} is not a PEP 440 version"
        ) from None
    data, data_dir = _placeholder_data(root, name)
    return _Artifact(
        path=dist,
        kind="sdist",
        name=name,
        version=version,
        metadata_version=meta,
        dynamic=tuple(map(str, dynamic)),
        data=data,
        data_dir=data_dir,
    )


def _placeholder_data(root: Path, name: str) -> tuple[dict[str, Any] | None, Path | None]:
    """A resolver-hook placeholder's data (JSON, read as data), when the sdist is one."""
    for candidate in sorted((root / "src").glob("*/_placeholder_data.json")):
        if candidate.is_symlink() or not candidate.is_file():
            continue
        if candidate.stat().st_size > MAX_PLACEHOLDER_DATA_BYTES:
            continue
        try:
            data = json_loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # hostile JSON: not ours, then
            continue
        if isinstance(data, dict) and data.get("name") == str(canonicalize_name(name)):
            return data, candidate.parent
    return None, None


# --- the check -------------------------------------------------------------------------


def _scrubbed_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _KEEP or k.startswith(_KEEP_PREFIX)}
    home, cache, temp = tmp / "home", tmp / "cache", tmp / "tmp"
    for folder in (home, cache, temp):
        folder.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        TMPDIR=str(temp),
        XDG_CACHE_HOME=str(cache),
        XDG_CONFIG_HOME=str(home / ".config"),
        PIP_CONFIG_FILE=os.devnull,  # pip loads no configuration file at all
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        UV_NO_CONFIG="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONNOUSERSITE="1",
        NO_COLOR="1",  # plain text from uv; twine 7 ignores it: it runs with --no-color
    )
    return env


# Output that says the install could not even be tried here: the build backend or a
# dependency is not in the offline folders, or no file of the artifact fits this
# machine. pip: "No matching distribution found for X" / "is not a supported wheel";
# uv: "not found in the provided package locations" / "build-system.requires" /
# "has no wheels with a matching" / "no usable wheels".
_NOT_TRIED = re.compile(
    r"No matching distribution found for (?P<pip>\S+)"
    r"|Because (?P<uv>\S+?)(?: was|==\S+ was) not found in the provided package locations"
    r"|build-system\.requires"
    r"|is not a supported wheel on this platform"
    r"|has no wheels with a matching|no usable wheels|Could not find a version that satisfies",
)


def _not_tried(output: str, name: str) -> bool:
    canonical = canonicalize_name(name)
    for match in _NOT_TRIED.finditer(output):
        missing = match.group("pip") or match.group("uv")
        if missing is None:
            return True
        missing_name = re.split(r"[<>=!~;\[ ]", missing, maxsplit=1)[0]
        if canonicalize_name(missing_name) != canonical:
            return True  # a build backend or a dependency, not the artifact itself
    return False


_TOP_LEVEL = r"""
import sys
from importlib import metadata
names = set()
for f in metadata.distribution(sys.argv[1]).files or ():
    parts = f.parts
    if not parts or parts[0].endswith((".dist-info", ".data")) or parts[0] in ("..", "__pycache__"):
        continue
    top = parts[0]
    if len(parts) == 1:
        if not top.endswith((".py", ".so", ".pyd")) or top.startswith("_"):
            continue
        top = top.split(".")[0]
    if top.isidentifier():
        names.add(top)
print("\n".join(sorted(names)))
"""


@valueclass
class _Ctx:
    """What every step of one check shares."""

    run: Runner
    env: dict[str, str]
    folder: Path  # the check's own folder: venvs, caches, links
    work: Path  # the empty folder commands run in
    python: str
    record: Callable[[str, str, str], bool]
    missing: list[str]  # installers that are not there (the report's ``missing``)


@valueclass
class _Installer:
    tool: str
    python: str  # the venv's interpreter
    install: list[str]


def check_placeholder(
    dist: str | Path,
    *,
    find_links: Sequence[str | Path] = (),
    python: str = sys.executable,
    run: Runner = run_subprocess,
    progress: Callable[[CheckResult | Verdict], None] | None = None,
    allow_insecure: bool = False,
) -> CheckReport:
    """Install ``dist`` with pip and with uv offline in throwaway venvs; report what happened.

    A resolver-hook placeholder's URLs (what its message sends people to) must pass the
    URL policy: loopback ``http://`` only with ``allow_insecure`` (``--allow-insecure-urls``).

    Raises UsageError for an input that is not a readable sdist or wheel, and
    :class:`CheckInterrupted` when SIGINT or SIGTERM arrives (after every process it
    started is gone and its folder removed).
    """
    dist = Path(dist).resolve()
    if not dist.is_file():
        raise UsageError(f"{dist}: no such file" if not dist.exists() else f"{dist}: not a file")
    links_extra = [Path(d).resolve() for d in find_links]
    for folder in links_extra:
        if not folder.is_dir():
            raise UsageError(f"--find-links {folder}: not a folder")
    report = CheckReport()

    def record(name: str, status: str, detail: str = "") -> bool:
        result = CheckResult(name=name, status=status, detail=detail)
        report.results.append(result)
        if progress:
            progress(result)
        return status == "PASS"

    with _interruptible(), tempfile.TemporaryDirectory(prefix="resolver-hook-check-") as name:
        folder = Path(name)
        art = _read_artifact(dist, folder)
        env = _scrubbed_env(folder)
        # Commands run in an empty folder: nothing there can be imported by mistake.
        tmp = folder / "work"
        tmp.mkdir()
        ctx = _Ctx(
            run=run,
            env=env,
            folder=folder,
            work=tmp,
            python=python,
            record=record,
            missing=report.missing,
        )
        _static_checks(ctx, art, allow_insecure)
        links = folder / "links"
        links.mkdir()
        shutil.copy2(dist, links / dist.name)
        link_args = [a for d in (links, *links_extra) for a in ("--find-links", str(d))]
        requirement = f"{art.name}=={art.version}"
        expected = _expected_message(art, env)
        for installer in _installers(ctx, art, link_args, requirement):
            verdict = _verdict(ctx, art, installer, expected)
            report.verdicts.append(verdict)
            if progress:
                progress(verdict)
            if art.data is not None and verdict.verdict == FAILS_LOUDLY:
                _escape_hatch_checks(ctx, art, installer, expected)
    return report


def _expected_message(art: _Artifact, env: dict[str, str]) -> str | None:
    """A resolver-hook placeholder's message on this machine, from its data and our
    own runtime (the artifact's copy of the runtime is never run here)."""
    if art.data_dir is None:
        return None
    text: str = runtime().message(env=env, directory=str(art.data_dir))
    return text


def _data_urls(data: object) -> Iterator[str]:
    """Every string of a placeholder's data that is a URL (``scheme://``)."""
    if isinstance(data, dict):
        for value in data.values():
            yield from _data_urls(value)
    elif isinstance(data, list):
        for value in data:
            yield from _data_urls(value)
    elif isinstance(data, str) and "://" in data[:16]:
        yield data


def _static_checks(ctx: _Ctx, art: _Artifact, allow_insecure: bool = False) -> None:
    record, run, env, tmp, python = ctx.record, ctx.run, ctx.env, ctx.work, ctx.python
    if art.kind == "sdist":
        static = False
        with contextlib.suppress(InvalidVersion):
            static = Version(art.metadata_version) >= Version("2.2") and not art.dynamic
        record(
            "static metadata (Metadata-Version >= 2.2, no Dynamic)",
            "PASS" if static else "FAIL",
            f"Metadata-Version {art.metadata_version or 'missing'}, Dynamic {list(art.dynamic)}",
        )
    if art.data is not None:
        refused = [
            problem
            for url in _data_urls(art.data)
            if (problem := url_problem(url, allow_insecure=allow_insecure)) is not None
        ]
        record(
            "its URLs pass the URL policy (https; loopback only with --allow-insecure-urls)",
            "FAIL" if refused else "PASS",
            "\n".join(refused[:5]),
        )
    if art.kind == "wheel":
        findings, _errors = lint_paths([art.path])  # a LintError comes back in _errors
        silent = [f for f in findings if f.code == "silent-placeholder"]
        record(
            "not a placeholder wheel (pip and uv install any wheel silently)",
            "FAIL" if silent else "PASS",
            "; ".join(silent[0].evidence) if silent else "",
        )
    if importlib.util.find_spec("twine") is None:
        record("twine check --strict", "SKIP", f"twine is not installed: {PUBLISH_EXTRA}")
        return
    # twine reads the artifact as data; it runs from this interpreter's site-packages.
    twine = run([python, "-m", "twine", "--no-color", "check", "--strict", str(art.path)], env, tmp)
    record(
        "twine check --strict",
        "PASS" if twine.returncode == 0 else "FAIL",
        (twine.stdout + twine.stderr).strip(),
    )


def _installers(
    ctx: _Ctx, art: _Artifact, link_args: list[str], requirement: str
) -> list[_Installer]:
    record, run, env, python = ctx.record, ctx.run, ctx.env, ctx.python
    tmp, work = ctx.folder, ctx.work
    found: list[_Installer] = []
    # pip: a venv without pip of its own, driven by this interpreter's pip through
    # ``pip --python`` (pip >= 22.3): the install and the build run with the venv's
    # interpreter, and no ensurepip run is needed.
    pip_version = _pip_version()
    if pip_version is None or pip_version < (22, 3):
        have = "not installed" if pip_version is None else "{}.{}".format(*pip_version)
        record(
            "pip",
            "SKIP",
            f"pip is not judged: it needs pip >= 22.3 (pip --python) for this interpreter, "
            f"found {have}: python -m pip install -U pip",
        )
        ctx.missing.append("pip")
    else:
        venv = tmp / "venv-pip"
        made = run([python, "-m", "venv", "--without-pip", str(venv)], env, work)
        vpy = venv_python(str(venv))
        if record("python -m venv", "PASS" if made.returncode == 0 else "FAIL", made.stderr):
            found.append(
                _Installer(
                    tool="pip",
                    python=vpy,
                    install=[
                        *(python, "-m", "pip", "--python", vpy, "install", "--no-index"),
                        *("--no-cache-dir", *link_args, requirement),
                    ],
                )
            )
    uv = find_uv()
    if uv is None:
        record("uv", "SKIP", f"uv is not installed, so only pip is judged: {PUBLISH_EXTRA}")
        ctx.missing.append("uv")
        return found
    cache = str(tmp / "uv-cache")
    venv = tmp / "venv-uv"
    made = run(
        [uv, "venv", str(venv), "--python", python, "--cache-dir", cache, "--quiet", "--no-config"],
        env,
        work,
    )
    vpy = venv_python(str(venv))
    if not record("uv venv", "PASS" if made.returncode == 0 else "FAIL", made.stderr):
        return found
    if art.kind == "sdist":
        wanted = tmp / "requirements.in"  # beside the work folder, never importable
        wanted.write_text(requirement + "\n", encoding="utf-8")
        compiled = run(
            [
                *(uv, "pip", "compile", str(wanted), "--no-index", *link_args),
                *("--cache-dir", cache, "--python", vpy, "--no-header", "--quiet", "--no-config"),
            ],
            env,
            work,
        )
        record(
            "uv resolves it without building (static metadata)",
            "PASS" if compiled.returncode == 0 and requirement in compiled.stdout else "FAIL",
            (compiled.stdout + compiled.stderr).strip(),
        )
    found.append(
        _Installer(
            tool="uv",
            python=vpy,
            install=[
                *(uv, "pip", "install", "--no-index", *link_args, "--cache-dir", cache),
                *("--python", vpy, "--no-config", requirement),
            ],
        )
    )
    return found


def _pip_version() -> tuple[int, int] | None:
    """This interpreter's pip version (major, minor), or None when pip is missing."""

    try:
        release = Version(metadata.version("pip")).release
    except (metadata.PackageNotFoundError, InvalidVersion):
        return None
    major, minor, *_ = (*release, 0, 0)
    return major, minor


def _tail_lines(text: str, count: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-count:])


def _verdict(ctx: _Ctx, art: _Artifact, installer: _Installer, expected: str | None) -> Verdict:
    run, env, tmp = ctx.run, ctx.env, ctx.work
    tool = installer.tool
    done = run(installer.install, env, tmp)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        if _not_tried(output, art.name):
            why = (
                "a build backend or dependency is not available offline, or no file of it "
                "fits this machine; give wheels with --find-links DIR"
            )
            return Verdict(
                installer=tool, verdict=INCONCLUSIVE, detail=why + "\n" + _tail_lines(output)
            )
        seen = _tail_lines(output, 200)
        if expected is None:
            return Verdict(
                installer=tool, verdict=FAILS_LOUDLY, detail=_tail_lines(output), output=seen
            )
        if shows_message(expected, output) and "Traceback" not in output:
            return Verdict(installer=tool, verdict=FAILS_LOUDLY, detail="", output=seen)
        return Verdict(installer=tool, verdict=NO_MESSAGE, detail=_tail_lines(output), output=seen)
    names = run([installer.python, "-I", "-c", _TOP_LEVEL, art.name], env, tmp)
    if names.returncode != 0:
        return Verdict(
            installer=tool,
            verdict=FAILS_AT_IMPORT,
            detail="installed, but its file list cannot be read: " + _tail_lines(names.stderr, 5),
        )
    modules = [m for m in names.stdout.split() if m.isidentifier()]
    failures = []
    for module in modules:
        imported = run([installer.python, "-I", "-c", f"import {module}"], env, tmp)
        if imported.returncode != 0:
            failures.append(f"import {module}: " + _tail_lines(imported.stderr, 5))
    if failures:
        return Verdict(installer=tool, verdict=FAILS_AT_IMPORT, detail="\n".join(failures))
    what = ", ".join(f"import {m}" for m in modules) or "nothing to import"
    return Verdict(
        installer=tool, verdict=INSTALLS_SILENTLY, detail=f"{tool} install: exit 0; {what}: exit 0"
    )


def _escape_hatch_checks(
    ctx: _Ctx, art: _Artifact, installer: _Installer, expected: str | None
) -> None:
    """A resolver-hook placeholder: with the escape hatch it installs, and every import
    still fails with the message."""
    record, run, env, tmp = ctx.record, ctx.run, ctx.env, ctx.work
    if art.data is None or expected is None:
        return
    tool = installer.tool
    hatch = runtime().escape_hatch(art.name)
    done = run(installer.install, dict(env, **{hatch: "1"}), tmp)
    if not record(
        f"{tool} install with {hatch}=1 succeeds",
        "PASS" if done.returncode == 0 else "FAIL",
        _tail_lines(done.stdout + done.stderr),
    ):
        return
    package = str(art.data.get("import_name") or import_name(canonicalize_name(art.name)))
    if not package.isidentifier():
        record(f"{tool}: import {package!r}", "FAIL", "the data's import name is not an identifier")
        return
    for label, argv, shown in (
        # A traceback ending in PlaceholderError, an ImportError subclass.
        (
            f"import {package}",
            [installer.python, "-I", "-c", f"import {package}"],
            "PlaceholderError: ",
        ),
        # Just the message: the package hides runpy's traceback.
        (
            f"python -m {package}.placeholder.submodule",
            [installer.python, "-I", "-m", f"{package}.placeholder.submodule"],
            "",
        ),
    ):
        proc = run(argv, env, tmp)
        output = proc.stdout + proc.stderr
        ok = (
            proc.returncode != 0
            and shows_message(expected, output)
            and shown in output
            and "ModuleNotFoundError" not in output
        )
        record(
            f"{tool}: {label} fails with the message", "PASS" if ok else "FAIL", _tail_lines(output)
        )
