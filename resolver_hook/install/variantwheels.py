"""Installing a chosen wheel variant (PEP 825 draft; docs/facts.md sections 2 and 3).

uv 0.13 installs variant wheels only with ``--preview-features wheel-variants`` and then
checks the wheel's properties with its own NVIDIA provider, which reads
``NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION`` / ``NV_VARIANT_PROVIDER_FORCE_SM_ARCH``
and otherwise the highest compute capability of the machine. The plan has already
checked every GPU; so that uv judges the same machine as the plan (a ``--target`` or an
override), both variables are set from the profile unless the user set them.

pip cannot install variant wheels at all (their filenames are invalid to pip): a plan
that chose one is refused under pip, naming a non-variant build that fits, if any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from resolver_hook.errors import OperationalError
from resolver_hook.ground.valueclass import replace
from resolver_hook.manifest.model import WheelFlavour
from resolver_hook.manifest.variantname import NULL_LABEL
from resolver_hook.resolve import resolve

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.manifest import Manifest
    from resolver_hook.reqfile import ReqFile
    from resolver_hook.resolve import Plan

__all__ = ["pip_refusal", "uv_variant_env"]

FORCE_CUDA = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
FORCE_SM = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"


def uv_variant_env(profile: HostProfile, env: Mapping[str, str]) -> dict[str, str]:
    """The provider overrides that make uv's check see the profile's machine."""
    out: dict[str, str] = {}
    nv = profile.nvidia
    if nv is not None and nv.cuda_version and FORCE_CUDA not in env:
        out[FORCE_CUDA] = nv.cuda_version
    if profile.gpu_ccs and FORCE_SM not in env:
        major, minor = max(profile.gpu_ccs)
        out[FORCE_SM] = f"{major}.{minor}"
    return out


def pip_refusal(
    plan: Plan, reqs: ReqFile, manifests: Mapping[str, Manifest], profile: HostProfile
) -> OperationalError:
    """The error for pip, with the non-variant builds that fit (from a plan without variants)."""

    chosen = plan.variants
    plain = {
        k: replace(m, wheels=tuple(w for w in m.wheels if w.variant is None))
        for k, m in manifests.items()
    }
    plain = {k: m for k, m in plain.items() if m.flavours}
    alternative = resolve(reqs, plain, profile)
    offers = []
    for p in chosen:
        q = alternative.package(p.name)
        if q is not None and q.action in ("rewrite", "pass") and q.flavour is not None:
            offers.append(q.line or q.constraint or f"{p.name}=={q.entry_version}")
        nulls = [
            w.filename
            for k, m in manifests.items()
            if k == p.name
            for w in m.wheels
            if w.variant == NULL_LABEL and w.version == getattr(p.flavour, "version", None)
        ]
        if nulls:
            offers.append(f"the null variant {nulls[0]} (with uv: pip cannot read it either)")
    names = ", ".join(
        f"{p.name} ({p.flavour.filename if isinstance(p.flavour, WheelFlavour) else p.url})"
        for p in chosen
    )
    hint = "use 'resolver-hook uv pip install' (uv --preview-features wheel-variants)"
    if offers:
        hint += "; builds pip can use instead: " + "; ".join(offers)
    return OperationalError(
        f"the plan chose wheel variants (PEP 825) for {names}; pip cannot install variant "
        "wheels (it reads their filenames as invalid)",
        hint=hint,
    )
