"""Issue 49, offline: the installer's own --offline plans offline, and our yes/no
variables are read in any case (and refused when they are not yes/no)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.errors import UsageError
from resolver_hook.settings import combine, env_flag
from tests.clirun import cli
from tests.installenv import GpuIndex, clean_env, venv_for, write_manifest
from tests.test_install import install
from tests.wheelfactory import LoopbackIndex, build_wheel

B200 = "linux-x86_64-py312-cuda13.0-sm100"


@pytest.mark.parametrize("value", ["True", "TRUE", "yes", "On", "1", "y", "T"])
def test_offline_variable_is_on_in_any_case(value: str) -> None:
    assert combine({"RESOLVER_HOOK_OFFLINE": value}).offline is True
    assert combine({"RESOLVER_HOOK_ALLOW_INSECURE_URLS": value}).allow_insecure is True


@pytest.mark.parametrize("value", ["False", "0", "no", "OFF", "", "  ", "n"])
def test_offline_variable_is_off(value: str) -> None:
    assert combine({"RESOLVER_HOOK_OFFLINE": value}).offline is False
    assert env_flag({"X": value}, "X") is False


def test_an_unknown_yes_no_value_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError, match="RESOLVER_HOOK_OFFLINE='maybe' is not a yes/no"):
        combine({"RESOLVER_HOOK_OFFLINE": "maybe"})
    monkeypatch.setenv("RESOLVER_HOOK_OFFLINE", "maybe")
    code, out, err = cli(capsys, "plan", "torch", "--target", B200)
    assert code == 2
    assert err.startswith("error: RESOLVER_HOOK_OFFLINE='maybe' is not a yes/no value\n")
    assert "\nhint: set RESOLVER_HOOK_OFFLINE to 1, true" in err
    assert "Traceback" not in err
    assert out == ""
    monkeypatch.setenv("RESOLVER_HOOK_OFFLINE", "1")
    monkeypatch.setenv("RESOLVER_HOOK_ALLOW_INSECURE_URLS", "sometimes")
    code, _, err = cli(capsys, "plan", "torch", "--target", B200)
    assert code == 2
    assert "RESOLVER_HOOK_ALLOW_INSECURE_URLS='sometimes'" in err


@pytest.mark.parametrize(("value", "reads"), [("True", False), ("False", True)])
def test_capitalised_booleans_are_read(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    value: str,
    reads: bool,
) -> None:
    """``RESOLVER_HOOK_OFFLINE=True``: the flavour's loopback page is never asked for;
    ``False``: it is."""
    index = LoopbackIndex(tmp_path / "index")
    index.add(build_wheel(tmp_path / "built", "kidx", "2.0+cu130"), simple=False, flavour="cu130")
    monkeypatch.setenv("RESOLVER_HOOK_OFFLINE", value)
    with index.serving():
        gi = _manifests(tmp_path, index)
        code, out, err = cli(capsys, "plan", "kidx", "--target", B200, "--allow-insecure-urls",
                             "--manifest", str(gi.manifests / "kidx.toml"))  # fmt: skip
        asked = [r for r in index.requests if "/links/" in r]
    assert code == 0, out + err
    assert bool(asked) is reads


def _manifests(tmp_path: Path, index: LoopbackIndex) -> GpuIndex:
    folder = tmp_path / "manifests"
    folder.mkdir()
    page = index.links_url("cu130", "kidx")
    flavour = {"url": page, "version": "2.0+cu130", "cuda": ">=13.0", "gpu": ["sm_100"]}
    write_manifest(folder, "kidx", "index", flavour)
    return GpuIndex(index=index, wheels={}, manifests=folder)


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "env"),
    [(["--offline"], {}), ([], {"UV_OFFLINE": "1"}), ([], {"UV_OFFLINE": "True"})],
)
def test_uv_offline_plans_offline(tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    """uv told to open no connection: the plan reads no page either (and says so), where
    the same install without it reads the flavour's page."""
    index = LoopbackIndex(tmp_path / "index")
    index.add(build_wheel(tmp_path / "built", "kidx", "2.0+cu130"), simple=False, flavour="cu130")
    online = {"RESOLVER_HOOK_OFFLINE": "0"}
    with index.serving():
        gi = _manifests(tmp_path, index)
        venv = venv_for("uv", tmp_path / "venv")
        proc = install("uv", gi, venv, *args, "kidx", flags=["--no-proof"], env={**online, **env})
        offline_asked = [r for r in index.requests if "/links/" in r]
        install("uv", gi, venv, "--no-offline", "kidx", flags=["--no-proof"], env=online)
        online_asked = [r for r in index.requests if "/links/" in r]
    assert offline_asked == [], proc.stderr
    assert "planned offline" in proc.stderr
    assert online_asked  # the page the offline plan did not read


