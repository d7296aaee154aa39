"""``--timeout`` / ``RESOLVER_HOOK_TIMEOUT``: one meaning on every command that reads pages,
through the settings value: the most one page read may take in all."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver_hook.index import IndexClient
from resolver_hook.index.errors import PageError
from tests.clirun import cli
from tests.indexreplica import PageServer, pypi_json, pytorch_html
from tests.test_inventory import _tilert_files, _torch_files, _write_manifests

TARGET = ["--target", "linux-x86_64-py312-cuda13.0-sm100"]


@pytest.fixture
def slow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Manifests whose pages answer after 3 s; the flags naming them."""
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)  # read the replica
    monkeypatch.delenv("RESOLVER_HOOK_TIMEOUT", raising=False)
    server = PageServer(delay=3)
    with server.serving():
        pytorch_html(server, "/whl/cu130/torch/", "/whl/cu130/", _torch_files())
        pypi_json(server, "/simple/tilert/", "/files/", _tilert_files())
        yield [*_write_manifests(server, tmp_path), *TARGET]


@pytest.mark.parametrize(
    ("argv", "variable"),
    [
        (["plan", "torch", "--timeout", "1"], None),
        (["plan", "torch"], "1"),
        (["explain", "torch", "--timeout", "1"], None),  # prints no notes: the time tells
        (["lock", "torch", "-o", "-", "--flavoured-only", "--timeout", "1"], None),
    ],
)
def test_timeout_bounds_each_page_read(
    slow: list[str],
    argv: list[str],
    variable: str | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if variable is not None:
        monkeypatch.setenv("RESOLVER_HOOK_TIMEOUT", variable)
    start = time.monotonic()
    _, out, err = cli(capsys, *argv, *slow)
    assert time.monotonic() - start < 2.9
    # The page's note (grouped by host and cause; -v gives "no complete answer within 1 s"),
    # or, for a lock, the refusal naming the reason its line has no hash.
    said = "(no answer in time)" in out + err or "no complete answer within 1 s" in out + err
    assert argv[0] == "explain" or said


def test_a_timeout_that_is_no_number_of_seconds_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli(capsys, "plan", "numpy", "--timeout", "0", *TARGET)
    assert stopped.value.code == 2
    assert "the timeout must be more than 0 seconds" in capsys.readouterr().err
    monkeypatch.setenv("RESOLVER_HOOK_TIMEOUT", "soon")
    code, _, err = cli(capsys, "plan", "numpy", *TARGET)
    assert code == 2
    assert err == (
        "error: RESOLVER_HOOK_TIMEOUT: 'soon' is not a number of seconds\n"
        "hint: set it to a number of seconds, or unset it\n"
    )


def test_a_host_that_lets_a_page_run_out_is_asked_for_no_more(tmp_path: Path) -> None:
    """One deadline per hung host, not one per round of pages: the second page of a host
    whose first gave no complete answer in time is not asked for, and says why."""
    server = PageServer(delay=3)
    with server.serving():
        pytorch_html(server, "/whl/cu130/torch/", "/whl/cu130/", _torch_files())
        pytorch_html(server, "/whl/cu126/torch/", "/whl/cu126/", _torch_files())
        client = IndexClient(allow_insecure=True, timeout=1, cache_dir=tmp_path)
        with pytest.raises(PageError) as first:
            client.page(f"{server.url}/whl/cu130/torch/")
        assert first.value.cause == "no answer in time"
        start = time.monotonic()
        with pytest.raises(PageError) as second:
            client.page(f"{server.url}/whl/cu126/torch/")
        assert time.monotonic() - start < 0.5
        assert "not asked: 127.0.0.1:" in second.value.message
        assert "gave an earlier page no complete answer within 1 s" in second.value.message
        assert second.value.cause == "no answer in time"  # grouped with the first page's note
        assert server.log == ["/whl/cu130/torch/"]
