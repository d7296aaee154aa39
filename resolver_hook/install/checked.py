"""The checked install: ask the installer what it would install, judge it, install exactly that.

Before anything is installed, the installer runs once with the plan's constraints as a
dry run (pip: ``--dry-run --report FILE``, pip 22.2 and newer; uv: ``--dry-run``). Its
resolution is judged against the plan (:func:`resolver_hook.install.proof.judge`); a
package with a manifest that would arrive in a build the plan did not approve stops the
session with the requirement that pulled it. Otherwise the resolved set is installed
with ``--no-deps`` from exact (and, where every sha256 is known, hash-pinned) lines, so
the install cannot diverge from what was judged. pip's dry run and that install are one
interpreter (:class:`~resolver_hook.process.foreground.PipSteps`): it waits between them
while the resolution is judged, and is stopped where nothing is installed.

uv's ``--overrides`` replace *every* requirement on a package, so the dry run goes
without them; only where uv fails on a dependency's exact pin on another build of the
very version the plan pins (what overrides exist for) is it retried with overrides for
those packages, and said so. A dependency's version range is never overridden: the
session refuses and names the dependency.

A pip too old for ``--report`` gets a note and the unchecked path.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import NormalizedName, canonicalize_name

from resolver_hook.errors import OperationalError
from resolver_hook.ground.fs import write_atomic
from resolver_hook.ground.valueclass import field, replace, valueclass
from resolver_hook.install.backends import Installer
from resolver_hook.install.proof import (
    Pin,
    Problem,
    Resolution,
    Twins,
    conflicts,
    judge,
    override_lines,
    pinned_lines,
    pip_reports,
    read_pip_report,
    read_uv_dry_run,
    requirers,
    same_build_pins,
    unplanned,
)
from resolver_hook.manifest.twins import Family, families, twins_among
from resolver_hook.process.foreground import PipSteps, foreground
from resolver_hook.process.installers import QUERY_TIMEOUT, venv_pip_version
from resolver_hook.process.proc import capture

if TYPE_CHECKING:
    from contextlib import ExitStack

    from resolver_hook.host import HostProfile
    from resolver_hook.install.args import InstallArgs
    from resolver_hook.install.kernels import KernelReader, Verified
    from resolver_hook.install.report import Reporter
    from resolver_hook.manifest import Manifest
    from resolver_hook.reqfile import ReqFile
    from resolver_hook.resolve import Plan

__all__ = [
    "Checked",
    "check_resolution",
    "explain_failure",
    "kernel_reader",
    "pip_ahead",
    "proof_unavailable",
    "read_planned_kernels",
    "twin_problems",
    "twins_fix",
]


@valueclass
class Checked:
    """What the check decided.

    ``code`` set: stop with it (refused, the dry run failed). ``argv``: the install
    command for the resolved set; empty when nothing is left to run (the user's own
    ``--dry-run`` was answered, or everything is installed already).
    ``steps``: the process that ran pip's dry run, waiting to run the install (the
    check's ``stack`` closes it).
    ``unplanned``: packages with a manifest that arrive only as a dependency, with the
    requirements on them: plan them and check again.
    """

    code: int | None = None
    argv: tuple[str, ...] = ()
    steps: PipSteps | None = None  # pip's dry run, waiting to run ``argv`` itself
    unplanned: Mapping[NormalizedName, tuple[str, ...]] = field(default_factory=dict)
    pulled_by: Mapping[NormalizedName, tuple[str, ...]] = field(default_factory=dict)


def proof_unavailable(
    installer: Installer, parsed: InstallArgs, *, said: str | None = None
) -> str | None:
    """Why the installer's resolution cannot be read first (a note), or None.

    ``said``: what pip already said of its version in this session, with nothing else
    (:func:`resolver_hook.process.installers.pip_said`); None: it is asked here."""
    if installer.tool == "uv":
        return None
    if any(o == "--report" or o.startswith("--report=") for o in parsed.options):
        return "your --report is given to pip: its resolution is not checked first"
    text = said if said is not None else _pip_version_text(installer.python)
    if pip_reports(text) is not None:
        return None
    found = text.split(" from ")[0].strip() or "a pip that does not answer"
    return (
        f"{found} cannot report what it would install (--report needs pip 22.2 or newer): "
        "installing without checking its resolution first"
    )


def _pip_version_text(python: str) -> str:
    """``pip X.Y`` of the environment of ``python``: read from a virtual environment's pip
    where :func:`~resolver_hook.process.installers.venv_pip_version` can (no interpreter start,
    which costs more than the rest of the check on a small install), else by asking
    ``python -m pip --version``."""
    found = venv_pip_version(python)
    if found is not None:
        return f"pip {found}"
    # In the foreground, as the installer runs: this is pip itself, and a Ctrl-C or a
    # SIGTERM meant for the install reaches it the same way (then exit 128+N).
    said: list[str] = []
    try:
        code, _ = foreground([python, "-m", "pip", "--version"], tee=said.append, tail_lines=1)
    except OSError:
        return ""
    return "".join(said) if code == 0 else ""


def _dry_run_flags(installer: Installer, parsed: InstallArgs, report: Path) -> list[str]:
    flags = [] if "--dry-run" in parsed.options else ["--dry-run"]
    if installer.tool == "pip":
        flags += ["--report", str(report)]
    return flags


def _with(installer: Installer, argv: Sequence[str], flags: Sequence[str]) -> list[str]:
    """``argv`` with ``flags`` right after the installer's own command (before a "--")."""
    n = len(installer.command)
    return [*argv[:n], *flags, *argv[n:]]


