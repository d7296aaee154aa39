"""What is installed in a Python environment: names, versions, wheel tags.

This interpreter's environment is read with :mod:`importlib.metadata`
(:func:`this_environment`, whose ``path`` points it at other directories, e.g. a
folder of ``.dist-info`` directories in tests). Another environment, the one a user's
``pip`` would install into, is read by running a small stdlib-only script with its
interpreter (:func:`environment_of`): resolver-hook may be installed once with pipx
or ``uv tool`` and used in every project (docs/design.md, "Acts where the user would").
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.cache import json_loads
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.process.proc import Runner, capture

__all__ = [
    "Environment",
    "Installed",
    "archive_sha256",
    "environment_of",
    "parse_environment",
    "this_environment",
]

PYTHON_TIMEOUT = 30.0

# Run by the other environment's interpreter: stdlib only, Python >= 3.8, one JSON
# object on stdout. '' (the current directory) is dropped from sys.path so that a
# checkout being worked on does not pass for an installed package.
_SCRIPT = r"""
import json, sys
sys.path[:] = [p for p in sys.path if p]
from importlib import metadata
dists = []
for d in metadata.distributions():
    try:
        name = d.metadata["Name"]
        if not name:
            continue
        wheel = d.read_text("WHEEL") or ""
    except Exception:
        continue
    tags = [l.split(":", 1)[1].strip() for l in wheel.splitlines() if l.startswith("Tag:")]
    try:
        direct = d.read_text("direct_url.json") or ""
    except Exception:
        direct = ""
    dists.append({"name": name, "version": d.version, "tags": tags, "direct_url": direct[:65536]})
print(json.dumps({
    "python": "%d.%d" % sys.version_info[:2],
    "implementation": sys.implementation.name,
    "executable": sys.executable,
    "prefix": sys.prefix,
    "distributions": dists,
}))
"""


@valueclass
class Installed:
    """One installed distribution. ``tags`` come from its ``WHEEL`` file (empty when
    it was not installed from a wheel, or the file is missing)."""

    name: NormalizedName
    display_name: str
    version: str
    tags: tuple[str, ...] = ()
    # The sha256 of the file it was installed from, where the installer recorded it
    # (PEP 610's direct_url.json, written for a URL or file install): see archive_sha256.
    sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "version": self.version,
            "tags": list(self.tags),
            "sha256": self.sha256,
        }


def archive_sha256(text: str) -> str | None:
    """The sha256 a ``direct_url.json`` (PEP 610) records of the archive installed: its
    ``archive_info.hashes`` (pip), the older ``archive_info.hash``, or the URL's
    ``#sha256=`` fragment (uv keeps the hash only there); None for anything else."""
    try:
        data = json_loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    info = data.get("archive_info")
    found: object = None
    if isinstance(info, dict):
        hashes = info.get("hashes")
        if isinstance(hashes, dict):
            found = hashes.get("sha256")
        if not found and isinstance(info.get("hash"), str) and info["hash"].startswith("sha256="):
            found = info["hash"][len("sha256=") :]
    url = data.get("url")
    if not found and isinstance(url, str) and "#sha256=" in url:
        found = url.split("#sha256=", 1)[1].split("&", 1)[0]
    if not isinstance(found, str):
        return None
    found = found.lower()
    return found if len(found) == 64 and all(c in "0123456789abcdef" for c in found) else None


@valueclass
class Environment:
    """A Python environment: its interpreter and what is installed in it."""

    python: str  # "3.12"
    implementation: str  # "cp", "pp"
    executable: str
    prefix: str
    distributions: tuple[Installed, ...]
    source: str  # "this interpreter" or "--python PATH"

    def to_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "implementation": self.implementation,
            "executable": self.executable,
            "prefix": self.prefix,
            "source": self.source,
            "distributions": len(self.distributions),
        }


def _implementation(name: str) -> str:
    return {"cpython": "cp", "pypy": "pp"}.get(name, name)


def _dedupe(items: Iterable[Installed]) -> tuple[Installed, ...]:
    """First of each name wins, as for ``import`` (the earlier ``sys.path`` entry)."""
    seen: dict[str, Installed] = {}
    for item in items:
        seen.setdefault(item.name, item)
    return tuple(sorted(seen.values(), key=lambda i: i.name))


