"""The one atomic writer (and, from :mod:`resolver_hook.ground.tempdir`, the private temporary
folder). Inputs the user names are opened by :mod:`resolver_hook.ground.input`.

:func:`write_atomic` writes a generated file so that readers see the old file or the
new one, never half of either:

- the temporary file is made in the target's folder (``os.replace`` is then a rename
  on one file system) and removed on any exit: an error, Ctrl-C, and SIGTERM (turned
  into :class:`resolver_hook.ground.signals.Interrupted` for the duration of the write);
- a symlink is written through: its final target is replaced, the link stays a link
  (a dangling link gets its target created, never deleted);
- an existing file keeps its permission bits, read-only ones included: a 0444 file the
  user asked us to rewrite (pip.conf under ``enable``) comes back 0444. Writing goes by
  rename, so what matters is whether the folder is writable, as for editors that save
  by rename. A new file gets 0666 less the umask, as ``open()`` would give it;
- an existing FIFO, device, socket or /proc or /sys file (also /dev/stdout and
  ``>(...)``) is refused, never replaced by a regular file nor written into;
- every file-system failure is one :class:`~resolver_hook.errors.OperationalError`
  naming the path (an empty path, or one refused above, is a
  :class:`~resolver_hook.errors.UsageError`);
- the data reaches the disk (``fsync``) before the rename, unless ``sync=False``: for a
  file in a private temporary folder removed at the end of the run, which outlives no
  crash (an ``fsync`` costs milliseconds, more on a busy disk).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterator, Sequence

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.signals import sigterm_raises
from resolver_hook.ground.tempdir import private_folder

# pathlib and hashlib are imported where used: a command that only writes a record (the
# timings of a replayed install) should not pay for them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "locked",
    "private_tempdir",
    "sha256_file",
    "shown_path",
    "sigterm_raises",
    "write_all",
    "write_atomic",
]


_HASH_CHUNK = 4 << 20


def sha256_file(path: Path) -> str:
    """The hex sha256 of the file at ``path``, read in chunks (OSError passes through)."""
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb", buffering=0) as handle:
        buf = bytearray(_HASH_CHUNK)
        view = memoryview(buf)
        while n := handle.readinto(buf):
            digest.update(view[:n])
    return digest.hexdigest()


# --- writing ------------------------------------------------------------------------


def _not_replaceable(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it exists but is no regular file a rename may replace: a
    FIFO, a device, a socket, or a kernel file under /proc or /sys; None otherwise.

    ``os.stat`` follows links as the kernel does, also /dev/stdout and ``>(...)``'s
    /dev/fd/N to a pipe, which ``realpath`` cannot follow.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None  # a new file, a dangling link: the write reports any failure
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode) and os.path.realpath(path).split(os.sep)[1:2] in (["proc"], ["sys"]):
        return "a kernel file"
    return None


def _through_links(path: Path) -> Path:
    """The file a write to ``path`` must replace: the final target of a symlink chain
    (:func:`_not_replaceable` is checked first: a pipe is never the target)."""
    if not path.is_symlink():
        return path
    return type(path)(_link_target(os.fspath(path)))


def _link_target(path: str) -> str:
    """:func:`_through_links` for a path as text."""
    # realpath follows every link, also a dangling one (to where it points).
    return os.path.realpath(path) if os.path.islink(path) else path


@contextlib.contextmanager
def private_tempdir() -> Iterator[Path]:
    """:func:`resolver_hook.ground.tempdir.private_folder` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    with private_folder() as path:
        yield Path(path)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def shown_path(path: str) -> str:
    """``path`` as text for a person: its bytes read as UTF-8, any that are not shown as
    ``\\xNN`` (a name made in another locale, or under ``LC_ALL=C``)."""
    try:
        raw = os.fsencode(path)
    except (UnicodeEncodeError, ValueError):
        return path.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, sync: bool = True) -> None:
    """Write ``data`` (``str`` as UTF-8, ``\\n`` line ends) to ``path``; see the module doc."""
    shown = _writable_name(path)
    target = _link_target(shown)
    # A file name that is not UTF-8 (read with surrogateescape) keeps its bytes as on disk.
    payload = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if os.path.isdir(target):
        raise OperationalError(f"{shown}: cannot write: it is a folder")
    with sigterm_raises():
        tmp = _stage(shown, target, payload, sync=sync)
        with _removed_on_failure(shown, tmp):
            os.replace(tmp, target)


def _writable_name(path: str | os.PathLike[str]) -> str:
    """``path`` as text, refused when it names nothing or what a generated file must not
    replace. Replacing a FIFO, a device or a /proc file by a regular file would break it
    or fail with a misleading message; writing into it could block forever (a FIFO
    nobody reads) or poke the kernel. Standard output has its own spelling."""
    shown = os.fspath(path)
    if shown == "":
        raise UsageError("an empty path is not a file name")
    kind = _not_replaceable(shown)
    if kind is not None:
        raise UsageError(
            f"{shown}: cannot write: it is {kind}, not a regular file; "
            "to write to standard output, use -o - instead"
        )
    return shown


