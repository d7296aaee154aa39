"""The install use-case: plan, preflight, run the installer, clean up, optional installs.

pip has no plugin API and patching ``pip._internal`` breaks with nearly every pip
release; uv is a Rust binary (docs/facts.md section 3). So the hook reads the user's
installer arguments, makes a plan, and hands the installer the user's arguments
untouched plus generated files:

- a constraints file of ``name @ url#sha256=...`` lines (wheel flavours) and
  ``name==version+local`` lines (index flavours, with their per-package
  find-links page). uv replaces ``UV_CONSTRAINT`` when given ``-c``, so we forward
  it. Unless ``--no-proof``, the installer first runs as a dry run with these files,
  its resolution is held to the plan and exactly that set is installed
  (:mod:`resolver_hook.install.checked`, which also decides where uv's
  ``--overrides`` may replace a dependency's exact pin on another flavour); with
  ``--no-proof`` uv gets every pin as ``--overrides``;
- under ``--require-hashes`` the requirement lines themselves are rewritten into a
  generated top-level file (URL lines first), since uv refuses unpinned lines and
  a user's hash of another flavour's file can never match.

Generated files live in a private temporary folder, removed afterwards, also on
Ctrl-C, on SIGTERM and when the installer fails. User files are only read. The
installer runs in the terminal's process group with SIGINT/SIGTERM forwarded
(:func:`resolver_hook.process.foreground.foreground`); an interrupted session raises
:class:`resolver_hook.ground.signals.Interrupted` after cleaning up (exit 128+N).

Everything said goes through a :class:`~resolver_hook.install.report.Reporter`; the command
line prints it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground import timings as _timings
from resolver_hook.ground.credentials import installer_netrc
from resolver_hook.ground.fs import private_tempdir, write_atomic
from resolver_hook.ground.record import NOWHERE, Recorder, path_kind
from resolver_hook.ground.userinfo import has_credentials
from resolver_hook.ground.valueclass import replace, valueclass
from resolver_hook.install.args import InstallArgs, parse_install_args, requirement_name
from resolver_hook.install.backends import Installer, find_installer
from resolver_hook.install.launch import PIN_FIELDS, install_main, run_installer
from resolver_hook.install.pipconfig import implied_constraints
from resolver_hook.install.uvcache import SessionCache, take_early
from resolver_hook.manifest.twins import Family, families
from resolver_hook.process.installers import parse_pip_version, pip_said
from resolver_hook.process.which import venv_python
from resolver_hook.reqfile import ReqEntry, ReqFile, is_url_line, read_requirements

if TYPE_CHECKING:
    from packaging.utils import NormalizedName

    from resolver_hook.host import HostProfile
    from resolver_hook.install.checked import Checked
    from resolver_hook.install.kernels import KernelReader
    from resolver_hook.install.report import Reporter
    from resolver_hook.manifest import Manifest
    from resolver_hook.planner import Planner
    from resolver_hook.process.foreground import PipSteps
    from resolver_hook.resolve import Plan

__all__ = [
    "InstallSession",
    "Invocation",
    "Machine",
    "build_invocation",
    "needs_rewrite",
    "pip_started",
    "private_tempdir",
    "run_installer",
]


# --- the use-case ------------------------------------------------------------------


class Machine(Protocol):
    """The machine a session plans for, once the installer (so its Python) is known."""

    def profile_for(self, installer: Installer) -> HostProfile:
        """The profile to plan for when installing with ``installer``."""


@valueclass
class InstallSession:
    """One install with ``tool``: the planner (the settings, the pages, the plans: its
    ``read_pages=False`` plans the manifests as given), the machine, where words go.

    ``proof``: ask the installer what it would install first and hold it to the plan
    (:mod:`resolver_hook.install.checked`); off, the installer runs unchecked.
    ``strict``: refuse a package the plan cannot judge on this machine (cause
    ``unjudged``) instead of passing it to the installer with a warning.
    ``verify_kernels``: read the flavoured wheels' kernels before installing them
    (:mod:`resolver_hook.install.kernels`; needs the checked resolution); None: only
    those whose kernel list the plan assumes, on a detected machine; False: none.
    ``record``: where what the plan read is declared, and the installer's launch
    (an unchecked install's plan is stored by it: :mod:`resolver_hook._plancache`).
    """

    tool: str
    planner: Planner
    machine: Machine
    report: Reporter
    proof: bool = True
    verify_kernels: bool | None = None
    strict: bool = False
    record: Recorder = NOWHERE

    def install(
        self,
        installer_args: Sequence[str],
        *,
        manifests: Mapping[str, Manifest],
        optional: Sequence[str] = (),
        ahead: PipSteps | None = None,
    ) -> int:
        """Plan the requirements in ``installer_args``, check, run the installer; its
        exit code. The pages of the packages a plan needs (those asked for, then those
        arriving as dependencies) are read into ``manifests``. ``ahead``: pip's
        interpreter, started by the command line already (:func:`pip_started`), for the
        dry run, or for an unchecked install the install itself.

        1 when a package has no fit or a source build's needs are not met (the installer
        never runs); the installer's own code otherwise.
        """
        env = dict(self.planner.settings.env)
        parsed = parse_install_args(self.tool, installer_args)
        installer = find_installer(self.tool, parsed, env, record=self.record)
        started, ahead, uv_cache = ahead, None, None
        try:
            if self.proof:
                # The check's modules are imported only for a run that checks.
                from resolver_hook.install.checked import pip_ahead

                # pip's interpreter starts while the plan is made (its dry run's process),
                # where the command line did not start it already.
                ahead = pip_ahead(installer, parsed, env, started=started)
                if installer.tool == "uv":
                    # uv's runs share one cache where the user's is off, the interpreter's
                    # facts asked for while the plan is made.
                    uv_cache = _uv_cache(installer, env)
                    if uv_cache is not None:
                        env = uv_cache.env(env)
            else:
                # Unchecked: the interpreter the program started runs the install itself
                # where it takes the install's words (launch.install_main), else stops.
                ahead = started
            return self._install(installer, parsed, env, manifests, optional, ahead, uv_cache)
        finally:
            if ahead is not None:  # stopped where no dry run or install took it
                ahead.close()
            if uv_cache is not None:
                uv_cache.close()

    def _install(  # noqa: PLR0917 - the session's state, passed down
        self,
        installer: Installer,
        parsed: InstallArgs,
        env: dict[str, str],
        manifests: Mapping[str, Manifest],
        optional: Sequence[str],
        ahead: PipSteps | None,
        uv_cache: SessionCache | None,
    ) -> int:
        tool, report, planner, record = self.tool, self.report, self.planner, self.record
        with _timings.phase("machine"):
            profile = self.machine.profile_for(installer)
        implied = implied_constraints(
            tool,
            env,
            _prefix(installer.python, record),
            record,
            isolated=planner.settings.indexes.given.isolated,
        )
        if implied.files:
            report.say(
                f"planned with the constraints the installer reads from {implied.source}: "
                f"{' '.join(implied.files)}"
            )
        # uv reads '-r -' from standard input (pip has no such spelling: it says so itself).
        stdin = _read_stdin() if tool == "uv" and "-" in parsed.requirement_files else None
        with _timings.phase("plan"):
            reqs = read_requirements(
                parsed.requirement_files,
                [*parsed.requirements, *optional],
                constraints=[*parsed.constraint_files, *implied.files],
                stdin=stdin,
                record=record,
            )
        if planner.read_pages:
            with _timings.phase("pages"):
                manifests = planner.pages_for(manifests, reqs)
        else:
            manifests = planner.pages(manifests)  # env's passes: as given, through the mirrors
        with _timings.phase("plan"):
            plan = planner.plan(reqs, manifests, profile)
        plan, pinned = planner.mirror_hashes(plan, profile)  # env's passes on a mirror
        for line in pinned:
            report.say(f"note: {line}")
        optional_names = frozenset(requirement_name(o) or o for o in optional)
        blocking = [p for p in plan.errors if p.name not in optional_names]
        if blocking:
            report.no_fit(plan)
            report.refused(
                f"nothing was installed: no build of {', '.join(p.name for p in blocking)} "
                f"fits {profile.describe()}"
            )
            return 1
        unjudged = [p for p in plan.unjudged if p.name not in optional_names]
        if self.strict and unjudged:
            for p in unjudged:
                report.error(f"{p.name}: {p.reason}", None)
            report.refused(
                f"nothing was installed: --strict, and {', '.join(p.name for p in unjudged)} "
                f"cannot be judged on {profile.describe()}"
            )
            return 1
        if plan.variants:
            from resolver_hook.install.variantwheels import pip_refusal, uv_variant_env

            if installer.tool == "pip":
                raise pip_refusal(plan, reqs, manifests, profile)
            env = {**env, **uv_variant_env(profile, env)}
        if plan.builds:
            from resolver_hook.toolchain.preflight import preflight

            # A source build that would fail late on its toolchain fails now, with the fix.
            failures = preflight(plan)
            for line in failures:
                report.error(line)
            if failures:
                report.refused(
                    "nothing was installed: a source build's needs are not met "
                    "('resolver-hook doctor --build' shows the toolchain)"
                )
                return 1
        session = _Session(
            manifests=manifests,
            planner=planner,
            profile=profile,
            proof=self.proof,
            optional=optional,
            verify_kernels=self.verify_kernels,
            record=record,
            uv_cache=uv_cache,
        )
        return _run(
            installer,
            parsed,
            plan,
            reqs,
            env=env,
            session=session,
            report=report,
            stdin=stdin,
            ahead=ahead,
        )


def pip_started(
    tool: str, parsed: InstallArgs, env: Mapping[str, str], *, proof: bool
) -> PipSteps | None:
    """pip's interpreter for :meth:`InstallSession.install` (``ahead``), which stops it
    where no dry run or install takes it; the caller stops it where that never runs.
    Checked (``proof``), the dry run's: the one the program started
    (:mod:`resolver_hook.install.pipearly`) where it is for this pip, else one started
    now, before the manifests are read. Unchecked, the install's: the one the program
    started, if any. Only in an active virtual environment, where finding the installer
    runs nothing (else the session finds it, once). (uv's counterpart, the query of the
    interpreter: :func:`resolver_hook.install.uvcache.start_early`.)"""
    venv = env.get("VIRTUAL_ENV")
    if tool != "pip" or not venv or path_kind(venv_python(venv)) is None:
        return None
    from resolver_hook.install import pipearly

    if not proof:
        return pipearly.take_early()
    from resolver_hook.install.checked import pip_ahead

    installer = find_installer(tool, parsed, env)
    return pip_ahead(installer, parsed, env, started=pipearly.take_early())


def _uv_cache(installer: Installer, env: Mapping[str, str]) -> SessionCache | None:
    """uv's cache of the session: the one started with the program for this uv and
    interpreter, else one started here (None where uv's cache is on)."""
    uv = installer.command[0]
    early = take_early(uv, installer.python)
    return early if early is not None else SessionCache.start(uv, installer.python, env)


@valueclass
class _Session:
    """What a session needs beyond the plan: to plan dependencies and to check."""

    manifests: Mapping[str, Manifest]
    planner: Planner
    profile: HostProfile
    proof: bool
    optional: Sequence[str]
    verify_kernels: bool | None = None
    record: Recorder = NOWHERE
    uv_cache: SessionCache | None = None  # uv's runs' cache, where the user's is off


def _read_stdin() -> bytes:
    """Standard input, read once for the plan and handed to uv again (a pipe or a file:
    a terminal is refused, as a pipe nobody writes to is after a few seconds)."""
    from resolver_hook.ground.input import InputError, read_input

    try:
        return read_input("/dev/stdin")
    except InputError as exc:
        raise OperationalError(f"-r -: standard input {exc.problem}", hint=exc.hint) from None


# pip reads 'name @ url' lines in a constraints file from 21.1 on (docs/facts.md
# section 3); an older one stops with "Links are not allowed as constraints".
PIP_URL_CONSTRAINTS = (21, 1)


def _check_url_constraints(python: str, record: Recorder) -> str | None:
    """Refuse a pip too old for URL constraints. Returns what pip said of its version
    where the proof's check may take it as its own (:func:`pip_said`): a pip outside a
    virtual environment is then started once, not twice."""
    said, alone = pip_said(python, record=record)
    have = parse_pip_version(said)
    if have is not None and have < PIP_URL_CONSTRAINTS:
        floor = "{}.{}".format(*PIP_URL_CONSTRAINTS)
        raise OperationalError(
            f"pip {have[0]}.{have[1]} (of {python}) cannot read the plan's URL constraints: "
            f"that needs pip >= {floor}",
            hint=f"upgrade it: {python} -m pip install 'pip>={floor}'",
        )
    return said if alone else None


def _prefix(python: str, record: Recorder) -> Path | None:
    """The environment of ``python`` when it is a virtual environment's (pip's site file
    is ``PREFIX/pip.conf``); None otherwise."""
    root = Path(python).parent.parent
    return root if path_kind(str(root / "pyvenv.cfg"), record) == 1 else None


def _run(  # noqa: PLR0915 - one session, in the order it runs
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    reqs: ReqFile,
    *,
    env: dict[str, str],
    session: _Session,
    report: Reporter,
    stdin: bytes | None = None,
    ahead: PipSteps | None = None,
) -> int:
    optional = session.optional
    said = None  # pip's words for its version, once asked
    if installer.tool == "pip" and any(is_url_line(c) for c in plan.constraints):
        said = _check_url_constraints(installer.python, session.record)
    rewriting = needs_rewrite(parsed, reqs, env)
    unhashed = missing_hashes(plan) if rewriting else []
    if unhashed:
        raise OperationalError(
            f"--require-hashes: no sha256 is known for {', '.join(unhashed)} "
            "(an index flavour, or a manifest without sha256)",
            hint="add the hash to the requirement line or the manifest, or drop --require-hashes",
        )
    for line in plan.explain_lines():
        report.say(line)
    if rewriting:
        report.say("--require-hashes: requirement lines rewritten (URL lines first)")
    why_not: str | None = "--no-proof"
    if session.proof:
        # The check's modules are imported only for a run that checks.
        from resolver_hook.install.checked import (
            kernel_reader,
            proof_unavailable,
            read_planned_kernels,
        )

        why_not = proof_unavailable(installer, parsed, said=said)
    if session.verify_kernels and why_not is not None:
        raise UsageError(
            "--verify-kernels reads the wheels of the installer's checked resolution, "
            f"which this run does not have ({why_not})",
            hint="drop --no-proof, or use a pip of 22.2 or newer",
        )
    _say_notes(installer, plan, why_not, report)
    # What is entered on the stack (pip's dry run's process, waiting to install) is
    # closed before the private folder is removed.
    with private_tempdir() as folder, contextlib.ExitStack() as stack:
        env = _hand_credentials(installer.tool, folder, env, session, report)
        # Unchecked, the interpreter started ahead runs the install (where it takes it).
        steps: PipSteps | None = ahead if why_not is not None else None
        reader = None
        if why_not is None:
            # The wheels the plan pins by URL read first, from one download, and named by
            # their local files from here on (None: refused, said already).
            with _timings.phase("proof"):
                reader = kernel_reader(
                    installer,
                    parsed,
                    plan,
                    session.profile,
                    asked=session.verify_kernels,
                    folder=folder,
                    env=env,
                    report=report,
                )
                localized = read_planned_kernels(reader, plan, report) if reader else plan
            if localized is None:
                return 1
            plan = localized
        inv = build_invocation(
            installer, parsed, plan, reqs, folder=folder, env=env,
            exclude=frozenset(requirement_name(o) or o for o in optional),
        )  # fmt: skip
        if stdin is not None:  # what uv reads for '-r -': the bytes we read, again
            write_atomic(folder / "stdin.txt", stdin, sync=False)
        argv = inv.argv
        if why_not is None:
            if session.uv_cache is not None:
                session.uv_cache.wait()  # the interpreter's facts, asked while planning
            with _timings.phase("proof"):
                checked, plan = _checked(
                    installer, parsed, plan, reqs, inv, folder, env, session, report, reader, stack,
                    ahead=ahead,
                )  # fmt: skip
            steps = checked.steps
            if checked.code is not None:
                return checked.code
            argv = checked.argv
            stdin = None  # the resolved set is a file of its own: '-r -' was read already
        twins = _twin_families(plan, session) if why_not is not None else ()
        if (
            why_not is not None
            and stdin is None
            and not optional
            and env.get("NETRC") != str(folder / "netrc")
        ):
            # What a replay of this plan starts (resolver_hook._plancache): nothing after
            # this point depends on the plan but the words for a failure, and the twins
            # said after installing (their families kept with the launch).
            _announce_launch(installer, argv, inv.files, folder, env, plan, session.record, twins)
        with _timings.phase("install"):
            code = _install_main(
                installer, argv, env, plan, report, folder if stdin else None, steps,
                session.record,
            )  # fmt: skip
        if code != 0:
            return code
        if twins:  # unchecked: the twin distributions the install left side by side
            # (a replay says the same: resolver_hook.install.launch)
            from resolver_hook.install.twins import said_twins

            for text in said_twins(installer.python, twins):
                report.warning(text)
        if optional:
            # --optional only: its install, import check and rollback (the files kept of
            # what it replaces: install.replaced) stay off every other install's imports.
            from resolver_hook.install.optional import optional_install
        for requirement in optional:
            with _timings.phase("optional"):
                outcome = optional_install(
                    installer, parsed, plan, requirement, folder=folder, env=env, out=report.output
                )
            if outcome.ok:
                report.say(f"optional {requirement}: installed and imports")
            else:
                report.warning(f"optional {requirement} skipped: {outcome.reason}")
                if outcome.restored:
                    report.warning(f"rolled back: {outcome.restored}")
    return 0


def _hand_credentials(
    tool: str, folder: Path, env: dict[str, str], session: _Session, report: Reporter
) -> dict[str, str]:
    """``env`` with ``NETRC`` naming the private netrc (``folder/netrc``) that hands
    ``tool`` the credentials only resolver-hook was given (a manifest's page, a mirror:
    :func:`resolver_hook.ground.credentials.installer_netrc`); ``env`` itself when none is
    needed. A run that hands credentials is never stored for a replay (its netrc goes
    with the folder)."""
    index = session.planner.settings.indexes.default
    given: tuple[str, ...] = ()
    if index is not None and has_credentials(index.url):
        given = (urlsplit(index.url).hostname or "",)
    made = installer_netrc(env, tool=tool, given=given)
    if made is None:
        return env
    text, hosts = made
    path = folder / "netrc"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    report.say(
        f"{', '.join(hosts)}: the credentials given in a URL are handed to {tool} for this "
        "run (a private netrc named by NETRC in its environment, removed when it exits)"
    )
    return {**env, "NETRC": str(path)}


def _twin_families(plan: Plan, session: _Session) -> tuple[Family, ...]:
    """The families an unchecked install's environment is read for after installing:
    every one, when the plan names a member of one; else none (nothing is read).
    install.twins is imported only here and after: a checked install never loads it."""
    from resolver_hook.install.twins import may_have_twins

    names = [p.name for p in plan.packages]
    names += [p.distribution for p in plan.packages if p.installs]
    known = families(session.manifests, names)
    return known if may_have_twins(names, known) else ()


def _say_notes(installer: Installer, plan: Plan, why_not: str | None, report: Reporter) -> None:
    """Why the resolution is not checked first (but for ``--no-proof``), what uv's
    overrides then do, and the plan's notes."""
    if why_not is not None and why_not != "--no-proof":
        report.say(f"note: {why_not}")
    if installer.tool == "uv" and plan.constraints and why_not is not None:
        report.say(
            "uv: flavour pins passed as --overrides too, so a dependency's exact pin on "
            "another flavour is replaced"
        )
    for note in plan.notes:
        report.say(f"note: {note}")


def _checked(  # noqa: PLR0917 - the session's state, passed down
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    reqs: ReqFile,
    inv: Invocation,
    folder: Path,
    env: dict[str, str],
    session: _Session,
    report: Reporter,
    reader: KernelReader | None,
    stack: contextlib.ExitStack,
    *,
    ahead: PipSteps | None = None,
) -> tuple[Checked, Plan]:
    """The installer's resolution checked against the plan, and the plan it was checked
    against: dependencies with a manifest that the plan never saw are planned like
    requested ones and checked once more. ``stack`` closes pip's dry run's process that
    waits to run the install; ``ahead``: pip's interpreter started before the plan, for
    the first dry run."""
    from resolver_hook.install.checked import Checked, check_resolution, read_planned_kernels

    exclude = frozenset(requirement_name(o) or o for o in session.optional)
    for again in (True, False):
        # pip's dry run's process is closed as this check ends, unless it waits to run
        # the install: then as the session's folder goes.
        with contextlib.ExitStack() as attempt:
            checked = check_resolution(
                installer,
                parsed,
                plan,
                reqs,
                argv=inv.argv,
                folder=folder,
                env=env,
                manifests=session.manifests,
                report=report,
                extra=installer.plan_options(plan, folder, env),
                replan=again,
                kernels=reader,
                stack=attempt,
                ahead=ahead if again else None,
            )
            if checked.steps is not None:
                stack.enter_context(attempt.pop_all())
        if not checked.unplanned:
            return checked, plan
        planned = _plan_dependencies(reqs, checked.unplanned, checked.pulled_by, session, report)
        if isinstance(planned, int):
            return Checked(code=planned), plan
        plan, reqs, manifests = planned
        session = replace(session, manifests=manifests)
        if reader is not None:
            localized = read_planned_kernels(reader, plan, report)
            if localized is None:
                return Checked(code=1), plan
            plan = localized
        inv = build_invocation(
            installer, parsed, plan, reqs, folder=folder, env=env, exclude=exclude
        )
    raise AssertionError("unreachable: the second check never hands packages back")


def _plan_dependencies(
    reqs: ReqFile,
    found: Mapping[NormalizedName, Sequence[str]],
    pulled_by: Mapping[NormalizedName, Sequence[str]],
    session: _Session,
    report: Reporter,
) -> tuple[Plan, ReqFile, Mapping[str, Manifest]] | int:
    """Plan again with the dependencies that have a manifest, each with the requirements
    its dependents put on it (their pages read first); 1 when one of them has no fit."""
    entries = []
    for name, specs in found.items():
        text = f"{name}{','.join(specs)}"
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            text, requirement = name, Requirement(name)
        who = "; ".join(pulled_by.get(name, ())) or "uv does not say of which package"
        report.say(f"{name} arrives as a dependency ({who}): planned like a requested package")
        entries.append(
            ReqEntry(
                kind="requirement",
                text=text,
                source=f"required by {who}",
                requirement=requirement,
                name=canonicalize_name(requirement.name),
            )
        )
    more = ReqFile(entries=(*reqs.entries, *entries), files=reqs.files, warnings=reqs.warnings)
    if session.planner.read_pages:
        # With the requirements' option lines: an -i line names the index they are read on.
        arriving = ReqFile(entries=(*reqs.options, *entries), files=(), warnings=())
        manifests = session.planner.pages_for(session.manifests, arriving)
    else:
        manifests = session.planner.pages(session.manifests)  # as given, through the mirrors
    plan = session.planner.plan(more, manifests, session.profile)
    plan, pinned = session.planner.mirror_hashes(plan, session.profile)
    for line in pinned:
        report.say(f"note: {line}")
    blocking = [p for p in plan.errors if p.name in found]
    if blocking:
        report.no_fit(plan)
        report.refused(
            f"nothing was installed: no build of {', '.join(p.name for p in blocking)} "
            f"(arriving as a dependency) fits {session.profile.describe()}"
        )
        return 1
    for line in plan.explain_lines():
        if line.split(":", 1)[0] in found:
            report.say(line)
    return plan, more, manifests


def _install_main(  # noqa: PLR0917 - the session's state, passed down
    installer: Installer,
    argv: Sequence[str],
    env: dict[str, str],
    plan: Plan,
    report: Reporter,
    stdin_in: Path | None,
    steps: PipSteps | None = None,
    record: Recorder = NOWHERE,
) -> int:
    """Run the main install (nothing to run: success); ``stdin_in``: the folder whose
    ``stdin.txt`` holds what uv reads for ``-r -``; ``steps``: the process of pip's dry
    run, waiting to run it; ``record`` is told once the installer runs."""
    if not argv:
        return 0
    given = os.open(stdin_in / "stdin.txt", os.O_RDONLY) if stdin_in is not None else None
    try:
        return install_main(
            installer.tool,
            argv,
            env,
            lambda: plan.pins,
            out=report.output,
            error=lambda text, hint: report.error(text, hint=hint),
            stdin=given,
            steps=steps,
            started=record.running,
        )
    finally:
        if given is not None:
            os.close(given)


def _announce_launch(  # noqa: PLR0917 - what the installer is started with
    installer: Installer,
    argv: Sequence[str],
    files: Mapping[str, str],
    folder: Path,
    env: Mapping[str, str],
    plan: Plan,
    record: Recorder,
    twins: Sequence[Family],
) -> None:
    """Tell ``record`` the command the installer starts with: the arguments (those in
    the private folder by their names in it), the generated files, the variables
    changed from the process's own (never the others: they may hold credentials), the
    pins a failure is explained with, and the twin families said after installing."""
    from resolver_hook.install.twins import launch_twins

    inside = f"{folder}{os.sep}"
    shown: list[tuple[int, str]] = [
        (1, a[len(inside) :]) if a.startswith(inside) else (0, a) for a in argv
    ]
    if any(str(folder) in a for _, a in shown) or any(str(folder) in t for t in files.values()):
        return  # the folder named otherwise: a replay could not name its own
    record.launched(
        {
            "tool": installer.tool,
            "argv": shown,
            "files": dict(files),
            "folder": str(folder),
            "env": {k: v for k, v in env.items() if os.environ.get(k) != v},
            "unset": sorted(k for k in os.environ if k not in env),
            "pins": [{k: getattr(p, k) for k in PIN_FIELDS} for p in plan.pins],
            "twins": launch_twins(installer.python, twins) if twins else {},
        },
    )


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


@valueclass
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
    """Arguments and generated files for one run, the files written to ``folder``.
    Never adds ``--extra-index-url``.

    ``exclude`` names packages installed later, one by one (``--optional``): their
    pins stay in the constraints, their requirement lines are left out here.
    """
    files: dict[str, str] = {}
    constraints = plan.constraint_lines()
    if constraints:
        files["constraints.txt"] = "".join(f"{c}\n" for c in constraints)
        if installer.tool == "uv":
            files["overrides.txt"] = files["constraints.txt"]
    extra = installer.plan_options(plan, folder, env)
    args = list(parsed.args)
    # A flavour that is another distribution or extras (cupy as cupy-cuda12x) cannot
    # travel in a constraints file: the requirement lines are rewritten.
    renamed = any(p.installs is not None and p.action == "rewrite" for p in plan.packages)
    if needs_rewrite(parsed, reqs, env) or renamed:
        lines = [line for line in plan.rewritten_lines() if requirement_name(line) not in exclude]
        files["requirements.txt"] = "".join(f"{line}\n" for line in lines)
        args = [*parsed.options, "-r", str(folder / "requirements.txt")]
    elif exclude:
        args = [
            a
            for i, a in enumerate(args)
            if i not in parsed.positions or requirement_name(a) not in exclude
        ]
    for name, text in files.items():
        write_atomic(folder / name, text, sync=False)
    return Invocation(argv=tuple(installer.argv(args, extra)), files=files)


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
