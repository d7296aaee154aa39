"""Publishing a placeholder that wins: its version chosen against the index, one URL
policy on every command, and the maintainer's flow end to end on a loopback index that
takes twine uploads, installed from with real pip and real uv."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.process.which import find_uv
from resolver_hook.publish.placeholder import build_placeholder, check_placeholder
from resolver_hook.publish.placeholder.versions import (
    IndexFile,
    choose_from_index,
    choose_version,
    is_placeholder_version,
    project_status,
)
from tests.clirun import cli
from tests.installenv import clean_env, make_venv
from tests.paths import REPO
from tests.placeholder_support import TILERT
from tests.uploadindex import UploadIndex
from tests.wheelfactory import build_wheel

UV = find_uv()
WHERE = "https://index.example/simple/tilert/"
# A machine with no GPU at all: nothing any real tilert build needs.
UNSUPPORTED = {"RESOLVER_HOOK_OVERRIDE_CUDA": "", "RESOLVER_HOOK_OVERRIDE_ARCH": "x86_64"}
# A platform this test machine is not: real wheels for it are never installable here.
ELSEWHERE = "manylinux_2_28_aarch64" if os.uname().machine != "aarch64" else "win_amd64"


def _file(filename: str, *, yanked: bool = False) -> IndexFile:
    version = Version(filename.split("-")[1].removesuffix(".tar.gz"))
    return IndexFile(
        filename=filename, version=version, wheel=filename.endswith(".whl"), yanked=yanked
    )


# --- choosing the version ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "looks"),
    [("0.0.0.dev0", True), ("0", True), ("0.0.0a0", True), ("0.0.3.dev1", True),
     ("0.0.1", False), ("0.1.6.post3", False), ("0.0.1rc1", False), ("1.0.dev0", False)],
)  # fmt: skip
def test_what_looks_like_a_placeholder(version: str, looks: bool) -> None:
    assert is_placeholder_version(Version(version)) is looks


def test_a_new_name_gets_the_default_version() -> None:
    choice = choose_version((), name="tilert", where=WHERE)
    assert choice.version == "0.0.0.dev0"
    assert choice.warnings == ()
    assert "no release of tilert" in choice.why


def test_a_silent_wheel_is_outbid_and_named() -> None:
    files = [
        _file("tilert-0.0.0.dev0-py3-none-any.whl"),
        _file("tilert-0.1.6.post3-cp312-cp312-manylinux_2_28_x86_64.whl"),
    ]
    choice = choose_version(files, name="tilert", where=WHERE)
    assert choice.version == "0.0.1.dev0"
    assert "above 0.0.0.dev0" in choice.why
    assert "below 0.1.6.post3 (the first real release)" in choice.why
    (warning,) = choice.warnings
    assert warning.startswith("tilert-0.0.0.dev0-py3-none-any.whl is a placeholder-looking wheel")
    assert "yank it (PEP 592) or delete it" in warning


def test_regenerating_bumps_the_version() -> None:
    files = [_file("tilert-0.0.0.dev0-py3-none-any.whl"), _file("tilert-0.0.1.dev0.tar.gz")]
    assert choose_version(files, name="tilert", where=WHERE).version == "0.0.2.dev0"


def test_no_room_below_the_real_release_bumps_the_dev_number() -> None:
    files = [_file("tilert-0.0.1.dev0.tar.gz"), _file("tilert-0.0.2-py3-none-any.whl")]
    choice = choose_version(files, name="tilert", where=WHERE)
    assert choice.version == "0.0.2.dev0"
    files = [_file("tilert-0.0.1.dev0.tar.gz"), _file("tilert-0.0.1-py3-none-any.whl")]
    assert choose_version(files, name="tilert", where=WHERE).version == "0.0.1.dev1"


def test_a_yanked_wheel_is_not_named_but_its_version_is_taken() -> None:
    files = [_file("tilert-0.0.0.dev0-py3-none-any.whl", yanked=True)]
    choice = choose_version(files, name="tilert", where=WHERE)
    assert (choice.version, choice.warnings) == ("0.0.1.dev0", ())


@pytest.mark.parametrize(
    ("requested", "words"),
    [
        ("0.0.1.dev0", "is already on"),
        ("0.0.0.dev5", "is already on https://index.example/simple/tilert/ and is higher"),
        ("0.2", "not below 0.1.6.post3, the first real release"),
    ],
)
def test_a_requested_version_that_cannot_win_is_refused(requested: str, words: str) -> None:
    files = [
        _file("tilert-0.0.1.dev0.tar.gz"),
        _file("tilert-0.1.6.post3-cp312-cp312-manylinux_2_28_x86_64.whl"),
    ]
    with pytest.raises(UsageError, match=words) as caught:
        choose_version(files, name="tilert", where=WHERE, requested=requested)
    assert caught.value.hint is not None
    assert "leave --version out to take 0.0.2.dev0" in caught.value.hint


def test_a_requested_version_that_wins_is_kept() -> None:
    files = [_file("tilert-0.0.1.dev0.tar.gz")]
    assert choose_version(files, name="tilert", where=WHERE, requested="0.0.5.dev0").version == (
        "0.0.5.dev0"
    )


def test_project_status_is_read_from_the_page() -> None:
    page = '<html><head><meta name="pypi:project-status" content="archived">'
    page += '<meta name="pypi:project-status-reason" content="moved"></head></html>'
    assert project_status(page) == ("archived", "moved")
    assert project_status("<html><body><a href='x'>x</a></body></html>") == ("active", None)
    json_page = '{"meta": {"api-version": "1.4"}, "name": "tilert", "files": [], '
    json_page += '"project-status": {"status": "quarantined"}}'
    assert project_status(json_page, "application/vnd.pypi.simple.v1+json") == (
        "quarantined",
        None,
    )
    assert project_status('{"name": "tilert", "files": []}') == ("active", None)


# --- against a loopback index ------------------------------------------------------------


def _wheels(out: Path) -> tuple[Path, Path]:
    """The silent placeholder wheel PyPI once held for tilert, and a real build for
    another platform than this machine's."""
    silent = build_wheel(out, "tilert", "0.0.0.dev0").path
    real = build_wheel(out, "tilert", "0.1.6", tag=f"py3-none-{ELSEWHERE}").path
    return silent, real


