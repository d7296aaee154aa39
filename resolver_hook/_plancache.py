"""The warm path of ``plan`` and of an unchecked install: the same command, run again
where nothing it read has changed, prints what it printed before without importing
the planner, and an install starts the installer as it did before.

A stored plan depends on:

- the key, hashed (never stored: the environment and the arguments may hold
  credentials): the arguments, the current folder, the environment, today's date,
  whether each stream is a terminal (its size, its encoding), the interpreter, the
  tool's version and its own files (their count, total size and newest time: code,
  built-in manifests and data, so a checkout edited in place is planned again), the
  folders of ``sys.path`` and what they hold (an installed plugin:
  :func:`resolver_hook.ground.cache.sys_path_state`), and this boot's cached host profile;
- the inputs its readers declared to the run's :class:`~resolver_hook.ground.record.Recorder`,
  each a path and the digest of what was read there, taken again on a replay;
- the earliest time until which a page the page cache served stays fresh.

A refused run (a page from the network, detection, a pipe) is not stored. A plan's
exit code (0, or 1 for no fit) is kept with stdout and stderr in the order written:
the replay gives the full path's bytes. ``--refresh`` and ``-r -`` always go the full
way. The output is kept by wrapping ``sys.stdout``/``sys.stderr`` for the command's
length alone: every writer of the command line writes there.

An install (``pip|uv --no-proof ... install``) is recorded up to the moment its session
starts the installer: what the tool generated for it is kept (the files, the pins), and
the command as a template whose words from this command's own arguments are kept by
their place in them (a replay is of the same arguments: the key says so), never as
text. It is stored as soon as the installer runs, while it works (nothing kept changes
after the launch), or at the end where the installer never started. A replay starts it
again (:func:`resolver_hook.install.launch.replay`). A checked install (the default)
is never stored: its check is the installer's answer.

Files live in ``<cache folder>/plans/``, private (:mod:`resolver_hook.ground.cache`), the
newest :data:`_KEEP` kept; ``rm -r`` of the folder clears them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from resolver_hook import __version__
from resolver_hook.ground import cache as _cache
from resolver_hook.ground.record import NOWHERE, Recorder, sha256, unchanged
from resolver_hook.ground.userinfo import has_credentials

# typing is not imported at run time: this module is on the start-up path of the warm
# commands, and the names below are only annotations.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["run_stored"]

_FORMAT = 6  # 6: each pin by the plan's field names; 5: the installer's words by position
_KEEP = 64  # plan files kept; each is a few kB
_MAX_RECORD = 8 << 20
# Shell bookkeeping that differs between two runs of one command in one shell.
_VOLATILE_ENV = frozenset({"_", "OLDPWD", "PWD", "SHLVL"})


def run_stored(argv: Sequence[str], env: Mapping[str, str], full: Callable[[Recorder], int]) -> int:
    """``resolver-hook plan ...`` (or ``pip|uv --no-proof ... install ...``): the stored
    outcome where it is still the answer, else ``full(recorder)`` (the command line),
    stored when its readers' declarations allow."""
    key = _key(argv, env)
    folder = _cache.cache_dir(env)
    if key is None or folder is None:
        return full(NOWHERE)
    path = os.path.join(folder, "plans", f"{key}.json")
    record = _valid_record(path)
    if record is None:
        return _record(path, full, install=argv[0] != "plan", argv=argv)
    code = _replay(record["output"], record["code"] or 0)
    if record["launch"] is None:
        return code
    from resolver_hook.install.launch import replay

    return replay(record["launch"], argv)


# --- the key -------------------------------------------------------------------------