def this_environment(path: Sequence[str] | None = None) -> Environment:
    """The running interpreter's environment (``path``: search these directories
    instead of ``sys.path``). Distributions with unreadable metadata are skipped."""
    # Imported here: an install imports this module to read another environment (a
    # child process), and importlib.metadata costs every install its import otherwise.
    from importlib import metadata

    found = []
    dists = metadata.distributions() if path is None else metadata.distributions(path=list(path))
    for d in dists:
        try:
            name = d.metadata["Name"]
            version = d.version
            wheel = d.read_text("WHEEL") or ""
            direct = d.read_text("direct_url.json") or ""
        except Exception:  # a broken .dist-info must not take the report down
            continue
        if not name or not version:
            continue
        tags = tuple(
            line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")
        )
        found.append(
            Installed(
                name=canonicalize_name(name),
                display_name=name,
                version=version,
                tags=tags,
                sha256=archive_sha256(direct),
            )
        )
    return Environment(
        python=f"{sys.version_info[0]}.{sys.version_info[1]}",
        implementation=_implementation(sys.implementation.name),
        executable=sys.executable,
        prefix=sys.prefix,
        distributions=_dedupe(found),
        source="this interpreter" if path is None else f"{os.pathsep.join(path)}",
    )


def environment_of(
    python: str,
    *,
    run: Runner = capture,
    timeout: float = PYTHON_TIMEOUT,
    where: str | None = None,
) -> Environment:
    """The environment of another interpreter, read by running it.

    UsageError (exit 2) when ``python`` is not an executable file; OperationalError
    (exit 1) with the reason when it runs but does not answer as expected. ``where``
    names the interpreter in messages (default ``--python PATH``).
    """
    where = where or f"--python {python}"
    if not os.path.isfile(python):
        raise UsageError(
            f"{where}: no such file",
            hint="give the interpreter of the environment, e.g. .venv/bin/python",
        )
    if not os.access(python, os.X_OK):
        raise UsageError(f"{where}: not executable")
    # -E: ignore PYTHONPATH and friends, which would add directories pip never installs to.
    # The runner kills the interpreter's whole process group on timeout: a wrapper that
    # starts `sleep 1000` leaves nothing behind.
    done = run([python, "-E", "-c", _SCRIPT], timeout=timeout)
    if done.timed_out:
        raise OperationalError(f"{where}: no answer after {timeout:g} s")
    if done.error is not None:
        raise OperationalError(f"{where}: {done.error}")
    if done.truncated:
        raise OperationalError(f"{where}: {done.reason()}")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise OperationalError(f"{where}: listing its packages failed: {last}")
    return parse_environment(done.stdout, where=where)


def parse_environment(text: str, *, where: str) -> Environment:
    """Read the JSON the script prints; OperationalError naming what is wrong."""

    def bad(problem: str) -> OperationalError:
        return OperationalError(f"{where}: unexpected answer: {problem}")

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad(f"not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise bad("expected an object")
    for key in ("python", "executable"):
        if not isinstance(data.get(key), str):
            raise bad(f"{key!r} missing or not a string")
    python = data["python"]
    parts = python.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise bad(f"python {python!r} is not a version like 3.12")
    items = data.get("distributions")
    if not isinstance(items, list):
        raise bad("'distributions' missing or not a list")
    found = []
    for i, d in enumerate(items):
        if not (
            isinstance(d, dict)
            and isinstance(d.get("name"), str)
            and isinstance(d.get("version"), str)
        ):
            raise bad(f"distributions[{i}] has no name and version")
        tags = d.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise bad(f"distributions[{i}].tags is not a list of strings")
        direct = d.get("direct_url")
        found.append(
            Installed(
                name=canonicalize_name(d["name"]),
                display_name=d["name"],
                version=d["version"],
                tags=tuple(tags),
                sha256=archive_sha256(direct) if isinstance(direct, str) else None,
            )
        )
    return Environment(
        python=python,
        implementation=_implementation(str(data.get("implementation", "cpython"))),
        executable=data["executable"],
        prefix=str(data.get("prefix", "")),
        distributions=_dedupe(found),
        source=where,
    )
