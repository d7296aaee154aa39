"""The host model: what a machine is (profile), how we find out (probes, detect)."""

from resolver_hook.host.detect import (
    ENV_OVERRIDES,
    apply_overrides,
    detect,
    load_profile,
    parse_target,
    resolve_machine,
)
from resolver_hook.host.profile import HostProfile, NvidiaGpu, NvidiaInfo, Probe, RocmInfo

__all__ = [
    "ENV_OVERRIDES",
    "HostProfile",
    "NvidiaGpu",
    "NvidiaInfo",
    "Probe",
    "RocmInfo",
    "apply_overrides",
    "detect",
    "load_profile",
    "parse_target",
    "resolve_machine",
]