def _without(args: Sequence[str], options: Collection[str], value: str | None = None) -> list[str]:
    """``args`` less each of ``options`` with the word after it (where ``value`` is
    given, only an option followed by that word)."""
    out: list[str] = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
        elif a in options and (value is None or (i + 1 < len(args) and args[i + 1] == value)):
            skip = True
        else:
            out.append(a)
    return out


def without_overrides(argv: Sequence[str], folder: Path) -> list[str]:
    """``argv`` without the ``--overrides`` of the plan's own file (the user's stay)."""
    return _without(argv, ("--overrides",), str(folder / "overrides.txt"))


def _dry_run(
    installer: Installer,
    argv: Sequence[str],
    env: Mapping[str, str],
    report: Reporter,
    stack: ExitStack,
    *,
    ahead: PipSteps | None = None,
) -> tuple[int, str, PipSteps | None]:
    """One dry run: its exit code, its output, and pip's process while it waits to run
    the install itself (:class:`~resolver_hook.process.foreground.PipSteps`, closed by
    ``stack``; None: it ended, or uv's, which runs in a process of its own). ``ahead``:
    pip's interpreter started before the plan was made (:func:`pip_ahead`), which runs
    the dry run where it was started as this one would be; else it is stopped."""
    uv = installer.tool == "uv"
    kept: list[str] = []

    def tee(line: str) -> None:
        kept.append(line)
        (report.installer_stderr if uv else report.output)(line)

    if uv:
        code = _quiet_run(argv, env, tee=tee, merge_stderr=True)
        return code, "".join(kept), None
    n = len(installer.command) - 1  # python -m pip
    command, args, env = argv[:n], argv[n:], _unwrapped(env)
    if ahead is not None and ahead.fits(command, args, env):
        steps = ahead
        stack.callback(steps.close)
        code, _ = steps.dry_run(args, tee)
    else:
        if ahead is not None:
            ahead.close()
        try:
            steps = PipSteps(command, args, env=env, tee=tee)
        except OSError as exc:
            raise OperationalError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        stack.callback(steps.close)
        code, _ = steps.dry_run()
    return code, "".join(kept), steps if steps.proc is not None else None


def pip_ahead(
    installer: Installer,
    parsed: InstallArgs,
    env: Mapping[str, str],
    *,
    started: PipSteps | None = None,
) -> PipSteps | None:
    """pip's interpreter for the dry run, started before the plan is made: it starts
    Python and imports pip (some 30 ms) while the plan is made, not after it. Only
    where the dry run is sure to be pip's, by what is known before the plan: a virtual
    environment's pip that reports (its version read from its files, nothing run);
    None otherwise, and where it cannot be started (the dry run then says why).
    ``started``: the one the command line started already (for this interpreter, else
    it is stopped and another started). The caller stops what is returned
    (:meth:`~resolver_hook.process.foreground.PipSteps.close`) where no dry run takes it."""
    command = installer.command[: len(installer.command) - 1]  # python -m pip
    found = venv_pip_version(installer.python) if installer.tool == "pip" else None
    if found is None or proof_unavailable(installer, parsed, said=f"pip {found}") is not None:
        if started is not None:
            started.close()
        return None
    if started is not None:
        if started.takes(command, env):
            return started
        started.close()
    try:
        return PipSteps.ahead(command, env=env)
    except OSError:
        return None


