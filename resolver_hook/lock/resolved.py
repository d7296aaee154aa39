"""The packages of a lock that have no manifest, resolved by uv for one target.

A lock that leaves out numpy is not a lock. resolver-hook chooses the flavoured
packages; for the rest of the environment :func:`resolve_rest` asks uv (``uv pip
compile --format pylock.toml``) for the target's platform and Python, handing it the
plan's requirement lines, the plan's flavoured pins as constraints and each flavour's
own page as ``--find-links`` (a per-package page: nothing else can come from it), then
takes from uv's answer the wheel each other package installs on the target. The
flavoured packages keep exactly the plan's files (uv must agree with their versions).
A requirement given as a URL (uv's ``archive``) keeps that URL with the sha256 uv read
of its file; a VCS checkout or a folder cannot be a pylock wheel and is refused.

:func:`resolve_environment` is the same resolution for a requirements lock: every
package of uv's answer with the sha256 of each of its files. uv is handed the user's
index settings (:mod:`resolver_hook.lock.indexes`); none set, it runs with its own
(``uv.toml``, else PyPI), so a company index keeps working. Its failure is one error
naming uv's own last line. uv waits ``--timeout`` for each read of a server
(``UV_HTTP_TIMEOUT``, its read timeout, unless the user set one of uv's own timeout
variables), as the hook's own reads do; the whole resolution is bounded by
:data:`COMPILE_TIMEOUT`.

pip is not the fallback: ``pip install --dry-run --report --platform`` evaluates the
requirements' markers for the running machine, not the target, so it cannot lock
another target; without uv a whole-environment lock is one error naming the fix.

uv's explanation of a failure names the application, not the dependency that failed
it (``app depends on demo-gpu==1.0+cu126`` in the middle, ``you require app`` last).
:class:`UvResolutionFailed` keeps each ``X depends on REQ`` of it, and
:func:`named_dependency` judges the first such dependency that has a manifest on the
target: the rule its pinned build fails, the build the plan pins instead, or that the
requirements do not name it (only a package the plan pins is handed to uv with its
files).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name

from resolver_hook.errors import OperationalError
from resolver_hook.ground.fs import private_tempdir, write_atomic
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.ground.userinfo import redact
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.host import HostProfile
from resolver_hook.index import Link
from resolver_hook.lock.indexes import LockIndexes
from resolver_hook.lock.stable import preferences_text
from resolver_hook.lock.wheels import LockedWheel, best_link
from resolver_hook.process.proc import capture
from resolver_hook.process.which import find_uv, missing_uv
from resolver_hook.resolve import Plan

__all__ = [
    "COMPILE_TIMEOUT",
    "ResolvedPackage",
    "UvResolutionFailed",
    "named_dependency",
    "python_platform",
    "resolve_environment",
    "resolve_rest",
    "unfit_direct",
]

COMPILE_TIMEOUT = 600.0  # a resolution against a large index; a bound, not a guess
# uv's read timeout and the two names it also takes for it (uv's crates/uv-static
# env_vars.rs): one the user set is theirs, not replaced by --timeout.
_UV_TIMEOUTS = ("UV_HTTP_TIMEOUT", "UV_REQUEST_TIMEOUT", "HTTP_TIMEOUT")


def _uv_waits(env: dict[str, str], timeout: float | None) -> tuple[dict[str, str], str]:
    """``env`` with uv's read timeout set to ``timeout`` (whole seconds, at least 1: uv
    takes an integer) where the user set none of uv's own; and that wait in words."""
    for name in _UV_TIMEOUTS:
        if env.get(name, "").strip():
            return env, f"{name} ({env[name].strip()} s per read)"
    if timeout is None:
        return env, "uv's own timeout"
    env["UV_HTTP_TIMEOUT"] = str(max(1, math.ceil(timeout)))
    return env, f"--timeout ({env['UV_HTTP_TIMEOUT']} s per read)"


