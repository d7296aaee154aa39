"""pip and uv behind one small interface, driven only through their command lines.

Why command lines: pip has no plugin API and patching ``pip._internal`` breaks
with nearly every pip release; uv is a Rust binary (docs/facts.md section 3). So the
hook reads the user's installer arguments, makes a plan, and hands the installer
the user's arguments untouched plus generated files:

- a constraints file of ``name @ url#sha256=...`` lines (wheel flavours) and
  ``name==version+local`` lines (index flavours, with their per-package
  find-links page). uv replaces ``UV_CONSTRAINT`` when given ``-c``, so we forward
  it; uv also gets the pins as ``--overrides`` so a dependency's exact pin on
  another flavour is replaced (only uv can; under pip that is reported);
- under ``--require-hashes`` the requirement lines themselves are rewritten into a
  generated top-level file (URL lines first), since uv refuses unpinned lines and
  a user's hash of another flavour's file can never match.

Generated files live in a private temporary folder, removed afterwards, also on
Ctrl-C and when the installer fails. User files are only read.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from resolver_hook.errors import OperationalError, UsageError

if TYPE_CHECKING:
    from resolver_hook.reqfile import ReqFile
    from resolver_hook.resolve import Plan

__all__ = [
    "InstallArgs",
    "Installer",
    "find_installer",
    "parse_install_args",
    "private_tempdir",
]

# Options of `pip install` / `uv pip install` that take a value, so the value is
# not mistaken for a requirement. Requirement-bearing ones are handled first.
_VALUE_OPTIONS = frozenset(
    (
        "-t",
        "--target",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--root",
        "--prefix",
        "--src",
        "--upgrade-strategy",
        "-C",
        "--config-settings",
        "--config-setting",
        "--global-option",
        "--no-binary",
        "--only-binary",
        "--progress-bar",
        "--root-user-action",
        "--report",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--python",
        "-p",
        "--log",
        "--keyring-provider",
        "--proxy",
        "--retries",
        "--timeout",
        "--exists-action",
        "--trusted-host",
        "--cert",
        "--client-cert",
        "--cache-dir",
        "--use-feature",
        "--use-deprecated",
        "--no-editable-package",
        "--excludes",
        "-b",
        "--build-constraints",
        "--build-constraint",
        "--extra",
        "--group",
        "--python-platform",
        "--output-format",
        "--torch-backend",
        "--index",
        "--default-index",
        "--index-strategy",
        "-P",
        "--upgrade-package",
        "--upgrade-group",
        "--resolution",
        "--prerelease",
        "--prerelease-package",
        "--fork-strategy",
        "--exclude-newer",
        "--exclude-newer-package",
        "--no-sources-package",
        "--reinstall-package",
        "--link-mode",
        "--config-settings-package",
        "--no-build-isolation-package",
        "--refresh-package",
        "--color",
        "--allow-insecure-host",
        "--directory",
        "--project",
        "--config-file",
        "--overrides",
        "--override",
    )
)
_REQ_FILE = frozenset({"-r", "--requirement", "--requirements"})
_CONSTRAINT_FILE = frozenset({"-c", "--constraint", "--constraints"})
_EDITABLE = frozenset({"-e", "--editable"})
_WITH_VALUE = _REQ_FILE | _CONSTRAINT_FILE | _EDITABLE | _VALUE_OPTIONS


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallArgs:
    """What the user's installer arguments ask for (the arguments themselves stay as given)."""

    tool: str  # "pip" or "uv"
    args: tuple[str, ...]
    requirements: tuple[str, ...] = ()  # positional requirement strings
    requirement_files: tuple[str, ...] = ()
    constraint_files: tuple[str, ...] = ()
    require_hashes: bool = False
    python: str | None = None
    # ``args`` less positional requirements, ``-r`` files and ``--``, in order: what
    # stays when the requirements are handed over another way.
    options: tuple[str, ...] = ()
    # Index in ``args`` of each positional requirement.
    positions: tuple[int, ...] = ()


