"""The warm path of ``plan`` and of an unchecked install: the same command, run again
where nothing it read has changed, prints what it printed before without importing
the planner, and an install starts the installer as it did before.

A plan is a function of what its run reads, and the run is watched to learn what that
was. An audit hook (PEP 578) sees every file opened and every folder listed, by the
planner, the manifests, the page cache and the import system alike; a wrapper of
``os.stat`` sees the files only looked for (a ``pyproject.toml`` that is not there).
The same audit events tell when a run did something whose result no file holds: a
network request, a program started, a C library loaded (detection's NVML), a device,
``/proc`` or ``/sys`` file read, a pipe. Such a run is not stored. What a stored plan
depends on, then:

- the key, hashed (never stored: the environment and the arguments may hold
  credentials): the arguments, the current folder, the environment, today's date,
  whether each stream is a terminal (its size, its encoding), the interpreter and the
  folders of ``sys.path``, and this boot's host profile where the detect cache holds a
  valid one (:mod:`resolver_hook._hostkey`, which reads the boot id and the driver
  version itself);
- the files: each path the run opened, listed or looked for, with its type, size,
  inode and change times, or its absence. A file changed within
  :data:`_RACY_SECONDS` of the run could change again within the same time stamp, so
  such a run is not stored (the next one is). The few facts of the environment
  installed into (its ``pyvenv.cfg``, its pip's version, its interpreter) are read
  through :mod:`resolver_hook._observed` instead, and kept as a digest of what was
  read: a venv removed and made again at the same path, a moment before the run,
  replays the plan made for the same files;
- the clock: a page served from the page cache because it was fresh says until when
  (the :data:`FRESH_EVENT` audit event, raised by the index client); a stored plan is
  not replayed after that.

Only the exit codes of a plan (0, and 1 for no fit) are stored, with stdout and stderr
in the order they were written. Replaying them gives the full path's bytes, which the
tests hold it to for a table of machines. ``--refresh`` and ``-r -`` always go the full
way.

An install (``resolver-hook pip|uv --no-proof ... install``) is watched up to the
moment its session starts the installer: the session says so, and with what
(:data:`~resolver_hook.install.launch.LAUNCH_EVENT`), and what happens from there
(the installer, its output, the words for its failure) is not part of the record but
done again on a replay (:func:`resolver_hook.install.launch.replay`). A plan the
installer checks first (the default) is never stored: the check runs the installer,
whose answer no file holds.

Files live in ``<cache folder>/plans/``, private (:mod:`resolver_hook._cache`), the
newest :data:`_KEEP` kept; ``rm -r`` of the folder clears them.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from resolver_hook import __version__, _cache, _observed
from resolver_hook._credentials import has_credentials
from resolver_hook._observed import sha256

# typing is not imported at run time: this module is on the start-up path of the warm
# commands, and the names below are only annotations.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["FRESH_EVENT", "run_stored"]

# Raised by the index client (with the time, in seconds since the epoch, until which a
# cached page or metadata file it served stays fresh); watched here.
FRESH_EVENT = "resolver_hook.cache.fresh"

# The session's announcement that it starts the installer now
# (resolver_hook.install.launch.LAUNCH_EVENT, kept equal by a test).
_LAUNCH_EVENT = "resolver_hook.install.launch"

_FORMAT = 4  # 4: an argument with credentials is stored as the command's own word
_KEEP = 64  # plan files kept; each is a few kB to a few hundred
_MAX_RECORD = 8 << 20
_RACY_SECONDS = 2.0
# Shell bookkeeping that differs between two runs of one command in one shell.
_VOLATILE_ENV = frozenset({"_", "OLDPWD", "PWD", "SHLVL"})
# Audit events whose result no file holds: the run they happen in is not stored.
_UNCACHEABLE = frozenset(
    {
        "socket.connect",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "urllib.Request",
        "http.client.connect",
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "ctypes.dlopen",
        "builtins.input",
    }
)
_DEVICE_ROOTS = ("/proc/", "/sys/", "/dev/")


def run_stored(argv: Sequence[str], env: Mapping[str, str], full: Callable[[], int]) -> int:
    """``resolver-hook plan ...`` (or ``pip|uv --no-proof ... install ...``): the stored
    outcome where it is still the answer, else ``full()`` (the command line) watched, and
    stored when it can be."""
    key = _key(argv, env)
    folder = _cache.cache_dir(env)
    if key is None or folder is None:
        return full()
    path = os.path.join(folder, "plans", f"{key}.json")
    record = _valid_record(path, key)
    if record is None:
        return _record(path, key, full, install=argv[0] != "plan", argv=argv)
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
        "tool": __version__,
        "argv": args,
        "cwd": cwd,
        "env": environ,
        "date": time.strftime("%Y-%m-%d"),
        "streams": [_stream_state(sys.stdout), _stream_state(sys.stderr)],
        "python": python,
        "sys.path": [[p, _mtime(p or ".")] for p in sys.path],
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


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _host_state(env: Mapping[str, str]) -> str | None:
    """The sha256 of this boot's cached host profile, None where the cache holds none
    (then a plan that detects runs detection, and is not stored)."""
    from resolver_hook import _hostkey

    file = _hostkey.cache_file(env)
    host_key = _hostkey.cache_key(env) if file is not None else None
    if file is None or host_key is None:
        return None
    value, note = _cache.read(file, host_key)
    if note is not None or not isinstance(value, dict):
        return None
    return str(sha256(json.dumps(value, sort_keys=True).encode()).hexdigest())


# What _hostkey.cache_key reads: covered by the host part of the key.
_HOST_KEY_FILES = frozenset({"/proc/sys/kernel/random/boot_id", "/sys/module/nvidia/version"})


# --- replaying -----------------------------------------------------------------------


def _valid_record(path: str, key: str) -> dict[str, Any] | None:
    raw, _ = _cache.read_private(path, _MAX_RECORD)
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or data.get("format") != _FORMAT:
        return None
    until, code, output, inputs = (data.get(k) for k in ("until", "code", "output", "inputs"))
    if until is not None and not (isinstance(until, (int, float)) and time.time() < until):
        return None
    launch = data.get("launch")
    if not (code in (0, 1) and launch is None) and not (code is None and _is_launch(launch)):
        return None
    if not isinstance(output, list) or not isinstance(inputs, list):
        return None
    for item in inputs:
        if not (isinstance(item, list) and len(item) in (2, 3) and isinstance(item[0], str)):
            return None
        if len(item) == 3:  # an observation (resolver_hook._observed): taken again
            if not _observed.unchanged(item[1], item[0], item[2]):
                return None
        elif _identity(item[0], whole=item[1] != [2]) != item[1]:
            return None
    if not all(
        isinstance(x, list) and len(x) == 2 and x[0] in (1, 2) and isinstance(x[1], str)
        for x in output
    ):
        return None
    return data


def _is_launch(launch: object) -> bool:
    """Whether a stored launch has the shape :func:`resolver_hook.install.launch.replay`
    reads (a record from another version, or damaged, is a miss)."""
    if not isinstance(launch, dict) or launch.get("tool") not in ("pip", "uv"):
        return False
    argv, files, env, unset, pins = (
        launch.get(k) for k in ("argv", "files", "env", "unset", "pins")
    )
    return (
        isinstance(argv, list)
        and all(
            isinstance(a, list)
            and len(a) == 2
            and ((a[0] in (0, 1) and isinstance(a[1], str)) or (a[0] == 2 and type(a[1]) is int))
            for a in argv
        )
        and isinstance(files, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
        and isinstance(env, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        and isinstance(unset, list)
        and all(isinstance(k, str) for k in unset)
        and isinstance(pins, list)
        and all(isinstance(p, list) and len(p) == 6 for p in pins)
    )


def _identity(path: str, *, whole: bool = True) -> list[int] | None:
    """What tells a file changed: type, size, inode, device and both change times
    (``whole=False``: only the type, for a folder whose entries the run did not read)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    kind = 1 if stat.S_ISREG(st.st_mode) else 2 if stat.S_ISDIR(st.st_mode) else 0
    if not whole:
        return [kind]
    return [kind, st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns]


