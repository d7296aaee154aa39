"""Installing with the hook: pip and uv driven only through their command lines.

- :mod:`~resolver_hook.install.args`: what the user's installer arguments ask for;
- :mod:`~resolver_hook.install.backends`: pip and uv behind one interface (finding the
  installer, its Python, building its commands);
- :mod:`~resolver_hook.install.session`: the use-case (plan, preflight, run, clean up,
  optional installs); :mod:`~resolver_hook.install.launch`: its last step, the
  installer's run, shared with the replay of a stored plan;
  :mod:`~resolver_hook.install.optional`: ``--optional``, one package installed,
  import-checked and rolled back (imported only when it is given);
- :mod:`~resolver_hook.install.proof`: the installer's resolution read (pip's report,
  uv's dry run) and judged against the plan; :mod:`~resolver_hook.install.checked`:
  running that dry run and installing exactly what it resolved;
- :mod:`~resolver_hook.install.kernels`: ``--verify-kernels``, the wheels' own kernels
  read before they are installed;
- :mod:`~resolver_hook.install.venvhook`: ``enable`` / ``disable`` / ``status``.
"""

from __future__ import annotations

import importlib

# Names are imported on first use: a replayed install (launch) is a module of this
# package, and must not import the session's planner with it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "InstallArgs",
    "Installer",
    "find_installer",
    "parse_install_args",
    "private_tempdir",
    "python_version_of",
    "requirement_name",
    "run_installer",
]

_LAZY = {
    "InstallArgs": "resolver_hook.install.args",
    "parse_install_args": "resolver_hook.install.args",
    "requirement_name": "resolver_hook.install.args",
    "Installer": "resolver_hook.install.backends",
    "find_installer": "resolver_hook.install.backends",
    "python_version_of": "resolver_hook.install.backends",
    "private_tempdir": "resolver_hook.ground.fs",
    "run_installer": "resolver_hook.install.launch",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'resolver_hook.install' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
