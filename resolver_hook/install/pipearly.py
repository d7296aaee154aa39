"""pip's interpreter started before the command line's imports, for a pip install.

A checked pip install runs pip's dry run once the plan is made, and then its install in
the same process; an unchecked one (``--no-proof``) runs the install alone once the plan
is made. Either way pip's interpreter is started ahead
(:meth:`~resolver_hook.process.foreground.PipSteps.ahead`), and it imports pip, then
pip's install command (most of a small install's start-up), while it waits for its
first step's words. Started before the command modules are imported (:func:`start_early`,
from ``resolver_hook/_entry.py``: as the program starts for a checked install, once the
store of plans has no answer for an unchecked one), it has the whole of their imports and
the plan: the hook's own work no longer comes before pip's start-up. A stored plan's
replay starts none: its own work is a few milliseconds, and an interpreter started
beside them made the replay slower, not quicker, measured.

The session takes it (:func:`take_early`, through
:func:`~resolver_hook.install.session.pip_started`); a step it does not fit (another pip,
other variables) is run by a process of its own, and it is stopped. The program stops
one nobody took. uv's counterpart, the query of the interpreter:
:func:`resolver_hook.install.uvcache.start_early`.
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
    """pip's interpreter, started for ``resolver-hook pip [HOOK OPTIONS] install ...``
    (``argv``) in an active virtual environment whose pip is there (its version read
    from its files, nothing run); else None. Kept for :func:`take_early`; the caller
    stops it where nobody takes it (stopping twice is nothing)."""
    # The driver is handed its words on an inherited descriptor (``pass_fds``): POSIX.
    if argv[:1] != ["pip"] or "install" not in argv or os.name != "posix":
        return None
    venv = env.get("VIRTUAL_ENV")
    if not venv:
        return None
    from resolver_hook.process.which import venv_python

    python = venv_python(venv)
    if not os.path.isfile(python):
        return None
    from resolver_hook.process.installers import venv_pip_version

    if venv_pip_version(python) is None:  # no pip to import: nothing is started
        return None
    from resolver_hook.process.foreground import PipSteps

    try:
        _early.append(PipSteps.ahead([python, "-m", "pip"], env=env))
    except OSError:
        return None  # the session starts its own, and says why it cannot
    return _early[-1]


def take_early() -> PipSteps | None:
    """The one :func:`start_early` started, once (whoever takes it stops it where its
    step is not this pip's); None otherwise."""
    return _early.pop() if _early else None
