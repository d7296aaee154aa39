"""The one URL policy on every link, whatever its source: a page's links, a lock that
``sync`` hands the installer (the refresh of the shipped data: tests/test_refresh_data.py;
manifests and mirrors: tests/test_manifest.py, tests/test_inventory.py).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.manifest.urls import usual_host
from tests.clirun import cli
from tests.indexreplica import PageServer, Response
from tests.installenv import PY, GpuIndex, clean_env, installed, make_venv

X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
GOOD = "demo_idx-2.0+cu130-py3-none-any.whl"
PLAIN = "http://files.example.org/demo_idx-2.1+cu130-py3-none-any.whl"


def _manifest(folder: Path, page: str) -> Path:
    path = folder / "demo-idx.toml"
    path.write_text(
        f'schema = 1\n[package]\nname = "demo-idx"\n[[index]]\nurl = "{page}"\n'
        'version = "2.0+cu130"\ncuda = ">=13.0"\ngpu = ["sm_100"]\n'
    )
    return path


@pytest.mark.parametrize("fragment", ["#sha256=" + "ab" * 32, ""], ids=["hashed", "no-hash"])
def test_a_pages_plain_http_link_to_another_host_is_never_pinned_or_locked(
    page_server: PageServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], fragment: str
) -> None:
    good = f"{page_server.url}/files/{GOOD}#sha256={'cd' * 32}"
    body = f'<a href="{good}">{GOOD}</a>\n<a href="{PLAIN}{fragment}">newer</a>\n'
    page_server.responses["/links/"] = Response(body.encode())
    flags = ["--manifest", str(_manifest(tmp_path, f"{page_server.url}/links/")),
             "--allow-insecure-urls", "--target", X86_B200]  # fmt: skip
    code, out, _ = cli(capsys, "plan", "demo-idx", *flags)
    assert code == 0
    # The page's own (loopback) file, not the newer one it links to over plain http,
    # which would have been planned with 2.0's kernel list carried forward.
    assert f"demo-idx @ {good}" in out
    assert "files.example.org" in out  # said: the note naming the link left out
    (note,) = [x for x in out.splitlines() if "skipped a link of" in x]
    assert "is plain http: only https URLs are allowed" in note
    lock = tmp_path / "requirements.txt"
    code, _, _ = cli(capsys, "lock", "demo-idx", "--flavoured-only", *flags, "-o", str(lock))
    assert code == 0
    pins = [x for x in lock.read_text().splitlines() if not x.startswith("#")]
    assert pins == [f"demo-idx @ {good}"]


# --- sync ----------------------------------------------------------------------------


def _hook(gi: GpuIndex, *args: str, venv: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gi.manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
        PIP_INDEX_URL=gi.simple,
        VIRTUAL_ENV=str(venv),
        **extra,
    )
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", *args],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def _locked_set(gpu_index: GpuIndex, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A fresh venv, and a lock set of demo-gpu for a B200 made by the hook: (venv, the
    set's folder, its one lock)."""
    venv = tmp_path / "venv"
    make_venv(venv)
    locks = tmp_path / "locks"
    locks.mkdir()
    proc = _hook(gpu_index, "lock", "demo-gpu", "--flavoured-only", "-o", f"{locks}/{{target}}.txt",
                 "--target", X86_B200, venv=venv)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return venv, locks, locks / f"{X86_B200}.txt"


def _vouched(locks: Path, lock: Path, text: str) -> None:
    """Write ``text`` as the lock and its sha256 into index.toml, as a careless or
    hostile edit that keeps the set consistent would."""
    lock.write_text(text)
    index = locks / "index.toml"
    old = toml_loads(index.read_text())["lock"][0]["sha256"]
    index.write_text(index.read_text().replace(old, hashlib.sha256(lock.read_bytes()).hexdigest()))


