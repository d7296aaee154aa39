"""The override variables, read by resolver-hook's detection and by placeholders alike.

Pure and standard-library only: a generated placeholder embeds this file verbatim.
Precedence (docs/facts.md section 1, "Order that works"): command-line flag, then
environment variable, then detection.
"""

from __future__ import annotations

__all__ = ["ENV_OVERRIDES", "OVERRIDE_ARCH", "OVERRIDE_CUDA", "OVERRIDE_GLIBC", "OVERRIDE_SM"]

OVERRIDE_CUDA = "RESOLVER_HOOK_OVERRIDE_CUDA"  # driver CUDA version; "" = no NVIDIA GPU
OVERRIDE_SM = "RESOLVER_HOOK_OVERRIDE_SM"  # compute capabilities, "9.0,12.1"
OVERRIDE_ARCH = "RESOLVER_HOOK_OVERRIDE_ARCH"  # CPU architecture, "aarch64"
OVERRIDE_GLIBC = "RESOLVER_HOOK_OVERRIDE_GLIBC"  # glibc version, "2.39"

# Override name (as the command-line flag says it) -> environment variable.
ENV_OVERRIDES = {
    "cuda": OVERRIDE_CUDA,
    "sm": OVERRIDE_SM,
    "arch": OVERRIDE_ARCH,
    "glibc": OVERRIDE_GLIBC,
}
