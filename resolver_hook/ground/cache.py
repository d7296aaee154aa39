"""The one user cache: small JSON files, each valid for one key, never trusted blindly.

A cached value is returned only when the file is a regular file (not followed through
a symlink) owned by this user, not writable by others, small, valid JSON, and was
written for exactly the key the caller computes now. Anything else is a miss; a file
that exists but cannot be used also yields a note saying why. Writes are atomic and
leave mode 0600; a write that fails costs only the next run's time. Its JSON reader is
every module's: a document nested too deeply, or holding a number too long to read, is
a ValueError, as any broken one is.

Paths are strings (``os.path``), and any ``os.PathLike`` is taken: reading is on the
start-up path of ``detect --json`` (:mod:`resolver_hook.ground.hostkey`), which runs without
``pathlib`` (on Python 3.11 it imports ``urllib.parse`` and ``ipaddress``, a few ms).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import sys
from collections.abc import Mapping

# typing is not imported at run time: this module is on the start-up path of the warm
# commands, and the names below are only annotations.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CACHE_ENV",
    "JsonBeyondBounds",
    "cache_dir",
    "json_loads",
    "keep_newest",
    "load_json",
    "read",
    "read_private",
    "read_private_start",
    "sys_path_state",
    "tool_files",
    "write",
    "write_private",
]

CACHE_ENV = "RESOLVER_HOOK_CACHE_DIR"
MAX_BYTES = 1 << 20  # our entries are a few kB; anything larger is not ours


def cache_dir(env: Mapping[str, str]) -> str | None:
    """``$RESOLVER_HOOK_CACHE_DIR``, else ``$XDG_CACHE_HOME/resolver-hook``, else
    ``~/.cache/resolver-hook``; None without a home folder. A relative
    ``XDG_CACHE_HOME`` is ignored, as the XDG Base Directory specification says ("If an
    implementation encounters a relative path in any of these variables it should
    consider the path invalid and ignore it")."""
    if env.get(CACHE_ENV):
        return env[CACHE_ENV]
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "resolver-hook")
    if env.get("HOME"):
        return os.path.join(env["HOME"], ".cache", "resolver-hook")
    return None


@functools.cache
def tool_files() -> list[int]:
    """The tool's own files, in three numbers (count, bytes, newest time): an edit, an
    added file or a reinstall moves one. A walk of some 180 entries (~0.3 ms), taken once
    a process (the code it runs is the code it loaded): the keys of the stored plans
    (resolver_hook._plancache) and of what is kept by content
    (resolver_hook.manifest.stored) hold it."""
    count = size = newest = 0
    folders = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            count += 1
            size += st.st_size
            newest = max(newest, st.st_mtime_ns)
    return [count, size, newest]


def sys_path_state() -> list[list[Any]]:
    """What a key needs of ``sys.path`` to see a distribution installed or removed: each
    folder with its modification time (an install adds or removes an entry of it).

    The first entry is the folder of the script run, or the current folder under
    ``python -m`` and ``-c``, whose time changes with every file its user saves there:
    it stands by its distributions instead, the names and times of its ``.dist-info``
    and ``.egg-info`` entries (none, as a rule), so that a key holds from one command to
    the next while its user works there.
    """
    state: list[list[Any]] = []
    for i, entry in enumerate(sys.path):
        folder = entry or "."
        try:
            if i == 0 and os.path.isdir(folder):
                with os.scandir(folder) as found:
                    dists = sorted(
                        [item.name, item.stat(follow_symlinks=False).st_mtime_ns]
                        for item in found
                        if item.name.lower().endswith((".dist-info", ".egg-info"))
                    )
                state.append([entry, dists])
            else:
                state.append([entry, os.stat(folder).st_mtime_ns])
        except OSError:
            state.append([entry, None])
    return state


def read_private(path: str | os.PathLike[str], limit: int) -> tuple[bytes | None, str | None]:
    """The bytes of a private cache file: ``(data, None)``; ``(None, why)`` for a file
    we could not use (a link, another user's, writable by others, larger than
    ``limit``); ``(None, None)`` for no file."""
    found = _open_private(path)
    if not isinstance(found, tuple):
        return None, found
    fd, st = found
    try:
        chunks = []
        got = 0
        # The file in one read as a rule (its size, and one byte more to meet its end),
        # in 64 KiB reads past that (one that grew): each read makes a buffer of the
        # size asked, and one of 1 MiB for each read cost a plan's 69 reads ~0.6 ms.
        while chunk := os.read(fd, min(limit + 1 - got, max(st.st_size + 1 - got, 1 << 16))):
            chunks.append(chunk)
            got += len(chunk)
            if got > limit:
                return None, f"cache {path} ignored: unreadable (too large)"
    except OSError as exc:
        return None, f"cache {path} not read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    return b"".join(chunks), None


