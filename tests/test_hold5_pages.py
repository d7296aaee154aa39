"""Issue 49, pages: a server that answers 304 Not Modified to a request that asked
nothing (a broken proxy) is one note naming the page, and the plan goes on; a yanked
newest release leaves the older one that fits planned (pip's rule)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from resolver_hook.index.cache import PageCache
from tests.clirun import cli
from tests.indexreplica import File, PageServer, pytorch_html

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


X86 = "manylinux_2_28_x86_64"


def _yanked_newest(server: PageServer, tmp_path: Path) -> list[str]:
    """demo's cu130 page: 1.1 (the release its manifest names) yanked, 1.0 not; its
    cu132 page: 1.1, for a driver newer than the target's. The manifest's flags."""
    pytorch_html(server, "/whl/cu130/demo/", f"{server.url}/whl/cu130/", [
        File(f"demo-1.1+cu130-cp312-cp312-{X86}.whl", yanked="broken build"),
        File(f"demo-1.0+cu130-cp312-cp312-{X86}.whl", sha256="10" * 32),
    ])  # fmt: skip
    pytorch_html(server, "/whl/cu132/demo/", f"{server.url}/whl/cu132/", [
        File(f"demo-1.1+cu132-cp312-cp312-{X86}.whl"),
    ])  # fmt: skip
    entries = "".join(
        f'[[index]]\nurl = "{server.url}/whl/{label}/demo/"\nversion = "1.1+{label}"\n'
        f'cuda = ">={cuda}"\ngpu = ["sm_100"]\n'
        for label, cuda in (("cu130", "13.0"), ("cu132", "13.2"))
    )
    path = tmp_path / "demo.toml"
    path.write_text(f'schema = 1\n[package]\nname = "demo"\n{entries}')
    return ["--manifest", str(path), "--allow-insecure-urls", "--target", TARGET]


def test_a_yanked_newest_release_leaves_the_older_one_planned(
    online: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = PageServer()
    with server.serving():
        flags = _yanked_newest(server, tmp_path)
        code, out, err = cli(capsys, "plan", "demo", *flags)
        older = f"{server.url}/whl/cu130/demo-1.0%2Bcu130-cp312-cp312-{X86}.whl"
        assert code == 0, err
        # pip takes 1.0 when 1.1 is yanked: so does the plan, with 1.1's rules.
        assert f"requirements:\n  demo @ {older}#sha256={'10' * 32}\n" in out
        assert "kernels assumed from 1.1+cu130" in out
        assert "1.1+cu130" in out.split("notes:", 1)[1]  # the yanked release is said
        # An exact pin of the yanked release: pip installs a yanked file for it (PEP
        # 592), and the plan takes it too, saying it is yanked.
        code, out, err = cli(capsys, "plan", "demo==1.1+cu130", *flags)
        newest = f"{server.url}/whl/cu130/demo-1.1%2Bcu130-cp312-cp312-{X86}.whl"
        assert code == 0, err
        assert f"requirements:\n  demo @ {newest}#sha256=" in out
        assert "yanked (PEP 592: broken build)" in out


def test_a_yanked_entry_is_passed_over_by_the_entry_below_it(
    online: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Entries for 1.0 and 1.2; the page has 1.2 (yanked), 1.1 and 1.0: pip takes 1.1,
    # and 1.0's rules carry forward to it past the yanked entry.
    server = PageServer()
    with server.serving():
        pytorch_html(server, "/whl/cu130/demo/", f"{server.url}/whl/cu130/", [
            File(f"demo-{v}+cu130-cp312-cp312-{X86}.whl", yanked=y)
            for v, y in (("1.2", ""), ("1.1", None), ("1.0", None))
        ])  # fmt: skip
        page = f"{server.url}/whl/cu130/demo/"
        flags = ["--manifest", _manifest(tmp_path, page, "1.2+cu130", "1.0+cu130")]
        code, out, err = cli(capsys, "plan", "demo", *flags, "--allow-insecure-urls",
                             "--target", TARGET)  # fmt: skip
    assert code == 0, err
    assert f"  demo @ {server.url}/whl/cu130/demo-1.1%2Bcu130-cp312" in out
    assert "kernels assumed from 1.0+cu130" in out


def test_a_manifest_whose_every_page_is_not_found_says_so(
    online: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every page of the manifest answers 404: one note names the pages, and the
    package's outcome says they were not found, not that the manifest knows no
    versions (issue 49)."""
    server = PageServer(missing=404)
    with server.serving():
        pages = [f"{server.url}/whl/cu130/demo/", f"{server.url}/whl/cu132/demo/"]
        path = Path(_manifest(tmp_path, pages[0], "1.0+cu130"))
        path.write_text(
            path.read_text() + f'[[index]]\nurl = "{pages[1]}"\nversion = "1.1+cu132"\n'
            'cuda = ">=13.2"\ngpu = ["sm_100"]\n'
        )
        argv = ["--manifest", str(path), "--allow-insecure-urls", "--target", TARGET]
        code, out, err = cli(capsys, "plan", "demo", *argv, "--json")
    assert code == 0, err
    plan = json.loads(out)
    (demo,) = plan["packages"]
    assert "no versions" not in demo["reason"]
    assert f"its pages were not found ({pages[0]}, {pages[1]})" in demo["reason"]
    said = [n for n in plan["notes"] if "no such page (HTTP 404)" in n]
    assert len(said) == 1, plan["notes"]
    assert all(p in said[0] for p in pages)


