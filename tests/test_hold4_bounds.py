"""Issue 42, bounds: ``lock --offline`` reads no network through uv either, and hashing a
wheel for a pylock lock has a total deadline."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.test_index_pages import Behaviour, serve
from tests.installenv import GpuIndex, clean_env
from tests.test_lock_formats import ARM_L4, lock

__all__ = ["serve"]  # the loopback server fixture, used here too

pytestmark = pytest.mark.integration


def test_lock_offline_passes_uv_its_offline_flag(gpu_index: GpuIndex, tmp_path: Path) -> None:
    """plainpkg has no manifest: uv resolves it. Offline, uv reads its (empty) cache
    only, so the index is never asked and the lock fails naming --offline."""
    out = tmp_path / "pylock.toml"
    asked = len(gpu_index.index.requests)
    proc = lock(gpu_index, "demo-gpu", "plainpkg", "--target", ARM_L4,
                "--index-url", gpu_index.simple, "--offline", "-o", str(out))  # fmt: skip
    assert gpu_index.index.requests[asked:] == []
    assert proc.returncode == 1, proc.stderr
    assert "uv could not resolve the environment for" in proc.stderr
    assert "hint: --offline: uv resolved from its cache alone" in proc.stderr
    assert not out.exists()


def test_hashing_a_trickled_wheel_ends_at_the_deadline(
    serve: Callable[[Behaviour], str], tmp_path: Path
) -> None:
    """A server that sends a wheel's headers, then a byte every 0.5 s: each read
    succeeds, the download never ends. --timeout 2 ends it after ~2 s (2 s plus what the
    few bytes received allow at the floor rate), one error line."""

    def trickle(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
        while not stop.wait(0.5):
            sock.sendall(b"x")

    url = serve(trickle)
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        f'schema = 1\n[package]\nname = "pkg"\n[[wheel]]\nurl = "{url}/pkg-1.0-py3-none-any.whl"\n'
    )
    out = tmp_path / "pylock.toml"
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "resolver_hook", "lock", "pkg", "--manifest", str(manifest),
         "--allow-insecure-urls", "--target", "linux-x86_64-py312", "--timeout", "2",
         "-o", str(out)],
        capture_output=True, text=True, env=clean_env(RESOLVER_HOOK_OFFLINE="0"), timeout=40,
        check=False,
    )  # fmt: skip
    took = time.monotonic() - began
    assert proc.returncode == 1, proc.stderr
    assert took < 20
    (line, hint) = proc.stderr.splitlines()[-2:]
    assert line.startswith(f"error: {url}/pkg-1.0-py3-none-any.whl: cannot download to hash it: ")
    assert "slower than 128 KiB/s after the first 2 s" in line
    assert hint == "hint: the server is slow or stalled; try again or raise --timeout"
    assert not out.exists()


@pytest.mark.parametrize("form", ["requirements", "pylock"])
def test_uv_reading_a_stalled_wheel_host_is_held_to_the_timeout(
    serve: Callable[[Behaviour], str], tmp_path: Path, form: str
) -> None:
    """The manifest gives the wheel's sha256, so the hook downloads nothing; uv, which
    resolves the whole environment, reads the wheel's metadata from a host that accepts
    and never answers. uv waited its own 30 s per read, with retries (about 130 s under
    ``--timeout 2``), and the hint said to loosen a requirement. uv now waits --timeout
    per read (``UV_HTTP_TIMEOUT``) and the hint names the timeout. The pylock form asks
    uv only when an unflavoured package is in the lock: plainpkg, from an empty page."""

    def stall(sock: socket.socket, stop: threading.Event) -> None:
        stop.wait(120)

    url = serve(stall)
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        f'schema = 1\n[package]\nname = "pkg"\n[[wheel]]\nurl = "{url}/pkg-1.0-py3-none-any.whl"\n'
        f'sha256 = "{"ab" * 32}"\n'
    )
    out = tmp_path / ("pylock.toml" if form == "pylock" else "req.txt")
    extra = ["plainpkg", "--index-url", f"{url}/simple/"] if form == "pylock" else []
    began = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "resolver_hook", "lock", "pkg", *extra, "--manifest",
             str(manifest), "--allow-insecure-urls", "--target", "linux-x86_64-py312",
             "--timeout", "2", "-o", str(out)],
            capture_output=True, text=True, env=clean_env(RESOLVER_HOOK_OFFLINE="0"),
            timeout=75, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("lock --timeout 2 still running after 75 s")
    took = time.monotonic() - began
    assert proc.returncode == 1, proc.stderr
    assert took < 60, (took, proc.stderr)
    assert "uv could not resolve the environment" in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "hint: a server uv read did not answer within --timeout (2 s per read); "
        "try again or raise it"
    ), proc.stderr
    assert not out.exists()
