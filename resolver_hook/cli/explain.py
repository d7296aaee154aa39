"""``resolver-hook explain PKG``: every flavour of a package against a machine."""

from __future__ import annotations

import argparse
import datetime
import sys

from resolver_hook.cli._inputs import add_manifest_options, manifests_from_args
from resolver_hook.cli._machine import add_machine_options, machine_from_args

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explain",
        help="every flavour of a package against this machine",
        description="A table of every flavour of PKG: whether its tags, CUDA, "
        "GPU kernels and couplings fit the machine, with the chosen one "
        "marked '*'. Exit 1 when none fits.",
    )
    p.add_argument(
        "package", metavar="PKG", help="a package name, or a requirement such as 'torch==2.13.*'"
    )
    add_manifest_options(p)
    add_machine_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from resolver_hook.errors import UsageError
    from resolver_hook.resolve import evaluate_flavour, resolve

    try:
        req = Requirement(args.package)
    except InvalidRequirement as exc:
        raise UsageError(
            f"{args.package!r} is not a package name or requirement: {str(exc).splitlines()[0]}"
        ) from None
    manifests = manifests_from_args(args)
    name = canonicalize_name(req.name)
    manifest = manifests.get(name)
    if manifest is None:
        import difflib

        close = difflib.get_close_matches(name, list(manifests), n=1)
        raise UsageError(
            f"no manifest describes {req.name!r}: pip installs it as usual",
            hint=f"did you mean {close[0]!r}?" if close else "add one with --manifest FILE",
        )
    profile = machine_from_args(args)
    plan = resolve([str(req)], manifests, profile, today=datetime.date.today())
    chosen = plan.package(name)
    chosen_flavour = chosen.flavour if chosen else None
    rejected = {r.candidate: r.reason for r in chosen.rejected} if chosen else {}
    rows = []
    for f in manifest.flavours:
        rules = evaluate_flavour(f, manifest, profile, req.specifier)
        coupling = "-"
        if f.requires:
            why = rejected.get(f.describe(), "")
            coupling = (
                "no" if why.startswith(("needs ", "no consistent")) or (" needs " in why) else "yes"
            )
        cuda = rules["cuda"] or rules["rocm"]
        gpu = rules["gpu"] or rules["accelerator"]
        rows.append(
            (
                "*" if f is chosen_flavour else " ",
                f.describe(),
                "no" if rules["tags"] else "yes",
                "no" if cuda else ("yes" if f.cuda or f.rocm else "-"),
                "no" if gpu else ("yes" if f.gpu else "-"),
                coupling,
                "no" if rules["specifier"] else "yes",
                next((r for r in (rules["tags"], cuda, gpu, rules["specifier"]) if r), None)
                or (rejected.get(f.describe()) if f is not chosen_flavour else "chosen"),
            )
        )
    head = ("", "flavour", "tags", "cuda", "gpu", "couplings", "specifier", "why")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(7)]
    out = [
        f"{manifest.display_name}: {len(rows)} flavours from {manifest.source}",
        f"machine: {profile.describe()}",
    ]
    for r in [head, *rows]:
        out.append(
            "  ".join(str(c).ljust(w) for c, w in zip(r[:7], widths, strict=True))
            + f"  {r[7] or ''}"
        )
    # Where the entries' facts come from (every built-in entry names its source).
    for evidence, checked in dict.fromkeys(
        (f.evidence, f.checked) for f in manifest.flavours if f.evidence
    ):
        when = f" (checked {checked.isoformat()})" if checked else ""
        out.append(f"evidence: {evidence}{when}")
    if chosen is not None and chosen.action == "error":
        out.append(f"no flavour fits: {chosen.reason}")
    elif chosen is not None and chosen.action == "build":
        needs = f" (needs {', '.join(chosen.build_needs)})" if chosen.build_needs else ""
        out.append(f"no flavour fits: the installer builds it from source{needs}")
    sys.stdout.write("\n".join(out) + "\n")
    return 0 if chosen is not None and chosen.action != "error" else 1
