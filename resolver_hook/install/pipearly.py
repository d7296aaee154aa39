"""pip's dry-run interpreter started as the program starts, for a checked pip install.

A checked pip install runs pip's dry run once the plan is made. Its interpreter is
started ahead (:meth:`~resolver_hook.process.foreground.PipSteps.ahead`), and it imports
pip, then pip's install command (most of a small dry run's time), while it waits for the
dry run's words. Started as the command line is read, it had some 20 ms for that; started
here, before the command modules are imported (:func:`start_early`, from
``resolver_hook/_entry.py``), it has the whole of their imports and the plan.

The session takes it (:func:`take_early`, through
:func:`~resolver_hook.install.checked.pip_ahead`) where the dry run is this pip's, and
stops it otherwise; the program stops one no session took. uv's counterpart, the query
of the interpreter: :func:`resolver_hook.install.uvcache.start_early`.
"""

from __future__ import annotations

import os

# typing is not imported at run time: this module is on the program's start-up path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from resolver_hook.process.foreground import PipSteps

__all__ = ["start_early", "take_early"]

# The one :func:`start_early` started in this process, until the session takes it.
_early: list[PipSteps] = []


def start_early(argv: Sequence[str], env: Mapping[str, str]) -> PipSteps | None:
    """pip's dry-run interpreter, started for ``resolver-hook pip [HOOK OPTIONS] install
    ...`` (``argv``) checked (no ``--no-proof``), in an active virtual environment whose
    pip is there (its version read from its files, nothing run); else None. Kept for
    :func:`take_early`; the caller stops it where the session does not (stopping twice
    is nothing)."""
    # The driver is handed its words on an inherited descriptor (``pass_fds``): POSIX.
    if argv[:1] != ["pip"] or "install" not in argv or os.name != "posix":
        return None
    venv = env.get("VIRTUAL_ENV")
    if "--no-proof" in argv[: argv.index("install")] or not venv:
        return None
    from resolver_hook.process.which import venv_python

    python = venv_python(venv)
    if not os.path.isfile(python):
        return None
    from resolver_hook.process.installers import venv_pip_version

    if venv_pip_version(python) is None:  # no pip to import: nothing is started
        return None
    from resolver_hook.process.foreground import PipSteps

    # The variables the session starts it with (install.checked: COLUMNS is left out).
    given = {k: v for k, v in env.items() if k != "COLUMNS"}
    try:
        _early.append(PipSteps.ahead([python, "-m", "pip"], env=given))
    except OSError:
        return None  # the session starts its own, and says why it cannot
    return _early[-1]


def take_early() -> PipSteps | None:
    """The one :func:`start_early` started, once (the session then stops it where its
    dry run is not this pip's); None otherwise."""
    return _early.pop() if _early else None
