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


def test_a_specifier_no_build_here_meets_is_said_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``demo<2`` (as ``torch<2`` on a B200): the release it allows misses here on two
    counts (Python and GPU), the one that runs here is outside it. The hint says the
    requirement rules out what runs, not only that "each build misses on more than one
    count" (the build listed first misses on the requirement alone)."""
    manifest = tmp_path / "demo.toml"
    manifest.write_text(
        'schema = 1\n[package]\nname = "demo"\n'
        '[[wheel]]\nurl = "https://example.org/demo-1.0-cp310-cp310-manylinux_2_28_x86_64.whl"\n'
        'cuda = ">=12.0"\ngpu = ["sm_80"]\n'
        '[[wheel]]\nurl = "https://example.org/demo-2.0-cp312-cp312-manylinux_2_28_x86_64.whl"\n'
        'cuda = ">=12.0"\ngpu = ["sm_100"]\n'
    )
    argv = ["--target", "linux-x86_64-py312-cuda13.0-sm100", "--manifest", str(manifest)]
    code, out, err = cli(capsys, "plan", "demo<2", *argv)
    assert code == 1, out + err
    flat = " ".join(err.split())
    assert "each build misses on more than one count" not in flat
    assert (
        "hint: no build of demo that your requirement demo<2 allows runs here, and no "
        "single change to this machine gives one" in flat
    )
    (pin,) = re.findall(r"or replace your requirement demo<2 with (\S+), which", flat)
    code, out, _ = cli(capsys, "plan", pin, *argv)
    assert code == 0, out


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


REFUSED_PIN = ("torch==2.0.1", "linux-x86_64-py311-cuda12.8-sm120")  # no build for sm_120


@pytest.mark.builtin_data  # torch's shipped history: 2.0.1 predates sm_120
@pytest.mark.parametrize(
    "command",
    [["plan"], ["lock", "-o", "-"], ["pip", "install"], ["uv", "pip", "install"]],
    ids=["plan", "lock", "pip", "uv"],
)
def test_a_refused_pin_is_short_and_verbose_lists_every_build(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    pin, target = REFUSED_PIN
    code, jout, _ = cli(capsys, "plan", pin, "--target", target, "--json")
    assert code == 1
    (torch,) = json.loads(jout)["packages"]
    builds = [r["candidate"] for r in torch["rejected"]]
    assert len(builds) > 20
    # --json keeps it all: the whole reason, what builds exist, every build and hint.
    assert "exist for: " in torch["reason"]
    assert torch["hint"]
    assert torch["alternatives"]
    if command[0] in ("plan", "lock"):
        argv = [*command, pin, "--target", target]
    else:  # the hook's own options go before the installer's command words
        argv = [command[0], "--target", target, *command[1:], pin]
    code, _, err = cli(capsys, *argv)
    assert code == 1
    # Each command's own words around the refusal: lock's target and "nothing written",
    # the hook's "nothing was installed".
    around = ("for Linux", "nothing written", "resolver-hook: ")
    lines = [x for x in err.splitlines() if not x.startswith(around)]
    # The rule that failed, the nearest build that runs, one hint; no build listed.
    (nearest,) = re.findall(r"^  the nearest that does: (torch==\S+)$", err, re.M)
    assert re.fullmatch(
        rf"error: torch: {re.escape(pin)} has no build that runs here: kernels sm_\d+(, sm_\d+)* "
        r"do not run on RTX 50xx, RTX PRO 6000 Blackwell \(sm_120\)",
        lines[0],
    )
    assert lines[1:] == [
        f"  the nearest that does: {nearest}",
        f"  ({len(builds)} builds rejected: -v or --json lists every one)",
        f"hint: {torch['hint']}",
    ]
    assert not any(b in err for b in builds)
    code, _, verr = cli(capsys, "-v", *argv)
    assert code == 1
    assert all(b in verr for b in builds)  # -v: every rejected build and why
    assert "exist for: " in verr
    code, out, _ = cli(capsys, "plan", nearest, "--target", target)
    assert code == 0, out  # the nearest that runs does run here


@pytest.mark.builtin_data  # the shipped torchvision 0.29.0 and its torch pin
def test_a_refused_pins_one_hint_names_the_build_its_rule_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # torchvision 0.29.0 needs torch 2.14.0, which the user's torch==2.13.0 rules out:
    # the one hint is about that build, not an older torchvision's torch.
    argv = ["plan", "torchvision==0.29.0", "torch==2.13.0"]
    code, _, err = cli(capsys, *argv, "--target", "linux-x86_64-py312-cuda13.0-sm90")
    assert code == 1
    said = re.findall(r"your requirement torch==2\.13\.0 rules out (torch \S+),", err)
    assert len(said) == 2, err  # the rule, then the hint
    assert said[0] == said[1]