def _unwrapped(env: Mapping[str, str]) -> dict[str, str]:
    """uv wraps what it prints at $COLUMNS even into a pipe, and its conflict explanation
    is read here line by line: a width the user exported would cut its reasons apart."""
    return {k: v for k, v in env.items() if k != "COLUMNS"}


def _quiet_run(
    argv: Sequence[str], env: Mapping[str, str], *, tee: Callable[[str], None], merge_stderr: bool
) -> int:
    """One dry run in the foreground; uv's ``-r -`` reads the bytes the session kept
    (``stdin.txt`` beside the generated files) afresh each time."""
    kept = next((Path(a).parent / "stdin.txt" for a in argv if a.endswith("constraints.txt")), None)
    given = os.open(kept, os.O_RDONLY) if kept is not None and kept.is_file() else None
    try:
        code, _ = foreground(
            argv, env=_unwrapped(env), tee=tee, merge_stderr=merge_stderr, tail_lines=1, stdin=given
        )
    except OSError as exc:
        raise OperationalError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    finally:
        if given is not None:
            os.close(given)
    return code


def _read(installer: Installer, output: str, path: Path) -> Resolution:
    if installer.tool == "uv":
        return read_uv_dry_run(output)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise OperationalError(
            f"pip's dry run wrote no report ({exc.strerror or exc})",
            hint="run again with --no-proof to install without checking pip's resolution first",
        ) from None
    return read_pip_report(text)


_EDITABLE = re.compile(r"^(?:-e|--editable)(?:=|$)|^-e.")


def _drop_editables(options: Sequence[str]) -> list[str]:
    """``options`` without ``-e X`` (the resolved set names every editable itself)."""
    return [a for a in _without(options, ("-e", "--editable")) if not _EDITABLE.match(a)]


def check_resolution(
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    reqs: ReqFile,
    *,
    argv: Sequence[str],
    folder: Path,
    env: Mapping[str, str],
    manifests: Mapping[str, Manifest],
    report: Reporter,
    extra: Sequence[str],
    replan: bool,
    kernels: KernelReader | None = None,
    stack: ExitStack,
    ahead: PipSteps | None = None,
) -> Checked:
    """Run the dry run for ``argv`` (the unchecked install command), judge, and return
    the command that installs exactly the resolved set (or the exit code to stop with).

    ``extra``: the plan's own options (constraints, find-links) for the install.
    ``replan``: whether dependencies with manifests may still be handed back to plan.
    ``kernels``: the session's reader of the flavoured wheels' kernels (``--verify-kernels``,
    or by default for kernel lists the plan assumes), or None.
    ``stack``: closes pip's dry run's process, waiting to run the install itself
    (:attr:`Checked.steps`). ``ahead``: pip's interpreter started before the plan
    (:func:`pip_ahead`), for the dry run to run in.
    """
    path = folder / "report.json"
    flags = _dry_run_flags(installer, parsed, path)
    base = list(argv)
    if installer.tool == "uv":
        base = without_overrides(base, folder)
        extra = without_overrides(extra, folder)
    how = "uv pip install --dry-run" if installer.tool == "uv" else "pip install --dry-run --report"
    report.say(f"checking what {installer.tool} would install first ({how})")
    code, output, steps = _dry_run(
        installer, _with(installer, base, flags), env, report, stack, ahead=ahead
    )
    if code != 0 and installer.tool == "uv":
        same, other = same_build_pins(conflicts(output), plan.pins)
        if same and not other:
            overridden = sorted({c.name for c in same})  # what --overrides may replace
            for c in same:
                report.say(
                    f"uv: {c.text()}, another build of the version this machine gets: "
                    f"--overrides replace that pin with the plan's {c.name} build"
                )
            write_atomic(
                folder / "overrides.txt",
                "".join(f"{line}\n" for line in override_lines(plan, overridden)),
                sync=False,
            )
            more = ["--overrides", str(folder / "overrides.txt")]
            base = _with(installer, base, more)
            extra = [*more, *extra]
            code, output, _ = _dry_run(installer, _with(installer, base, flags), env, report, stack)
    if code != 0:
        for text, hint in explain_failure(output, plan.pins, installer.tool):
            report.error(text, hint=hint)
        report.refused(f"nothing was installed: {installer.tool}'s dry run failed (exit {code})")
        return Checked(code=code)
    resolution = _read(installer, output, path)
    later = unplanned(resolution, plan, manifests)
    if later and replan:
        return Checked(
            unplanned={k: tuple(v) for k, v in later.items()},
            pulled_by={k: tuple(requirers(resolution, k)) for k in later},
        )
    if _twins_refused(
        resolution, plan, manifests, installer, report, _with(installer, base, flags), env
    ):
        return Checked(code=1)
    problems = judge(resolution, plan, manifests)
    if problems:
        for problem in problems:
            why = _why_not(installer, base, flags, plan, problem, env, folder)
            report.error(problem.text() + (f" ({why})" if why else ""), hint=_hint(problem, why))
        report.refused(
            "nothing was installed: the installer's resolution differs from the plan "
            "('--no-proof' installs without this check)"
        )
        return Checked(code=1)
    judged = sum(1 for r in resolution.items if _judged_name(r.name, plan, manifests))
    report.say(
        f"{installer.tool}'s resolution holds the plan: {len(resolution.items)} package(s), "
        f"{judged} with a manifest checked"
    )
    if "--dry-run" in parsed.options or not resolution.items:
        return Checked()  # the user's dry run is answered, or nothing is left to install
    files: Mapping[str, Path] = {}
    if kernels is not None:
        read = _read_kernels(resolution, plan, manifests, kernels, report)
        if read is None:
            return Checked(code=1)
        files = read.files
        resolution = replace(
            resolution,
            items=tuple(
                replace(r, sha256=read.sha256.get(r.name, r.sha256)) for r in resolution.items
            ),
        )
    options = [o for o in _drop_editables(parsed.options) if o != "--no-deps"]
    known, always = _known_hashes(installer, plan, reqs)
    lines = pinned_lines(
        resolution,
        option_lines=[o.as_line() for o in reqs.options if not o.constraint],
        known=known,
        files=files,
        always=always,
    )
    write_atomic(folder / "resolved.txt", "".join(f"{line}\n" for line in lines), sync=False)
    install = installer.argv(
        [*options, "--no-deps", "-r", str(folder / "resolved.txt")], _pages_only(extra)
    )
    return Checked(argv=tuple(install), steps=steps)


