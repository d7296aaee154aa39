"""The machine with the Python of the environment being installed into (``pip``,
``uv``, ``enable``)."""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli._machine import machine_from_args, recorder
from resolver_hook.errors import UsageError
from resolver_hook.install.backends import python_version_of
from resolver_hook.process.installers import venv_declared_python

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.install.backends import Installer

__all__ = ["profile_for"]


_PYTHON_IN_SPEC = re.compile(r"(?:^|-)(?:py|cp)(\d)(\d+)t?(?:-|$)")


def profile_for(
    installer: Installer, args: argparse.Namespace, *, strict: bool = False
) -> HostProfile:
    """The machine, with the Python of the environment being installed into.

    A ``--target`` naming another Python than that environment's is planned as asked,
    with a warning; ``strict`` (``enable``, whose pins stay in the venv) refuses it.
    """

    profile = machine_from_args(args)
    if args.profile:
        return profile
    if args.target:
        m = _PYTHON_IN_SPEC.search(args.target)
        declared = venv_declared_python(installer.python, recorder(args))
        have = None if declared is None else f"{declared[0]}.{declared[1]}"
        if m is not None and have is not None:
            asked = f"{m.group(1)}.{m.group(2)}"
            if have != asked:
                words = (
                    f"--target {args.target} names Python {asked}, but {installer.python} "
                    f"is Python {have}"
                )
                if strict:
                    raise UsageError(
                        f"{words}: pip.conf would pin builds this environment cannot install",
                        hint=f"give py{have.replace('.', '')} in --target, or leave --target out",
                    )
                sys.stderr.write(
                    f"warning: {words}: the plan is for Python {asked}, as asked; the "
                    "installer may refuse its wheels\n"
                )
        return profile
    return profile.for_python(python_version_of(installer.python, record=recorder(args)))
