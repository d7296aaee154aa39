"""resolver-hook: pick the right flavour of GPU packages before pip or uv runs.

The public API, for tools that embed the resolver rather than run the command::

    from resolver_hook import collect_manifests, detect, make_plan
    plan = make_plan(["torch", "flash-attn"], collect_manifests(), detect())

Names are imported on first use so that ``import resolver_hook`` (and with it the
command line's start-up) stays cheap.
"""

from __future__ import annotations

import importlib

# typing is not imported at run time: this module is on the start-up path of the warm
# commands, and the names below are only annotations.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "HostProfile",
    "Manifest",
    "Plan",
    "__version__",
    "collect_manifests",
    "detect",
    "load_manifest",
    "make_plan",
    "parse_target",
]

__version__ = "0.1.0"

_LAZY = {
    "HostProfile": "resolver_hook.host",
    "detect": "resolver_hook.host",
    "parse_target": "resolver_hook.host",
    "Manifest": "resolver_hook.manifest",
    "collect_manifests": "resolver_hook.manifest",
    "load_manifest": "resolver_hook.manifest",
    "Plan": "resolver_hook.resolve",
    "make_plan": "resolver_hook.resolve",  # the function resolve() (the module has its name)
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'resolver_hook' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