def _replay(output: list[list[Any]], code: int) -> int:
    """Write the stored output as the command line writes (``\\xNN`` for what the
    terminal cannot show; a closed stdout drops the rest of it, as the full path does)."""
    streams = {1: sys.stdout, 2: sys.stderr}
    for stream in streams.values():
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")
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


class _Watch:
    """What one run opened, listed and looked for, and why it may not be stored."""

    def __init__(self, *, install: bool) -> None:
        self.cwd = os.getcwd()
        self.paths: set[str] = set()
        self.listed: set[str] = set()  # folders whose entries the run read
        # path -> {how: digest}: what the readers of resolver_hook._observed saw there
        self.observed: dict[str, dict[str, list[Any]]] = {}
        self.observing: str | None = None  # the path such a reader is reading now
        self.refused: str | None = None
        self.until: float | None = None
        self.output: list[list[Any]] = []
        self.started = time.time()
        self.install = install  # an install's run: it may end at a launch
        self.launch: dict[str, Any] | None = None  # set: the watch ended there
        self.inputs: list[list[Any]] | None = None  # taken at the launch, or the end

    def saw(self, path: object, *, listed: bool = False) -> None:
        if self.launch is not None:
            return
        if path is None and listed:
            path = "."
        full = self.absolute(path)
        if full is not None and full != self.observing:  # an observer's own read: not kept
            (self.listed if listed else self.paths).add(full)

    def observe(self, path: object, how: object, seen: object) -> None:
        """A reader of :mod:`resolver_hook._observed` saw ``seen`` at ``path``: kept as
        its digest (the path's identity is kept too where anything else touched it). The
        same observation seen twice otherwise (the file changed during the run), or a
        read that failed, is not stored."""
        self.observing = None
        full = self.absolute(path)
        kept = [how, _observed.digest(how, seen)]
        if full is None or kept[1] == _observed.UNREADABLE:  # no reader here sees that
            self.refuse(_observed.EVENT)
            return
        earlier = self.observed.setdefault(full, {}).setdefault(json.dumps(how), kept)
        if earlier != kept:
            self.refuse(f"{full} changed during the run")

    def absolute(self, path: object) -> str | None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        elif isinstance(path, os.PathLike):
            path = os.fspath(path)
        if isinstance(path, str) and path:
            return path if os.path.isabs(path) else os.path.join(self.cwd, path)
        return None

    def refuse(self, why: str) -> None:
        if self.refused is None:
            self.refused = why


