"""The resolver: (requirements, manifests, profile) -> Plan. Pure; :func:`resolve` runs it.

No I/O, no printing, no reading of the host or the clock: the profile says what the
machine is, the manifests what exists, the requirements what the user asked for.
Markers are evaluated against the profile (a complete marker environment built from
it), never against the running interpreter, so plans for other targets are right.

The rules, each with its id; a rejected flavour keeps every rule it fails
(:class:`.model.Failure`: id and reason; a coupling failure also carries its cause as data,
:class:`Coupling`), and nothing downstream reads the wording:

1. Tags (``tags``; ``python`` for the Python version): the wheel's tags (or the index
   flavour's platforms and Pythons) are compatible with the profile's Python, ABI,
   platform and glibc. Jetson: a flavour with ``l4t`` fits only a Jetson whose L4T
   release it allows; a CUDA flavour without ``l4t`` (a server-Arm build) never fits a
   Jetson on JetPack 6 or older (docs/facts.md section 1.2).
2. CUDA: the flavour's ``cuda`` specifier holds for the driver's CUDA version
   (absent: no driver needed). ROCm likewise for ``rocm``.
3. GPU: every visible NVIDIA GPU runs one of the flavour's kernel targets
   (:func:`resolver_hook.portable.cuda.uncovered`; docs/facts.md section 1); every
   AMD GPU is one a ROCm build's ``gfx`` lists (not held when the GPU is not known;
   docs/facts.md section 1.13).
4. Accelerator: on a machine with an NVIDIA driver (or ROCm), a build that uses
   neither is not chosen silently when the package has accelerated builds: the
   user asks for it by pinning its exact version (``torch==2.13.0+cpu``).
5. Specifier: the user's own specifier (and their ``-c`` constraints) holds.
6. Couplings: every ``requires`` of a chosen flavour holds for the flavour chosen
   for that package in the same plan. A coupled package with a manifest joins the
   plan even when not asked for (as a constraint only), so nothing installed later
   swaps it. Found by depth-first search over the flavours that pass 1-5, best first,
   per group of coupled packages.

7. Ranking, among the flavours that pass, the installers' order (pip and uv take the
   newest version that fits, then the most specific tag): first the package's own
   distribution before another one (Meta's ``faiss-gpu`` before the community
   ``faiss-gpu-cu12``), then the newest public version.
8. Within one version, which CUDA build wins: among fitting CUDA builds, the newest
   CUDA runtime (``cuda_runtime``, else the floor of ``cuda``) not newer than the
   driver's CUDA version; a build for a newer runtime (NVIDIA's minor-version
   compatibility, docs/facts.md section 1) only when nothing older fits, the nearest
   first. On a CUDA 13.0 driver cu130 beats cu132; on 13.2, cu132 wins. ROCm builds:
   the newest ``rocm`` floor.
9. Then the most specific tag, in the profile's ``packaging.tags`` order (then PEP 825
   variants). ``explain`` says which of these ranked a fitting build below the chosen one.

The ids of the others: ``cuda``/``rocm`` (2), ``gpu`` (3), ``accelerator`` (4),
``specifier`` (5), ``coupling`` (6); ``ranked`` marks a flavour that fits but ranked
below the chosen one.

A package with no fit gets a hint computed, never guessed (:mod:`.hints`): each
single change of the machine, in the order a newer driver, another Python, another
OS/arch (on Windows on Arm with an NVIDIA GPU: an x64 interpreter), a GPU of another
family, ROCm, is tried by solving the plan again with that one fact changed
(:func:`.hints.apply_change`); the first that gives the package a fit is its ``fix``. When none
does, the hint says what no build exists for. The CPU build stays a separate
``alternatives`` entry.

Requirements that install two distributions of one family (twins: onnxruntime and
onnxruntime-gpu install the same import package, :mod:`resolver_hook.manifest.twins`)
keep the one the plan chose for this machine (else the first asked for); each other
is an ``error`` of cause ``twins`` naming the one kept. No change of machine is hinted.

A chosen entry whose ``checked`` date is more than ``STALE_DAYS`` days before the
``today`` the caller passes in (the CLI reads the clock; this module never does)
adds one note naming every such entry.

A requested version the manifest does not list at all (``torch==2.0.0`` against a
manifest of 2.13.0 builds) passes to the installer unchanged, with that reason: the
manifest says nothing about its builds.

When no flavour of a package fits and its manifest has a ``[build]`` table (an sdist
build is a supported fallback), the package's action is ``build`` instead of
``error``: the requirement goes to the installer as written (it builds the sdist),
the reason says why no wheel fits, and ``build_needs`` lists what the build needs.
Checking those needs reads the machine, so it is not done here:
:func:`resolver_hook.toolchain.preflight.preflight` does it before an installer runs.

The parts, each importing only those above it (no cycles):

- :mod:`.model`: the plan's value objects (:class:`Plan`, :class:`PackagePlan`,
  :class:`Failure`, :class:`Change`...), the marker environment of a profile, and the
  few facts of a flavour every part reads. What the rest of the package imports.
- :mod:`.reasons`: why one flavour fails a rule (1-6) or ranks lower, in words.
- :mod:`.words`: each package's reason and head line, and the plan's notes, in words.
- :mod:`.hintwords`: each change of the machine a hint names, in words.
- :mod:`.rules`: one flavour against one machine (rules 1-5), and the one ranking (7-9).
- :mod:`.aswritten`: the user's own wheel and index lines judged by the same rules.
- :mod:`.solve`: the requirements as slots, and the coupling search (rule 6).
- :mod:`.nofit`: a package with no fit: its head line, the pins that run, its refusal.
- :mod:`.computedpage`: the page a template flavour computes from the coupled build.
- :mod:`.assemble`: the solver's choices as a :class:`Plan`, each package with what and why.
- :mod:`.hints`: for a package with no fit, the first single change of the machine
  that gives one, by solving again with that change.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

from packaging.requirements import Requirement

from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import Manifest
from resolver_hook.reqfile import ReqEntry, ReqFile
from resolver_hook.resolve.assemble import build_plan
from resolver_hook.resolve.model import (
    RULES,
    Change,
    Coupling,
    PackagePlan,
    Plan,
    marker_environment,
    plan_target,
)
from resolver_hook.resolve.rules import evaluate_flavour
from resolver_hook.resolve.solve import as_reqfile

__all__ = [
    "RULES",
    "Change",
    "Coupling",
    "PackagePlan",
    "Plan",
    "evaluate_flavour",
    "make_plan",
    "marker_environment",
    "plan_target",
    "resolve",
]


def resolve(
    requirements: ReqFile | Iterable[str | Requirement | ReqEntry],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    *,
    today: datetime.date | None = None,
) -> Plan:
    """Resolve requirements against manifests for the profile. Pure; never raises for
    a package that does not fit (that is an ``error`` entry in the plan, with the
    first single change of the machine that gives it a fit: :mod:`.hints`). ``today``
    (given by the caller, never read here) turns on the note about stale data.

    ``requirements``: a parsed ReqFile, ReqEntry values, ``packaging`` Requirements or
    requirement-file lines (no ``-r``: read files with
    :func:`resolver_hook.reqfile.read_requirements` first)."""
    reqs = as_reqfile(requirements)
    plan = build_plan(reqs, manifests, profile, today=today)
    if not plan.errors:
        return plan
    from resolver_hook.resolve.hints import with_hints  # a plan with no error makes none

    return with_hints(plan, reqs, manifests)


#: The package's public name for :func:`resolve` (``resolver_hook.make_plan``: the
#: package ``resolver_hook.resolve`` holds the name ``resolve``).
make_plan = resolve
