"""Issue 42, lock sets: index.toml is validated (no traceback, nothing loose accepted),
and a lock set is written all or nothing (resolver_hook/lock/sets.py ``lock_set_files``,
resolver_hook/lock/files.py ``write_locks``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from resolver_hook.errors import OperationalError
from resolver_hook.ground.fs import write_all
from resolver_hook.host import parse_target
from resolver_hook.lock.sets import choose, read_index
from tests.clirun import cli

HEX = "ab" * 32
SM90 = "linux-x86_64-py312-cuda12.6-sm90"


def _index(lock_extra: str, *, sha256: str = HEX) -> str:
    return (
        "schema = 1\n[[lock]]\n"
        f'file = "a.txt"\nsha256 = "{sha256}"\ntarget = "t"\nmachine = "m"\n{lock_extra}'
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (_index("gpus = 5\n"),
         'lock[0].gpus: needs a list of compute capabilities such as ["9.0"], not 5'),
        (_index("gpus = [{a = 1}]\n"), "lock[0].gpus[0]: \"{'a': 1}\" is not a compute capability"),
        (_index('gpus = ["9.0", "fast"]\n'), "lock[0].gpus[1]: 'fast' is not a compute capability"),
        (_index('package = "torch"\n'), "lock[0].package: needs [[lock.package]] tables"),
        (_index("", sha256="0"), "lock[0].sha256: '0' is not a sha256 (64 hex digits)"),
    ],
)  # fmt: skip
def test_a_bad_lock_index_is_one_error_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, words: str
) -> None:
    (tmp_path / "index.toml").write_text(text)
    code, _, err = cli(capsys, "sync", str(tmp_path), "--target", SM90)
    assert code == 2
    assert err.startswith(f"error: {tmp_path / 'index.toml'}: {words}"), err
    assert "Traceback" not in err


X86 = "linux-x86_64-py312"
ARM = "linux-aarch64-py312"


def _manifest(tmp_path: Path, release: str, *, arm_sha: bool = True) -> Path:
    """pkg ``release``: one wheel per CPU, served from a dead loopback port (never read
    when the sha256 is given)."""
    base = "http://127.0.0.1:9/dl"
    arm = f'sha256 = "{"cd" * 32}"\n' if arm_sha else ""
    path = tmp_path / f"m-{release}.toml"
    path.write_text(
        'schema = 1\n[package]\nname = "pkg"\n'
        f'[[wheel]]\nurl = "{base}/pkg-{release}-py3-none-manylinux_2_28_x86_64.whl"\n'
        f'sha256 = "{HEX}"\n'
        f'[[wheel]]\nurl = "{base}/pkg-{release}-py3-none-manylinux_2_28_aarch64.whl"\n{arm}'
    )
    return path


def _state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_a_lock_set_that_fails_on_its_second_file_leaves_the_set_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locks = tmp_path / "locks"
    locks.mkdir()
    out = f"{locks}/{{target}}.txt"
    first = _manifest(tmp_path, "1.0")
    code, _, err = cli(capsys, "lock", "pkg", "--flavoured-only", "--manifest", str(first),
                       "--allow-insecure-urls", "--target", X86, "--target", ARM,
                       "-o", out)  # fmt: skip
    assert code == 0, err
    before = _state(locks)
    assert set(before) == {f"{X86}.txt", f"{ARM}.txt", "index.toml"}
    (locks / f"{ARM}.txt").unlink()
    (locks / f"{ARM}.txt").mkdir()  # the second file cannot be written
    second = _manifest(tmp_path, "2.0")
    code, _, err = cli(capsys, "lock", "pkg", "--flavoured-only", "--manifest", str(second),
                       "--allow-insecure-urls", "--target", X86, "--target", ARM,
                       "-o", out)  # fmt: skip
    assert code == 1
    assert f"error: {locks}/{ARM}.txt: cannot write: it is a folder" in err
    del before[f"{ARM}.txt"]
    assert _state(locks) == before  # the first lock and the index as they were, no temp file


def test_a_pylock_set_whose_second_target_cannot_be_hashed_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locks = tmp_path / "locks"
    locks.mkdir()
    out = f"{locks}/pylock.{{target}}.toml"
    manifest = _manifest(tmp_path, "1.0", arm_sha=False)  # the aarch64 wheel must be hashed
    code, _, err = cli(capsys, "lock", "pkg", "--manifest", str(manifest), "--allow-insecure-urls",
                       "--target", X86, "--target", ARM, "--timeout", "5", "-o", out)  # fmt: skip
    assert code == 1
    assert "127.0.0.1:9/dl/pkg-1.0-py3-none-manylinux_2_28_aarch64.whl" in err
    assert list(locks.iterdir()) == []


def test_variants_export_writes_all_its_files_or_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "torch.toml"
    wheel = "https://example.org/{}/torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    manifest.write_text(
        'schema = 1\n[package]\nname = "torch"\n'
        f'[[wheel]]\nurl = "{wheel.format("a")}"\ncuda = ">=12.8,<14"\ngpu = ["sm_80"]\n'
        f'[[wheel]]\nurl = "{wheel.format("b")}"\ncuda = ">=13.0,<14"\ngpu = ["sm_90"]\n'
    )
    code, _, err = cli(capsys, "manifest", "export", "--variants", str(manifest),
                       "-o", str(tmp_path / "first"))  # fmt: skip
    assert code == 0, err
    names = sorted(p.name for p in (tmp_path / "first").iterdir())
    assert len(names) == 3  # the index file and one file per variant
    out = tmp_path / "second"
    blocked = next(n for n in names if n.endswith(".variant.json"))  # after the index file
    (out / blocked).mkdir(parents=True)  # one of them cannot be written
    code, _, err = cli(capsys, "manifest", "export", "--variants", str(manifest), "-o", str(out))
    assert code == 1
    assert f"{out / blocked}: cannot write: it is a folder" in err
    assert [p.name for p in out.iterdir()] == [blocked]


@pytest.mark.parametrize("links", [True, False], ids=["hard-links", "no-hard-links"])
def test_a_swap_that_fails_midway_puts_back_what_it_swapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    """Fault injection: the second rename of the swap fails (a file system that fails
    one rename); the first file is put back, the new one removed, no temp file left."""
    old = tmp_path / "a.txt"
    old.write_text("old a\n")
    old.chmod(0o640)
    real_replace = os.replace
    calls: list[str] = []

    def replace(src: str, dst: str) -> None:
        calls.append(os.path.basename(dst))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    if not links:
        monkeypatch.setattr(os, "link", lambda *a: (_ for _ in ()).throw(OSError(1, "EPERM")))
    with pytest.raises(OperationalError, match=r"b\.txt: cannot write: No space left on device"):
        write_all([(old, "new a\n"), (tmp_path / "b.txt", "new b\n")])
    assert calls[:2] == ["a.txt", "b.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert old.read_text() == "old a\n"
    assert old.stat().st_mode & 0o777 == 0o640


def test_an_empty_gpus_list_is_a_target_with_no_nvidia_gpu(tmp_path: Path) -> None:
    """``gpus = []`` is what ``lock`` writes for a CPU-only or AMD target (docs/locks.md):
    read, not refused, and the exact match on a machine with no NVIDIA GPU."""
    cuda = f'target = "{SM90}"\nmachine = "m"\ngpus = ["9.0"]\n'
    cpu = f'target = "{X86}"\nmachine = "m"\ngpus = []\n'
    (tmp_path / "index.toml").write_text(
        "schema = 1\n"
        f'[[lock]]\nfile = "sm90.txt"\nsha256 = "{HEX}"\n{cuda}'
        f'[[lock]]\nfile = "cpu.txt"\nsha256 = "{HEX}"\n{cpu}'
    )
    locks = read_index(tmp_path)
    assert [lock.gpus for lock in locks] == [("9.0",), ()]
    assert choose(locks, parse_target(X86))[0] == locks[1]
    assert choose(locks, parse_target(SM90))[0] == locks[0]
