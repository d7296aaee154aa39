"""The host model: what a machine is (profile), how we find out (probes, detect)."""

from resolver_hook.host.detect import (
    ENV_OVERRIDES,
    apply_overrides,
    detect,
    parse_target,
    resolve_machine,
)
from resolver_hook.host.profile import HostProfile

__all__ = [
    "ENV_OVERRIDES",
    "HostProfile",
    "apply_overrides",
    "detect",
    "parse_target",
    "resolve_machine",
]