def _twins_refused(  # noqa: PLR0917 - the dry run's state, passed down
    resolution: Resolution,
    plan: Plan,
    manifests: Mapping[str, Manifest],
    installer: Installer,
    report: Reporter,
    argv: Sequence[str],
    env: Mapping[str, str],
) -> bool:
    """Refuse (said) a resolution that holds twin distributions; whether it did. uv's
    dry run names no requirer: it is asked once more, verbose, for who pulls them in."""
    names = [r.name for r in resolution.items]
    twins = twin_problems(resolution, plan, families(manifests, names))
    if twins and installer.tool == "uv":
        found = _uv_requirers(installer, argv, env)
        twins = [
            replace(
                t, others=tuple((r, who or tuple(found.get(r.name, ()))) for r, who in t.others)
            )
            for t in twins
        ]
    for t in twins:
        report.error(t.text(), hint=twins_fix(t, installer))
    if twins:
        report.refused(
            "nothing was installed: the installer's resolution holds twin distributions "
            "('--no-proof' installs without this check)"
        )
    return bool(twins)


def twin_problems(resolution: Resolution, plan: Plan, known: Iterable[Family]) -> list[Twins]:
    """Each family of which the resolution holds more than one distribution. A plan
    entry that installs another distribution (onnxruntime as onnxruntime-gpu) makes
    that pair a family too, declared or not."""
    fams = list(known)
    chosen: dict[NormalizedName, NormalizedName] = {}  # distribution -> plan entry
    for p in plan.packages:
        dist = p.distribution
        if p.action == "rewrite" and dist != p.name:
            chosen[dist] = p.name
            fams.append(Family(names=(p.name, dist), source="plan"))
    out: list[Twins] = []
    seen: set[frozenset[NormalizedName]] = set()
    for fam, found in twins_among((r.name for r in resolution.items), fams):
        if frozenset(found) in seen:
            continue
        seen.add(frozenset(found))
        items = [r for n in found if (r := resolution.get(n)) is not None]
        keep = next(
            (r for r in items if r.name in chosen),
            next((r for r in items if r.requested), items[0]),
        )
        out.append(
            Twins(
                keep=keep,
                others=tuple(
                    (r, tuple(requirers(resolution, r.name))) for r in items if r is not keep
                ),
                imports=fam.imports,
            )
        )
    return out