def _plant_nested(cache: PageCache, key: str, *, header: bool) -> Path:
    """Replace the cache file of ``key`` with ``[`` 100,000 deep: as its header line, or
    (``header``: a valid header kept) as its body."""
    path = cache.path(key)
    deep = b"[" * 100_000
    if header:
        head = json.loads(path.read_bytes().partition(b"\n")[0])
        head.update(size=len(deep), sha256=hashlib.sha256(deep).hexdigest())
        path.write_bytes(json.dumps(head, sort_keys=True).encode() + b"\n" + deep)
    else:
        path.write_bytes(deep + b"\n")
    return path


@pytest.mark.parametrize("part", ["page-header", "links"])
def test_a_page_cache_file_nested_too_deeply_is_a_miss_not_a_traceback(
    part: str, online: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A page cache file (the page's header line, or the links kept beside it) holding
    JSON nested too deeply for the decoder is a cache miss, offline and online, as a
    host or plan cache file is; it was a RecursionError traceback (issue 49)."""
    server = PageServer()
    with server.serving():
        page = f"{server.url}/whl/cu130/demo/"
        pytorch_html(server, "/whl/cu130/demo/", f"{server.url}/whl/cu130/", [
            File(f"demo-1.0+cu130-cp312-cp312-{X86}.whl"),
        ])  # fmt: skip
        argv = ["--manifest", _manifest(tmp_path, page, "1.0+cu130"), "--allow-insecure-urls"]
        argv += ["--target", TARGET]
        code, warm, err = cli(capsys, "plan", "demo", *argv)
        assert code == 0, err
        wanted = warm.split("requirements:\n", 1)[1].split("notes:", 1)[0]
        assert f"  demo @ {server.url}/whl/cu130/demo-1.0%2Bcu130-" in wanted
        cache = PageCache(Path(os.environ["RESOLVER_HOOK_CACHE_DIR"]) / "index")
        key = ("page\n" if part == "page-header" else "links\n") + page
        path = _plant_nested(cache, key, header=part == "links")
        for offline in (["--offline"], []):  # online last: it writes the cache again
            code, out, err = cli(capsys, "plan", "demo", *argv, *offline)
            assert "Traceback" not in out + err
            assert code == 0, (offline, err)
            said = " ".join(out.split())  # the note is wrapped at the output's width
            if part == "page-header":
                assert f"cache {path} ignored: unreadable (nested too deeply)" in said
            if part == "links" or not offline:  # the page parsed again, or read again
                assert wanted in out, (offline, out)
    assert server.log.count("/whl/cu130/demo/") == 1 + (part == "page-header")
