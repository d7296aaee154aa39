"""The per-boot host-profile cache (resolver_hook/host/cache.py): when it is used, when not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from resolver_hook.host import cache
from resolver_hook.host.detect import detect
from resolver_hook.host.profile import HostProfile


def fake_root(tmp_path: Path, *, boot: str = "boot-1", driver: str | None = "580.65.06") -> Path:
    root = tmp_path / "root"
    (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/random/boot_id").write_text(boot + "\n")
    version = root / "sys/module/nvidia/version"
    if driver is None:
        version.unlink(missing_ok=True)
    else:
        version.parent.mkdir(parents=True, exist_ok=True)
        version.write_text(driver + "\n")
    return root


PROFILE = HostProfile(os="linux", arch="x86_64", python="3.12", tags=("cp312-cp312-linux_x86_64",))


def stored(tmp_path: Path, env: dict[str, str], root: Path) -> tuple[Path, dict[str, object]]:
    path = tmp_path / "cache" / "host-profile.json"
    key = cache.cache_key(env, root=root)
    assert key is not None
    cache.store(path, key, PROFILE)
    return path, key


def refused(path: Path, key: dict[str, object]) -> str:
    """The note of a cache that :func:`cache.load` will not use (no profile comes back)."""
    profile, note = cache.load(path, key)
    assert profile is None
    assert note is not None
    return note


def test_a_stored_profile_is_read_back_for_the_same_key(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    path, key = stored(tmp_path, {}, root)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert cache.load(path, key) == (PROFILE, None)


@pytest.mark.parametrize(
    ("change", "env"),
    [
        pytest.param({"driver": "590.10"}, {}, id="driver-upgraded"),
        pytest.param({"driver": None}, {}, id="driver-unloaded"),
        pytest.param({"boot": "boot-2"}, {}, id="new-boot-id"),
        pytest.param({}, {"CUDA_VISIBLE_DEVICES": "1"}, id="visible-devices"),
    ],
)
def test_a_change_of_what_detection_reads_misses(
    tmp_path: Path, change: dict[str, str | None], env: dict[str, str]
) -> None:
    path, _ = stored(tmp_path, {}, fake_root(tmp_path))
    root = fake_root(tmp_path, **change)  # type: ignore[arg-type]
    key = cache.cache_key(env, root=root)
    assert key is not None
    assert cache.load(path, key) == (None, None)


def test_no_boot_id_means_no_cache(tmp_path: Path) -> None:
    assert cache.cache_key({}, root=tmp_path) is None


@pytest.mark.parametrize(
    ("content", "why"),
    [
        pytest.param(b"{not json", "unreadable", id="corrupt"),
        pytest.param(b"\xff\xfe", "unreadable", id="not-utf8"),
        pytest.param(b"x" * (2 << 20), "unreadable", id="huge"),
        pytest.param(b"[" * 100_000, "nested too deeply", id="nested"),
    ],
)
def test_a_corrupt_cache_is_ignored_with_a_note(tmp_path: Path, content: bytes, why: str) -> None:
    path, key = stored(tmp_path, {}, fake_root(tmp_path))
    path.write_bytes(content)
    note = refused(path, key)
    assert why in note
    assert str(path) in note


def test_a_cache_with_a_bad_profile_is_ignored_with_a_note(tmp_path: Path) -> None:
    path, key = stored(tmp_path, {}, fake_root(tmp_path))
    path.write_text(json.dumps({"key": key, "value": {"os": "plan9"}}))
    note = refused(path, key)
    assert "plan9" in note


def test_a_cache_others_can_write_is_ignored(tmp_path: Path) -> None:
    path, key = stored(tmp_path, {}, fake_root(tmp_path))
    path.chmod(0o666)
    note = refused(path, key)
    assert "writable by others" in note


def test_a_symlinked_cache_is_not_followed(tmp_path: Path) -> None:
    path, key = stored(tmp_path, {}, fake_root(tmp_path))
    real = path.with_name("elsewhere.json")
    path.rename(real)
    path.symlink_to(real)
    refused(path, key)


@pytest.fixture
def cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The host cache's folder (by its variable), with detect's memo cleared."""
    folder = tmp_path / "c"
    monkeypatch.setenv(cache.CACHE_ENV, str(folder))
    detect.cache_clear()  # type: ignore[attr-defined]
    return folder


@pytest.fixture
def live_cache(cache_folder: Path) -> Path:
    """:func:`cache_folder` on a machine where the cache is on (it has a boot id)."""
    if cache.cache_key(os.environ) is None:
        pytest.skip("this machine has no boot id: the cache is off by design")
    return cache_folder


