"""A plan made anew takes the expansion an earlier plan kept only while it is the answer.

``resolver_hook/inventory/kept.py`` keeps the manifests expanded from their pages, with
the page cache files they were read from. Here the built-in ``triton`` manifest reads
its PyPI pages from a loopback mirror (a release PyPI does not have: no snapshot row
agrees or disagrees with it): a plan that read the network keeps nothing; one served
from the page cache keeps its expansion, and the next plan of the same question (any
output, another GPU of the same platform and Python) is made from it, and says what a
plan made without it says. A page that changed, a page whose freshness ran out, a
manifest of the user's, a kept file that cannot be read: planned anew.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import resolver_hook.planner as planner_module
from resolver_hook._data import data_path
from resolver_hook.inventory.expand import expand_manifests
from tests.clirun import cli
from tests.indexreplica import File, PageServer, Response, metadata_text, pypi_json
from tests.paths import child_env

pytestmark = pytest.mark.builtin_data  # the shipped triton manifest, not a frozen one

TARGET = ["--target", "linux-x86_64-py312-cuda13.0-sm100"]
WHEEL = "triton-{}-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"


@pytest.fixture
def mirror(page_server: PageServer) -> PageServer:
    """The loopback mirror, read by the plans, with triton 9.0.0 on it."""
    _serve(page_server, "9.0.0")
    return page_server


def _serve(server: PageServer, *versions: str) -> None:
    files = [File(WHEEL.format(v), metadata=metadata_text("triton", v)) for v in versions]
    pypi_json(server, "/pypi/triton/", f"{server.url}/files/", files)


def _flags(server: PageServer) -> list[str]:
    """Every page on the mirror (triton's couplings read torch's too: none there)."""
    return [
        *["--mirror", f"https://pypi.org/simple={server.url}/pypi"],
        *["--mirror", f"https://download.pytorch.org/whl={server.url}/whl"],
        "--allow-insecure-urls",
    ]


def _kept(tmp_path: Path) -> list[Path]:  # (the cache folder conftest gives each test)
    return sorted(Path(os.environ["RESOLVER_HOOK_CACHE_DIR"], "expansions").glob("*.json"))


def _expansion_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("expanded again")

    monkeypatch.setattr(planner_module, "expand_manifests", boom)


def test_a_kept_expansion_says_what_one_made_anew_says(
    mirror: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flags = _flags(mirror)
    code, online, err = cli(capsys, "plan", "triton", *flags, *TARGET)
    assert code == 0, err
    assert f"{mirror.url}/files/{WHEEL.format('9.0.0')}" in online
    assert _kept(tmp_path) == []  # it read the network
    asked = list(mirror.log)
    variants = [
        [*TARGET],
        ["--json", *TARGET],
        ["-v", *TARGET],
        ["--target", "linux-x86_64-py312-cuda12.8-sm90"],  # another GPU, same tags
    ]
    anew = {}
    for args in variants:
        for kept in _kept(tmp_path):
            kept.unlink()
        anew[str(args)] = cli(capsys, "plan", "triton", "--offline", *flags, *args)
        assert len(_kept(tmp_path)) == 1, args
    _expansion_forbidden(monkeypatch)
    for args in variants:
        assert cli(capsys, "plan", "triton", "--offline", *flags, *args) == anew[str(args)]
    assert mirror.log == asked


def test_a_changed_page_is_read_again(
    mirror: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flags = [*_flags(mirror), *TARGET]
    assert cli(capsys, "plan", "triton", *flags)[0] == 0
    code, before, _ = cli(capsys, "plan", "triton", "--offline", *flags)
    assert code == 0
    assert len(_kept(tmp_path)) == 1
    _serve(mirror, "9.1.0", "9.0.0")
    assert cli(capsys, "plan", "triton", "--refresh", *flags)[0] == 0  # the cache rewritten
    code, after, _ = cli(capsys, "plan", "triton", "--offline", *flags)
    assert code == 0
    assert WHEEL.format("9.0.0") in before
    assert WHEEL.format("9.1.0") in after
    assert len(_kept(tmp_path)) == 1  # the same question: its file replaced
    _expansion_forbidden(monkeypatch)
    assert cli(capsys, "plan", "triton", "--offline", *flags)[1] == after


def test_a_page_no_longer_fresh_is_read_again(
    mirror: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Online, a page the cache served because it was fresh keeps the expansion until
    the page would be asked again."""
    flags = [*_flags(mirror), *TARGET]
    assert cli(capsys, "plan", "triton", *flags)[0] == 0
    # Online, a page once absent is asked for again: every page the plan reads listed.
    for path in set(mirror.log) - set(mirror.responses):
        mirror.responses[path] = Response(b"<!DOCTYPE html><html><body></body></html>")
    assert cli(capsys, "plan", "triton", *flags)[0] == 0
    assert _kept(tmp_path) == []  # it read the network
    code, served, _ = cli(capsys, "plan", "triton", *flags)  # from the page cache
    assert code == 0
    (kept,) = _kept(tmp_path)
    data = json.loads(kept.read_bytes())
    assert time.time() < data["until"] <= time.time() + 24 * 3600
    data["until"] = time.time() - 1  # as if the pages' freshness had run out
    kept.write_text(json.dumps(data))
    assert _counting(capsys, "plan", "triton", *flags) == (1, served)  # made again