# uv -v: "DEBUG Adding transitive dependency for kapp==1.0: onnxruntime*" (docs/facts.md
# section 6.16); compiled on first use (re's own cache): only a refusal reads it.
_UV_TRANSITIVE = r"Adding transitive dependency for (\S+?)==(\S+): ([A-Za-z0-9][A-Za-z0-9._-]*)"


def _uv_requirers(
    installer: Installer, argv: Sequence[str], env: Mapping[str, str]
) -> dict[NormalizedName, list[str]]:
    """Name -> "kapp 1.0 (requires onnxruntime)" from uv's verbose dry run; empty when
    it says nothing of the kind."""
    sink: list[str] = []
    try:
        _quiet_run(_with(installer, argv, ["-v"]), env, tee=sink.append, merge_stderr=True)
    except OperationalError:
        return {}
    out: dict[NormalizedName, list[str]] = {}
    for m in re.finditer(_UV_TRANSITIVE, "".join(sink)):
        who = f"{m.group(1)} {m.group(2)} (requires {m.group(3)})"
        out.setdefault(canonicalize_name(m.group(3)), []).append(who)
    return {k: list(dict.fromkeys(v)) for k, v in out.items()}


def twins_fix(t: Twins, installer: Installer) -> str:
    """What to do about twins, for the installer in use: uv drops the plain twin from
    the resolution (``--excludes``, where this uv has it; else an override that never
    applies); pip installs the packages that pull it in with ``--no-deps`` after the
    rest. The one kept provides the import package they need."""
    drop = ", ".join(r.name for r, _ in t.others)
    deps = " ".join(t.dependents)
    if installer.tool == "uv":
        lines = "\n".join(r.name for r, _ in t.others)
        if uv_excludes(installer):
            return (
                f"exclude {drop} from the resolution: a file with the line(s) {lines!r} and "
                f"'--excludes FILE' ({t.keep.name} provides the import package)"
            )
        never = "; ".join(f"{r.name} ; python_version < '0'" for r, _ in t.others)
        return (
            f"this uv has no --excludes: drop {drop} with an override that never applies "
            f"(a file with {never!r} and '--overrides FILE'), or upgrade uv"
        )
    if deps:
        return (
            f"install everything but {deps} first (without {drop}), then "
            f"'pip install --no-deps {deps}': {t.keep.name} provides the import package"
        )
    return f"ask for only one of them (keep {t.keep.name}, drop {drop})"


def uv_excludes(installer: Installer) -> bool:
    """Whether this uv's ``pip install`` takes ``--excludes`` (asked only on a refusal)."""
    done = capture([installer.command[0], "pip", "install", "--help"], timeout=QUERY_TIMEOUT)
    return done.ok and "--excludes" in done.stdout


def kernel_reader(
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    profile: HostProfile,
    *,
    asked: bool | None,
    folder: Path,
    env: Mapping[str, str],
    report: Reporter,
) -> KernelReader | None:
    """The session's kernel reader: every flavoured wheel with ``--verify-kernels``
    (``asked`` True); by default (None) the wheels whose kernel list the plan assumes, on
    a machine whose GPUs were detected, said on one line; none with
    ``--no-verify-kernels`` (False)."""
    if asked is False:
        return None
    if not asked and not any(p.kernels_assumed for p in plan.packages):
        return None  # nothing assumed, nothing to read: the reader's module stays unimported
    from resolver_hook.install.kernels import (
        KernelReader,
        assumed_scope,
        is_terminal,
        terminal_lines,
    )

    scope = None
    if not asked:
        scope = assumed_scope(plan, profile)
        if not scope:
            return None
        for name in sorted(scope):
            p = plan.package(name)
            assert p is not None
            report.say(
                f"{p.name} {p.version}: {p.kernels_assumed}: its wheel is read before it is "
                "installed ('--no-verify-kernels' skips this)"
            )
    return KernelReader(
        scope=scope,
        ccs=profile.gpu_ccs,
        tool=installer.tool,
        python=installer.python,
        version=profile.python,
        options=parsed.options,
        folder=folder,
        env=env,
        out=report.output,
        # pip's progress bar needs the terminal itself; our lines go where ours go.
        terminal=is_terminal(sys.stdout),
        progress=terminal_lines(sys.stderr),
    )


