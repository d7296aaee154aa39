"""Issue 42, messages: a flavour whose only file on its page is yanked (PEP 592) is
named in plan, plan -v and explain, not left out without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clirun import cli
from tests.indexreplica import File, PageServer, pytorch_html

TARGET = "linux-x86_64-py312-cuda13.0-sm100"
WHEEL = "demo-1.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"
OLDER = "demo-1.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl"


@pytest.fixture
def flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[PageServer, list[str]]:
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)  # read the replica
    server = PageServer()
    return server, ["--manifest", str(tmp_path / "demo.toml"), "--allow-insecure-urls",
                    "--target", TARGET, "--refresh"]  # fmt: skip


def _manifest(path: Path, server: PageServer) -> None:
    entries = "".join(
        f'[[index]]\nurl = "{server.url}/whl/{label}/demo/"\nversion = "1.0+{label}"\n'
        f'cuda = ">={cuda}"\ngpu = ["sm_80", "sm_100"]\n'
        for label, cuda in (("cu130", "13.0"), ("cu126", "12.6"))
    )
    path.write_text(f'schema = 1\n[package]\nname = "demo"\n{entries}')


def test_a_flavour_whose_only_file_is_yanked_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[PageServer, list[str]]
) -> None:
    server, argv = flags
    with server.serving():
        pytorch_html(server, "/whl/cu130/demo/", "/files/", [File(WHEEL, yanked="broken build")])
        pytorch_html(server, "/whl/cu126/demo/", "/files/", [File(OLDER)])
        _manifest(tmp_path / "demo.toml", server)
        said = (
            f"demo 1.0+cu130 (127.0.0.1:{server.url.rsplit(':', 1)[1]}/whl/cu130/demo/): not "
            f"planned: its only file on {server.url}/whl/cu130/demo/ is yanked (PEP 592: "
            "broken build)"
        )
        code, out, err = cli(capsys, "plan", "demo", *argv)
        assert code == 0, err
        assert "demo-1.0%2Bcu126-cp312" in out  # the build that is left
        assert said in out
        code, out, _ = cli(capsys, "plan", "demo", "-v", *argv)
        assert said in out
        code, out, _ = cli(capsys, "explain", "demo", *argv)
        assert f"note: {said}" in out