def test_a_manifest_of_the_users_keeps_nothing(
    mirror: PageServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a user's manifest names and holds is no part of the key: never kept."""
    given = tmp_path / "triton.toml"  # the built-in one's very text
    given.write_text(Path(data_path("manifests", "triton.toml")).read_text())
    flags = [*_flags(mirror), "--manifest", str(given), *TARGET]
    assert cli(capsys, "plan", "triton", *flags)[0] == 0
    code, out, err = cli(capsys, "plan", "triton", "--offline", *flags)
    assert code == 0, err
    assert WHEEL.format("9.0.0") in out
    assert _kept(tmp_path) == []


@pytest.mark.parametrize("content", [b"", b"{", b'{"format": 1}', b"[]", "link"])
def test_a_kept_file_that_cannot_be_used_is_made_again(
    content: bytes | str,
    mirror: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    flags = [*_flags(mirror), *TARGET]
    assert cli(capsys, "plan", "triton", *flags)[0] == 0
    first = cli(capsys, "plan", "triton", "--offline", *flags)
    (kept,) = _kept(tmp_path)
    good = kept.read_bytes()
    if content == "link":  # a link in its place is never followed
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_bytes(good)
        kept.unlink()
        kept.symlink_to(elsewhere)
        assert _counting(capsys, "plan", "triton", "--offline", *flags) == (1, first[1])
        assert elsewhere.read_bytes() == good
        return
    data = json.loads(good)
    broken = {**data, "manifests": {"texts": {}, "columns": {}}}
    for text in (content, json.dumps(broken).encode()):
        kept.write_bytes(text)
        assert cli(capsys, "plan", "triton", "--offline", *flags) == first


def _counting(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """How many times the command made the expansion, and what it printed."""
    calls = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return expand_manifests(*args, **kwargs)  # type: ignore[arg-type]

    saved = planner_module.expand_manifests
    planner_module.expand_manifests = counted  # type: ignore[assignment]
    try:
        code, out, err = cli(capsys, *argv)
    finally:
        planner_module.expand_manifests = saved
    assert code == 0, err
    return len(calls), out


def test_a_plan_stored_from_a_kept_expansion_declares_what_one_made_anew_does(
    tmp_path: Path,
) -> None:
    """The plan store's inputs (resolver_hook._plancache) are the same whether the
    expansion was kept or made: the kept one's declarations are the plan's."""
    cache = tmp_path / "cache"
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(cache), "RESOLVER_HOOK_OFFLINE": "1"})
    argv = [sys.executable, "-I", "-B", "-m", "resolver_hook", "plan", "torch", *TARGET]
    inputs, outputs, kept = [], [], []
    for _ in range(2):
        for old in (cache / "plans").glob("*.json"):
            old.unlink()
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr
        (record,) = (cache / "plans").glob("*.json")
        inputs.append(json.loads(record.read_bytes())["inputs"])
        outputs.append((done.stdout, done.stderr))
        kept.append([p.stat().st_mtime_ns for p in (cache / "expansions").glob("*.json")])
    assert inputs[0] == inputs[1]
    assert any("index" in path for path, _, _ in inputs[0])  # the page cache's files
    assert outputs[0] == outputs[1]
    assert len(kept[0]) == 1
    assert kept[0] == kept[1]  # made from it, not written again


def test_an_exact_pin_is_another_question(
    mirror: PageServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A yanked file is planned for a requirement that pins its version exactly (as pip
    takes it): the expansion kept for the name alone does not answer that one."""
    files = [
        File(WHEEL.format("9.1.0"), yanked="broken"),
        File(WHEEL.format("9.0.0"), metadata=metadata_text("triton", "9.0.0")),
    ]
    pypi_json(mirror, "/pypi/triton/", f"{mirror.url}/files/", files)
    flags = [*_flags(mirror), *TARGET]
    assert cli(capsys, "plan", "triton", *flags)[0] == 0
    for pin, wanted in (("", "9.0.0"), ("==9.1.0", "9.1.0"), ("", "9.0.0"), ("==9.1.0", "9.1.0")):
        code, out, err = cli(capsys, "plan", f"triton{pin}", "--offline", *flags)
        assert code == 0, err
        assert f"triton @ {mirror.url}/files/{WHEEL.format(wanted)}" in out, (pin, out)
    assert len(_kept(tmp_path)) == 2