_watching: list[_Watch] = []  # the run being watched; empty when none is
_hooked: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _watching:
        return
    watch = _watching[0]
    if watch.launch is not None:
        return  # the installer's run: done again on a replay, not recorded
    if event == "open":
        watch.saw(args[0] if args else None)
    elif event in ("os.listdir", "os.scandir"):
        watch.saw(args[0] if args else None, listed=True)
    elif event == FRESH_EVENT:
        until = args[0] if args else None
        if isinstance(until, (int, float)):
            watch.until = until if watch.until is None else min(watch.until, until)
        else:
            watch.refuse(event)
    elif event == _observed.BEGIN_EVENT:
        watch.observing = watch.absolute(args[0]) if args else None
    elif event == _observed.EVENT:
        if len(args) == 3:
            watch.observe(*args)
        else:
            watch.refuse(event)
    elif event in _UNCACHEABLE:
        watch.refuse(event)
    elif event == _LAUNCH_EVENT:
        launch = args[0] if args else None
        if watch.install and isinstance(launch, dict) and watch.refused is None:
            watch.launch = launch
            watch.inputs = _inputs(watch)
        else:
            watch.refuse(event)


_os_stat = os.stat
_os_lstat = os.lstat


def _watched_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
    if _watching:
        _watching[0].saw(path)
    return _os_stat(path, *args, **kwargs)


def _watched_lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
    if _watching:
        _watching[0].saw(path)
    return _os_lstat(path, *args, **kwargs)


class _Tee:
    """A stream that keeps what is written to it, in order with the other stream."""

    def __init__(self, inner: TextIO, number: int, watch: _Watch) -> None:
        self._inner = inner
        self._number = number
        self._watch = watch

    def write(self, text: str) -> int:
        if self._watch.launch is None:
            self._watch.output.append([self._number, text])
        try:
            return self._inner.write(text)
        except BrokenPipeError:
            self._watch.refuse("a closed stream")
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _record(
    path: str, key: str, full: Callable[[], int], *, install: bool, argv: Sequence[str]
) -> int:
    if not _hooked:
        sys.addaudithook(_audit)  # for the life of the process: hooks cannot be removed
        _hooked.append(True)
    watch = _Watch(install=install)
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = _Tee(stdout, 1, watch)
    sys.stderr = _Tee(stderr, 2, watch)
    os.stat, os.lstat = _watched_stat, _watched_lstat
    _watching.append(watch)
    try:
        code = full()
    finally:
        _watching.clear()
        os.stat, os.lstat = _os_stat, _os_lstat
        sys.stdout, sys.stderr = stdout, stderr
    if watch.refused is None:
        if watch.launch is not None:
            _store(path, key, watch, None, argv)
        elif code == 1 or (code == 0 and not install):
            watch.inputs = _inputs(watch)
            _store(path, key, watch, code, argv)
    return code


