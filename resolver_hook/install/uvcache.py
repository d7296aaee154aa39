"""One cache for a checked uv install's runs, where the user turned uv's cache off.

A checked uv install runs uv two times or more (its dry run, the install of what it
resolved, a retry with overrides). With ``UV_NO_CACHE`` set, each run makes a temporary
cache of its own and removes it when it ends (docs/facts.md section 3, "uv's cache"), so
every run asks the interpreter for its facts again (it starts Python for them) and the
install downloads again the wheels its dry run just read. Here the session's runs share
one cache folder instead: private, made by the session, removed when it ends, also on
Ctrl-C. Nothing of it outlives the session, as nothing of uv's own temporary cache
outlives its run; the user's cache is never touched.

The interpreter's facts are asked for (``uv python find PYTHON``, which keeps them in
that cache) as the program starts (:func:`start_early`, before the command modules are
imported), so that the query runs while they are and the plan is made; the dry run waits
for it to end rather than ask again.

Only the environment variable is read. A ``--no-cache`` on uv's command line is passed
to every run as given (each then uses a cache of its own, as before), and uv's cache
left on (its default) is used as it is.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence

from resolver_hook.ground.tempdir import private_folder

__all__ = ["SessionCache", "cache_off", "start_early", "take_early"]

# uv reads UV_NO_CACHE with clap's BoolishValueParser (docs/facts.md section 3).
_TRUE = frozenset(("y", "yes", "t", "true", "on", "1"))
# How long the dry run waits for the interpreter's facts before asking for them itself.
WAIT_S = 10.0


def cache_off(env: Mapping[str, str]) -> bool:
    """Whether ``env`` turns uv's cache off (``UV_NO_CACHE`` set to a true word)."""
    return env.get("UV_NO_CACHE", "").strip().lower() in _TRUE


class SessionCache:
    """The session's uv cache folder, and the run that fills it with the interpreter's
    facts. :meth:`env` is the environment of every uv run of the session; :meth:`close`
    stops what still runs and removes the folder."""

    def __init__(self, uv: str, python: str, env: Mapping[str, str]) -> None:
        self.uv, self.python = uv, python
        self._stack = contextlib.ExitStack()
        self.folder = self._stack.enter_context(private_folder())
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = subprocess.Popen(
                [uv, "python", "find", python],
                env=self.env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            pass  # the dry run asks for them itself, and says why it cannot start uv
        except BaseException:
            self._stack.close()
            raise

    @classmethod
    def start(cls, uv: str, python: str, env: Mapping[str, str]) -> SessionCache | None:
        """One for ``uv`` installing into the environment of ``python``, where ``env``
        turns uv's cache off; else None (uv's own cache serves every run)."""
        return cls(uv, python, env) if cache_off(env) else None

    def takes(self, uv: str, python: str) -> bool:
        """Whether it was started for this uv and this interpreter."""
        return (self.uv, self.python) == (uv, python)

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` for a uv run of the session: the cache in the session's folder."""
        out = {k: v for k, v in env.items() if k != "UV_NO_CACHE"}
        out["UV_CACHE_DIR"] = self.folder
        return out

    def wait(self) -> None:
        """Wait for the interpreter's facts (at most :data:`WAIT_S`; then stop asking)."""
        proc = self._proc
        if proc is not None:
            try:
                proc.wait(WAIT_S)
            except subprocess.TimeoutExpired:
                self._stop()

    def close(self) -> None:
        self._stop()
        self._stack.close()

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            proc.wait()


# The one :func:`start_early` started in this process, until the session takes it.
_early: list[SessionCache] = []


def start_early(argv: Sequence[str], env: Mapping[str, str]) -> SessionCache | None:
    """The session's cache started as the program starts, for ``resolver-hook uv [HOOK
    OPTIONS] pip install ...`` (``argv``) checked (no ``--no-proof``), in an active
    virtual environment, with uv's cache off; else None. Kept for :func:`take_early`;
    the caller closes it where the session does not (closing twice is nothing)."""
    if argv[:1] != ["uv"] or "pip" not in argv or not cache_off(env):
        return None
    at = argv.index("pip")
    venv = env.get("VIRTUAL_ENV")
    if argv[at + 1 : at + 2] != ["install"] or "--no-proof" in argv[:at] or not venv:
        return None
    from resolver_hook.process.which import find_uv, venv_python

    python, uv = venv_python(venv), find_uv(env)
    if uv is None or not os.path.isfile(python):
        return None
    _early.append(SessionCache(uv, python, env))
    return _early[-1]


def take_early(uv: str, python: str) -> SessionCache | None:
    """The one :func:`start_early` started, where it was for this uv and interpreter
    (the session then closes it); None otherwise."""
    found = _early.pop() if _early else None
    return found if found is not None and found.takes(uv, python) else None