def test_sync_refuses_a_lock_that_pins_plain_http_though_its_hash_matches(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    venv, locks, lock = _locked_set(gpu_index, tmp_path)
    text = lock.read_text()
    assert f"demo-gpu @ {gpu_index.index.url}/files/" in text
    _vouched(locks, lock, text.replace(gpu_index.index.url, "http://files.example.org"))
    proc = _hook(gpu_index, "sync", str(locks), "--installer", "pip", "--target", X86_B200,
                 venv=venv)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: {lock}: 'http://files.example.org/" in proc.stderr
    assert "is plain http: only https URLs are allowed: nothing installed" in proc.stderr
    assert "demo-gpu" not in installed(venv / "bin" / "python")


@pytest.mark.parametrize(
    ("added", "more", "said"),
    [
        # pip joins a line ending in a backslash with the next one
        ("plainpkg @ http\\\n://files.example.org/plainpkg-1.0-py3-none-any.whl\n", None,
         "'http://files.example.org/plainpkg-1.0-py3-none-any.whl' is plain http"),
        # pip and uv expand ${NAME} from their environment
        ("plainpkg @ ${LOCK_SCHEME}://files.example.org/plainpkg-1.0-py3-none-any.whl\n", None,
         "'http://files.example.org/plainpkg-1.0-py3-none-any.whl' is plain http"),
        # a file the lock names is read by the installer, and no sha256 vouches for it
        ("-r more.txt\n", "plainpkg @ https://files.example.org/plainpkg-1.0-py3-none-any.whl\n",
         "-r more.txt: the installer would read another file, which index.toml's sha256 "
         "does not cover"),
    ],
    ids=["continued-line", "env-variable", "included-file"],
)  # fmt: skip
def test_sync_reads_the_lock_as_the_installer_does_before_the_url_policy(
    gpu_index: GpuIndex, tmp_path: Path, added: str, more: str | None, said: str
) -> None:
    """A lock whose sha256 matches index.toml but that reaches a plain http URL, or
    another file, only the way pip reads it: refused before the installer runs."""
    venv, locks, lock = _locked_set(gpu_index, tmp_path)
    if more is not None:
        (locks / "more.txt").write_text(more)
    _vouched(locks, lock, lock.read_text() + added)
    proc = _hook(gpu_index, "sync", str(locks), "--installer", "pip", "--target", X86_B200,
                 venv=venv, LOCK_SCHEME="http", PIP_RETRIES="0")  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: {lock}: {said}" in proc.stderr
    assert "nothing installed" in proc.stderr
    assert "demo-gpu" not in installed(venv / "bin" / "python")


def test_a_pages_link_with_credentials_is_pinned_without_them_and_never_cached(
    page_server: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = page_server.url.removeprefix("http://")
    link = f"http://user:s3cr3t-link@{host}/files/{GOOD}#sha256={'cd' * 32}"
    page_server.responses["/links/"] = Response(f'<a href="{link}">{GOOD}</a>\n'.encode())
    cache = tmp_path / "cache"
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(cache))
    flags = ["--manifest", str(_manifest(tmp_path, f"{page_server.url}/links/")),
             "--allow-insecure-urls", "--target", X86_B200]  # fmt: skip
    for _ in range(2):
        code, out, err = cli(capsys, "plan", "demo-idx", *flags)
        assert code == 0
        assert f"demo-idx @ {page_server.url}/files/{GOOD}#sha256=" in out
        assert "s3cr3t-link" not in out + err
    assert "not cached: its links carry credentials" in out
    assert not any(b"s3cr3t-link" in p.read_bytes() for p in cache.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    "odd",
    [
        "https://files.example.org/b/demo 2.0-py3-none-any.whl",  # a space after the host
        "https://files.example.org/b/demo-2.0-py3-none-any.whl?x=`id`",
        "https://files.example.org/" + "b" * 9000,  # too long
        "http://files.example.org/b/demo-2.0-py3-none-any.whl",
        "http://127.0.0.1/b/demo-2.0-py3-none-any.whl",  # allowed with the flag alone
        "file:/b/demo-2.0-py3-none-any.whl",
        "https://files.example.org:x/b/demo-2.0-py3-none-any.whl",  # a port not a number
        "https://files.example.org",  # no path: nothing after the host is shared
        "https://fïles.example.org/b/demo-2.0-py3-none-any.whl",  # not ASCII, yet allowed
    ],
)
def test_a_pages_links_are_each_judged_as_alone(odd: str) -> None:
    # A page's links are checked a host at a time (each_url_problem): what each one is
    # told is what url_problem tells it alone, among links that pass.
    from resolver_hook.manifest.urls import each_url_problem, url_problem

    urls = ["https://files.example.org/a/demo-1.0-py3-none-any.whl", odd, f"https://x.org/c/{GOOD}"]
    for insecure in (False, True):
        alone = [url_problem(url, allow_insecure=insecure) for url in urls]
        assert each_url_problem(urls, allow_insecure=insecure) == alone
        assert each_url_problem(urls[:1], allow_insecure=insecure) == [None]


CHARACTERS = [*map(chr, range(256)), "\u2028", "\u00e9", "\U0001f600", "\ufeff"]


@pytest.mark.parametrize("where", [0, 1, 2], ids=["first", "middle", "last"])
def test_every_character_is_judged_among_a_pages_links_as_alone(where: int) -> None:
    """Each character of the first 256 and a few beyond, in any link of a page: what
    the link is told among links that pass is what url_problem tells it alone, and a
    URL is clean (checked whole) exactly when it is printable ASCII without a space or
    a forbidden character."""
    from resolver_hook.manifest.urls import (
        FORBIDDEN_URL_CHARACTERS,
        _clean,
        each_url_problem,
        url_problem,
    )

    base = ["https://files.example.org/a/demo-1.0-py3-none-any.whl"] * 3
    for ch in CHARACTERS:
        urls = list(base)
        urls[where] = f"https://files.example.org/a/{ch}/demo-1.0-py3-none-any.whl"
        alone = [url_problem(url) for url in urls]
        assert each_url_problem(urls, allow_insecure=False) == alone, repr(ch)
        text = "".join(urls)
        assert _clean(text) == (
            text.isascii()
            and text.isprintable()
            and " " not in text
            and not any(c in text for c in FORBIDDEN_URL_CHARACTERS)
        ), repr(ch)


@pytest.mark.parametrize(
    ("url", "usual"),
    [
        ("https://files.pythonhosted.org/packages/ab/cd/t-2.12.0-py3-none-any.whl", True),
        ("https://Download.PyTorch.org/whl/cu130/torch/", True),
        ("https://host", True),
        ("https://host?x=1", True),
        ("https://host#frag", True),
        ("https://user@host/x", False),  # userinfo
        ("https://host:8443/x", False),  # a port
        ("https://[::1]/x", False),  # IPv6 brackets
        ("http://host/x", False),
        ("file:///tmp/x", False),
    ],
)
def test_the_usual_host_read_as_text_is_the_one_urlsplit_finds(url: str, usual: bool) -> None:
    """The usual https link's host is read as text (no urllib.parse on a plan's path),
    the host urlsplit finds, but for its case; any other URL is left to urlsplit."""
    found = usual_host(url)
    assert (found is not None) is usual
    if found is not None:
        assert found.lower() == urllib.parse.urlsplit(url).hostname
