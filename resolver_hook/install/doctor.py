"""Does what is installed fit this machine? Pure: (installed, manifests, profile) -> checks.

For each installed distribution that has a manifest:

1. Find the flavour it is: the same version, local label included (``2.13.0+cu126``
   is the cu126 index flavour; a wheel flavour by its exact version, narrowed by the
   tags in the installed ``WHEEL`` file when there are several). A version no flavour
   has, or one whose flavours are all for another platform or Python, is ``unknown``.
2. Judge it with the resolver's own rules (:func:`resolver_hook.resolve.evaluate_flavour`):
   CUDA, ROCm or GPU kernels failing is ``fail``; a build without GPU support on a
   machine with a GPU (the resolver's accelerator rule) is ``warn``: it runs, on the CPU.
3. Couplings (``requires``) against what is installed: a torchvision built for another
   torch build is ``fail`` (``undefined symbol`` at import).
4. The fix comes from a plan for the same packages (:func:`resolver_hook.resolve.resolve`):
   ``resolver-hook pip install --force-reinstall torch (picks 2.13.0+cu130)``, or why
   nothing fits.
5. Where the installed wheel's kernels were read (the kernel-scan cache, by the sha256
   the installer recorded in ``direct_url.json``; ``scans`` looks it up), its libraries
   are held to every visible GPU under NVIDIA's rules: one that runs on none is ``fail``,
   whatever the manifest claims.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.ground.valueclass import replace, valueclass
from resolver_hook.host.profile import HostProfile
from resolver_hook.install.installed import Environment, Installed
from resolver_hook.install.kernels import library_problems
from resolver_hook.install.twins import installed_twins
from resolver_hook.manifest.model import Flavour, Manifest, WheelFlavour
from resolver_hook.resolve import PackagePlan, evaluate_flavour, marker_environment, resolve

__all__ = [
    "STATUSES",
    "PackageCheck",
    "check_installed",
    "installed_twins",
    "profile_for_environment",
]

STATUSES = ("ok", "warn", "fail", "unknown")
_HARD_RULES = ("cuda", "rocm", "gpu")


@valueclass
class PackageCheck:
    """The verdict on one installed package: ``ok``, ``warn``, ``fail`` or ``unknown``.

    ``flavour`` is the manifest's flavour the installed build is (None when unknown);
    ``reasons`` say why it does not fit; ``fix`` is the command (or advice) that
    repairs it; ``fitting`` lists the flavours that would fit this machine.
    """

    name: NormalizedName
    display_name: str
    version: str
    status: str
    summary: str
    flavour: str | None = None
    reasons: tuple[str, ...] = ()
    fix: str | None = None
    fitting: tuple[str, ...] = ()
    source: str = ""
    # What the kernel scan of the installed file says (None: that file was never read).
    kernels: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "version": self.version,
            "status": self.status,
            "summary": self.summary,
            "flavour": self.flavour,
            "reasons": list(self.reasons),
            "fix": self.fix,
            "fitting": list(self.fitting),
            "manifest": self.source,
            "kernels": self.kernels,
        }


def profile_for_environment(profile: HostProfile, python: str) -> HostProfile:
    """The profile as seen by an environment whose interpreter is ``python`` ("3.12").

    The wheel tags of another Python on the same machine are computed (the running
    interpreter cannot be asked for them); the same Python keeps the detected tags.
    """
    if python == profile.python:
        return profile
    major, minor = (int(x) for x in python.split("."))
    return profile.for_python(
        (major, minor),
        why=f"wheel tags computed for Python {python}, the interpreter of the checked environment",
    )


def _failures(f: Flavour, manifest: Manifest, profile: HostProfile) -> dict[str, str]:
    return {
        rule: o.reason
        for rule, o in evaluate_flavour(f, manifest, profile).items()
        if o.status == "fail"
    }


def _runs_on_cpu(manifest: Manifest, profile: HostProfile) -> bool:
    """No GPU here, and the package has a build without one (its builds run on a CPU)."""
    return (
        profile.nvidia is None
        and profile.rocm is None
        and any(
            f.needs.cuda is None and f.needs.rocm is None and not f.needs.gpu
            for f in manifest.flavours
        )
    )


def _same_build(inst: Installed, manifest: Manifest) -> list[Flavour]:
    try:
        version = Version(inst.version)
    except ValueError:  # InvalidVersion, or a number past Python's int digit limit
        return []
    same = [f for f in manifest.flavours if f.version == version]
    if inst.tags:
        wheels: list[Flavour] = [
            f
            for f in same
            if isinstance(f, WheelFlavour) and {str(t) for t in f.tags} & set(inst.tags)
        ]
        if wheels:
            return wheels
    return same


def _couplings(
    f: Flavour, installed: Mapping[NormalizedName, Installed], env: Mapping[str, str]
) -> list[tuple[NormalizedName, str]]:
    """``(partner, reason)`` for each ``requires`` the installed partner does not meet."""
    out = []
    for r in f.needs.requires:
        partner = installed.get(canonicalize_name(r.name))
        if partner is None or (r.marker is not None and not r.marker.evaluate(dict(env))):
            continue
        try:
            ok = r.specifier.contains(Version(partner.version), prereleases=True)
        except InvalidVersion:
            ok = False
        if not ok:
            out.append(
                (partner.name, f"needs {r}; installed {partner.display_name} {partner.version}")
            )
    return out


def _fix(
    names: list[NormalizedName],
    plan_of: Mapping[NormalizedName, PackagePlan],
    installed: Mapping[NormalizedName, Installed],
    installer: str,
    uninstaller: str,
) -> tuple[str | None, list[str]]:
    """The repair command for ``names`` (those whose planned build differs from the
    installed one), and reasons for those the plan cannot fix."""
    reinstall: list[str] = []
    uninstall: list[str] = []
    picks: list[str] = []
    problems: list[str] = []
    names = list(dict.fromkeys(names))
    for name in names:
        p = plan_of.get(name)
        inst = installed[name]
        if p is None:
            continue
        if p.action == "error":
            if name != names[0]:
                continue  # a partner that fits nowhere: its own check says so
            # The installed build itself is no alternative (a CPU build on a GPU machine).
            alts = [
                str(a) for a in p.alternatives if a.pin != f"{inst.display_name}=={inst.version}"
            ]
            alt = f"; or pin {'; '.join(alts)}" if alts else ""
            change = f"; {p.hint}" if p.fix is not None else ""
            problems.append(
                f"no build of {inst.display_name} fits this machine (see "
                f"'resolver-hook explain {inst.display_name}'){change}{alt}"
            )
        elif p.action == "build":
            reinstall.append(inst.display_name)
            needs = f", needs {', '.join(p.build_needs)}" if p.build_needs else ""
            picks.append(f"{inst.display_name} from source: no wheel fits{needs}")
        elif p.installs is not None and p.distribution != name:
            # Another distribution (onnxruntime -> onnxruntime-gpu): installed beside the
            # one there, it would clobber its files; that one goes first.
            uninstall.append(inst.display_name)
            reinstall.append(inst.display_name)
            picks.append(_picked(p, p.installs))
        elif p.entry_version and p.entry_version != inst.version:
            reinstall.append(inst.display_name)
            picks.append(_picked(p, None if len(names) == 1 else inst.display_name))
    if not reinstall:
        return ("; ".join(problems) or None), []
    first = f"{uninstaller} {' '.join(uninstall)} && " if uninstall else ""
    return (
        f"{first}{installer} --force-reinstall {' '.join(reinstall)} (picks {', '.join(picks)})"
    ), problems


def _picked(p: PackagePlan, name: str | None) -> str:
    """What the plan picks, in words: ``2.13.0+cu130``; for a version pattern (an index
    flavour, ``>=1.19``) the newest release it allows, never one version it may not be."""
    if p.versions:
        return f"the newest {name or p.installs or p.name}{p.versions}"
    return f"{name} {p.entry_version}" if name else p.entry_version or ""


def check_installed(
    installed: Environment | Iterable[Installed],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    *,
    installer: str = "resolver-hook pip install",
    uninstaller: str = "pip uninstall -y",
    scans: Scans | None = None,
) -> tuple[PackageCheck, ...]:
    """One :class:`PackageCheck` per installed distribution that has a manifest, by name.

    Pure. For another environment, pass its :class:`Environment` (its Python's wheel
    tags are used: :func:`profile_for_environment`). ``scans``: the kernel scan of a
    file by its sha256 ((library, targets) pairs), None where it was never read.
    """
    if isinstance(installed, Environment):
        profile = profile_for_environment(profile, installed.python)
        items = installed.distributions
    else:
        items = tuple(installed)
    checks = _check_installed(items, manifests, profile, installer, uninstaller)
    if scans is None:
        return checks
    by_name = {i.name: i for i in items}
    return tuple(_with_scan(c, by_name[c.name], scans, profile) for c in checks)


# (library path, kernel targets) of a wheel by its sha256, or None: never read.
Scans = Callable[[str], Sequence[tuple[str, Sequence[str]]] | None]


def _with_scan(
    c: PackageCheck, inst: Installed, scans: Scans, profile: HostProfile
) -> PackageCheck:
    """The check with what the scan of the installed file says."""
    found = scans(inst.sha256) if inst.sha256 else None
    if found is None:
        return c
    short = f"sha256 {inst.sha256[:12]}" if inst.sha256 else ""
    if not profile.gpu_ccs:
        return replace(
            c,
            kernels=f"the installed wheel ({short}) was read; no NVIDIA GPU visible to hold it to",
        )
    problems = library_problems(f"the installed wheel ({short})", found, profile.gpu_ccs)
    libraries = sum(1 for _, targets in found if targets)
    if not libraries:
        return replace(
            c, kernels=f"read from the installed wheel ({short}): it holds no GPU kernels"
        )
    if not problems:
        return replace(
            c,
            kernels=f"read from the installed wheel ({short}): {libraries} "
            f"librar{'y' if libraries == 1 else 'ies'} with kernels, each runs on every "
            "visible GPU",
        )
    head = f"{c.display_name} {c.version}"
    if c.status == "fail":
        reasons = (*c.reasons, *problems)
        summary = c.summary
    else:
        reasons = (*problems, *c.reasons)
        summary = f"{head}: {problems[0]}"
    return replace(
        c,
        status="fail",
        summary=summary,
        reasons=reasons,
        kernels=f"read from the installed wheel ({short}): they do not run on this machine",
    )


def _check_installed(
    items: Sequence[Installed],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    installer: str,
    uninstaller: str,
) -> tuple[PackageCheck, ...]:
    by_name: dict[str, Manifest] = {canonicalize_name(k): v for k, v in manifests.items()}
    present = {i.name: i for i in items}
    checked = [i for i in sorted(present.values(), key=lambda i: i.name) if i.name in by_name]
    if not checked:
        return ()
    env = marker_environment(profile)
    plan = resolve([by_name[i.name].display_name for i in checked], by_name, profile)
    plan_of = {p.name: p for p in plan.packages}
    # The flavour each installed build is: same version, not for another platform or
    # Python; of several (wheels per Python), the one failing fewest rules.
    matched: dict[NormalizedName, tuple[Flavour, dict[str, str]]] = {}
    for inst in checked:
        manifest = by_name[inst.name]
        candidates = [(f, _failures(f, manifest, profile)) for f in _same_build(inst, manifest)]
        candidates = [
            (f, fails) for f, fails in candidates if "tags" not in fails and "python" not in fails
        ]
        if candidates:
            matched[inst.name] = min(candidates, key=lambda c: len(c[1]))
    dependents: dict[NormalizedName, list[NormalizedName]] = {}
    for name, (f, _) in matched.items():
        for r in f.needs.requires:
            dependents.setdefault(canonicalize_name(r.name), []).append(NormalizedName(name))
    out = []
    for inst in checked:
        manifest = by_name[inst.name]
        fitting = tuple(
            f.describe() for f in manifest.flavours if not _failures(f, manifest, profile)
        )
        head = f"{inst.display_name} {inst.version}"
        common: dict[str, Any] = {
            "name": inst.name,
            "display_name": inst.display_name,
            "version": inst.version,
            "fitting": fitting,
            "source": manifest.source,
        }
        if inst.name not in matched:
            fix, problems = _fix([inst.name], plan_of, present, installer, uninstaller)
            others = _same_build(inst, manifest)
            why = (
                f"{manifest.display_name}'s manifest ({manifest.source}) lists "
                f"{inst.version} only for other platforms or Pythons"
                if others
                else f"not a build that {manifest.display_name}'s manifest ({manifest.source}) "
                "lists"
            )
            out.append(
                PackageCheck(
                    status="unknown",
                    summary=f"{head}: {why}",
                    reasons=tuple(problems),
                    fix=fix,
                    **common,
                )
            )
            continue
        f, fails = matched[inst.name]
        hard = [fails[r] for r in _HARD_RULES if r in fails]
        coupling = _couplings(f, present, env)
        reasons = hard + [why for _, why in coupling]
        if hard and not coupling and _runs_on_cpu(manifest, profile):
            # A GPU build on a machine with no GPU at all: it runs, on the CPU (torch
            # cu130 imports and computes on the CPU), as the package's CPU build would.
            fix, problems = _fix([inst.name], plan_of, present, installer, uninstaller)
            out.append(
                PackageCheck(
                    status="warn",
                    summary=f"{head}: a GPU build on a machine without a GPU: it runs "
                    "on the CPU only",
                    flavour=f.describe(),
                    reasons=(*hard, *problems),
                    fix=fix,
                    **common,
                )
            )
        elif reasons:
            # Reinstall what is coupled with this package too, or the fix breaks it.
            fix, problems = _fix(
                [inst.name, *(n for n, _ in coupling), *dependents.get(inst.name, ())],
                plan_of,
                present,
                installer,
                uninstaller,
            )
            out.append(
                PackageCheck(
                    status="fail",
                    summary=f"{head}: {reasons[0]}",
                    flavour=f.describe(),
                    reasons=(*reasons, *problems),
                    fix=fix,
                    **common,
                )
            )
        elif "accelerator" in fails:
            gpu = "an NVIDIA GPU" if profile.nvidia is not None else "ROCm"
            fix, problems = _fix([inst.name], plan_of, present, installer, uninstaller)
            out.append(
                PackageCheck(
                    status="warn",
                    summary=f"{head}: a build without GPU support on a "
                    f"machine with {gpu}: it runs on the CPU only",
                    flavour=f.describe(),
                    reasons=tuple(problems),
                    fix=fix,
                    **common,
                )
            )
        else:
            out.append(
                PackageCheck(
                    status="ok",
                    summary=f"{head}: fits this machine",
                    flavour=f.describe(),
                    **common,
                )
            )
    return tuple(out)