def _key(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    args = list(argv)
    if not (args[:1] == ["plan"] or (args[:1] in (["pip"], ["uv"]) and _unchecked(args))):
        return None
    if "-" in args or any(_is_refresh(a) for a in args):
        return None
    try:
        cwd = os.getcwd()
        python = [sys.executable, os.stat(sys.executable).st_mtime_ns, sys.version]
    except OSError:
        return None
    environ = sorted((k, v) for k, v in env.items() if k not in _VOLATILE_ENV)
    key = {
        "format": _FORMAT,
        "tool": [__version__, _cache.tool_files()],
        "argv": args,
        "cwd": cwd,
        "env": environ,
        "date": time.strftime("%Y-%m-%d"),
        "streams": [_stream_state(sys.stdout), _stream_state(sys.stderr)],
        "python": python,
        "sys.path": _cache.sys_path_state(),
        "host": _host_state(env),
    }
    text = json.dumps(key, sort_keys=True, ensure_ascii=True)
    return str(sha256(text.encode("ascii")).hexdigest())


def _unchecked(args: list[str]) -> bool:
    """An install with ``--no-proof`` among the hook's options (before ``install``):
    the only kind whose plan can be stored (a checked one runs the installer first)."""
    hook = args[: args.index("install")] if "install" in args else args
    return any(len(a) > 5 and "--no-proof".startswith(a) for a in hook)


def _is_refresh(arg: str) -> bool:
    name = arg.split("=", 1)[0]
    return len(name) > 2 and "--refresh".startswith(name)  # argparse takes a prefix


def _stream_state(stream: TextIO | None) -> list[Any]:
    if stream is None:
        return [None]
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    size = None
    if tty:
        try:
            size = list(os.get_terminal_size(stream.fileno()))
        except (AttributeError, OSError, ValueError):
            size = None
    return [tty, size, getattr(stream, "encoding", None), getattr(stream, "errors", None)]


def _host_state(env: Mapping[str, str]) -> str | None:
    """The sha256 of this boot's cached host profile, None where the cache holds none
    (then a plan that detects runs detection, and is not stored)."""
    from resolver_hook.ground import hostkey as _hostkey

    file = _hostkey.cache_file(env)
    host_key = _hostkey.cache_key(env) if file is not None else None
    if file is None or host_key is None:
        return None
    value, note = _cache.read(file, host_key)
    if note is not None or not isinstance(value, dict):
        return None
    return str(sha256(json.dumps(value, sort_keys=True).encode()).hexdigest())


# --- replaying -----------------------------------------------------------------------


def _valid_record(path: str) -> dict[str, Any] | None:
    raw, _ = _cache.read_private(path, _MAX_RECORD)
    if raw is None:
        return None
    try:
        data = _cache.json_loads(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError too
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return None
    until, code, output, inputs = (data.get(k) for k in ("until", "code", "output", "inputs"))
    launch = data.get("launch")
    if not (code in (0, 1) and launch is None) and not (code is None and _is_launch(launch)):
        return None
    if not isinstance(output, list) or not unchanged(inputs, until):
        return None
    if not all(
        isinstance(x, list) and len(x) == 2 and x[0] in (1, 2) and isinstance(x[1], str)
        for x in output
    ):
        return None
    return data


_LAUNCH = {"argv": list, "files": dict, "env": dict, "unset": list, "pins": list, "twins": dict}


def _is_launch(launch: Any) -> bool:
    """Whether a stored launch has the shape :func:`resolver_hook.install.launch.replay`
    reads (a record from another version, or damaged, is a miss)."""
    from resolver_hook.install.launch import PIN_FIELDS

    if not isinstance(launch, dict) or launch.get("tool") not in ("pip", "uv"):
        return False
    if not all(isinstance(launch.get(k), kind) for k, kind in _LAUNCH.items()):
        return False
    files, env = launch["files"], launch["env"]
    texts = [*files, *files.values(), *env, *env.values(), *launch["unset"]]
    return (
        all(isinstance(t, str) for t in texts)
        and all(isinstance(p, dict) and sorted(p) == sorted(PIN_FIELDS) for p in launch["pins"])
        and all(
            isinstance(a, list)
            and len(a) == 2
            and ((a[0] in (0, 1) and isinstance(a[1], str)) or (a[0] == 2 and type(a[1]) is int))
            for a in launch["argv"]
        )
    )


def _replay(output: list[list[Any]], code: int) -> int:
    """Write the stored output as the command line writes (what the terminal cannot
    show as :func:`resolver_hook.ground.stdout.never_unencodable` writes it; a closed stdout
    drops the rest of it, as the full path does)."""
    from resolver_hook.ground.stdout import never_unencodable

    streams = {1: sys.stdout, 2: sys.stderr}
    never_unencodable(*streams.values())
    gone: set[int] = set()
    for number, text in output:
        if number in gone:
            continue
        try:
            streams[number].write(text)
        except BrokenPipeError:
            gone.add(number)
    for number, stream in streams.items():
        try:
            stream.flush()
        except BrokenPipeError:
            gone.add(number)
    if 1 in gone:  # `plan | head -1`: as on the full path, the rest goes nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return code


# --- recording -----------------------------------------------------------------------


class _Tee:
    """A stream that keeps what the command writes to it, in order with the other
    stream, until the installer starts (its output is not the tool's)."""

    def __init__(self, inner: TextIO, number: int, output: list[list[Any]], record: Recorder):
        self._inner = inner
        self._number = number
        self._output = output
        self._record = record

    def write(self, text: str) -> int:
        if self._record.launch is None:
            self._output.append([self._number, text])
        try:
            return self._inner.write(text)
        except BrokenPipeError:
            self._record.refuse("a closed stream")
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _record(
    path: str, full: Callable[[Recorder], int], *, install: bool, argv: Sequence[str]
) -> int:
    record = Recorder()
    output: list[list[Any]] = []
    stored = False

    def store_launch() -> None:
        # Once the installer runs, what is kept (the launch, the output before it) is
        # complete: stored while the installer works, not after it.
        nonlocal stored
        if record.refused is None and install:
            _store(path, record, output, None, argv)
            stored = True

    record.when_running = store_launch
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = _Tee(stdout, 1, output, record)
    sys.stderr = _Tee(stderr, 2, output, record)
    try:
        code = full(record)
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    if record.refused is not None or stored:
        return code
    if record.launch is not None and install:  # an installer that never ran, say
        _store(path, record, output, None, argv)
    elif record.launch is None and (code == 1 or (code == 0 and not install)):
        _store(path, record, output, code, argv)
    return code


def _store(
    path: str, record: Recorder, output: list[list[Any]], code: int | None, argv: Sequence[str]
) -> None:
    """Keep the run's output (and launch) with its declared inputs; never a credential
    (resolver_hook.ground.credentials): a run that shows one is not stored."""
    launch = _kept(record.launch, argv)
    if (record.launch is not None and launch is None) or any(
        has_credentials(text) for _, text in output
    ):
        return
    data = {
        "format": _FORMAT,
        "code": code,
        "until": record.until,
        "output": output,
        "launch": launch,
        "inputs": sorted(record.inputs.values()),
    }
    raw = json.dumps(data).encode()
    if len(raw) <= _MAX_RECORD and _cache.write_private(path, raw):
        _cache.keep_newest(os.path.dirname(path), _KEEP)


def _kept(launch: dict[str, Any] | None, command: Sequence[str]) -> dict[str, Any] | None:
    """What a replay of the launch needs: the installer's words, each that is one of
    ``command``'s as ``[2, n]`` (word ``n`` of the command: the user's words are never
    kept), one in the session's private folder as ``[1, name]``, the tool's own as
    ``[0, text]``; None where a credential is in what the tool generated."""
    if launch is None:
        return None
    kept = {k: launch[k] for k in ("tool", "argv", "files", "env", "unset", "pins", "twins")}
    words = list(command)
    argv = []
    for where, text in kept["argv"]:
        if where == 0 and text in words:
            argv.append([2, words.index(text)])
        else:
            argv.append([where, text])
    kept["argv"] = argv
    rest = [
        *(t for w, t in argv if w == 0),
        *kept["files"].values(),
        *kept["env"].values(),
        json.dumps(kept["pins"]),
    ]
    return None if any(has_credentials(t) for t in rest) else kept
