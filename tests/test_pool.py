"""The page and metadata readers' threads: results in order, the first error raised,
and a Ctrl-C that does not wait for a worker stuck on a silent server."""

from __future__ import annotations

import _thread
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from resolver_hook.ground.pool import map_threads


def test_results_come_in_the_order_of_the_items() -> None:
    def slow_square(n: int) -> int:
        time.sleep(0.01 * (5 - n))  # later items finish first
        return n * n

    assert map_threads(slow_square, [1, 2, 3, 4], workers=4, name="t") == [1, 4, 9, 16]
    assert map_threads(slow_square, [], workers=4, name="t") == []


def test_the_first_error_in_item_order_is_raised_after_every_call_ended() -> None:
    ended: list[int] = []

    def fail_on_odd(n: int) -> int:
        time.sleep(0.01 * (4 - n))
        ended.append(n)
        if n % 2:
            raise ValueError(f"item {n}")
        return n

    with pytest.raises(ValueError, match="item 1"):
        map_threads(fail_on_odd, [0, 1, 2, 3], workers=4, name="t")
    assert sorted(ended) == [0, 1, 2, 3]


def test_ctrl_c_returns_at_once_while_a_worker_is_stuck() -> None:
    release = threading.Event()
    started = threading.Event()

    def stuck(n: int) -> int:
        started.set()
        release.wait(30)  # a server that never answers, until the test ends
        return n

    def press_ctrl_c() -> None:
        started.wait(5)
        _thread.interrupt_main()

    threading.Thread(target=press_ctrl_c, daemon=True).start()
    begun = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            map_threads(stuck, [1, 2, 3], workers=2, name="resolver-hook-test")
        assert time.monotonic() - begun < 5
        workers = [t for t in threading.enumerate() if t.name.startswith("resolver-hook-test")]
        assert workers  # still blocked, and daemon: the process exit does not wait for them
        assert all(t.daemon for t in workers)
    finally:
        release.set()


def test_ctrl_c_during_a_plan_on_a_silent_server_ends_it_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE")  # the plan reads the (silent) server
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    connected = threading.Event()

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])  # never answered
            except OSError:
                return
            connected.set()

    threading.Thread(target=accept, daemon=True).start()
    base = f"http://127.0.0.1:{server.getsockname()[1]}"
    argv = [sys.executable, "-m", "resolver_hook", "plan", "torch", "torchvision"]
    argv += ["--target", "linux-x86_64-py312-cuda13.0-sm100", "--allow-insecure-urls"]
    argv += ["--mirror", f"https://download.pytorch.org/whl={base}/whl"]
    argv += ["--mirror", f"https://pypi.org/simple={base}/simple"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert connected.wait(30), "the plan never reached the server"
        pressed = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
        assert time.monotonic() - pressed < 5  # not the page deadline (10 s)
    finally:
        proc.kill()
        proc.wait()
        server.close()
        for c in held:
            c.close()
    assert proc.returncode == 130
    assert err.decode().splitlines()[-1:] == ["error: interrupted"]
