"""``--timeout`` / ``RESOLVER_HOOK_TIMEOUT``: one meaning on every command that reads pages,
through the settings value: the most one page read may take in all."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

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