def _store(path: str, key: str, watch: _Watch, code: int | None, argv: Sequence[str]) -> None:
    """Keep the run's output (and launch) where its inputs were settled; never a
    credential (resolver_hook._credentials): the installer's argument that holds one
    is kept as the number of the command's own word it came from, which a replay (of
    the same command: the key says so) reads again; a run that shows one elsewhere is
    not stored."""
    if watch.inputs is None:
        return
    launch = _kept(watch.launch, argv)
    if (watch.launch is not None and launch is None) or any(
        has_credentials(text) for _, text in watch.output
    ):
        return
    data = {
        "format": _FORMAT,
        "key": key,
        "code": code,
        "until": watch.until,
        "output": watch.output,
        "launch": launch,
        "inputs": watch.inputs,
    }
    raw = json.dumps(data).encode()
    if len(raw) <= _MAX_RECORD and _cache.write_private(path, raw):
        _evict(os.path.dirname(path))


def _inputs(watch: _Watch) -> list[list[Any]] | None:
    """The identity of every input the run read, now: None where one is no plain file or
    folder, or is not settled (the next run tries again). Taken when the plan is made:
    at the end of the run, or at its launch, before the installer changes what the plan
    read (the environment's packages)."""
    # The code that made the output: an edited module (an editable install, an upgrade
    # in place) is a miss even before its bytecode is written again.
    sources = {
        file
        for m in list(sys.modules.values())
        if isinstance(file := getattr(m, "__file__", None), str)
    }
    inputs = []
    settled = (watch.started - _RACY_SECONDS) * 1e9
    private = watch.launch["folder"] if watch.launch is not None else None
    for name in sorted(watch.paths | watch.listed | sources | watch.observed.keys()):
        if isinstance(private, str) and (name == private or name.startswith(private + os.sep)):
            continue  # the session's own folder, made anew by a replay
        if name.startswith(_DEVICE_ROOTS):
            if name in _HOST_KEY_FILES:
                continue
            return None
        if name in watch.observed:  # what was read there, not when it was written
            inputs += [[name, how, seen] for how, seen in watch.observed[name].values()]
            if name not in watch.paths and name not in watch.listed:
                continue  # read by its observers alone
        identity = _identity(name)
        if identity is not None:
            if identity[0] == 0:
                return None  # a pipe, a socket, a device
            if identity[0] == 2 and name not in watch.listed:
                identity = [2]  # a folder only looked for (or made): that it is one
            elif identity[4] >= settled:
                return None  # changed just now: it could change again within one time stamp
        inputs.append([name, identity])
    return inputs


def _kept(launch: dict[str, Any] | None, command: Sequence[str]) -> dict[str, Any] | None:
    """What a replay of the launch needs (the recorded folder's name is not), an
    argument with credentials as ``[2, n]``: word ``n`` of ``command``; None where a
    credential is elsewhere (a file, a variable) or not one of the command's words."""
    if launch is None:
        return None
    kept = {k: launch[k] for k in ("tool", "argv", "files", "env", "unset", "pins")}
    argv = []
    for where, text in kept["argv"]:
        if where == 0 and has_credentials(text):
            if text not in command:
                return None
            argv.append([2, list(command).index(text)])
        else:
            argv.append([where, text])
    kept["argv"] = argv
    rest = [*kept["files"].values(), *kept["env"].values(), json.dumps(kept["pins"])]
    return None if any(has_credentials(t) for t in rest) else kept


def _evict(folder: str) -> None:
    """Keep the newest :data:`_KEEP` plan files."""
    try:
        entries = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return
    entries.sort(reverse=True)
    for _, name in entries[_KEEP:]:
        with contextlib.suppress(OSError):
            os.unlink(name)
