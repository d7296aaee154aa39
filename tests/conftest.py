"""Shared fixtures: fakes for what cannot exist here (the GPU, the internet), nothing else."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.indexreplica import PageServer
from tests.installenv import GpuIndex, build_gpu_index, write_manifests


def pytest_configure(config: pytest.Config) -> None:
    """Before collection (test modules may plan at import): the user cache folder of
    this run is a temporary one, never the user's ~/.cache (see _clean_env for tests),
    and the tests' children see no terminal width."""
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="resolver-hook-test-cache-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["RESOLVER_HOOK_CACHE_DIR"] = folder
    os.environ["XDG_CACHE_HOME"] = folder
    # No terminal size reaches the tests' children. GNU readline, which pytest imports
    # at start-up, writes one (COLUMNS, LINES; 80x24 without a terminal) into the C
    # environment, out of os.environ's sight: parallel workers inherit it, and uv then
    # wraps its messages at 80 columns, which breaks the tests (and resolver-hook's own
    # reading of uv's conflict explanations) that read them line by line. A developer's
    # exported COLUMNS would do the same.
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
        os.unsetenv(name)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never see the developer's overrides, GPU selection or host-profile cache,
    and never read an index page from the internet.

    Each test gets an empty cache folder of its own, so a profile detected (with a fake
    NVML, say) in one test is never read back by another, and the developer's own
    cache is never written.
    """
    for name in list(os.environ):
        if name.startswith("RESOLVER_HOOK_") or name == "CUDA_VISIBLE_DEVICES":
            monkeypatch.delenv(name)
    cache = str(tmp_path_factory.mktemp("cache"))
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", cache)
    # Plans read no index page from the internet in tests: the page cache and the
    # shipped snapshot serve (a test of a loopback replica unsets this).
    monkeypatch.setenv("RESOLVER_HOOK_OFFLINE", "1")
    # A child process whose environment drops RESOLVER_HOOK_* falls back to the XDG
    # cache folder: that is the test's too, never the user's ~/.cache.
    monkeypatch.setenv("XDG_CACHE_HOME", cache)
    from resolver_hook.cli import _output
    from resolver_hook.ground import credentials as _credentials
    from resolver_hook.host import detect

    detect.cache_clear()
    _credentials.forget()  # credentials a test's URLs carried are not another test's
    # Output read back without a terminal is not wrapped at 80 columns in tests: they
    # assert whole messages. The tests of fitting set COLUMNS (tests/test_output_width.py).
    monkeypatch.setattr(_output, "PIPE_COLUMNS", 100_000)


@pytest.fixture(autouse=True)
def _frozen_builtin(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule tests see the frozen manifests under tests/data/frozen-manifests in place of
    the shipped ones, so correcting shipped data never breaks them. Tests of
    the shipped data are marked ``builtin_data`` and see the real thing."""
    if request.node.get_closest_marker("builtin_data") is not None:
        return
    from resolver_hook.manifest import load
    from tests.frozen import frozen_sources

    monkeypatch.setattr(load, "_builtin_sources", frozen_sources)


# Property tests run on shared CI machines: no per-example deadline (a slow
# example is not a wrong one); the example counts stay as each test sets them.
from hypothesis import settings as _settings  # noqa: E402

_settings.register_profile("resolver-hook", deadline=None)
_settings.load_profile("resolver-hook")


@pytest.fixture
def page_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[PageServer]:
    """A loopback page server for one test, served for it, and plans that read it (the
    offline default of _clean_env unset)."""
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)
    server = PageServer()
    with server.serving():
        yield server


@pytest.fixture(scope="module")
def gpu_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuIndex]:
    """The loopback index of tests/installenv.py with its manifests, served for a module."""
    gi = build_gpu_index(tmp_path_factory.mktemp("gpu-index"))
    with gi.index.serving():
        write_manifests(gi)
        yield gi