def read_planned_kernels(reader: KernelReader, plan: Plan, report: Reporter) -> Plan | None:
    """Read the wheels the plan pins by URL, before the dry run: the plan naming those
    files instead (neither the dry run nor the install fetches them again), or None:
    refused."""
    before = set(reader.files)
    problems = reader.read_plan(plan)
    if not _said(reader, problems, report):
        return None
    for name in sorted(set(reader.files) - before):
        p = plan.package(name)
        if p is not None:
            _say_read(reader, name, f"{p.name} {p.version}", report)
    return reader.localize(plan)


def _say_read(reader: KernelReader, name: str, label: str, report: Reporter) -> None:
    """What reading one wheel showed: its kernels run on every visible GPU, or it holds
    none (nothing was verified: said as a warning, never as a pass)."""
    if name in reader.kernel_free:
        report.warning(
            f"--verify-kernels: {label} holds no GPU kernels (no SASS or PTX in any of its "
            "files): nothing to verify against the visible GPUs"
        )
    else:
        report.say(f"kernels read: {label} runs on every visible GPU")


def _said(reader: KernelReader, problems: Sequence[str], report: Reporter) -> bool:
    """Say the reader's notes and problems; whether there were no problems."""
    for note in reader.take_notes():
        report.say(f"note: {note}")
    for problem in problems:
        report.error(
            problem,
            hint="pick another build (a manifest entry whose kernels cover this GPU), or "
            "install without reading them (--no-verify-kernels) at your own risk",
        )
    if problems:
        report.refused("nothing was installed: a wheel's kernels do not run on this machine")
    return not problems


def _read_kernels(
    resolution: Resolution,
    plan: Plan,
    manifests: Mapping[str, Manifest],
    reader: KernelReader,
    report: Reporter,
) -> Verified | None:
    """The wheels of the resolution not read from the plan already: read (name -> file
    to install, with its sha256), or None: refused."""
    names = [r.name for r in resolution.items if _judged_name(r.name, plan, manifests)]
    before = set(reader.files)
    pages = {str(p.name): p.find_links for p in plan.packages if p.find_links}
    verified = reader.verify(resolution, names, pages)
    if not _said(reader, verified.problems, report):
        return None
    for name in sorted(set(verified.files) - before):
        r = resolution.get(name)
        assert r is not None
        _say_read(reader, name, r.label(), report)
    return verified


def _judged_name(name: str, plan: Plan, manifests: Mapping[str, Manifest]) -> bool:
    return plan.package(name) is not None and any(canonicalize_name(k) == name for k in manifests)