def python_platform(profile: HostProfile) -> str:
    """uv's ``--python-platform`` for the target (glibc floor from its libc version)."""
    arch = profile.arch
    if profile.os == "linux":
        if profile.libc == "musl":
            return f"{arch}-unknown-linux-musl"
        if profile.libc_version:
            major, _, minor = profile.libc_version.partition(".")
            return f"{arch}-manylinux_{major}_{minor}"
        return f"{arch}-unknown-linux-gnu"
    if profile.os == "macos":
        return f"{arch}-apple-darwin"
    if profile.os == "windows":
        return f"{arch}-pc-windows-msvc"
    raise OperationalError(f"uv cannot resolve for {profile.os} {arch}")


def _links(files: Sequence[Mapping[str, object]]) -> list[Link]:
    """uv's pylock wheel entries as page links, for :func:`best_link`."""
    out = []
    for f in files:
        url, name, hashes = f.get("url"), f.get("name"), f.get("hashes")
        if not isinstance(url, str):
            continue
        sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
        out.append(
            Link(
                url=url,
                filename=name if isinstance(name, str) else url.rsplit("/", 1)[-1],
                hashes={"sha256": sha256} if isinstance(sha256, str) else {},
            )
        )
    return out


@valueclass
class ResolvedPackage:
    """One package of uv's answer: its version, its files with sha256, its index."""

    name: NormalizedName
    version: str
    files: tuple[Link, ...]  # every wheel uv lists (and the sdist, when not binary only)
    index: str | None = None
    # A requirement given as a URL: that URL (the user's own where a line names it), or
    # a VCS checkout pinned to the commit uv resolved (``git+URL@COMMIT``); None for a
    # package from an index. ``files`` then holds the archive's one file with its sha256
    # (none for a VCS checkout or a local folder: they cannot be hashed).
    direct: str | None = None
    source_only: bool = False  # a VCS checkout or a folder: built, never a listed file


def _asked_urls(plan: Plan) -> dict[NormalizedName, tuple[str, frozenset[str]]]:
    """The URL of each requirement line of ``plan`` given as ``name @ URL``, by name,
    with the sha256s the line says its file has (its ``#sha256=`` and ``--hash``)."""
    out: dict[NormalizedName, tuple[str, frozenset[str]]] = {}
    for line in plan.requirements:
        if line.startswith("-"):
            continue
        text, *options = line.split(" --")
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.url:
            said = [o.removeprefix("hash=sha256:") for o in options if o.startswith("hash=sha256:")]
            fragment = _url_sha256(req.url)
            claimed = frozenset(h.strip().lower() for h in [*said, *filter(None, [fragment])])
            out.setdefault(canonicalize_name(req.name), (req.url, claimed))
    return out


def _direct(
    package: Mapping[str, object], folder: Path, asked: str | None
) -> tuple[str | None, list[Link], bool]:
    """A package of uv's pylock.toml that is a URL requirement: the URL to lock it by,
    its archive's file (with uv's sha256) and whether it is a source only (VCS, folder);
    ``(None, [], False)`` for a package from an index."""
    archive, vcs, directory = package.get("archive"), package.get("vcs"), package.get("directory")
    if isinstance(archive, dict):
        url, path = archive.get("url"), archive.get("path")
        if isinstance(path, str) and not isinstance(url, str):
            url = (folder / path).resolve().as_uri()  # relative to uv's output
        if not isinstance(url, str):
            return None, [], False
        where = asked or url
        file = where.split("#", 1)[0]
        name = unquote(urlsplit(file).path.rsplit("/", 1)[-1])  # '+' written as %2B
        return where, _links([{**archive, "url": file, "name": name}]), False
    if isinstance(vcs, dict):
        kind, url, commit = vcs.get("type"), vcs.get("url"), vcs.get("commit-id")
        if not (isinstance(kind, str) and isinstance(url, str)):
            return None, [], False
        pinned = f"{kind}+{url}" + (f"@{commit}" if isinstance(commit, str) else "")
        sub = vcs.get("subdirectory")
        return pinned + (f"#subdirectory={sub}" if isinstance(sub, str) else ""), [], True
    if isinstance(directory, dict):
        path = directory.get("path")
        if isinstance(path, str):
            return asked or (folder / path).resolve().as_uri(), [], True
    return None, [], False