@pytest.mark.integration
@pytest.mark.parametrize(
    ("where", "given", "env", "offline"),
    [
        ("project", [], {}, True),  # ./uv.toml
        ("UV_CONFIG_FILE", [], {}, True),
        ("project", [], {"UV_OFFLINE": "0"}, False),  # uv: the variable beats the file
        # uv's own --config-file and --no-config after `install` (seen with uv 0.13.9):
        ("elsewhere", ["--config-file", "{config}"], {}, True),
        ("elsewhere", ["--config-file={config}"], {}, True),
        ("project", ["--config-file", "{online}"], {}, False),  # replaces ./uv.toml
        ("project", ["--no-config"], {}, False),  # ./uv.toml unread
        ("UV_CONFIG_FILE", ["--no-config"], {}, True),  # stops only the search
    ],
)
def test_uv_offline_in_its_configuration_file_plans_offline(
    tmp_path: Path, where: str, given: list[str], env: dict[str, str], offline: bool
) -> None:
    """``offline = true`` in uv's own uv.toml makes uv open no connection (seen with uv
    0.13.9: "Network connectivity is disabled"), as ``--offline`` does: the plan reads
    no page either. uv's ``--config-file`` among the install options reads that file
    instead of any found; its ``--no-config`` reads none found."""
    index = LoopbackIndex(tmp_path / "index")
    index.add(build_wheel(tmp_path / "built", "kidx", "2.0+cu130"), simple=False, flavour="cu130")
    project = tmp_path / "project"
    project.mkdir()
    config = project / "uv.toml" if where == "project" else tmp_path / "elsewhere.toml"
    config.write_text("offline = true\n")
    (tmp_path / "online.toml").write_text("offline = false\n")
    named = {"config": str(config), "online": str(tmp_path / "online.toml")}
    with index.serving():
        gi = _manifests(tmp_path, index)
        venv = venv_for("uv", tmp_path / "venv")
        run_env = clean_env(RESOLVER_HOOK_OFFLINE="0", RESOLVER_HOOK_MANIFESTS=str(gi.manifests),
                            RESOLVER_HOOK_ALLOW_INSECURE_URLS="1", VIRTUAL_ENV=str(venv),
                            **env)  # fmt: skip
        for name in ("UV_NO_CONFIG", "UV_OFFLINE"):  # uv's files are read as uv reads them
            if name not in env:
                run_env.pop(name)
        if where == "UV_CONFIG_FILE":
            run_env["UV_CONFIG_FILE"] = str(config)
        proc = subprocess.run(
            [sys.executable, "-m", "resolver_hook", "uv", "--target", B200, "--no-proof",
             "pip", "install", *(g.format(**named) for g in given),
             "--index-url", gi.simple, "kidx"],
            capture_output=True, text=True, env=run_env, cwd=project, timeout=600, check=False,
        )  # fmt: skip
        asked = [r for r in index.requests if "/links/" in r]
    assert bool(asked) is not offline, proc.stderr
    assert ("planned offline" in proc.stderr) is offline, proc.stderr
    if offline:
        assert f"offline in {config}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_uv_install_reads_each_of_uvs_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """uv's files decide both whether the plan is offline and uv's default index: a
    ``resolver-hook uv pip install`` reads each of them once for both."""
    from resolver_hook.index import userindex
    from resolver_hook.install.session import InstallSession

    project = tmp_path / "project"
    project.mkdir()
    (project / "uv.toml").write_text(
        'offline = false\n[pip]\nindex-url = "http://127.0.0.1:9/simple"\n'
    )
    monkeypatch.chdir(project)
    for name in ("UV_CONFIG_FILE", "UV_NO_CONFIG", "UV_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "system"))
    read: list[str] = []
    toml = userindex._toml

    def counted(path: str, record: userindex.Recorder) -> object:
        read.append(path)
        return toml(path, record)

    planned: list[str | None] = []

    def install(self: InstallSession, *args: object, **kwargs: object) -> int:
        planned.append(self.planner.settings.indexes.default.url)  # type: ignore[union-attr]
        return 0  # the plan's inputs are read by now; uv itself is not this test's

    monkeypatch.setattr(userindex, "_toml", counted)
    monkeypatch.setattr(InstallSession, "install", install)
    code, out, err = cli(capsys, "uv", "--target", B200, "pip", "install", "kidx")
    assert code == 0, out + err
    assert planned == ["http://127.0.0.1:9/simple"]  # the file was read, and used
    assert str(project / "uv.toml") in read
    assert sorted(read) == sorted(set(read)), read