def _known_hashes(
    installer: Installer, plan: Plan, reqs: ReqFile
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The hashes known by name for the install's lines, and those of them that go on
    their line whatever the others have (:func:`~resolver_hook.install.proof.pinned_lines`)."""
    known: dict[str, list[str]] = {}
    for e in reqs.entries:
        # The user's hash of a package the plan rewrites names another build's file.
        p = plan.package(e.name) if e.name is not None else None
        if e.name is not None and e.hashes and (p is None or p.action != "rewrite"):
            known.setdefault(e.name, []).extend(e.hashes)
    # The hashes the plan puts on a constraint line (env's passes on a mirror: the
    # shipped snapshot's) stay on that package's line whatever the others have: uv checks
    # every hash it is given and wants none elsewhere (pip would want one on every line).
    always = _constraint_hashes(plan) if installer.tool == "uv" else {}
    for name, given in always.items():
        known.setdefault(name, []).extend(given)
    return known, always


def _constraint_hashes(plan: Plan) -> dict[str, list[str]]:
    """``sha256:hex`` hashes by name from the plan's constraint lines that carry them."""
    out: dict[str, list[str]] = {}
    for p in plan.packages:
        pin, *hashes = (p.constraint or "").split(" --hash=")
        if hashes:
            out[str(canonicalize_name(pin.split("==")[0]))] = hashes
    return out


def _pages_only(extra: Sequence[str]) -> list[str]:
    """The plan's options less its constraints and overrides: the resolved set is exact
    and installed without dependencies, so only the pages that serve it are needed (a
    URL constraint would even differ from the resolved line by its ``#sha256``; the
    user's ``UV_CONSTRAINT``/``UV_OVERRIDE``, no longer replaced, apply by themselves)."""
    return _without(extra, ("-c", "--overrides"))


def _why_not(  # noqa: PLR0917 - the dry run's state, passed down
    installer: Installer,
    base: Sequence[str],
    flags: Sequence[str],
    plan: Plan,
    problem: Problem,
    env: Mapping[str, str],
    folder: Path,
) -> str:
    """Why the installer did not take the approved version: ask it with that version
    pinned (one more dry run, only on this failure), and read its conflict."""
    p = plan.package(problem.name)
    version = p.entry_version if p is not None else None
    if p is None or version is None or p.versions or p.wheel:
        return ""
    pin = folder / "approved.txt"
    write_atomic(pin, f"{p.name}=={version}\n", sync=False)
    argv = _with(installer, base, [*flags, "-c", str(pin)])
    sink: list[str] = []
    try:
        code = _quiet_run(argv, env, tee=sink.append, merge_stderr=installer.tool == "uv")
    except OperationalError:
        return ""
    if code == 0:
        return ""
    found = [c for c in conflicts("".join(sink)) if c.who.startswith(str(p.name))]
    return "; ".join(c.text() for c in found)


def _hint(problem: Problem, why: str) -> str:
    if why:
        return (
            f"loosen a pin or add a constraint: ask for a {problem.name} release that "
            "accepts the builds this machine gets, or constrain the package it requires "
            "(-c a file with its range) so the plan picks a build inside it"
        )
    return (
        "add a constraint (-c) that names the approved build, or loosen the requirement "
        "that pulled the other one in; 'resolver-hook plan' shows the plan"
    )


def explain_failure(output: str, pins: Sequence[Pin], tool: str) -> list[tuple[str, str]]:
    """For an installer that failed after the plan's constraints: which of the plan's pins
    (:attr:`~resolver_hook.resolve.Plan.pins`) or pages was involved, and what to try
    (``(error, hint)`` pairs). An index flavour's URL is its page (``find_links``): only a
    wheel's URL is a file of its own."""
    out: list[tuple[str, str]] = []
    explained: set[str] = set()
    by_name = {p.name: p for p in pins}
    same, other = same_build_pins(conflicts(output), pins)
    for c in [*same, *other]:
        p = by_name[c.name]
        explained.add(p.name)
        if c.spec.startswith("==") and "," not in c.spec:
            text = (
                f"{c.who} pins {c.name}{c.spec}, but this machine needs {p.name} "
                f"{p.version}: {p.reason}"
            )
        else:
            text = (
                f"{c.who} requires {c.name}{c.spec}, but this machine needs {p.name} "
                f"{p.version}: {p.reason}"
            )
        if c in same and tool == "pip":
            hint = (
                "pip cannot replace a dependency's exact pin; 'resolver-hook uv pip install' "
                "does (uv --overrides), or ask that package for a looser pin"
            )
        else:
            hint = (
                f"pick a release of {c.who_name} that accepts {p.name} {p.version}, or "
                f"constrain {p.name} (-c a file with '{p.name}{c.spec}') so the plan picks "
                "a build inside that range"
            )
        out.append((text, hint))
    bad = [line.lower() for line in output.splitlines() if re.search(_TROUBLE, line, re.IGNORECASE)]
    low = output.lower()
    for p in pins:
        if p.name in explained:
            continue
        pin = f"{p.name}=={p.version}".lower()
        page = (p.find_links or "").lower()
        if p.find_links and (pin in low or any(page in line for line in bad)):
            out.append(
                (
                    f"resolver-hook pinned {p.name}=={p.version} for this machine, a build "
                    f"served by the page {p.find_links}, and {tool} did not find it there",
                    f"check that {p.find_links} can be read from here (proxy, mirror, "
                    "--offline); 'resolver-hook plan' shows the choice",
                )
            )
        elif p.url and any(p.url.lower() in line for line in bad):
            out.append(
                (
                    f"resolver-hook pinned {p.name} to the file {p.url} for this machine, "
                    f"and {tool} could not install it",
                    "check that the URL can be read from here and that its sha256 in the "
                    "manifest is the file's",
                )
            )
    return out


# A line of an installer's output that reports trouble with a URL or page (compiled on
# first use, by re's own cache: only a failed run is read for it).
_TROUBLE = r"error|fail|could not|cannot|ignored|not found|404|hash"