def resolve_environment(
    plan: Plan,
    profile: HostProfile,
    *,
    indexes: LockIndexes,
    env: Mapping[str, str],
    leave_out: Collection[str] = (),
    only_binary: bool = True,
    offline: bool = False,
    keep: Mapping[NormalizedName, str] | None = None,
    upgrade: Sequence[str] | bool = False,
    timeout: float | None = None,
) -> list[ResolvedPackage]:
    """Every package of the target's environment as uv resolves it (``uv pip compile
    --python-platform --python-version``), the plan's lines as requirements and its pins
    as constraints. ``leave_out``: packages whose lines uv is not handed (a flavour whose
    page cannot be read: uv could not read it either). ``keep``: the pins of the lock
    already written (:mod:`resolver_hook.lock.stable`), kept where they still fit unless
    ``upgrade`` (True: every package; names: those). ``timeout``: the most uv waits for
    each read of a server (``--timeout``)."""
    uv = find_uv(env)
    if uv is None:
        raise missing_uv()
    gone = {canonicalize_name(n) for n in leave_out}
    pages = {p.find_links for p in plan.packages if p.name in gone and p.find_links}
    with private_tempdir() as folder:
        write_atomic(
            folder / "requirements.in",
            "".join(f"{r}\n" for r in _unclaimed(_kept(plan.requirements, gone))),
        )
        write_atomic(
            folder / "constraints.txt", "".join(f"{c}\n" for c in _kept(plan.constraints, gone))
        )
        if keep and upgrade is not True:
            # uv reads an existing -o file's pins as preferences (lock/stable.py).
            write_atomic(folder / "pylock.toml", preferences_text(keep), sync=False)
        ups = (
            []
            if isinstance(upgrade, bool)
            else [a for n in upgrade for a in ("--upgrade-package", n)]
        )
        argv = [
            *[uv, "pip", "compile", str(folder / "requirements.in")],
            *["-c", str(folder / "constraints.txt"), "--format", "pylock.toml"],
            *["-o", str(folder / "pylock.toml"), "--no-header", "--quiet"],
            *["--python-platform", python_platform(profile), "--python-version", profile.python],
            *(["--only-binary", ":all:"] if only_binary else []),
            *(["--offline"] if offline else []),
            *ups,
            *[a for page in plan.find_links if page not in pages for a in ("--find-links", page)],
        ]
        uv_env, wait = _uv_waits(indexes.uv_env(env), timeout)
        done = capture(argv, timeout=COMPILE_TIMEOUT, env=uv_env)
        if not done.ok:
            last = (done.stderr.strip().splitlines() or [done.reason() or "failed"])[-1]
            if offline:
                hint = "--offline: uv resolved from its cache alone; lock once without --offline"
            elif last.strip().endswith("operation timed out"):
                # A stalled server, not an unsatisfiable requirement.
                hint = f"a server uv read did not answer within {wait}; try again or raise it"
            else:
                hint = "the line above is uv's own; loosen the requirement it names"
            raise UvResolutionFailed(
                f"uv could not resolve the environment for {profile.describe()}: {last}",
                hint=hint,
                plan=plan,
                dependencies=uv_dependencies(done.stderr),
            )
        try:
            doc = toml_loads(Path(folder / "pylock.toml").read_text(encoding="utf-8"))
        except (OSError, TomlError) as exc:
            raise OperationalError(f"uv's pylock.toml could not be read: {exc}") from None
    asked = _asked_urls(plan)
    out = []
    for package in doc.get("packages", []):
        name = canonicalize_name(str(package.get("name", "")))
        files = _links(package.get("wheels") or [])
        sdist = package.get("sdist")
        if isinstance(sdist, dict):
            files += _links([sdist])
        # A requirement given as a URL is locked as that URL, not as name==version
        # (which an installer would take from the index: another file, or none).
        url, claimed = asked.get(name, (None, frozenset()))
        direct, archive, source_only = _direct(package, folder, url)
        version = str(package.get("version", ""))
        read = archive[0].sha256 if archive else None
        if claimed and read is not None and read not in claimed:
            # The line names its file by sha256 (pip's meaning); uv took that on trust.
            raise OperationalError(
                f"{name} {version} is asked for as {redact(str(direct))}, whose sha256 is "
                f"not its file's: the file is sha256:{read}",
                hint="correct the line's sha256 (its #sha256= or --hash) to the file's, or "
                "leave it out (the lock writes the sha256 of the file it reads)",
            )
        index = package.get("index")
        out.append(
            ResolvedPackage(
                name=name,
                version=version,
                files=tuple(files + archive),
                index=index if isinstance(index, str) else None,
                direct=direct,
                source_only=source_only,
            )
        )
    return out


