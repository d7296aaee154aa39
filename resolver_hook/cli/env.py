"""``resolver-hook env plan|create|sync``: an application's whole environment, declared.

The declaration is ``[tool.resolver-hook.env]`` in ``./pyproject.toml`` (``--project``
names another file or folder; ``--example`` the bundled one). ``env plan`` prints the
passes for the machine, with the reason for every choice, and installs nothing;
``env create DIR`` makes the venv with uv and runs them; ``env sync DIR`` runs them in
an existing venv. Exit codes: 0; 1 when the machine is refused (no build fits, or the
CPU policy) or a pass fails; 2 for a bad declaration (every problem listed).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from resolver_hook._data import data_path
from resolver_hook.appenv.create import make_environment
from resolver_hook.appenv.declaration import load_declaration
from resolver_hook.appenv.plan import plan_environment
from resolver_hook.cli._inputs import add_manifest_options, manifests_from_args, planner_from_args
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.cli._output import columns, fit, paint_lines, verbosity
from resolver_hook.cli.install import _Printer

if TYPE_CHECKING:
    from resolver_hook.appenv.plan import EnvPlan

__all__ = ["register", "render_env_plan"]

_EXAMPLE = "ai-toolkit"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "env",
        help="an application's whole environment from [tool.resolver-hook.env]",
        description="Plan, create or sync the environment an application declares in "
        "[tool.resolver-hook.env] of its pyproject.toml: the stack pinned on every pass, "
        "the requirements file for this machine class, extras, optional accelerators, "
        "--no-deps packages, the CPU policy and the interpreter request.",
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB", parser_class=type(p))
    verbs.required = True
    for verb, helptext in (
        ("plan", "the passes for this machine, nothing installed"),
        ("create", "make DIR with uv venv and run every pass"),
        ("sync", "run every pass in the existing venv DIR"),
    ):
        v = verbs.add_parser(verb, help=helptext, description=helptext)
        if verb != "plan":
            v.add_argument("dir", nargs="?", default=".venv", metavar="DIR")
        where = v.add_mutually_exclusive_group()
        where.add_argument(
            "--project", metavar="PATH", help="a pyproject.toml, or its folder (default: .)"
        )
        where.add_argument(
            "--example", action="store_true", help="the bundled AI-toolkit declaration"
        )
        v.add_argument("--cpu", action="store_true", help="allow a CPU-only machine")
        if verb == "plan":
            v.add_argument("--json", action="store_true", help="print the plan as JSON")
        add_manifest_options(v)
        add_machine_options(v)
        v.set_defaults(func=run)


def _project(args: argparse.Namespace) -> Path:
    if args.example:
        return Path(data_path("examples", _EXAMPLE))
    return Path(args.project or ".")


def run(args: argparse.Namespace) -> int:
    decl = load_declaration(_project(args))
    today = datetime.date.today()
    manifests = manifests_from_args(args)
    # The passes plan the manifests as given: env reads no index page (their URLs
    # through the mirrors).
    planner = planner_from_args(args, read_pages=False)
    eplan = plan_environment(
        decl, machine_from_args(args), planner.pages(manifests), allow_cpu=args.cpu, today=today
    )
    if args.verb == "plan" and args.json:
        json.dump(eplan.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.verb == "plan" and verbosity() >= 0:
        sys.stdout.write(render_env_plan(eplan))
    if not eplan.ok:
        if eplan.failed is not None:
            _Printer().no_fit(eplan.failed)
        hint = f"hint: {eplan.hint}\n" if eplan.hint else ""
        refusal = fit(f"error: {eplan.refused}\n{hint}", columns(sys.stderr), cut=False)
        sys.stderr.write(paint_lines(refusal, sys.stderr))
        return 1
    if args.verb == "plan":
        return 0

    make_environment(
        eplan,
        Path(args.dir),
        create=args.verb == "create",
        manifests=manifests,
        planner=planner,
        report=_Printer(),
    )
    sys.stderr.write(f"resolver-hook: environment ready in {args.dir}\n")
    return 0


def render_env_plan(eplan: EnvPlan) -> str:
    """The environment in words: the machine, the interpreter, each pass and its choices."""
    lines = [f"environment: {eplan.source}", f"machine:     {eplan.machine.describe()}"]
    if eplan.profile.describe() != eplan.machine.describe():
        lines.append(f"planned for: {eplan.profile.describe()}")
    lines.append(f"interpreter: uv venv --python {eplan.interpreter}")
    for number, step in enumerate(eplan.passes, 1):
        options = f" ({' '.join(step.options)})" if step.options else ""
        what = f"-r {step.file}" if step.file else ", ".join(step.packages)
        why = f" (for {step.why})" if step.why and step.why != "any machine" else ""
        extra = ", each import-checked, rolled back on failure" if step.kind == "optional" else ""
        lines.append(f"pass {number}, {step.kind}{options}{extra}: {what}{why}")
        shown = frozenset() if step.kind == "stack" else eplan.stack_names
        lines.extend(f"  {line}" for line in step.choices(shown))
        for name, reason in step.skipped.items():
            lines.append(f"  {name}: skipped: {reason}")
    if eplan.passes:
        lines.append("every pass: the stack's pins as constraints, so no pass swaps its build")
    lines.extend(f"note: {n}" for n in eplan.notes)
    return "\n".join(lines) + "\n"
