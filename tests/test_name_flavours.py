"""Name and extras flavours (``install = "onnxruntime-gpu"``, ``"jax[cuda13]"``) read
their distribution's page like every flavour: the plan pins the file of the newest
release that fits, with its sha256, and ``--json`` says that version (docs/facts.md
section 7). Offline here: the shipped snapshot holds those pages' files."""

from __future__ import annotations

import json

import pytest
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from resolver_hook.cli import main

pytestmark = pytest.mark.builtin_data  # the shipped manifests and snapshot

CUDA13 = "linux-x86_64-py312-cuda13.0-sm100"


@pytest.mark.parametrize(
    ("requirement", "package", "distribution"),
    [
        ("onnxruntime", "onnxruntime", "onnxruntime-gpu"),
        ("cupy", "cupy", "cupy-cuda13x"),
        ("nvidia-dali", "nvidia-dali", "nvidia-dali-cuda130"),
        ("jax[cuda13]", "jax", "jax"),
    ],
)
def test_a_cuda13_target_pins_the_flavours_file_with_its_sha256(
    capsys: pytest.CaptureFixture[str], requirement: str, package: str, distribution: str
) -> None:
    assert main(["plan", requirement, "--target", CUDA13, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    p = next(x for x in data["packages"] if x["name"] == package)
    assert p["action"] == "rewrite"
    name, version, _, _ = parse_wheel_filename(p["url"].rsplit("/", 1)[-1])
    assert name == distribution
    assert Version(p["version"]) == version  # a version, not a floor
    assert p["versions"] is None
    assert len(p["sha256"]) == 64
    line = next(r for r in data["requirements"] if r.startswith(distribution))
    assert line.endswith(f"@ {p['url']}#sha256={p['sha256']}")


def test_plain_jax_on_a_cuda13_linux_machine_gets_the_extra_pinned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The jax wheel is py3-none-any; the extra's rules hold on Linux only (its plugins
    # have no other wheels): the file is planned there as jax[cuda13], not as plain jax.
    assert main(["plan", "jax", "--target", CUDA13, "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["packages"][0]
    assert (p["installs"], p["action"]) == ("jax[cuda13]", "rewrite")
    assert p["url"].endswith("-py3-none-any.whl")
    windows = ["plan", "jax", "--target", "windows-x86_64-py312-cuda13.0-sm100", "--json"]
    main(windows)
    assert json.loads(capsys.readouterr().out)["packages"][0]["action"] == "error"