class UvResolutionFailed(OperationalError):
    """uv found no environment for ``plan``'s target; ``dependencies``: each ``(who,
    requirement)`` its explanation says one package depends on."""

    def __init__(
        self,
        message: str,
        *,
        hint: str | None,
        plan: Plan,
        dependencies: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message, hint=hint)
        self.plan = plan
        self.dependencies = tuple(dependencies)


# "app==1.0 depends on demo-gpu==1.0+cu126", "all versions of app depend on x>=1,<2":
# a specifier is clauses that each begin with an operator (", we can conclude" is not).
_DEPENDS = re.compile(
    r"(?P<who>[A-Za-z0-9][A-Za-z0-9._-]*)(?:[=!<>~]=\S+?)? depends? on "
    r"(?P<req>[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?"
    r"(?:[=!<>~]=?[^\s,]+(?:,[=!<>~]=?[^\s,]+)*)?)"
)


def uv_dependencies(text: str) -> list[tuple[str, str]]:
    """Each ``(who, requirement)`` uv's explanation ``text`` names, in its order, once."""
    flat = " ".join(text.split())  # a message wrapped to the terminal's width
    found = [(m["who"], m["req"]) for m in _DEPENDS.finditer(flat)]
    return list(dict.fromkeys(found))


def named_dependency(
    exc: UvResolutionFailed,
    managed: Collection[str],
    judge: Callable[[str], Plan],
) -> OperationalError:
    """``exc`` said again for the first dependency of uv's explanation that has a
    manifest (``managed``: their names): ``judge`` plans that requirement alone for the
    target; the error names who depends on it and the rule that fails. ``exc`` itself
    where none has a manifest."""
    head = f"uv could not resolve the environment for {exc.plan.profile.describe()}"
    for who, text in exc.dependencies:
        try:
            name = canonicalize_name(Requirement(text).name)
        except InvalidRequirement:
            continue
        if name not in managed:
            continue
        alone = next((p for p in judge(text).packages if p.name == name), None)
        if alone is None:
            continue
        ours = next((p for p in exc.plan.packages if p.name == name), None)
        says = f"{head}: {who} depends on {text}"
        if alone.action == "error":
            rule = (alone.refusal or alone.reason).replace("\n  ", "; ")
            return OperationalError(
                f"{says}, and {rule}",
                hint=alone.hint or f"lock for a machine that {text} runs on",
            )
        version = alone.entry_version
        if ours is not None and ours.entry_version is not None and ours.entry_version != version:
            return OperationalError(
                f"{says}, and the plan pins {name} {ours.entry_version} for this machine "
                f"({ours.reason}); {text} runs here as {name} {version}",
                hint=f"pin {name}=={version} in the requirements to lock the build {who} needs",
            )
        if ours is None:
            served = alone.url or alone.find_links or "its manifest's pages"
            return OperationalError(
                f"{says}, a package with a manifest that the requirements do not name: its "
                f"build for this machine ({name} {version}) is served from {served}, which "
                "uv is handed only for a package the plan pins",
                hint=f"add {text} to the requirements: the plan pins its build and the "
                "lock holds it",
            )
    return exc


def _url_sha256(url: str) -> str | None:
    """The sha256 a URL's fragment names (``#sha256=hex``, among ``&``-joined items)."""
    items = (item.split("=", 1) for item in url.partition("#")[2].split("&") if "=" in item)
    return dict(items).get("sha256")


