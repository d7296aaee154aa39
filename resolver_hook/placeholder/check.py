"""Prove that a placeholder sdist fails loudly, with real pip and real uv, offline.

Each check installs from a private find-links folder holding only the sdist, with
``--no-index`` and an empty cache (pip and uv cache built wheels and would skip the
build, docs/facts.md section 4), into a throwaway virtual environment: ``python -m venv``
for pip, ``uv venv`` for uv. The expected message is computed by the placeholder's
own runtime on this machine, and every check looks for all of its lines.
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook._patterns import is_project_name
from resolver_hook.errors import UsageError
from resolver_hook.placeholder.data import import_name
from resolver_hook.placeholder.render import runtime

__all__ = [
    "CheckResult",
    "Runner",
    "check_placeholder",
    "extract_sdist",
    "find_uv",
    "shows_message",
]

# (argv, env, cwd, stdin text) -> completed process with text stdout/stderr.
Runner = Callable[
    [Sequence[str], dict[str, str], Path, str | None], "subprocess.CompletedProcess[str]"
]

TIMEOUT = 600
MAX_SDIST_MEMBERS = 10_000
MAX_SDIST_BYTES = 64 << 20
# PEP 508 / core metadata "Name" (https://packaging.python.org/en/latest/specifications/
# name-normalization/): letters, digits, and -_. between them.


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """One check: its name, whether it passed, and what was seen."""

    name: str
    ok: bool
    detail: str = ""


def run_subprocess(
    argv: Sequence[str], env: dict[str, str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``argv``; a command that cannot start or runs past ``TIMEOUT`` seconds is
    reported as a failed process (exit 127 / 124, the reason on stderr), not raised,
    so it becomes a failed check."""
    try:
        return subprocess.run(
            list(argv),
            env=env,
            cwd=cwd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(
            list(argv), 124, "", f"{argv[0]}: no answer after {exc.timeout:g} seconds; stopped"
        )
    except OSError as exc:
        return subprocess.CompletedProcess(
            list(argv), 127, "", f"{argv[0]}: cannot run: {exc.strerror or exc}"
        )


def find_uv() -> str | None:
    """The uv binary: the one the ``uv`` Python package ships, else ``uv`` on PATH."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


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


def extract_sdist(dist: Path, dest: Path) -> Path:
    """Extract the regular files of the sdist ``dist`` into ``dest``; return its one top folder.

    Bounded (at most ``MAX_SDIST_MEMBERS`` members and ``MAX_SDIST_BYTES`` of files: a
    placeholder is a few dozen kilobytes) and confined to ``dest``: an absolute name or a
    ``..`` part is refused, links and devices are skipped. UsageError names ``dist``.
    """
    try:
        with tarfile.open(dist) as tar:
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
                    raise UsageError(
                        f"{dist}: more than {MAX_SDIST_BYTES} bytes of files; not a placeholder"
                    )
                members.append(m)
            # The "data" filter (where this Python has it) re-checks every member.
            extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(dest, members=members, **extra)  # type: ignore[arg-type]
    except (OSError, EOFError, tarfile.TarError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise UsageError(f"{dist}: not a readable sdist: {first}") from None
    roots = [p for p in dest.iterdir() if p.is_dir()] if dest.is_dir() else []
    if len(roots) != 1:
        raise UsageError(f"{dist}: not an sdist: expected one top folder, found {len(roots)}")
    return roots[0]


def _read_sdist(dist: Path, dest: Path) -> tuple[Path, dict[str, str], list[str]]:
    root = extract_sdist(dist, dest)
    if not (root / "PKG-INFO").is_file():
        raise UsageError(f"{dist}: no PKG-INFO at the top of the sdist")
    msg = email.parser.HeaderParser().parsestr((root / "PKG-INFO").read_text(encoding="utf-8"))
    headers = {k: str(v) for k, v in msg.items()}
    # The name picks the file that check_placeholder runs: a project name, never a path.
    name = headers.get("Name", "")
    if not is_project_name(name):
        raise UsageError(f"{dist}: PKG-INFO Name: {name!r} is not a valid project name")
    return root, headers, msg.get_all("Dynamic") or []


def _at_least(version: str, floor: str) -> bool:
    try:
        return Version(version) >= Version(floor)
    except InvalidVersion:
        return False


def check_placeholder(
    dist: str | Path,
    *,
    python: str = sys.executable,
    run: Runner = run_subprocess,
    progress: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run every check on the sdist ``dist``; return the results in order."""
    dist = Path(dist).resolve()
    results: list[CheckResult] = []

    def record(name: str, ok: bool, detail: str = "") -> bool:
        result = CheckResult(name=name, ok=ok, detail=detail)
        results.append(result)
        if progress:
            progress(result)
        return ok

    with tempfile.TemporaryDirectory(prefix="resolver-hook-check-") as tmp_name:
        tmp = Path(tmp_name)
        root, headers, dynamic = _read_sdist(dist, tmp / "sdist")
        name, version = headers["Name"], headers.get("Version", "")
        meta_version = headers.get("Metadata-Version", "")
        record(
            "static metadata (Metadata-Version >= 2.2, no Dynamic)",
            _at_least(meta_version, "2.2") and not dynamic,
            f"Metadata-Version {meta_version}, Dynamic {dynamic}",
        )
        package = import_name(str(canonicalize_name(name)))
        hatch = runtime().escape_hatch(name)
        env = {k: v for k, v in os.environ.items() if k != hatch and not k.startswith("UV_")}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        proc = run([python, str(root / "src" / package / "_placeholder.py")], env, tmp, None)
        expected = proc.stdout
        if not record(
            "the placeholder explains itself on this machine",
            proc.returncode == 0 and f"{name} {version} is a placeholder" in expected,
            (proc.stderr or proc.stdout).strip()[-2000:],
        ):
            return results
        links = tmp / "links"
        links.mkdir()
        shutil.copy2(dist, links / dist.name)
        requirement = f"{name}=={version}"

        twine = run([python, "-m", "twine", "check", "--strict", str(dist)], env, tmp, None)
        if "No module named twine" in twine.stderr:
            record("twine check (skipped: twine is not installed)", True)
        else:
            record(
                "twine check --strict", twine.returncode == 0, (twine.stdout + twine.stderr).strip()
            )

        uv = find_uv()
        installers: list[tuple[str, list[str], list[str]]] = []
        pip_venv = tmp / "venv-pip"
        made = run([python, "-m", "venv", str(pip_venv)], env, tmp, None)
        pip_python = str(_venv_python(pip_venv))
        if record("python -m venv", made.returncode == 0, made.stderr.strip()):
            installers.append(
                (
                    "pip",
                    [pip_python],
                    [
                        pip_python,
                        "-m",
                        "pip",
                        "install",
                        "--no-index",
                        "--find-links",
                        str(links),
                        "--no-cache-dir",
                        requirement,
                    ],
                )
            )
        if uv is None:
            record("uv", False, "uv not found: pip install uv")
        else:
            cache = str(tmp / "uv-cache")
            compile_ = run(
                [
                    uv,
                    "pip",
                    "compile",
                    "-",
                    "--no-index",
                    "--find-links",
                    str(links),
                    "--cache-dir",
                    cache,
                    "--python",
                    python,
                    "--no-header",
                    "--quiet",
                ],
                env,
                tmp,
                requirement + "\n",
            )
            record(
                "uv resolves it without building (static metadata)",
                compile_.returncode == 0 and requirement in compile_.stdout,
                (compile_.stdout + compile_.stderr).strip(),
            )
            uv_venv = tmp / "venv-uv"
            made = run(
                [uv, "venv", str(uv_venv), "--python", python, "--cache-dir", cache, "--quiet"],
                env,
                tmp,
                None,
            )
            uv_python = str(_venv_python(uv_venv))
            if record("uv venv", made.returncode == 0, made.stderr.strip()):
                installers.append(
                    (
                        "uv",
                        [uv_python],
                        [
                            uv,
                            "pip",
                            "install",
                            "--no-index",
                            "--find-links",
                            str(links),
                            "--cache-dir",
                            cache,
                            "--python",
                            uv_python,
                            requirement,
                        ],
                    )
                )
        for tool, (venv_python, *_), install in installers:
            _installed_checks(
                record,
                run,
                tool=tool,
                venv_python=venv_python,
                install=install,
                expected=expected,
                package=package,
                hatch=hatch,
                env=env,
            )
    return results


def _installed_checks(
    record: Callable[[str, bool, str], bool],
    run: Runner,
    *,
    tool: str,
    venv_python: str,
    install: list[str],
    expected: str,
    package: str,
    hatch: str,
    env: dict[str, str],
) -> None:
    """Install without and with the escape hatch, then import and run a submodule."""
    tmp = Path(venv_python).parents[2]  # beside the venv, never inside a package
    hatch_env = dict(env, **{hatch: "1"})
    failed = run(install, env, tmp, None)
    output = failed.stdout + failed.stderr
    record(
        f"{tool} install fails and shows the message",
        failed.returncode != 0 and shows_message(expected, output) and "Traceback" not in output,
        output.strip()[-3000:],
    )
    done = run(install, hatch_env, tmp, None)
    if not record(
        f"{tool} install with {hatch}=1 succeeds",
        done.returncode == 0,
        (done.stdout + done.stderr).strip()[-3000:],
    ):
        return
    for label, argv, shown in (
        # A traceback ending in PlaceholderError, an ImportError subclass.
        (f"import {package}", [venv_python, "-c", f"import {package}"], "PlaceholderError: "),
        # Just the message: the package hides runpy's traceback.
        (
            f"python -m {package}.placeholder.submodule",
            [venv_python, "-m", f"{package}.placeholder.submodule"],
            "",
        ),
    ):
        proc = run(argv, env, tmp, None)
        output = proc.stdout + proc.stderr
        record(
            f"{tool}: {label} fails with the message",
            proc.returncode != 0
            and shows_message(expected, output)
            and shown in output
            and "ModuleNotFoundError" not in output,
            output.strip()[-3000:],
        )


def _venv_python(venv: Path) -> Path:
    if sys.platform == "win32":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"