def _option_with_value(arg: str) -> tuple[str, str | None, str] | None:
    """The option in ``arg`` that takes a value: (option, value if attached, flags before it).

    Read as pip's optparse and uv's clap read them: ``--name=VALUE``, ``--name``,
    ``-rVALUE`` and clustered short options (``-Ur`` is ``-U -r``, ``-qrFILE`` is
    ``-q -r FILE``). None for a requirement, a flag or a cluster of flags.
    """
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        return (name, value if eq else None, "") if name in _WITH_VALUE else None
    if arg.startswith("-"):
        for j in range(1, len(arg)):
            if f"-{arg[j]}" in _WITH_VALUE:
                return f"-{arg[j]}", arg[j + 1 :] or None, arg[:j] if j > 1 else ""
    return None


def parse_install_args(tool: str, args: Sequence[str]) -> InstallArgs:
    """Find the requirements in ``pip install`` / ``uv pip install`` arguments."""
    reqs: list[str] = []
    files: list[str] = []
    constraints: list[str] = []
    options: list[str] = []
    positions: list[int] = []
    values: dict[str, str] = {}
    require_hashes = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # pip and uv read every argument after it as a requirement
            reqs += args[i + 1 :]
            positions += range(i + 1, len(args))
            break
        found = _option_with_value(arg)
        if found is None:
            if arg.startswith("-"):
                options.append(arg)
                require_hashes = require_hashes or arg == "--require-hashes"
            else:
                reqs.append(arg)
                positions.append(i)
            i += 1
            continue
        key, value, flags = found
        span = 1
        if value is None:
            if i + 1 >= len(args):
                raise UsageError(f"{tool} install: option {arg} needs a value")
            value, span = args[i + 1], 2
        taken = args[i : i + span]
        i += span
        if key in _REQ_FILE:
            files.append(value)
            options += [flags] if flags else []
            continue
        options += taken
        if key in _CONSTRAINT_FILE:
            constraints.append(value)
        else:
            values[key] = value
    return InstallArgs(
        tool=tool,
        args=tuple(args),
        requirements=tuple(reqs),
        requirement_files=tuple(files),
        constraint_files=tuple(constraints),
        require_hashes=require_hashes,
        python=values.get("--python") or values.get("-p"),
        options=tuple(options),
        positions=tuple(positions),
    )


# --- finding the installer and its environment ------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Installer:
    """How to run one installer for one environment."""

    tool: str  # "pip" or "uv"
    command: tuple[str, ...]  # e.g. (python, "-m", "pip", "install") or (uv, "pip", "install")
    python: str  # the interpreter whose environment is installed into

    def argv(self, user_args: Sequence[str], extra: Sequence[str]) -> list[str]:
        # Ours first: after a user's "--" every argument is read as a requirement.
        return [*self.command, *extra, *user_args]


# distlib (pip's script maker) writes "#!/bin/sh" and this exec line when the
# interpreter's path has a space or is too long for a "#!" line.
_TRAMPOLINE = re.compile(rb"""'''exec' "?(.+?)"? "\$0" "\$@"\s*""")


def _shebang_python(script: str) -> str | None:
    try:
        with open(script, "rb") as f:
            first, second = f.readline(512), f.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    m = _TRAMPOLINE.fullmatch(second)
    if first.strip() == b"#!/bin/sh" and m:
        path = m.group(1).decode(errors="replace")
        return path if os.path.exists(path) else None
    parts = first[2:].strip().split()
    if not parts:
        return None
    path = parts[0].decode(errors="replace")
    if path.endswith("/env") and len(parts) > 1:
        return shutil.which(parts[1].decode(errors="replace"))
    return path if os.path.exists(path) else None


def _venv_python(venv: str) -> str:
    if sys.platform == "win32":
        return os.path.join(venv, "Scripts", "python.exe")
    return os.path.join(venv, "bin", "python")


def find_uv() -> str:
    found = shutil.which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin  # the `uv` package from PyPI ships the binary

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        raise OperationalError(
            "uv not found on PATH", hint="install it: python3 -m pip install uv"
        ) from None


