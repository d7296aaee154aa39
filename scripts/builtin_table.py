#!/usr/bin/env python3
"""The table of built-in packages, generated from the shipped manifests.

    python scripts/builtin_table.py            # rewrite the table where it appears
    python scripts/builtin_table.py --check    # exit 1 when one of them is stale

The table sits between two marker comments in README.md and in docs/manifests.md;
everything else in those files is left as it is. Each row says, from the manifest alone:
how its builds are told apart (per-CUDA pages, another distribution name, extras, a
computed page, wheel URLs, the plain build, a source build), the releases it lists, each
build with the driver CUDA (or ROCm) it needs, and the packages it couples with. A data
change the docs do not follow fails `--check` (in .ci/run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from resolver_hook.manifest import builtin_manifests
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest, WheelFlavour

ROOT = Path(__file__).resolve().parent.parent
FILES = (ROOT / "README.md", ROOT / "docs" / "manifests.md")
START = "<!-- builtin-packages:start (scripts/builtin_table.py writes this table) -->"
END = "<!-- builtin-packages:end -->"
_SHOWN = 8  # builds, releases or couplings per cell; then a count


def _form(f: Flavour, man: Manifest) -> str:
    if isinstance(f, WheelFlavour):
        return "wheel URLs"
    if f.template is not None:
        return "computed page"
    if f.install is not None:
        other = Requirement(f.install)
        return "extras" if other.name == man.name and other.extras else "another name"
    if f.passthrough:
        return "plain build"
    return "version pattern" if f.versions is not None else "per-build pages"


def _build(f: Flavour) -> str:
    if isinstance(f, IndexFlavour) and f.install is not None:
        label = f"`{f.install}`"
        if f.versions is not None and str(f.versions) != f">={f.version}":
            label += f" {f.versions}"
    elif isinstance(f, IndexFlavour) and f.passthrough:
        label = "plain"
    elif f.version.local:
        label = f"+{f.version.local}"
    else:
        label = "plain"
    if f.needs.cuda is not None:
        label += f" (CUDA {f.needs.cuda})"
    elif f.needs.rocm is not None:
        label += f" (ROCm {f.needs.rocm})"
    return label


def _couplings(f: Flavour) -> list[str]:
    out = []
    for r in f.needs.requires:
        # Lower bound first (">=2.12,<2.13"), local labels left out: the builds column
        # says which build of the partner each one goes with.
        parts = sorted(r.specifier, key=lambda s: (s.operator.startswith("<"), str(s)))
        spec = ",".join(str(s).split("+", 1)[0] for s in parts)
        out.append(f"{r.name}{spec}")
    return out


def _cell(items: list[str]) -> str:
    seen = list(dict.fromkeys(items))
    more = f", ... ({len(seen) - _SHOWN} more)" if len(seen) > _SHOWN else ""
    return ", ".join(seen[:_SHOWN]) + more


def row(man: Manifest) -> str:
    forms = [_form(f, man) for f in man.flavours]
    if man.buildable:
        forms.append("source build")
    # One per release ("2.8" and "2.8.0" are one version), newest first, the same
    # spelling every run.
    releases: dict[Version, str] = {}
    for text in sorted({f.version.public for f in man.flavours}, key=lambda v: (Version(v), v)):
        releases.setdefault(Version(text), text)
    versions = [releases[v] for v in sorted(releases, reverse=True)]
    builds = [_build(f) for f in man.flavours]
    coupled = [c for f in man.flavours for c in _couplings(f)]
    return (
        f"| {man.display_name} | {_cell(forms)} | {_cell(versions) or 'none'} | "
        f"{_cell(builds) or 'sdist only'} | {_cell(coupled) or '-'} |"
    )


def table() -> str:
    manifests = builtin_manifests()
    rows = [row(manifests[n]) for n in sorted(manifests)]
    return "\n".join(
        [
            "| package | how its builds are told apart | releases | builds (what each needs) "
            "| couples with |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


def replaced(text: str, new_table: str) -> str:
    """``text`` with the table between the markers replaced (ValueError: no markers)."""
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"no {START!r} ... {END!r} markers")
    return f"{head}{START}\n{new_table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    args = parser.parse_args(argv)
    new_table = table()
    stale = []
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        shown = path.relative_to(ROOT)
        try:
            new = replaced(text, new_table)
        except ValueError as exc:
            print(f"error: {shown}: {exc}", file=sys.stderr)
            return 2
        if new == text:
            continue
        stale.append(str(shown))
        if not args.check:
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(new, encoding="utf-8")
            tmp.replace(path)  # atomic: a reader sees the old file or the new one
            print(f"rewrote the built-in packages table in {shown}")
    if args.check and stale:
        print(
            f"error: the built-in packages table in {', '.join(stale)} does not match "
            "the manifests",
            file=sys.stderr,
        )
        print("hint: run python scripts/builtin_table.py and commit the result", file=sys.stderr)
        return 1
    if args.check:
        print("the built-in packages tables match the manifests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