def read_private_start(
    path: str | os.PathLike[str], first: int
) -> tuple[bytes | None, int, str | None]:
    """:func:`read_private` for a reader that may need only the start of a file (a page
    cache entry's header, which holds its body's size and sha256): ``(data, size,
    None)``, its first ``first`` bytes and the file's size; ``(None, 0, why)`` and
    ``(None, 0, None)`` as :func:`read_private` says them."""
    found = _open_private(path)
    if not isinstance(found, tuple):
        return None, 0, found
    fd, st = found
    try:
        return os.read(fd, first), st.st_size, None
    except OSError as exc:
        return None, 0, f"cache {path} not read ({exc.strerror or exc})"
    finally:
        os.close(fd)


_OPEN_PRIVATE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _open_private(path: str | os.PathLike[str]) -> tuple[int, os.stat_result] | str | None:
    """``(fd, its stat)`` of a private cache file, open for reading (the caller closes
    it); why, for a file we could not use; None for no file."""
    try:
        fd = os.open(path, _OPEN_PRIVATE)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cache {path} not read ({exc.strerror or exc})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            why = f"cache {path} ignored: not a regular file"
        elif hasattr(os, "getuid") and st.st_uid != os.getuid():
            why = f"cache {path} ignored: owned by another user"
        elif st.st_mode & 0o022:
            why = f"cache {path} ignored: writable by others"
        else:
            return fd, st
    except OSError as exc:
        why = f"cache {path} not read ({exc.strerror or exc})"
    os.close(fd)
    return why


class JsonBeyondBounds(ValueError):
    """A JSON document past the decoder's own bounds: nested deeper than it recurses
    (``[[[[...]]]]``), or a number longer than the interpreter reads into an int."""


def json_loads(text: str | bytes) -> Any:
    """``json.loads``; a document past the decoder's bounds is a :class:`JsonBeyondBounds`
    (a ValueError) saying which, never a RecursionError or Python's own advice."""
    try:
        return json.loads(text)
    except RecursionError:  # the decoder recurses once per level
        raise JsonBeyondBounds("nested too deeply") from None
    except ValueError as exc:
        if type(exc) is not ValueError:  # JSONDecodeError, UnicodeDecodeError: the caller's
            raise
        # The one plain ValueError the decoder raises: int()'s bound on digits.
        limit = sys.get_int_max_str_digits()
        raise JsonBeyondBounds(f"a number of more than {limit} digits") from None


def load_json(text: str | bytes, *, limit: int) -> Any:
    """``json.loads`` of at most ``limit`` bytes (characters for text); a ValueError
    saying which bound or what parse error otherwise, for the caller's own error."""
    if len(text) > limit:
        raise ValueError(f"larger than {limit} bytes")
    try:
        return json_loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None


def read(path: str | os.PathLike[str], key: Mapping[str, Any]) -> tuple[Any, str | None]:
    """``(value, None)`` on a hit; ``(None, why)`` for a file we could not use;
    ``(None, None)`` for no file or one written for another key."""
    raw, note = read_private(path, MAX_BYTES)
    if raw is None:
        return None, note
    try:
        data = json_loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError too
        return None, f"cache {path} ignored: unreadable ({exc})"
    if not isinstance(data, dict) or data.get("key") != key:
        return None, None  # written for another boot, driver, interpreter, ...: stale
    return data.get("value"), None


def write(path: str | os.PathLike[str], key: Mapping[str, Any], value: Any) -> None:
    """Store ``value`` for ``key`` atomically with mode 0600; failures are ignored."""
    # The value keeps its order: the warm path of ``detect --json`` prints it as stored.
    write_private(path, json.dumps({"key": key, "value": value}).encode())


def write_private(path: str | os.PathLike[str], data: bytes) -> bool:
    """Write ``data`` atomically with mode 0600 (folder 0700); False when it failed.

    Not :func:`resolver_hook.ground.fs.write_atomic`: that one writes through a symlink to a
    user's file and keeps its mode; a cache file is private and a link in its place is
    replaced, never followed. The temporary file goes on SIGTERM too (the same handler).
    """
    from resolver_hook.ground.signals import sigterm_raises

    folder, name = os.path.split(os.fspath(path))
    folder = folder or os.curdir
    with sigterm_raises():
        try:
            # 0700 for the cache folder itself; folders above it get the default mode.
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd, tmp = _new_private(folder, name)
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            return True
        except OSError:
            return False
        finally:
            with contextlib.suppress(OSError):  # gone already once replaced
                os.unlink(tmp)


# What tempfile.mkstemp opens its file with: created here or failing, never through a link.
_NEW = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def keep_newest(folder: str, count: int) -> None:
    """Remove all but the ``count`` newest files of ``folder`` (a store of kept answers:
    the stored plans, the kept expansions); failures are ignored."""
    try:
        entries = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return
    entries.sort(reverse=True)
    for _, name in entries[count:]:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _new_private(folder: str, name: str) -> tuple[int, str]:
    """A new file ``.NAME.RANDOM.tmp`` in ``folder``, mode 0600, open for writing, as
    :func:`tempfile.mkstemp` makes one, without importing :mod:`tempfile` (and its
    shutil, bz2, lzma and random: ~3 ms of every run that writes a cache file)."""
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _NEW, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")
