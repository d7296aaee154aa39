"""Generated files: written atomically, never over an input, never a half file or a traceback.

Threat model: an output path that is a symlink to an input, a symlink elsewhere, a
dangling symlink, a read-only file, an empty path, a folder, a folder that cannot be
written to (``/sys`` refuses even root).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.fs import write_atomic
from tests.clirun import cli
from tests.paths import REPO

TARGET = "linux-x86_64-py312"


# --- lock ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["requirements", "pylock", "uv"])
@pytest.mark.parametrize("kind", ["symlink", "hardlink", "dot-path"])
def test_lock_refuses_an_output_that_is_its_input(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    fmt: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "req.in").write_text("six\n")
    if kind == "symlink":
        (tmp_path / "link.in").symlink_to("req.in")
        argv = ["-r", "link.in", "-o", "req.in"]
    elif kind == "hardlink":
        os.link("req.in", "hard.in")
        argv = ["-r", "hard.in", "-o", "req.in"]
    else:
        (tmp_path / "sub").mkdir()
        argv = ["-r", "sub/../req.in", "-o", "./req.in"]
    if fmt != "requirements":
        argv += ["--format", fmt]
    code, _, err = cli(capsys, "lock", "--flavoured-only", *argv, "--target", TARGET)
    assert code == 2
    assert "is one of the input files" in err
    assert (tmp_path / "req.in").read_text() == "six\n"


def test_lock_without_target_plans_for_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The everyday form, `lock -r req.in -o out.txt`, used to end in a TypeError."""
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("RESOLVER_HOOK_OVERRIDE_")]:
        monkeypatch.delenv(name)
    (tmp_path / "req.in").write_text("six\n")
    code, out, err = cli(
        capsys, "lock", "--flavoured-only", "-r", "req.in", "-o", "out.txt", "--cuda", ""
    )
    assert (code, err) == (0, "")
    assert out.startswith("wrote out.txt")
    assert "six" in (tmp_path / "out.txt").read_text()


def test_lock_to_an_empty_path_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "req.in").write_text("six\n")
    code, _, err = cli(
        capsys, "lock", "--flavoured-only", "-r", "req.in", "-o", "", "--target", TARGET
    )
    assert code == 2
    assert err == "error: an empty path is not a file name\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["req.in"]


def test_lock_through_a_symlinked_output_keeps_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "req.in").write_text("six\n")
    (tmp_path / "locks").mkdir()
    (tmp_path / "out.txt").symlink_to("locks/real.txt")  # dangling until written
    code, _, _ = cli(
        capsys, "lock", "--flavoured-only", "-r", "req.in", "-o", "out.txt", "--target", TARGET
    )
    assert code == 0
    assert (tmp_path / "out.txt").is_symlink()
    assert "six" in (tmp_path / "locks/real.txt").read_text()


def test_lock_to_a_fifo_is_refused_and_the_fifo_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "req.in").write_text("six\n")
    os.mkfifo(tmp_path / "out.txt")
    code, out, err = cli(
        capsys, "lock", "--flavoured-only", "-r", "req.in", "-o", "out.txt", "--target", TARGET
    )
    assert code == 2
    assert out == ""
    assert err == (
        "error: out.txt: cannot write: it is a FIFO (named pipe), not a regular file; "
        "to write to standard output, use -o - instead\n"
    )
    assert stat.S_ISFIFO((tmp_path / "out.txt").lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "req.in"]


@pytest.mark.parametrize("what", ["pipe-by-fd", "dev-null", "proc-file"])
def test_write_atomic_refuses_what_is_no_regular_file(tmp_path: Path, what: str) -> None:
    # /dev/stdout and >(...) are /proc/self/fd/N of a pipe: realpath cannot follow them.
    read_end, write_end = os.pipe()
    try:
        target, kind = {
            "pipe-by-fd": (f"/proc/self/fd/{write_end}", "a FIFO (named pipe)"),
            "dev-null": (str(tmp_path / "null"), "a device"),
            "proc-file": ("/proc/version", "a kernel file"),
        }[what]
        if what == "dev-null":  # a /dev/null of our own: never risk the real one
            try:
                os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            except PermissionError:
                pytest.skip("making a device node needs CAP_MKNOD")
        before = Path(target).read_text() if what == "proc-file" else None
        with pytest.raises(
            UsageError, match=f"^{re.escape(target)}: cannot write: it is {re.escape(kind)}"
        ):
            write_atomic(target, "a = 1\n")
        assert before is None or Path(target).read_text() == before
    finally:
        os.close(read_end)
        os.close(write_end)
    assert all(stat.S_ISCHR(p.lstat().st_mode) for p in tmp_path.iterdir())


