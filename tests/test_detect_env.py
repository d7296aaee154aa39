"""``detect(env)`` answers for the ``env`` it is given, not for ``os.environ``: the
process memo serves ``os.environ`` alone."""

from __future__ import annotations

import os
import sys

import pytest

from resolver_hook.host.detect import detect

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="WSL is a hint read on Linux")


@pytest.mark.parametrize("use_cache", [True, False], ids=["cache", "no-cache"])
def test_detect_reads_the_env_it_is_given(monkeypatch: pytest.MonkeyPatch, use_cache: bool) -> None:
    monkeypatch.delenv("WSL_DISTRO_NAME", raising=False)
    mine = detect(use_cache=use_cache)  # the memo now holds os.environ's machine
    wsl = detect({**os.environ, "WSL_DISTRO_NAME": "Ubuntu"}, use_cache=use_cache)
    assert wsl.wsl is True
    assert detect(use_cache=use_cache) == mine  # os.environ's answer is untouched