def test_the_index_page_decides_the_version(tmp_path: Path) -> None:
    index = UploadIndex(tmp_path / "index")
    for wheel in _wheels(tmp_path / "built"):
        index.add(wheel)
    with index.serving():
        choice = choose_from_index("tilert", index.simple, allow_insecure=True)
        assert choice.version == "0.0.1.dev0"
        assert choose_from_index("never-uploaded", index.simple, allow_insecure=True).version == (
            "0.0.0.dev0"
        )
        with pytest.raises(UsageError, match="--allow-insecure-urls"):
            choose_from_index("tilert", index.simple)
        index.status["tilert"] = "archived"
        with pytest.raises(OperationalError, match="marks tilert archived"):
            choose_from_index("tilert", index.simple, allow_insecure=True)
        index.status["tilert"] = "deprecated"
        choice = choose_from_index("tilert", index.simple, allow_insecure=True)
        assert any("deprecated (PEP 792)" in w for w in choice.warnings)


def test_build_without_the_index_needs_a_version_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(
        capsys, "placeholder", "build", str(TILERT), "-o", str(tmp_path), "--version", "0.0.3"
    )
    assert code == 0
    assert out.startswith(str(tmp_path / "tilert-0.0.3.tar.gz"))
    assert err == (
        "note: tilert 0.0.3: the index was not read (--version without --index-url); a "
        "version already there is refused only at upload\n"
    )


# --- one URL policy ------------------------------------------------------------------------


def _loopback_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    wheel = build_wheel(tmp_path / "w", "tilert", "0.1.6", tag=f"py3-none-{ELSEWHERE}").path
    out = tmp_path / "tilert.toml"
    code, _, err = cli(
        capsys, "scan", str(wheel), "--url-prefix", "http://127.0.0.1:8765/tilert/",
        "--homepage", "https://example.org/tilert", "-o", str(out), "--allow-insecure-urls",
    )  # fmt: skip
    assert code == 0, err
    return out


