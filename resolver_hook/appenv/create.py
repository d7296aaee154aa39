"""``env create`` / ``env sync``: make the venv with uv and run an :class:`EnvPlan`'s passes.

Each pass is one run of the install session (:class:`resolver_hook.install.session.InstallSession`)
with ``uv pip install --python VENV`` and the stack's requirements beside the pass's own:
the session plans them again, so the stack's flavoured pins go to uv as constraints
(and overrides) on every pass. Optional packages go through the session's
``--optional`` path: installed one by one, import-checked, rolled back on failure.

``create`` refuses a folder that exists, and makes it (empty) before ``uv venv`` fills
it, so that of two ``create`` of one folder the second stops; when a required pass
fails (or on Ctrl-C) the venv it made is removed, so no half-built environment is left
at the requested path, and nothing it did not make is.
``sync`` runs the passes in an existing venv and, when one fails, says which passes
were installed.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from resolver_hook.appenv.plan import EnvPass, EnvPlan
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.fs import sigterm_raises
from resolver_hook.install.report import Reporter
from resolver_hook.install.session import InstallSession
from resolver_hook.manifest import Manifest
from resolver_hook.process.foreground import foreground
from resolver_hook.process.which import find_uv, missing_uv, venv_python

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.install.backends import Installer
    from resolver_hook.planner import Planner

__all__ = ["make_environment", "pass_arguments"]


def pass_arguments(step: EnvPass, python: str, stack: tuple[str, ...]) -> list[str]:
    """The ``uv pip install`` arguments (after ``install``) of one pass."""
    args = ["--python", python, *step.options]
    if step.kind == "no-deps":
        return [*args, *step.packages]
    args += list(stack)
    if step.kind == "requirements" and step.file is not None:
        args += ["-r", str(step.file)]
    elif step.kind == "extras":
        args += list(step.packages)
    return args


def _name(requirement: str) -> str:
    return str(canonicalize_name(Requirement(requirement).name))


class _Planned:
    """The machine of an environment plan, whatever the pass's installer."""

    def __init__(self, eplan: EnvPlan) -> None:
        self.eplan = eplan

    def profile_for(self, installer: Installer) -> HostProfile:
        return self.eplan.profile


def _run_passes(
    eplan: EnvPlan,
    venv: Path,
    *,
    manifests: Mapping[str, Manifest],
    planner: Planner,
    report: Reporter,
) -> list[str]:
    """Run every pass; the kinds done. OperationalError when a required pass fails."""
    python = venv_python(str(venv))
    stack = next((p.packages for p in eplan.passes if p.kind == "stack"), ())
    done: list[str] = []
    for number, step in enumerate(eplan.passes, 1):
        what = step.file.name if step.file else ", ".join(step.packages)
        report.say(f"pass {number}/{len(eplan.passes)}, {step.kind}: {what}")
        optional = []
        if step.kind == "optional":
            optional = [p for p in step.packages if _name(p) not in step.skipped]
        for name, reason in step.skipped.items():
            report.warning(f"optional {name} skipped: {reason}")
        session = InstallSession(tool="uv", planner=planner, machine=_Planned(eplan), report=report)
        code = session.install(
            pass_arguments(step, python, stack), manifests=manifests, optional=optional
        )
        if code != 0:
            installed = f" (installed: {', '.join(done)})" if done else ""
            raise OperationalError(
                f"pass {number}, {step.kind}, failed: uv exited with {code}{installed}"
            )
        done.append(step.kind)
    return done


def make_environment(
    eplan: EnvPlan,
    venv: Path,
    *,
    create: bool,
    manifests: Mapping[str, Manifest],
    planner: Planner,
    report: Reporter,
) -> None:
    """Run every pass in ``venv``; with ``create``, first make it with uv's interpreter
    request (refused when it exists), and remove it again when anything fails. The
    passes plan with ``planner`` (its settings' environment is uv's)."""
    env = dict(planner.settings.env)
    if not eplan.ok:
        raise OperationalError(eplan.refused, hint=eplan.hint or None)
    if not create:
        if not Path(venv_python(str(venv))).exists():
            raise UsageError(
                f"{venv} is not a virtual environment",
                hint=f"'resolver-hook env create {venv}' makes one",
            )
        _run_passes(eplan, venv, manifests=manifests, planner=planner, report=report)
        return
    if venv.exists() or venv.is_symlink():
        raise UsageError(
            f"{venv} exists: 'env create' makes a new environment",
            hint=f"'resolver-hook env sync {venv}' installs into an existing one",
        )
    uv = find_uv(env)
    if uv is None:
        raise missing_uv()
    report.say(f"creating {venv} with uv venv --python {eplan.interpreter}")
    with sigterm_raises():
        made = _claim(venv)
        try:
            code, _ = foreground([uv, "venv", "--python", eplan.interpreter, str(venv)], env=env)
            if code != 0:
                raise OperationalError(f"uv venv exited with {code}")
            _run_passes(eplan, venv, manifests=manifests, planner=planner, report=report)
        except BaseException:
            # Only what this process made: the folder it claimed, and the parents it made
            # for it when they are left empty (never a folder another process made).
            shutil.rmtree(venv, ignore_errors=True)
            for parent in made:
                with contextlib.suppress(OSError):
                    parent.rmdir()
            report.warning(f"removed the unfinished environment {venv}")
            raise


def _claim(venv: Path) -> list[Path]:
    """Make the empty folder ``venv`` (and its missing parents) before uv fills it, so
    that a second ``env create`` of the same folder finds it taken and stops, instead of
    failing in ``uv venv`` and removing the first one's environment. The parents this
    made, deepest first; UsageError when ``venv`` exists by now."""
    parents: list[Path] = []
    up = venv.parent
    while not up.exists():
        parents.append(up)
        up = up.parent
    made: list[Path] = []
    try:
        for folder in reversed(parents):
            with contextlib.suppress(FileExistsError):  # made meanwhile: not ours
                folder.mkdir()
                made.insert(0, folder)
        venv.mkdir()
    except FileExistsError:
        raise UsageError(
            f"{venv} exists: 'env create' makes a new environment (another command made "
            "it meanwhile)",
            hint=f"'resolver-hook env sync {venv}' installs into an existing one",
        ) from None
    except OSError as exc:
        raise OperationalError(f"{venv}: cannot make the folder: {exc.strerror or exc}") from None
    return made
