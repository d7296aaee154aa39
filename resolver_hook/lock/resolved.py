"""The packages of a lock that have no manifest, resolved by uv for one target.

A lock that leaves out numpy is not a lock. resolver-hook chooses the flavoured
packages; for the rest of the environment :func:`resolve_rest` asks uv (``uv pip
compile --format pylock.toml``) for the target's platform and Python, handing it the
plan's requirement lines, the plan's flavoured pins as constraints and each flavour's
own page as ``--find-links`` (a per-package page: nothing else can come from it), then
takes from uv's answer the wheel each other package installs on the target. The
flavoured packages keep exactly the plan's files (uv must agree with their versions).

uv runs with the user's environment (``UV_*``, uv.toml), so a company index keeps
working; its failure is one error naming uv's own last line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from packaging.utils import canonicalize_name

from resolver_hook._fs import private_tempdir, write_atomic
from resolver_hook._installers import find_uv, missing_uv
from resolver_hook._proc import capture
from resolver_hook._toml import TomlError
from resolver_hook._toml import loads as toml_loads
from resolver_hook.errors import OperationalError
from resolver_hook.host import HostProfile
from resolver_hook.index import Link
from resolver_hook.lock.wheels import LockedWheel, best_link
from resolver_hook.resolve import Plan

__all__ = ["COMPILE_TIMEOUT", "python_platform", "resolve_rest"]

COMPILE_TIMEOUT = 600.0  # a resolution against a large index; a bound, not a guess


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


def resolve_rest(
    plan: Plan,
    flavoured: Sequence[LockedWheel],
    profile: HostProfile,
    *,
    index_url: str,
    env: Mapping[str, str],
    offline: bool = False,
) -> list[LockedWheel]:
    """The wheels of every package of the target's environment that ``flavoured`` lacks;
    ``offline``: uv too reads no network (its ``--offline``: its cache only)."""
    uv = find_uv(env)
    if uv is None:
        raise missing_uv()
    ours = {str(w.name): w for w in flavoured}
    with private_tempdir() as folder:
        write_atomic(folder / "requirements.in", "".join(f"{r}\n" for r in plan.requirements))
        write_atomic(folder / "constraints.txt", "".join(f"{c}\n" for c in plan.constraints))
        argv = [
            *[uv, "pip", "compile", str(folder / "requirements.in")],
            *["-c", str(folder / "constraints.txt"), "--format", "pylock.toml"],
            *["-o", str(folder / "pylock.toml"), "--no-header", "--quiet"],
            *["--python-platform", python_platform(profile), "--python-version", profile.python],
            *["--index-url", index_url, "--only-binary", ":all:"],
            *[a for page in plan.find_links for a in ("--find-links", page)],
            *(["--offline"] if offline else []),
        ]
        done = capture(argv, timeout=COMPILE_TIMEOUT, env=dict(env))
        if not done.ok:
            last = (done.stderr.strip().splitlines() or [done.reason() or "failed"])[-1]
            raise OperationalError(
                f"uv could not resolve the environment for {profile.describe()}: {last}",
                hint="--offline: uv resolved from its cache alone; lock once without --offline"
                if offline
                else "the line above is uv's own; loosen the requirement it names",
            )
        try:
            doc = toml_loads(Path(folder / "pylock.toml").read_text(encoding="utf-8"))
        except (OSError, TomlError) as exc:
            raise OperationalError(f"uv's pylock.toml could not be read: {exc}") from None
    out = []
    for package in doc.get("packages", []):
        name = str(canonicalize_name(str(package.get("name", ""))))
        version = str(package.get("version", ""))
        if name in ours:
            if ours[name].version != version:
                raise OperationalError(
                    f"uv resolved {name} {version}, not the plan's {ours[name].version}"
                )
            continue
        wheel = best_link(_links(package.get("wheels") or []), name, version, profile)
        if wheel is None:
            raise OperationalError(
                f"{name} {version} has no wheel for {profile.describe()}: a pylock.toml lists "
                "wheels to install, and this one would be built from source",
                hint="lock --format requirements leaves it to the installer",
            )
        if wheel.sha256 is None:
            raise OperationalError(f"uv's pylock.toml gives {name} {version} no sha256")
        index = package.get("index")
        out.append(
            LockedWheel(
                name=canonicalize_name(name),
                version=version,
                url=wheel.url,
                sha256=wheel.sha256,
                index=index if isinstance(index, str) else None,
            )
        )
    return out