def test_every_command_refuses_a_loopback_url_without_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _loopback_manifest(tmp_path, capsys)
    prefix = ["--url-prefix", "http://127.0.0.1:8765/tilert/"]
    wheel = next((tmp_path / "w").glob("*.whl"))
    commands = {
        "scan": ["scan", str(wheel), *prefix, "-o", str(tmp_path / "again.toml")],
        "lint": ["lint", str(manifest)],
        "placeholder build": [
            "placeholder", "build", str(manifest), "-o", str(tmp_path / "d"), "--version", "0.0.1",
        ],
        "placeholder build --index-url": [
            "placeholder", "build", str(TILERT), "-o", str(tmp_path / "d"),
            "--index-url", "http://127.0.0.1:9/simple/",
        ],
    }  # fmt: skip
    for what, argv in commands.items():
        code, _, err = cli(capsys, *argv)
        assert code == 2, (what, err)
        assert "--allow-insecure-urls" in err, (what, err)
    assert not (tmp_path / "again.toml").exists()
    # With the flag, or with the variable, every one of them takes it.
    code, _, err = cli(capsys, *commands["scan"], "--allow-insecure-urls")
    assert code == 0, err
    assert cli(capsys, *commands["lint"], "--allow-insecure-urls")[0] in (0, 1)
    code, _, err = cli(capsys, *commands["placeholder build"], "--allow-insecure-urls")
    assert code == 0, err
    monkeypatch.setenv("RESOLVER_HOOK_ALLOW_INSECURE_URLS", "1")
    assert cli(capsys, *commands["lint"])[0] in (0, 1)
    assert cli(capsys, *commands["scan"])[0] == 0
    code, _, err = cli(capsys, *commands["placeholder build"])
    assert code == 0, err


def test_check_holds_a_placeholders_urls_to_the_same_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _loopback_manifest(tmp_path, capsys)
    built = build_placeholder(manifest, tmp_path / "d", allow_insecure=True)

    def no_process(
        argv: object, env: dict[str, str], cwd: Path
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], 127, "", "no processes in this test")

    def url_step(allow: bool) -> tuple[str, str]:
        report = check_placeholder(built.sdist, run=no_process, allow_insecure=allow)
        (step,) = [r for r in report.results if r.name.startswith("its URLs pass")]
        return step.status, step.detail

    status, detail = url_step(False)
    assert status == "FAIL"
    assert "'http://127.0.0.1:8765/tilert/" in detail
    assert "need --allow-insecure-urls" in detail
    assert url_step(True) == ("PASS", "")


# --- the maintainer's flow, end to end ---------------------------------------------------


