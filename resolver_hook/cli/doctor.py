"""``resolver-hook doctor``: what this machine is, and whether source builds will work.

``doctor`` (the detection report): every probe's outcome and reason, the overrides and
``CUDA_VISIBLE_DEVICES`` in effect, this interpreter's wheel tags, and for each
installed package that has a manifest whether the installed build fits the machine,
with the fix (:mod:`resolver_hook.install.doctor`). The environment checked is the one
``resolver-hook pip install`` would install into (the active virtual environment, else
``pip``'s on PATH, else this Python), or the one of ``--python PATH``. Exit 0 when
everything fits (warnings are fine), 1 when an installed package does not fit (or the
packages could not be listed).

``doctor --build`` checks the source-build toolchain (CUDA toolkit, the host compiler
nvcc would use and whether nvcc accepts it, cmake, ninja, the driver stub, toolkit vs
driver): one line per check, ``ok`` / ``warn`` / ``fail`` / ``skip``, with the reason
and the fix. Exit 0 when nothing failed (warnings are fine), 1 when a check failed.
``doctor --build --installed`` (or ``--build --python PATH``) does both.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement

from resolver_hook.cli._inputs import (
    add_inventory_options,
    add_manifest_options,
    manifests_from_args,
    planner_from_args,
)
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.cli._output import columns, fit, verbosity
from resolver_hook.cli.detect import render_profile
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.plain import plain
from resolver_hook.host import ENV_OVERRIDES, detect
from resolver_hook.install import find_installer, parse_install_args
from resolver_hook.install.doctor import check_installed, installed_twins, profile_for_environment
from resolver_hook.install.installed import environment_of, this_environment
from resolver_hook.install.kernels import cached_scan, scan_cache
from resolver_hook.limits import check_version_text
from resolver_hook.process import which as _which
from resolver_hook.toolchain.needs import check_build_needs
from resolver_hook.toolchain.report import toolchain_report

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.install.doctor import PackageCheck
    from resolver_hook.install.installed import Environment
    from resolver_hook.manifest import Manifest
    from resolver_hook.toolchain.report import Check, ToolchainReport

__all__ = [
    "driver_cuda_version",
    "environment_lines",
    "package_lines",
    "register",
    "toolchain_lines",
]

# Variables other tools read to pick a CUDA flavour (docs/facts.md section 1): shown when
# set, since they steer uv, conda or light-the-torch and not resolver-hook.
_OTHER_TOOLS = (
    "CONDA_OVERRIDE_CUDA",
    "UV_TORCH_BACKEND",
    "UV_CUDA_DRIVER_VERSION",
    "LTT_PYTORCH_COMPUTATION_BACKEND",
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
    "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
)
_TAGS_SHOWN = 5


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="detection report and installed-package check; source-build toolchain "
        "checks (--build)",
        description="Check this machine: every detection probe and why it found what it "
        "found, the wheel tags, and whether each installed package that has a "
        "manifest fits (with the fix). --build checks what a source build of a "
        "CUDA package needs: toolkit, nvcc's host compiler, cmake, ninja, "
        "driver stub. Exit 1 when something does not fit or a check failed.",
    )
    parser.add_argument(
        "--build",
        action="store_true",
        help="check the source-build toolchain (alone, unless --installed "
        "or --python is given too)",
    )
    parser.add_argument(
        "--installed",
        action="store_true",
        help="with --build: also give the detection report and check the "
        "installed packages (the default without --build)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="check the packages of the environment of this interpreter "
        "(default: the one 'resolver-hook pip install' installs into: "
        "the active virtual environment, else pip's on PATH)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--need",
        action="append",
        default=[],
        metavar="SPEC",
        help="also check a build need such as 'nvcc>=12.8', 'cmake>=3.26', "
        "'ninja', 'cxx' or a library ('z3'); repeatable; implies --build",
    )
    parser.add_argument(
        "--driver-cuda", metavar="X.Y", help="CUDA version the driver supports (default: detect it)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="give up on a tool that has not answered, or an index page that has not "
        "come, after this long (default: 10)",
    )
    add_manifest_options(parser)
    add_inventory_options(parser, timeout=False)
    add_machine_options(parser)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if not 0 < args.timeout < math.inf:  # nan and inf too: a hung tool must time out
        raise UsageError(f"--timeout must be positive, not {args.timeout:g}")
    for need in args.need:
        _check_need(need)
    build = args.build or bool(args.need)
    host = not build or args.installed or args.python is not None
    data: dict[str, Any] = {}
    lines: list[str] = []
    failed = False
    profile = None
    if host:
        failed, profile = _host_part(args, data, lines)
    if build:
        driver, reason = args.driver_cuda, None
        if driver is None and profile is not None:
            driver = profile.nvidia.cuda_version if profile.nvidia else None
            reason = None if driver else (profile.nvidia_reason or "no NVIDIA driver")
        elif driver is None:
            driver, reason = driver_cuda_version()
        build_failed = _build_part(args, driver, reason, data, lines, nested=host)
        failed = failed or build_failed
    if args.json:
        data["ok"] = not failed
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        # A fix is a command to copy into a shell: never wrapped (a line break there
        # would run half of it), nor cut.
        width = columns(sys.stdout)
        cut = verbosity() <= 0
        shown = [x if x.lstrip().startswith("fix: ") else fit(x, width, cut=cut) for x in lines]
        sys.stdout.write("\n".join(shown) + "\n")
    return 1 if failed else 0


def _build_part(
    args: argparse.Namespace,
    driver: str | None,
    reason: str | None,
    data: dict[str, Any],
    lines: list[str],
    *,
    nested: bool,
) -> bool:
    report = toolchain_report(driver_cuda=driver, driver_cuda_reason=reason, timeout=args.timeout)
    needs = check_build_needs(args.need, report, timeout=args.timeout) if args.need else []
    failed = not report.ok or any(c.status == "fail" for c in needs)
    part = report.to_dict()
    part["needs"] = {"checked": list(args.need), "problems": plain(needs)}
    if nested:
        part["ok"] = not failed
        data["toolchain"] = part
    else:  # `doctor --build --json` keeps its own shape
        data.update(part)
    if lines:
        lines.append("")
    lines += toolchain_lines(report)
    if args.need:
        lines += ["", f"build needs: {', '.join(args.need)}"]
        lines += _check_lines(needs) if needs else ["ok    all met"]
    lines.append("")
    lines.append(_verdict([*report.checks, *needs]))
    return failed


def _check_need(need: str) -> None:
    """A ``--need`` is a name and an optional version specifier; anything else is a
    usage error (exit 2), not a failed check."""

    try:
        req = Requirement(need)
    except InvalidRequirement as exc:
        raise UsageError(
            f"--need {need!r} is not a build need: {str(exc).splitlines()[0]}",
            hint="a name and an optional version, such as 'nvcc>=12.8', 'cmake>=3.26', "
            "'ninja', 'cxx' or 'z3'",
        ) from None

    too_big = next((p for s in req.specifier if (p := check_version_text(s.version))), None)
    if too_big is not None:
        raise UsageError(f"--need {need[:60]!r}: {too_big}")
    if req.url or req.marker is not None or req.extras:
        raise UsageError(
            f"--need {need!r}: a build need is a name and a version specifier only "
            "(no URL, extras or marker)",
            hint="e.g. --need 'nvcc>=12.8' or --need z3",
        )


def _host_part(
    args: argparse.Namespace, data: dict[str, Any], lines: list[str]
) -> tuple[bool, HostProfile]:
    """The detection report and the installed-package check; (failed, profile)."""

    profile = machine_from_args(args, fresh=True)  # a report of what the probes find now
    manifests = manifests_from_args(args)
    env_error = None
    environment = None
    try:
        environment = environment_of(args.python) if args.python is not None else _pip_environment()
    except OperationalError as exc:  # a reason in the report, not a crash
        env_error = exc.message
    # The fix installs where the check looked: --python X's environment through uv
    # (pip takes no --python after its command word), else where pip installs.
    installer, uninstaller = _fixers(args.python)
    cache = scan_cache(os.environ)

    def check(known: Mapping[str, Manifest]) -> tuple[PackageCheck, ...]:
        if environment is None:
            return ()
        return check_installed(
            environment,
            known,
            profile,
            installer=installer,
            uninstaller=uninstaller,
            scans=lambda sha: cached_scan(sha, cache),
        )

    checks = check(manifests)
    notes: list[str] = []
    if environment is not None and any(c.status == "unknown" for c in checks):
        checks, notes = _known_from_pages(
            args,
            checks,
            environment=environment,
            manifests=manifests,
            profile=profile,
            check=check,
        )
    seen = profile_for_environment(profile, environment.python) if environment else profile
    data["profile"] = profile.to_dict()
    data["machine"] = profile.describe()
    data["tags"] = {
        "count": len(seen.tags),
        "first": list(seen.tags[:_TAGS_SHOWN]),
        "python": seen.python,
    }
    data["environment"] = _environment_data(os.environ)
    data["python"] = environment.to_dict() if environment else None
    twins = installed_twins(environment.distributions, manifests) if environment else []
    data["packages"] = {
        "checked": [c.to_dict() for c in checks],
        "error": env_error,
        "twins": [{"problem": what, "fix": fix} for what, fix in twins],
    }
    lines.append(render_profile(profile).rstrip("\n"))
    lines += environment_lines(os.environ)
    if seen is not profile:
        shown = ", ".join(seen.tags[:_TAGS_SHOWN])
        lines.append(
            f"tags of Python {seen.python} (the checked environment): {shown}"
            f" ... ({len(seen.tags)} in all)"
        )
    lines.append("")
    lines += package_lines(checks, environment, env_error)
    lines += [f"note: {n.split(chr(10), 1)[0]}" for n in notes]
    for what, fix in twins:
        lines += [f"{'twins':<7} {what}", f"        fix: {fix}"]
    failed = env_error is not None or any(c.status == "fail" for c in checks)
    if not args.build and not args.need:
        lines.append("")
        lines.append(_package_verdict(checks, env_error))
    return failed, profile


def _known_from_pages(
    args: argparse.Namespace,
    checks: tuple[PackageCheck, ...],
    *,
    environment: Environment,
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    check: Callable[[Mapping[str, Manifest]], tuple[PackageCheck, ...]],
) -> tuple[tuple[PackageCheck, ...], list[str]]:
    """The checks with each unknown build judged again against the builds its index
    page lists, and what reading the pages showed.

    A build the manifest does not list may be one its page lists (a tilert the hook just
    installed from PyPI): the pages a plan reads (the page cache the hook's plan filled,
    else the shipped snapshot) say. A check they leave unknown stays as it was."""

    names = [d.name for d in environment.distributions if d.name in manifests]
    seen_by = profile_for_environment(profile, environment.python)
    listed = planner_from_args(args).pages(manifests, names, seen_by)
    again = {c.name: c for c in check(listed) if c.status != "unknown"}
    notes: list[str] = []
    if any(c.name in again for c in checks if c.status == "unknown"):
        notes = list(dict.fromkeys(n for x in names for n in listed[x].notes))
    return tuple(again.get(c.name, c) if c.status == "unknown" else c for c in checks), notes


def _fixers(python: str | None) -> tuple[str, str]:
    """The install and uninstall commands a fix names, for where the check looked: pip's
    environment; ``--python X``'s through uv, or, where uv is not installed, through pip
    with that venv as the active one (pip takes no ``--python`` after its command word)."""

    if python is None:
        return "resolver-hook pip install", "pip uninstall -y"
    quoted = shlex.quote(python)
    root = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    if _which.find_uv() is None and os.path.isfile(os.path.join(root, "pyvenv.cfg")):
        return (
            f"VIRTUAL_ENV={shlex.quote(root)} resolver-hook pip install",
            f"{quoted} -m pip uninstall -y",
        )
    if _which.find_uv() is None:  # not a venv, no uv: uv first
        return (
            f"python3 -m pip install uv && resolver-hook uv pip install --python {quoted}",
            f"{quoted} -m pip uninstall -y",
        )
    return f"resolver-hook uv pip install --python {quoted}", f"uv pip uninstall --python {quoted}"


def _pip_environment() -> Environment:
    """The environment that ``resolver-hook pip install`` (the fix) installs into: the
    active virtual environment, else the one of ``pip`` on PATH, else this Python."""

    python = find_installer("pip", parse_install_args("pip", [])).python
    try:
        same = os.path.realpath(python) == os.path.realpath(sys.executable)
    except OSError:
        same = False
    if same:
        return this_environment()
    return environment_of(python, where=f"pip's environment ({python})")


def _environment_data(env: Mapping[str, str]) -> dict[str, Any]:
    return {
        "CUDA_VISIBLE_DEVICES": env.get("CUDA_VISIBLE_DEVICES"),
        "overrides": {v: env[v] for v in ENV_OVERRIDES.values() if v in env},
        "other_tools": {v: env[v] for v in _OTHER_TOOLS if v in env},
    }


def environment_lines(env: Mapping[str, str]) -> list[str]:
    """What in the environment changes detection: CUDA_VISIBLE_DEVICES and overrides."""
    data = _environment_data(env)
    cvd = data["CUDA_VISIBLE_DEVICES"]
    lines = [
        f"env:       CUDA_VISIBLE_DEVICES={cvd!r}"
        if cvd is not None
        else "env:       CUDA_VISIBLE_DEVICES not set (every GPU visible)"
    ]
    overrides = data["overrides"]
    lines.append(
        "env:       overrides: "
        + (
            ", ".join(f"{k}={v!r}" for k, v in overrides.items())
            or "none (RESOLVER_HOOK_OVERRIDE_* not set)"
        )
    )
    if data["other_tools"]:
        lines.append(
            "env:       read by other tools, not by resolver-hook: "
            + ", ".join(f"{k}={v!r}" for k, v in data["other_tools"].items())
        )
    return lines


def package_lines(
    checks: tuple[PackageCheck, ...] | list[PackageCheck],
    environment: Environment | None,
    error: str | None,
) -> list[str]:
    """The installed-package section: one line per package, its reasons and fix."""
    if environment is None:
        return ["installed packages: not checked", f"fail  {error}"]
    src = environment.source
    if src == "this interpreter":
        src = f"this interpreter, {environment.executable}"
    head = (
        f"installed packages ({src}, Python {environment.python}): {len(checks)} of "
        f"{len(environment.distributions)} have a manifest"
    )
    lines = [head]
    for c in checks:
        lines.append(f"{c.status:<7} {c.summary}")
        if c.flavour and c.status != "ok":
            lines.append(f"        installed build: {c.flavour}")
        if c.kernels:
            lines.append(f"        kernels: {c.kernels}")
        lines += (
            [f"        also: {r}" for r in c.reasons[1:]]
            if c.status == "fail"
            else [f"        note: {r}" for r in c.reasons]
        )
        if c.status == "unknown":
            lines.append(
                "        builds that fit this machine: " + ("; ".join(c.fitting) or "none")
            )
        if c.fix:
            lines.append(f"        fix: {c.fix}")
    return lines


def _package_verdict(checks: tuple[PackageCheck, ...], error: str | None) -> str:
    if error is not None:
        return "result: the installed packages could not be checked"
    bad = [c.display_name for c in checks if c.status == "fail"]
    other = sum(1 for c in checks if c.status in ("warn", "unknown"))
    tail = f" ({other} warning{'' if other == 1 else 's'})" if other else ""
    if bad:
        return f"result: installed packages do not fit this machine: {', '.join(bad)}{tail}"
    return f"result: ok{tail}"


def driver_cuda_version() -> tuple[str | None, str | None]:
    """The driver's CUDA version from host detection, or None and the reason.

    ``RESOLVER_HOOK_OVERRIDE_CUDA`` applies, as everywhere detection is used.
    """
    try:
        profile = detect(use_cache=False)
    except Exception as exc:  # detection must not take the toolchain report down
        return None, f"host detection failed: {exc}"
    if profile.nvidia is not None and profile.nvidia.cuda_version:
        return profile.nvidia.cuda_version, None
    why = [p.detail for p in profile.probes if p.name.startswith("nvidia") and not p.found]
    if profile.nvidia is not None:
        return None, "the NVIDIA driver did not report its CUDA version"
    return None, "; ".join(why) or "no NVIDIA driver detected"


def toolchain_lines(report: ToolchainReport) -> list[str]:
    """The readable report: a title, then one line per check with its notes and fixes."""
    return ["source-build toolchain:", *_check_lines(report.checks)]


def _check_lines(checks: Any) -> list[str]:
    lines: list[str] = []
    for check in checks:
        lines.append(f"{check.status:<5} {check.name}: {check.summary}")
        lines += [f"      note: {note}" for note in check.notes]
        lines += [f"      fix: {fix}" for fix in check.fix]
    return lines


def _verdict(checks: list[Check]) -> str:
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("fail", "warn", "skip")}
    if not any(counts.values()):
        return "result: all checks passed"
    parts = [
        f"{n} {word}"
        for word, n in (
            ("failed", counts["fail"]),
            ("warning" if counts["warn"] == 1 else "warnings", counts["warn"]),
            ("skipped", counts["skip"]),
        )
        if n
    ]
    head = "result: build toolchain has problems" if counts["fail"] else "result: ok"
    return f"{head} ({', '.join(parts)})"