# --- the writer itself ----------------------------------------------------------------------


def test_write_atomic_keeps_modes_and_follows_links(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    write_atomic(target, "a\n")
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
    target.chmod(0o444)
    write_atomic(target, "b\n")
    assert (target.read_text(), target.stat().st_mode & 0o777) == ("b\n", 0o444)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "c\n")
    assert link.is_symlink()
    assert target.read_text() == "c\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "link.txt"]


def test_write_atomic_leaves_the_old_file_when_it_fails(tmp_path: Path) -> None:
    target = tmp_path / "manifest.toml"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "bad \ud800")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.toml"]


@pytest.mark.parametrize("where", ["missing-folder", "is-a-folder", "unwritable"])
def test_write_atomic_errors_name_the_path(tmp_path: Path, where: str) -> None:
    target = {
        "missing-folder": tmp_path / "no/m.toml",
        "is-a-folder": tmp_path,
        "unwritable": Path("/sys/resolver-hook-test.toml"),
    }[where]
    with pytest.raises(OperationalError, match=f"^{re.escape(str(target))}: cannot write: "):
        write_atomic(target, "a = 1\n")
    with pytest.raises(UsageError, match="empty path"):
        write_atomic("", "x")


# --- other writers: one error line, not a PermissionError ----------------------------------


def test_placeholder_build_into_an_unwritable_folder(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = REPO / "resolver_hook" / "manifests" / "tilert.toml"
    code, _, err = cli(
        capsys, "placeholder", "build", str(manifest), "-o", "/sys", "--version", "0.0.0.dev0"
    )
    assert code == 1
    assert err == "error: /sys: cannot write in it: Operation not permitted\n"


@pytest.mark.parametrize("command", ["scan", "manifest"])
def test_manifest_outputs_to_a_folder_are_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    from tests.wheelfactory import build_wheel

    wheel = build_wheel(tmp_path, "demo", "1.0").path
    page = tmp_path / "page.html"
    page.write_text(f'<a href="{wheel.name}">{wheel.name}</a>')
    out = tmp_path / "folder"
    out.mkdir()
    if command == "scan":
        argv = ["scan", str(wheel), "-o", str(out), "--url-prefix", "https://example.org/w/"]
    else:
        argv = ["manifest", "import", str(page), "--base-url", "https://example.org/w/"]
        argv += ["-o", str(out)]
    code, _, err = cli(capsys, *argv)
    assert code == 1
    assert err.splitlines()[-1] == f"error: {out}: cannot write: it is a folder"
    assert "Traceback" not in err


def test_the_temporary_file_is_owner_only_until_its_mode_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resolver_hook.ground import fs as _fs

    target = tmp_path / "private.txt"
    target.write_text("old\n")
    target.chmod(0o600)
    seen: list[int] = []
    chmod = os.chmod

    def spy(path: str | os.PathLike[str], mode: int) -> None:
        seen.append(os.stat(path).st_mode & 0o777)
        chmod(path, mode)

    monkeypatch.setattr(_fs.os, "chmod", spy)
    _fs.write_atomic(target, "new\n")
    assert seen == [0o600]
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("sync", [True, False])
def test_write_atomic_syncs_unless_told_the_file_is_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: bool
) -> None:
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(tmp_path / "c.txt", "demo-gpu==1.0\n", sync=sync)
    assert (tmp_path / "c.txt").read_text() == "demo-gpu==1.0\n"
    assert len(synced) == (1 if sync else 0)
    assert [p.name for p in tmp_path.iterdir()] == ["c.txt"]
