"""Old pins on accelerated machines with the built-in data (issue 40, Done when): a
flavoured build that runs, a refusal naming the nearest release that runs, or a loud
UNJUDGED outcome; never a silent pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import cli

pytestmark = pytest.mark.builtin_data  # the shipped data, not the frozen copies

B200 = "linux-x86_64-py312-cuda13.0-sm100"
L40 = "linux-x86_64-py312-cuda12.8-sm89"


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object], str]:
    code, out, err = cli(capsys, "plan", *argv, "--offline", "--json")
    return code, json.loads(out)["packages"][0], err


@pytest.mark.parametrize(
    ("target", "pin", "version"),
    [
        (B200, "torch==2.7.1", "2.7.1+cu128"),
        (B200, "torch==2.8.0", "2.8.0+cu129"),
        (B200, "torch==2.11.0", "2.11.0+cu130"),
        (B200, "torch==2.12.0", "2.12.0+cu130"),
        (L40, "torch==2.7.1", "2.7.1+cu128"),
        (L40, "torch==2.8.0", "2.8.0+cu128"),
        (L40, "torch==2.11.0", "2.11.0+cu128"),
        (L40, "torch==2.12.0", "2.12.0+cu126"),
        (B200, "torch==2.14.0", "2.14.0+cu130"),
        (L40, "torch==2.14.0", "2.14.0+cu126"),
    ],
)
def test_an_old_pin_gets_the_build_of_its_release_that_runs(
    capsys: pytest.CaptureFixture[str], target: str, pin: str, version: str
) -> None:
    # docs/facts.md section 1.5, "History": the labels of each release and their kernels;
    # offline, the page form of the release the snapshot's compact rows name.
    code, torch, _ = _plan(capsys, pin, "--target", target)
    assert code == 0
    assert (torch["action"], torch["version"]) == ("rewrite", version)
    label = version.split("+")[1]
    assert torch["line"] == f"torch=={version}"
    assert torch["find_links"] == f"https://download.pytorch.org/whl/{label}/torch/"
    assert torch["sha256"] is None  # no file list of that page was read: no file is named


def test_a_label_that_cannot_run_is_refused_naming_the_nearest_that_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, torch, err = _plan(capsys, "torch==2.2.2+cu121", "--target", B200)
    assert code == 1
    assert torch["action"] == "error"
    # cu121 stops at sm_90 (pytorch/builder release/2.2); sm_100 came with cu128 in 2.7.
    assert "torch==2.2.2+cu121 has no build that runs here" in str(torch["reason"])
    assert "the nearest that does: torch==2.7.0+cu128" in str(torch["reason"])
    assert "do not run on B200/GB200 (sm_100)" in err
    kept_code, kept, _ = _plan(capsys, "torch==2.2.2+cu121", "--target", L40)
    assert (kept_code, kept["action"], kept["line"]) == (0, "rewrite", "torch==2.2.2+cu121")


def test_a_release_no_source_describes_is_unjudged_and_loud(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 1.11's builds: not read (docs/facts.md section 1.5, "History").
    code, out, err = cli(capsys, "plan", "torch==1.11.0", "--offline", "--target", B200)
    assert code == 0
    assert "UNJUDGED: which builds torch==1.11.0 has" in out  # without -v
    assert "warning: torch: UNJUDGED" in err
    assert "UNJUDGED: UNJUDGED" not in err  # the cause is said once
    code, torch, _ = _plan(capsys, "torch==1.11.0", "--target", B200)
    assert (torch["action"], torch["cause"]) == ("pass", "unjudged")
    assert "CUDA runtime and kernel list" in str(torch["unjudged"])
    code, _, err = cli(capsys, "plan", "torch==1.11.0", "--offline", "--strict", "--target", B200)
    assert code == 1
    assert "error: torch: UNJUDGED" in err


def test_without_the_accelerator_an_undescribed_release_is_the_installers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, torch, err = _plan(capsys, "torch==1.11.0", "--target", "linux-x86_64-py312")
    assert (code, torch["cause"], torch["unjudged"]) == (0, "unlisted", None)
    assert "UNJUDGED" not in err


CU130 = (
    "torch @ https://download.pytorch.org/whl/cu130/"
    "torch-2.12.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl"
)


def test_a_wheel_url_that_cannot_run_is_refused_and_one_that_runs_is_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, torch, err = _plan(capsys, CU130, "--target", L40)  # a CUDA 12.8 driver
    assert (code, torch["action"]) == (1, "error")
    assert "cannot run on this machine" in str(torch["reason"])
    assert "the nearest build that runs here: torch==2.12.0+cu126" in str(torch["reason"])
    assert "needs a driver with CUDA >=13.0" in err
    code, torch, _ = _plan(capsys, CU130, "--target", B200)
    assert (code, torch["action"], torch["cause"], torch["line"]) == (
        0,
        "pass",
        "as-written",
        CU130,
    )
    assert "which runs here" in str(torch["reason"])


def test_a_wheel_url_of_a_label_the_rules_do_not_know_is_unjudged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = CU130.replace("cu130", "cu999")
    code, torch, err = _plan(capsys, url, "--target", B200)
    assert (code, torch["cause"]) == (0, "unjudged")
    assert "torch 2.12.0+cu999 is not a build its manifest's rules describe" in str(
        torch["unjudged"]
    )
    assert "warning: torch: UNJUDGED" in err


def test_an_index_line_naming_a_page_that_cannot_run_here_is_judged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cu130 = "--extra-index-url https://download.pytorch.org/whl/cu130"
    held = tmp_path / "held.txt"
    held.write_text(f"torch<=2.9.0\n{cu130}\n", encoding="utf-8")
    code, out, _ = cli(capsys, "plan", "-r", str(held), "--offline", "--target", L40)
    assert code == 0  # pinned to a cu128 build, pip cannot take a CUDA 13 one from there
    assert "torch==2.9.0+cu128" in out
    assert f"held.txt:2: {cu130} names torch's page, whose builds cannot run here" in out
    left = tmp_path / "left.txt"
    left.write_text(f"torch==1.11.0\n{cu130}\n", encoding="utf-8")
    code, _, err = cli(capsys, "plan", "-r", str(left), "--offline", "--target", L40)
    assert code == 1  # 1.11.0 would be left to pip, with a CUDA 13 page it names
    assert "none of whose builds runs on this machine" in err
    assert "needs a driver with CUDA >=13.0" in err


@pytest.mark.parametrize(
    ("reqs", "want"),
    [
        # Each torch release brings the triton its METADATA pins (the snapshot's rows).
        (
            ["torchvision==0.22.1", "torch"],
            {"torchvision": "0.22.1+cu128", "torch": "2.7.1+cu128", "triton": "3.3.1"},
        ),
        (
            ["torchvision==0.23.0"],
            {"torchvision": "0.23.0+cu128", "torch": "2.8.0+cu128", "triton": "3.4.0"},
        ),
        (
            ["torch==2.8.0", "torchvision", "torchaudio"],
            {
                "torch": "2.8.0+cu128",
                "torchvision": "0.23.0+cu128",
                "torchaudio": "2.8.0+cu128",
                "triton": "3.4.0",
            },
        ),
    ],
)
def test_torchvision_and_torchaudio_go_with_their_torch_release_and_label(
    capsys: pytest.CaptureFixture[str], reqs: list[str], want: dict[str, str]
) -> None:
    code, out, _ = cli(capsys, "plan", *reqs, "--offline", "--json", "--target", L40)
    assert code == 0
    got = {p["name"]: p["version"] for p in json.loads(out)["packages"]}
    assert got == want


def test_an_index_line_does_not_refuse_a_plain_build_that_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # natten's own page holds CUDA builds only; without a GPU the plain build from PyPI
    # is the one that runs, and the page named beside it does not change that.
    req = tmp_path / "req.txt"
    req.write_text("natten\n-f https://whl.natten.org\n", encoding="utf-8")
    code, torch, err = _plan(capsys, "-r", str(req), "--target", "linux-x86_64-py312")
    assert code == 0, err
    assert (torch["name"], torch["action"]) == ("natten", "pass")


def test_a_pinned_torchvision_couples_torch_to_the_release_its_metadata_pins(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # torchvision 0.29.0 pins torch==2.14.0 (its METADATA, docs/facts.md section 1.5):
    # an unpinned torch beside it gets 2.14.0, not the newest release.
    code, out, _ = cli(
        capsys, "plan", "torchvision==0.29.0", "torch", "--offline", "--json", "--target", B200
    )
    assert code == 0
    packages = {p["name"]: p for p in json.loads(out)["packages"]}
    assert packages["torch"]["line"] == "torch==2.14.0+cu130"
    assert packages["torchvision"]["action"] == "pass"
