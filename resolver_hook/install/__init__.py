"""Installing with the hook: pip and uv driven only through their command lines.

- :mod:`~resolver_hook.install.args`: what the user's installer arguments ask for;
- :mod:`~resolver_hook.install.backends`: pip and uv behind one interface (finding the
  installer, its Python, building its commands);
- :mod:`~resolver_hook.install.session`: the use-case (plan, preflight, run, clean up,
  optional installs);
- :mod:`~resolver_hook.install.proof`: the installer's resolution read (pip's report,
  uv's dry run) and judged against the plan; :mod:`~resolver_hook.install.checked`:
  running that dry run and installing exactly what it resolved;
- :mod:`~resolver_hook.install.kernels`: ``--verify-kernels``, the wheels' own kernels
  read before they are installed;
- :mod:`~resolver_hook.install.venvhook`: ``enable`` / ``disable`` / ``status``.
"""

from __future__ import annotations

from resolver_hook.install.args import InstallArgs, parse_install_args, requirement_name
from resolver_hook.install.backends import Installer, find_installer, python_version_of
from resolver_hook.install.session import private_tempdir, run_installer

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