def _unclaimed(lines: Sequence[str]) -> list[str]:
    """``lines`` with the ``sha256=`` of each URL's fragment left out: uv resolving takes
    it on trust as the file's (it names it without hashing what it reads), so uv is
    handed the bare URL and hashes the file, which is then checked against the URL."""
    out = []
    for line in lines:
        try:
            url = Requirement(line.split(" --", 1)[0]).url
        except InvalidRequirement:
            url = None
        if url is None or _url_sha256(url) is None:
            out.append(line)
            continue
        base, _, fragment = url.partition("#")
        rest = "&".join(x for x in fragment.split("&") if not x.startswith("sha256="))
        out.append(line.replace(url, base + (f"#{rest}" if rest else ""), 1))
    return out


def _kept(lines: Sequence[str], gone: Collection[NormalizedName]) -> list[str]:
    """``lines`` less those naming a package of ``gone``."""
    if not gone:
        return list(lines)
    out = []
    for line in lines:
        try:
            name = canonicalize_name(Requirement(line.split(" --", 1)[0]).name)
        except InvalidRequirement:
            out.append(line)
            continue
        if name not in gone:
            out.append(line)
    return out


def unfit_direct(
    package: ResolvedPackage, profile: HostProfile, *, wheels_only: bool
) -> OperationalError | None:
    """Why a package asked for as a URL cannot be locked for ``profile``: a wheel whose
    tags do not install there, or (``wheels_only``: a pylock.toml) a source to build;
    None when it can (or is no URL requirement)."""
    if package.direct is None:
        return None
    asked = f"{package.name} {package.version} is asked for as {redact(package.direct)}"
    # A wheel by its path: a signed download URL has a query after the filename.
    wheel = urlsplit(package.direct).path.endswith(".whl")
    if package.source_only or not wheel:
        if not wheels_only:
            return None  # the installer builds it
        return OperationalError(
            f"{asked}, a source to build: a pylock.toml lists wheels to install",
            hint="lock --format requirements keeps the URL and leaves the build to the installer",
        )
    if best_link(package.files, package.name, package.version, profile) is not None:
        return None
    return OperationalError(
        f"{asked}, a wheel that does not install on {profile.describe()}",
        hint="give the requirement a marker that is false on that target, or lock the target apart",
    )


def resolve_rest(
    plan: Plan,
    flavoured: Sequence[LockedWheel],
    profile: HostProfile,
    *,
    indexes: LockIndexes,
    env: Mapping[str, str],
    keep: Mapping[NormalizedName, str] | None = None,
    upgrade: Sequence[str] | bool = False,
    offline: bool = False,
    timeout: float | None = None,
) -> list[LockedWheel]:
    """The wheels of every package of the target's environment that ``flavoured`` lacks
    (``keep``, ``upgrade``, ``offline``, ``timeout``: as for :func:`resolve_environment`)."""
    ours = {str(w.name): w for w in flavoured}
    out = []
    resolved = resolve_environment(
        plan,
        profile,
        indexes=indexes,
        env=env,
        keep=keep,
        upgrade=upgrade,
        offline=offline,
        timeout=timeout,
    )
    for package in resolved:
        name, version = str(package.name), package.version
        if name in ours:
            if ours[name].version != version:
                raise OperationalError(
                    f"uv resolved {name} {version}, not the plan's {ours[name].version}"
                )
            continue
        wheel = best_link(package.files, name, version, profile)
        unfit = unfit_direct(package, profile, wheels_only=True)
        if unfit is not None:
            raise unfit
        if wheel is None:
            raise OperationalError(
                f"{name} {version} has no wheel for {profile.describe()}: a pylock.toml lists "
                "wheels to install, and this one would be built from source",
                hint="lock --format requirements leaves it to the installer",
            )
        if wheel.sha256 is None:
            raise OperationalError(f"uv's pylock.toml gives {name} {version} no sha256")
        out.append(
            LockedWheel(
                name=package.name,
                version=version,
                # The URL asked for, as asked (its fragment, #sha256=, is the entry's hashes).
                url=package.direct.split("#", 1)[0] if package.direct else wheel.url,
                sha256=wheel.sha256,
                index=package.index,
            )
        )
    return out