def write_all(files: Sequence[tuple[str | os.PathLike[str], str | bytes]]) -> None:
    """Write several generated files all or nothing: every one is staged beside its
    target first (as :func:`write_atomic` writes one), then all are swapped in; a
    failure while staging replaces none, one while swapping puts back the files already
    swapped (from hard links kept meanwhile) and removes those that were new. Readers
    may see the old set, the new set, or for the moment of the swap a mix, never a half
    file. The same refusals as :func:`write_atomic` (a FIFO, a folder ...), before any
    file is written."""
    targets = []
    for path, _ in files:
        shown = _writable_name(path)
        target = _link_target(shown)
        if os.path.isdir(target):
            raise OperationalError(f"{shown}: cannot write: it is a folder")
        targets.append((shown, target))
    staged: list[str] = []
    kept: dict[str, str | None] = {}  # target -> its old file's hard link (None: it was new)
    done = False
    with sigterm_raises():
        try:
            for (shown, target), (_, data) in zip(targets, files, strict=True):
                payload = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
                staged.append(_stage(shown, target, payload))
            for (shown, target), tmp in zip(targets, staged, strict=True):
                kept[target] = _keep_old(shown, target)
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise OperationalError(
                        f"{shown}: cannot write: {exc.strerror or exc}"
                    ) from None
            done = True
        finally:
            for tmp in staged:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            for target, old in kept.items():
                with contextlib.suppress(OSError):
                    if done and old is not None:
                        os.unlink(old)
                    elif not done and old is not None:
                        os.replace(old, target)
                    elif not done:
                        os.unlink(target)


def _stage(shown: str, target: str, payload: bytes, *, sync: bool = True) -> str:
    """``payload`` in a new temporary file beside ``target``, with ``target``'s mode (or
    a new file's): its path (``sync``: on disk). OperationalError naming ``shown`` on
    failure; the temporary file is removed on any failure or interruption."""
    folder, name = os.path.split(target)
    tmp = os.path.join(folder, f".{name}.{os.urandom(4).hex()}.tmp")
    try:
        try:
            mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        # Owner-only until its final mode is set: a 0600 file's new content is
        # never readable by others, not even for a moment.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(tmp, flags, 0o600)
    except OSError as exc:
        raise OperationalError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    with _removed_on_failure(shown, tmp):
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.chmod(tmp, (0o666 & ~_umask()) if mode is None else mode)
    return tmp


@contextlib.contextmanager
def _removed_on_failure(shown: str, tmp: str) -> Iterator[None]:
    """``tmp`` removed when the block fails or is interrupted; an OSError there is an
    OperationalError naming ``shown``."""
    try:
        yield
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OperationalError(f"{shown}: cannot write: {exc.strerror or exc}") from None
        raise


def _keep_old(shown: str, target: str) -> str | None:
    """A hard link to ``target``'s current file (a copy where the file system has no
    hard links), to put it back if the swap fails; None when there is none (a new file)."""
    if not os.path.lexists(target):
        return None
    folder, name = os.path.split(target)
    old = os.path.join(folder, f".{name}.{os.urandom(4).hex()}.old")
    try:
        os.link(target, old)
    except OSError:
        try:
            with open(target, "rb") as handle:
                return _stage(shown, target, handle.read())
        except OSError as exc:
            raise OperationalError(
                f"{shown}: cannot keep the old file while the set is swapped: {exc.strerror or exc}"
            ) from None
    return old


@contextlib.contextmanager
def locked(path: Path, *, shared: bool, seconds: float, what: str) -> Iterator[None]:
    """Hold an advisory lock on the existing file or folder ``path`` meanwhile.

    ``flock`` on a descriptor of ``path`` itself, so no lock file is left behind; shared
    for readers, exclusive for writers. Waits up to ``seconds``, then one
    :class:`OperationalError` saying ``what`` holds it. Where ``flock`` does not exist
    (Windows) nothing is locked (the README says so).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise OperationalError(f"{path}: cannot lock it: {exc.strerror or exc}") from None
    try:
        mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
        end = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, mode)
                break
            except BlockingIOError:
                if time.monotonic() >= end:
                    raise OperationalError(
                        f"{path}: {what} (waited {seconds:g} s for it)",
                        hint="let the other resolver-hook command finish, then run this again",
                    ) from None
                time.sleep(0.02)
            except OSError as exc:
                raise OperationalError(f"{path}: cannot lock it: {exc.strerror or exc}") from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