def find_installer(
    tool: str,
    parsed: InstallArgs,
    env: dict[str, str] | None = None,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> Installer:
    """The installer and environment that typing ``pip`` / ``uv pip`` would hit.

    pip: the active virtual environment, else the ``pip`` first on PATH (its
    interpreter, read from the script's ``#!`` line), else this Python. (pip
    refuses ``--python`` after ``install``, "must be placed before the pip
    subcommand name" since pip 22.3: that pip says so itself.)
    uv: ``--python``, else the active virtual environment, else what
    ``uv python find`` answers (uv's own discovery: ``.venv`` and so on).
    """
    env = dict(os.environ) if env is None else env
    venv = env.get("VIRTUAL_ENV")
    if tool == "pip":
        if venv and os.path.exists(_venv_python(venv)):
            python = _venv_python(venv)
        else:
            pip = shutil.which("pip", path=env.get("PATH"))
            python = (pip and _shebang_python(pip)) or sys.executable
        return Installer(tool="pip", command=(python, "-m", "pip", "install"), python=python)
    uv = find_uv()
    if parsed.python and os.path.exists(parsed.python):
        python = parsed.python
        if os.path.isdir(python):
            python = _venv_python(python)
    elif (
        not parsed.python
        and "--system" not in parsed.options
        and venv
        and os.path.exists(_venv_python(venv))
    ):
        python = _venv_python(venv)
    else:
        # `uv pip install --system` skips virtual environments: so does `uv python find`.
        system = ["--system"] if "--system" in parsed.options else []
        argv = [uv, "python", "find", *system] + ([parsed.python] if parsed.python else [])
        try:
            proc = run(argv, capture_output=True, text=True, env=env, check=False, timeout=60)
        except subprocess.TimeoutExpired:
            raise OperationalError(
                "uv python find did not answer in 60 s",
                hint="activate a virtual environment or pass --python",
            ) from None
        if proc.returncode != 0 or not proc.stdout.strip():
            first = (proc.stderr.strip().splitlines() or ["no interpreter found"])[-1]
            raise OperationalError(
                f"uv found no Python environment to install into: {first}",
                hint="activate a virtual environment or pass --python",
            )
        python = proc.stdout.strip().splitlines()[-1]
    return Installer(tool="uv", command=(uv, "pip", "install"), python=python)


def python_version_of(python: str) -> tuple[int, int]:
    """The major.minor of an interpreter; this one's without a subprocess when it is us."""
    try:
        same = os.path.realpath(python) == os.path.realpath(sys.executable)
    except OSError:
        same = False
    if same:
        return sys.version_info[0], sys.version_info[1]
    try:
        proc = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OperationalError(f"cannot run the target interpreter {python}: {exc}") from None
    m = re.fullmatch(r"(\d+)\.(\d+)\s*", proc.stdout)
    if proc.returncode != 0 or not m:
        raise OperationalError(f"cannot ask {python} for its version")
    return int(m.group(1)), int(m.group(2))


# --- temporary files that never outlive the run ------------------------------------


@contextmanager
def private_tempdir() -> Iterator[Path]:
    """A private (0700) folder removed on exit, on error, on Ctrl-C and on SIGTERM."""
    path = Path(tempfile.mkdtemp(prefix="resolver-hook-"))
    installed = False
    previous: Any = signal.SIG_DFL
    try:

        def on_term(signum: int, frame: object) -> None:
            raise KeyboardInterrupt

        try:
            # None: the old handler was not set from Python; SIG_DFL is what it did.
            previous = signal.signal(signal.SIGTERM, on_term) or signal.SIG_DFL
            installed = True
        except ValueError:  # not the main thread: nothing to install
            pass
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if installed:
            signal.signal(signal.SIGTERM, previous)


# --- what to hand the installer ----------------------------------------------------


def needs_rewrite(parsed: InstallArgs, reqs: ReqFile, env: Mapping[str, str] | None = None) -> bool:
    """Whether requirement lines must be rewritten rather than constrained.

    Under ``--require-hashes`` (given, set by ``PIP_REQUIRE_HASHES`` /
    ``UV_REQUIRE_HASHES``, or implied by any ``--hash``: pip then wants hashes
    everywhere) a user's hash names another flavour's file and can never match,
    and uv refuses requirements that are neither pinned nor URLs. (A
    ``require-hashes`` in pip.conf is not read.)
    """
    env = {} if env is None else env
    variable = "PIP_REQUIRE_HASHES" if parsed.tool == "pip" else "UV_REQUIRE_HASHES"
    return (
        parsed.require_hashes
        or env.get(variable, "").strip().lower() in ("1", "true", "yes", "on")
        or any(e.hashes for e in reqs.requirements)
        or any(o.option == "--require-hashes" for o in reqs.options)
    )


def env_files(env: dict[str, str], name: str) -> list[str]:
    """Files named by ``UV_CONSTRAINT`` / ``UV_OVERRIDE`` (space-separated, as uv reads them)."""
    return env.get(name, "").split()


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """The installer command and the files written for it."""

    argv: tuple[str, ...]
    files: dict[str, str]  # file name in the private folder -> contents


def build_invocation(
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    reqs: ReqFile,
    *,
    folder: Path,
    env: dict[str, str],
    exclude: frozenset[str] = frozenset(),
) -> Invocation:
    """Arguments and generated files for one run. Never adds ``--extra-index-url``.

    ``exclude`` names packages installed later, one by one (``--optional``): their
    pins stay in the constraints, their requirement lines are left out here.
    """
    files: dict[str, str] = {}
    constraints = plan.constraint_lines()
    if constraints:
        files["constraints.txt"] = "".join(f"{c}\n" for c in constraints)
        if installer.tool == "uv":
            files["overrides.txt"] = files["constraints.txt"]
    extra = plan_options(installer, plan, folder, env)
    args = list(parsed.args)
    if needs_rewrite(parsed, reqs, env):
        lines = [line for line in plan.rewritten_lines() if requirement_name(line) not in exclude]
        files["requirements.txt"] = "".join(f"{line}\n" for line in lines)
        args = [*parsed.options, "-r", str(folder / "requirements.txt")]
    elif exclude:
        args = [
            a
            for i, a in enumerate(args)
            if i not in parsed.positions or requirement_name(a) not in exclude
        ]
    return Invocation(argv=tuple(installer.argv(args, extra)), files=files)


def plan_options(installer: Installer, plan: Plan, folder: Path, env: dict[str, str]) -> list[str]:
    """The options that hand the plan to the installer (files written by the caller)."""
    extra: list[str] = []
    if plan.constraints:
        extra += ["-c", str(folder / "constraints.txt")]
        if installer.tool == "uv":
            # uv replaces UV_CONSTRAINT with a command-line -c: pass the user's along.
            for f in env_files(env, "UV_CONSTRAINT"):
                extra += ["-c", f]
            # Only uv can replace a dependency's exact pin on another flavour.
            extra += ["--overrides", str(folder / "overrides.txt")]
            for f in env_files(env, "UV_OVERRIDE"):
                extra += ["--overrides", f]
    for page in plan.find_links:
        extra += ["--find-links", page]
    if installer.tool == "uv":
        from resolver_hook.install.variantwheels import UV_PREVIEW, variant_packages

        if variant_packages(plan):  # docs/facts.md section 3: uv 0.13 needs the preview flag
            extra += UV_PREVIEW
    return extra


def requirement_name(line: str) -> str | None:
    """The canonical project name of a requirement (``--hash`` options allowed), or None."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return canonicalize_name(Requirement(line.split(" --hash", 1)[0]).name)
    except InvalidRequirement:
        return None


def missing_hashes(plan: Plan) -> list[str]:
    """Rewritten lines that pip/uv would refuse under --require-hashes (no hash known)."""
    return [
        p.name
        for p in plan.packages
        if p.action == "rewrite"
        and p.line is not None
        and "#sha256=" not in p.line
        and "--hash=" not in p.line
    ]


# --- running it -------------------------------------------------------------------

_CONFLICT = re.compile(r"^\s+(\S+) (\S+) depends on (\S+?)(==\S+)\s*$")


def run_installer(
    argv: Sequence[str], env: dict[str, str], *, tee: bool, out: Callable[[str], None]
) -> tuple[int, str]:
    """Run the installer; with ``tee``, pass its stdout through and keep the tail.

    pip prints the lines that explain a resolution conflict on stdout; keeping
    them lets us name a dependency's exact pin on another flavour.
    """
    try:
        if not tee:
            return subprocess.call(list(argv), env=env), ""
        tail: list[str] = []
        with subprocess.Popen(
            list(argv), env=env, stdout=subprocess.PIPE, text=True, bufsize=1
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                out(line)
                tail.append(line)
                del tail[:-200]
            code = proc.wait()
    except OSError as exc:  # the installer is missing or cannot be executed
        raise OperationalError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    return code, "".join(tail)


def transitive_conflicts(output: str, plan: Plan) -> list[str]:
    """``app 1.0 pins demo==1.0+cu126`` lines for pinned packages of the plan."""
    from packaging.utils import canonicalize_name

    found = []
    for line in output.splitlines():
        m = _CONFLICT.match(line)
        if not m:
            continue
        p = plan.package(m.group(3))
        if p is not None and p.action == "rewrite" and canonicalize_name(m.group(1)) != p.name:
            found.append(
                f"{m.group(1)} {m.group(2)} pins {m.group(3)}{m.group(4)}, but this "
                f"machine needs {p.name} {p.version}: {p.reason}"
            )
    return found


# --- optional packages: install, import-check, roll back ---------------------------

_LIST_SCRIPT = (
    "import importlib.metadata as m, json\n"
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))\n"
)
# Import every top-level module the distribution installed.
_IMPORT_SCRIPT = (
    "import importlib, importlib.metadata as m, sys\n"
    "d = m.distribution(sys.argv[1])\n"
    "tops = set()\n"
    "for f in d.files or []:\n"
    "    top = f.parts[0] if f.parts else ''\n"
    "    if not top or top == '..' or top.endswith(('.dist-info', '.data', '.pth')):\n"
    "        continue\n"
    "    if len(f.parts) > 1 or top.endswith('.py'):\n"
    "        tops.add(top[:-3] if top.endswith('.py') else top)\n"
    "for top in sorted(tops):\n"
    "    importlib.import_module(top)\n"
)


# Seconds an optional package's import check may take: an import that initialises a
# GPU can block on a driver that does not answer.
IMPORT_TIMEOUT = 300.0


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionalOutcome:
    ok: bool
    reason: str = ""
    restored: str = ""


def installed_versions(python: str) -> dict[str, str]:
    """Canonical name -> version of every distribution in ``python``'s environment."""
    import json

    from packaging.utils import canonicalize_name

    proc = subprocess.run(
        [python, "-c", _LIST_SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    if proc.returncode != 0:
        raise OperationalError(
            f"cannot list the packages of {python}: "
            f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}"
        )
    return {canonicalize_name(k): v for k, v in json.loads(proc.stdout).items()}


def optional_install(
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    requirement: str,
    *,
    folder: Path,
    env: dict[str, str],
    out: Callable[[str], None],
) -> OptionalOutcome:
    """Install one optional package; on failure to install or import, roll it back."""
    name = requirement_name(requirement) or requirement
    p = plan.package(name)
    if p is not None and p.action == "error":
        return OptionalOutcome(ok=False, reason=p.reason)
    line = p.line if p is not None and p.action == "rewrite" and p.line else requirement
    options = list(parsed.options)
    before = installed_versions(installer.python)
    argv = installer.argv([*options, line], plan_options(installer, plan, folder, env))
    code, _ = run_installer(argv, env, tee=False, out=out)
    if code == 0:
        try:
            check = subprocess.run(
                [installer.python, "-c", _IMPORT_SCRIPT, name],
                capture_output=True,
                text=True,
                timeout=IMPORT_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            reason = f"the import did not finish in {IMPORT_TIMEOUT:g} s"
        else:
            if check.returncode == 0:
                return OptionalOutcome(ok=True)
            last = (check.stderr.strip().splitlines() or ["import failed"])[-1]
            reason = f"installed but does not import: {last}"
    else:
        reason = f"{installer.tool} exited with {code}"
    return OptionalOutcome(
        ok=False, reason=reason, restored=_roll_back(installer, options, before, env, out)
    )


def _roll_back(
    installer: Installer,
    options: list[str],
    before: dict[str, str],
    env: dict[str, str],
    out: Callable[[str], None],
) -> str:
    after = installed_versions(installer.python)
    added = sorted(n for n in after if n not in before)
    changed = sorted(n for n in before if after.get(n) != before[n])
    removable = sorted(set(added) | {n for n in changed if n in after})
    if removable:
        if installer.tool == "pip":
            argv = [installer.python, "-m", "pip", "uninstall", "-y", *removable]
        else:
            argv = [
                installer.command[0],
                "pip",
                "uninstall",
                "--python",
                installer.python,
                *removable,
            ]
        run_installer(argv, env, tee=False, out=out)
    if changed:
        pins = [f"{n}=={before[n]}" for n in changed]
        run_installer(installer.argv([*options, "--no-deps", *pins], []), env, tee=False, out=out)
    words = [f"removed {', '.join(added)}"] if added else []
    words += [f"put back {', '.join(f'{n} {before[n]}' for n in changed)}"] if changed else []
    return "; ".join(words)
