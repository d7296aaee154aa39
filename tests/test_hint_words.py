"""Hints that point the right way: each suggested change, applied, gives the fit it
names (re-planned with the suggestion), and words that say what holds them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from packaging.utils import parse_wheel_filename

from resolver_hook.cli._inputs import example_names, example_path
from resolver_hook.reqfile import read_requirements
from tests.clirun import cli
from tests.test_doctor import fake_python


def _gets(err: str, package: str) -> list[tuple[str, str]]:
    """(who, build) for each "WHO gets PACKAGE BUILD" a hint names."""
    out = []
    for line in err.splitlines():
        if line.startswith("hint: "):
            for part in line.removeprefix("hint: ").split("; "):
                m = re.fullmatch(rf"(.+?),? gets {package} (\S+)(?: \(with .*\))?", part)
                if m:
                    out.append((m.group(1), m.group(2)))
    return out


def _version(capsys: pytest.CaptureFixture[str], package: str, target: str) -> str:
    code, out, _ = cli(capsys, "plan", package, "--target", target)
    assert code == 0, out
    return re.search(rf"{package}==(\S+)", out).group(1)  # type: ignore[union-attr]


def test_windows_is_pointed_at_linux_on_its_own_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "plan", "natten", "--target", "windows-x86_64-py312-cuda13.0-sm90")
    assert code == 1
    ((who, build),) = _gets(err, "natten")
    assert who == "Linux x86_64"  # not Linux aarch64: another CPU is a bigger change
    assert _version(capsys, "natten", "linux-x86_64-py312-cuda13.0-sm90") == build


def test_each_gpu_family_is_told_the_build_it_gets(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "plan", "natten", "--target", "linux-x86_64-py312")
    assert code == 1
    said = dict(_gets(err, "natten"))
    (v100,) = [who for who in said if "V100" in who]
    assert "V100 (sm_70)" in v100
    assert not any("V100" in who for who in said if who != v100)
    # Re-planned with each suggestion (the driver the hint names: CUDA 13.0).
    assert _version(capsys, "natten", "linux-x86_64-py312-cuda13.0-sm70") == said[v100]
    (newer,) = [who for who in said if who != v100]
    assert "7.5 or newer" in newer
    assert _version(capsys, "natten", "linux-x86_64-py312-cuda13.0-sm75") == said[newer]
    assert _version(capsys, "natten", "linux-x86_64-py312-cuda13.0-sm90") == said[newer]


def test_a_pin_outside_the_users_specifier_replaces_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = "linux-x86_64-py310-glibc2.39"
    code, _, err = cli(capsys, "plan", "torch>=2.14", "--target", target)
    assert code == 1
    (pin,) = re.findall(r"hint: or replace your requirement torch>=2\.14 with (\S+), which", err)
    assert "or pin" not in err  # the user's own requirement rules it out
    code, out, _ = cli(capsys, "plan", pin, "--target", target)
    assert code == 0
    assert f"  {pin}\n" in out


def test_example_help_names_what_the_example_holds(capsys: pytest.CaptureFixture[str]) -> None:
    held = [e.name for e in read_requirements([example_path()], []).requirements]
    assert example_names() == held
    for command in ("plan", "lock"):
        with pytest.raises(SystemExit):
            cli(capsys, command, "--help")
        text = " ".join(capsys.readouterr().out.replace("-\n", "-").split())
        assert f"plan the bundled example ({', '.join(held)})" in text.replace("- ", "-")
    assert "tilert" not in held


@pytest.mark.builtin_data
def test_doctor_knows_a_tilert_the_hook_installed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # What a plan for B200 pins tilert to (its files come from its index page: here the
    # shipped snapshot's copy), then doctor on an environment holding that build.
    target = "linux-x86_64-py312-cuda13.0-sm100"
    code, out, _ = cli(capsys, "plan", "tilert", "--target", target, "--json")
    assert code == 0
    (tilert,) = [p for p in json.loads(out)["packages"] if p["name"] == "tilert"]
    assert "0.1.5.post2" not in tilert["version"]  # a release the manifest does not list
    filename = unquote(tilert["url"].rsplit("/", 1)[-1].split("#", 1)[0])
    tags = sorted(str(t) for t in parse_wheel_filename(filename)[3])
    dists = [{"name": "tilert", "version": tilert["version"], "tags": tags}]
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_CUDA", "13.0")
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "10.0")
    code, out, _ = cli(capsys, "doctor", "--python", fake_python(tmp_path, dists))
    assert f"ok      tilert {tilert['version']}: fits this machine" in out.splitlines(), out