def _twine_upload(
    index: UploadIndex, sdist: Path, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    env = clean_env(tmp_path, PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    env = {k: v for k, v in env.items() if not k.startswith("TWINE_")}
    return subprocess.run(
        [sys.executable, "-m", "twine", "upload", "--repository-url", f"{index.url}/legacy/",
         "-u", "__token__", "-p", "pypi-loopback", "--non-interactive",
         "--disable-progress-bar", str(sdist)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def _install(tool: str, index: UploadIndex, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``pip install tilert`` / ``uv pip install tilert`` from the index, on a machine
    no real build fits."""
    python = make_venv(tmp_path / f"venv-{tool}", with_pip=tool == "pip")
    env = clean_env(tmp_path, **UNSUPPORTED)
    if tool == "pip":
        argv = [str(python), "-m", "pip", "install", "--index-url", index.simple, "tilert"]
    else:
        assert UV is not None
        argv = [UV, "pip", "install", "--python", str(python), "--index-url", index.simple]
        argv.append("tilert")
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=False)


@pytest.mark.integration
@pytest.mark.skipif(UV is None, reason="uv is not installed (pip install 'resolver-hook[publish]')")
def test_maintainer_flow_in_six_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = UploadIndex(tmp_path / "index")
    silent, real = _wheels(tmp_path / "built")
    index.add(silent)  # what PyPI held for tilert: a silent 0.0.0.dev0 wheel
    index.add(real)  # and real builds, none for this machine
    dist = tmp_path / "dist"
    insecure = "--allow-insecure-urls"
    with index.serving():
        # 1. scan the real wheels into a manifest.
        manifest = tmp_path / "tilert.toml"
        code, _, err = cli(
            capsys, "scan", str(real), "--url-prefix", f"{index.url}/files/",
            "--homepage", "https://example.org/tilert", "-o", str(manifest), insecure,
        )  # fmt: skip
        assert code == 0, err
        # 2. lint it: warnings are fine, an unreadable manifest (2) is not.
        assert cli(capsys, "lint", str(manifest), insecure)[0] in (0, 1)
        # 3. placeholder build: the index decides the version and names the silent wheel.
        build = ["placeholder", "build", str(manifest), "-o", str(dist)]
        build += ["--index-url", index.simple, insecure]
        code, out, err = cli(capsys, *build)
        assert code == 0, err
        sdist = dist / "tilert-0.0.1.dev0.tar.gz"
        assert out.startswith(f"{sdist}  sha256=")
        assert "version tilert 0.0.1.dev0: above 0.0.0.dev0" in err
        assert "below 0.1.6 (the first real release)" in err
        assert "warning: tilert-0.0.0.dev0-py3-none-any.whl is a placeholder-looking wheel" in err
        assert "yank it (PEP 592) or delete it on the index" in err
        # 4. check it with pip and uv.
        code, out, _ = cli(capsys, "placeholder", "check", str(sdist), insecure)
        assert code == 0, out
        assert out.endswith("check passed: it fails loudly at install under pip and uv\n")
        # 5. upload it with twine (the legacy upload API).
        uploaded = _twine_upload(index, sdist, tmp_path)
        assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
        assert index.uploads == [sdist.name]
        # pip and uv on a machine no real build fits take the placeholder, not the
        # silent wheel, and fail with its message.
        for tool in ("pip", "uv"):
            done = _install(tool, index, tmp_path)
            output = done.stdout + done.stderr
            assert done.returncode != 0, (tool, output)
            assert "tilert 0.0.1.dev0" in output, (tool, output)
            assert "TILERT_ALLOW_PLACEHOLDER" in output, (tool, output)
            assert "Successfully installed" not in output, (tool, output)
        # 6. regenerate: the next build bumps the version; the taken one is refused
        # before any upload.
        code, _, err = cli(capsys, *build, "--version", "0.0.1.dev0")
        assert code == 2
        assert "tilert 0.0.1.dev0 is already on" in err
        code, out, err = cli(capsys, *build)
        assert code == 0, err
        again = dist / "tilert-0.0.2.dev0.tar.gz"
        assert out.startswith(f"{again}  sha256=")
        assert _twine_upload(index, again, tmp_path).returncode == 0
        # The index refuses a file it has (as PyPI does): the version check spares that.
        refused = _twine_upload(index, sdist, tmp_path)
        assert refused.returncode != 0
        assert "File already exists" in refused.stdout + refused.stderr
        for tool in ("pip", "uv"):
            done = _install(tool, index, tmp_path / f"again-{tool}")
            output = done.stdout + done.stderr
            assert done.returncode != 0, (tool, output)
            assert "tilert 0.0.2.dev0" in output, (tool, output)


# --- scripts/regenerate_placeholders.py --check ------------------------------------------


def _regenerate(*args: str) -> subprocess.CompletedProcess[str]:
    script = REPO / "scripts" / "regenerate_placeholders.py"
    env = clean_env(PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def test_regenerate_check_finds_a_placeholder_out_of_date(tmp_path: Path) -> None:
    folder, dist = tmp_path / "manifests", tmp_path / "dist"
    folder.mkdir()
    manifest = folder / "tilert.toml"
    manifest.write_text(TILERT.read_text())
    built = _regenerate(str(folder), "-o", str(dist), "--no-check", "--version", "0.0.4.dev0")
    assert built.returncode == 0, built.stderr
    assert "[built 1/1] tilert-0.0.4.dev0.tar.gz" in built.stderr
    # A comment changes nothing the placeholder says: still up to date.
    manifest.write_text(TILERT.read_text() + "# reviewed\n")
    fresh = _regenerate(str(folder), "-o", str(dist), "--check")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert fresh.stdout == "tilert  0.0.4.dev0  tilert-0.0.4.dev0.tar.gz  up to date\n"
    # A new homepage is a different placeholder.
    manifest.write_text(TILERT.read_text().replace('tile-ai/TileRT"', 'tile-ai/TileRT2"', 1))
    stale = _regenerate(str(folder), "-o", str(dist), "--check")
    assert stale.returncode == 1
    assert stale.stdout == (
        "tilert  0.0.4.dev0  tilert-0.0.4.dev0.tar.gz  OUT OF DATE with tilert.toml\n"
    )
    assert list(dist.iterdir()) == [dist / "tilert-0.0.4.dev0.tar.gz"]  # nothing written
    empty = _regenerate(str(folder), "-o", str(tmp_path / "none"), "--check")
    assert empty.returncode == 1
    assert empty.stdout.startswith("tilert  missing: no tilert-*.tar.gz in ")
