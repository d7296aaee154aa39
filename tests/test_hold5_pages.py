"""Issue 49, pages: a server that answers 304 Not Modified to a request that asked
nothing (a broken proxy) is one note naming the page, and the plan goes on; a yanked
newest release leaves the older one that fits planned (pip's rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clirun import cli
from tests.indexreplica import PageServer

TARGET = "linux-x86_64-py312-cuda13.0-sm100"


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)  # read the replica


def _manifest(tmp_path: Path, page: str, *versions: str) -> str:
    entries = "".join(
        f'[[index]]\nurl = "{page}"\nversion = "{v}"\ncuda = ">=13.0"\ngpu = ["sm_100"]\n'
        for v in versions
    )
    path = tmp_path / "demo.toml"
    path.write_text(f'schema = 1\n[package]\nname = "demo"\n{entries}')
    return str(path)


def test_a_304_to_a_plain_request_is_one_note_naming_the_page(
    online: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = PageServer(missing=304)  # every path: 304 Not Modified, asked or not
    with server.serving():
        page = f"{server.url}/whl/cu130/demo/"
        argv = ["--manifest", _manifest(tmp_path, page, "1.0+cu130"), "--allow-insecure-urls"]
        code, out, err = cli(capsys, "plan", "demo", *argv, "--target", TARGET)
    assert server.log == ["/whl/cu130/demo/"]  # a cold cache: nothing to revalidate
    assert code == 0, err  # what the plan gives without the page: its page form
    assert "Traceback" not in out + err
    assert "demo==1.0+cu130 from" in out
    notes = out.split("notes:\n", 1)[1].splitlines()
    assert notes == [
        f"  127.0.0.1 could not be read (304 Not Modified to a plain request): {page}; "
        "planned from the rules alone (-v or --json lists each)"
    ]