def test_detect_writes_the_cache_and_overrides_bypass_it(
    live_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = live_cache
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_CUDA", "12.8")
    assert detect().cuda == (12, 8)
    assert not (folder / "host-profile.json").exists()  # an overridden machine is never stored
    monkeypatch.delenv("RESOLVER_HOOK_OVERRIDE_CUDA")
    detect.cache_clear()  # type: ignore[attr-defined]
    first = detect()
    assert (folder / "host-profile.json").exists()
    detect.cache_clear()  # type: ignore[attr-defined]
    assert detect() == first  # read back from the file
    detect.cache_clear()  # type: ignore[attr-defined]
    (folder / "host-profile.json").write_text("garbage")
    again = detect()
    assert any("host cache" in n and "ignored" in n for n in again.notes)
    assert again.replace(notes=first.notes) == first


def test_detect_without_the_cache_writes_nothing(cache_folder: Path) -> None:
    folder = cache_folder
    detect(use_cache=False)
    assert not folder.exists()


def test_a_driver_without_visible_gpus_is_not_kept_for_the_boot(tmp_path: Path) -> None:
    from resolver_hook.host.profile import NvidiaGpu, NvidiaInfo

    with_driver = cache.cache_key({}, root=fake_root(tmp_path))
    no_driver = cache.cache_key({}, root=fake_root(tmp_path / "b", driver=None))
    assert with_driver is not None
    assert no_driver is not None
    gpu = NvidiaGpu(index=0, name="NVIDIA H100", cc=(9, 0))
    with_gpu = PROFILE.replace(nvidia=NvidiaInfo(cuda_version="13.0", gpus=(gpu,)))
    assert not cache.conclusive(with_driver, PROFILE)  # NVML failed this time, say
    assert cache.conclusive(with_driver, with_gpu)
    assert cache.conclusive(no_driver, PROFILE)  # no driver at all: nothing to find


def test_doctor_and_status_never_read_the_cache(
    live_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # detect reads the cache; doctor reports what the probes find now (and status
    # compares the machine as it is now): a planted cached profile shows the difference.
    from resolver_hook.cli import main

    folder = live_cache
    assert main(["detect", "--json"]) == 0
    real = json.loads(capsys.readouterr().out)["arch"]
    path = folder / "host-profile.json"
    stored = json.loads(path.read_text())
    stored["value"]["arch"] = "riscv64" if real != "riscv64" else "s390x"
    path.write_text(json.dumps(stored))
    detect.cache_clear()  # type: ignore[attr-defined]
    assert main(["detect", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["arch"] == stored["value"]["arch"]
    detect.cache_clear()  # type: ignore[attr-defined]
    main(["doctor", "--json"])
    assert json.loads(capsys.readouterr().out)["profile"]["arch"] == real


def test_no_cache_is_written_for_a_target_or_a_profile(
    tmp_path: Path, cache_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from resolver_hook.cli import main

    folder = cache_folder
    assert main(["detect", "--json", "--target", "linux-x86_64-py312-cuda13.0-sm90"]) == 0
    saved = tmp_path / "profile.json"
    saved.write_text(capsys.readouterr().out)
    assert main(["detect", "--json", "--profile", str(saved)]) == 0
    assert main(["plan", "numpy", "--target", "linux-x86_64-py312"]) == 0
    assert not (folder / "host-profile.json").exists()
    if cache.cache_key(os.environ) is not None:  # and detection does write it
        assert main(["detect", "--json"]) == 0
        assert (folder / "host-profile.json").exists()


def test_a_link_in_the_cache_is_replaced_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    path = tmp_path / "cache" / "host-profile.json"
    path.parent.mkdir()
    path.symlink_to(victim)
    root = fake_root(tmp_path)
    key = cache.cache_key({}, root=root)
    assert key is not None
    cache.store(path, key, PROFILE)
    assert victim.read_text() == "keep me\n"
    assert not path.is_symlink()
    assert cache.load(path, key) == (PROFILE, None)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"XDG_CACHE_HOME": "relcache", "HOME": "/home/u"}, "/home/u/.cache/resolver-hook"),
        ({"XDG_CACHE_HOME": "./x", "HOME": "/home/u"}, "/home/u/.cache/resolver-hook"),
        ({"XDG_CACHE_HOME": "/var/c", "HOME": "/home/u"}, "/var/c/resolver-hook"),
        ({"XDG_CACHE_HOME": "", "HOME": "/home/u"}, "/home/u/.cache/resolver-hook"),
    ],
    ids=["relative", "dot-relative", "absolute", "empty"],
)
def test_a_relative_xdg_cache_home_is_ignored(env: dict[str, str], expected: str) -> None:
    from resolver_hook.ground.cache import cache_dir

    assert str(cache_dir(env)) == expected
