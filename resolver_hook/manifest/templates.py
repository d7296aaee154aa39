"""Page templates of index flavours: ``{placeholders}`` filled from the build chosen
for a coupled package and from the target.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from packaging.utils import NormalizedName, canonicalize_name

from resolver_hook.manifest.urls import url_problem

__all__ = ["PACKAGE_FACTS", "TEMPLATE_FACTS", "check_template", "fill_template"]

#: Facts of the build chosen for the coupled package a page template may use:
#: ``{torch.version}`` (its public version, ``2.12.0``), ``{torch.local}`` (its local
#: label, ``cu130``), ``{torch.minor}`` (``2.12``); and without a package name, of the
#: same coupled build: ``{cuda}`` (``cu130``, from its CUDA runtime), ``{cuda_major}``
#: (``13``), ``{cxx11abi}`` (``TRUE``/``FALSE``); of the target: ``{py}`` (``cp312``)
#: and ``{platform}`` (``linux_x86_64``, ``win_amd64``, ``macosx_11_0_arm64``).
PACKAGE_FACTS = ("version", "local", "minor")
TEMPLATE_FACTS = ("cuda", "cuda_major", "cxx11abi", "py", "platform")
_COUPLED_FACTS = ("cuda", "cuda_major", "cxx11abi")
_TEMPLATE_PART = re.compile(r"\{([^{}]*)\}")
_SAMPLE = {
    "version": "1.0.0",
    "local": "cu130",
    "minor": "1.0",
    "cuda": "cu130",
    "cuda_major": "13",
    "cxx11abi": "TRUE",
    "py": "cp312",
    "platform": "linux_x86_64",
}


def check_template(
    template: str, requires: Sequence[str], *, allow_insecure: bool = False
) -> tuple[list[str], NormalizedName | None]:
    """The problems of a page template, and the package whose build it reads.

    Placeholders name facts (:data:`TEMPLATE_FACTS`, ``{pkg.fact}`` with
    :data:`PACKAGE_FACTS`); the package must be one the entry couples with
    (``requires``), and one only. ``{cuda}``, ``{cuda_major}`` and ``{cxx11abi}`` read
    that package's build, or the only package in ``requires``. The template filled
    with sample values must be a URL the URL policy accepts (https).
    """
    problems: list[str] = []
    coupled = {canonicalize_name(r) for r in requires}
    named: set[NormalizedName] = set()
    needs_coupled = False
    samples: dict[str, str] = {}
    for part in _TEMPLATE_PART.findall(template):
        pkg, dot, fact = part.rpartition(".")
        if dot:
            if fact not in PACKAGE_FACTS or not re.fullmatch(r"[A-Za-z0-9._-]+", pkg):
                problems.append(
                    f"unknown placeholder {{{part}}} (a package's facts: "
                    f"{', '.join('{pkg.' + f + '}' for f in PACKAGE_FACTS)})"
                )
                continue
            key = canonicalize_name(pkg)
            if key not in coupled:
                problems.append(
                    f"placeholder {{{part}}} reads {pkg}'s build, but the entry does not "
                    f"couple with {pkg} (add it to 'requires')"
                )
                continue
            named.add(key)
        elif part not in TEMPLATE_FACTS:
            problems.append(
                f"unknown placeholder {{{part}}} (known: "
                f"{', '.join('{' + f + '}' for f in TEMPLATE_FACTS)}, "
                f"{', '.join('{pkg.' + f + '}' for f in PACKAGE_FACTS)})"
            )
            continue
        elif part in _COUPLED_FACTS:
            needs_coupled = True
        samples[part] = _SAMPLE[fact or part]
    if len(named) > 1:
        problems.append(f"reads the builds of {', '.join(sorted(named))}: one package only")
    head, sep, rest = template.partition("://")
    if "{" in head or "{" in (rest.split("/", 1)[0] if sep else head):
        # The host is checked once, here: the values never choose where a page lives.
        problems.append(f"{template!r}: placeholders belong in the path, not the scheme or host")
    package = next(iter(named), None)
    if package is None and needs_coupled:
        if len(coupled) == 1:
            package = next(iter(coupled))
        else:
            problems.append(
                "{cuda}, {cuda_major} and {cxx11abi} read the coupled package's build: "
                "couple with exactly one package ('requires')"
            )
    if not problems:
        problem = url_problem(fill_template(template, samples), allow_insecure=allow_insecure)
        if problem:
            problems.append(f"the template {template!r} does not make an https URL: {problem}")
    return problems, package


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """The template with each ``{placeholder}`` replaced by its value (left when absent)."""
    return _TEMPLATE_PART.sub(lambda m: values.get(m.group(1), m.group(0)), template)
