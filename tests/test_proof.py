"""Reading an installer's resolution: the report formats and the lines written from it.

The integration tests (tests/test_install_proof.py) feed real pip and uv output; these
hold the edges those runs do not reach: reports of a format we do not know, uv's lines
for local folders, and hash-pinning being all or nothing.
"""

from __future__ import annotations

import json

import pytest

from resolver_hook.errors import OperationalError
from resolver_hook.install.proof import (
    Resolution,
    conflicts,
    pinned_lines,
    pip_reports,
    read_pip_report,
    read_uv_dry_run,
)


def _item(name: str, version: str, **info: object) -> dict[str, object]:
    return {"metadata": {"name": name, "version": version}, "download_info": info}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{", "not JSON"),
        (json.dumps({"version": "2", "install": []}), "report version '2', not 0 or 1"),
        (json.dumps({"version": "1"}), "no 'install' list"),
        (json.dumps({"version": "1", "install": [{"metadata": {}}]}), "install[0].metadata.name"),
    ],
    ids=["not json", "unknown version", "no install", "no name"],
)
def test_a_report_we_cannot_read_is_one_error_with_the_way_out(text: str, words: str) -> None:
    with pytest.raises(OperationalError) as err:
        read_pip_report(text)
    assert words in err.value.message
    assert "--no-proof" in (err.value.hint or "")


def test_the_older_single_hash_field_is_read() -> None:
    report = {
        "version": "0",
        "install": [_item("a", "1.0", url="https://x/a.whl", archive_info={"hash": "sha256=AB"})],
    }
    (a,) = read_pip_report(json.dumps(report)).items
    assert (a.sha256, a.direct, a.local) == ("ab", False, False)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("pip 22.2 from /x (python 3.11)", (22, 2)),
        ("pip 26.3.1 from /x (python 3.13)", (26, 3)),
        ("pip 22.0.4 from /x (python 3.11)", None),
        ("not pip", None),
    ],
)
def test_which_pips_write_a_report(text: str, found: tuple[int, int] | None) -> None:
    assert pip_reports(text) == found


def test_uv_lines_for_folders_urls_and_pins() -> None:
    text = (
        "Resolved 3 packages in 5ms\nWould install 3 packages\n"
        " + app==0.1 (from file:///src/app)\n"
        " + demo-gpu @ https://x/demo_gpu-1.0%2Bcu130-py3-none-any.whl#sha256=AA\n"
        " + plainpkg==1.0\n"
        " - plainpkg==0.9\n"
    )
    app, gpu, plain = read_uv_dry_run(text).items
    assert (app.version, app.local, app.url) == ("0.1", True, "file:///src/app")
    assert (gpu.version, gpu.direct, gpu.sha256) == ("1.0+cu130", True, "aa")
    assert (plain.name, plain.version, plain.direct) == ("plainpkg", "1.0", False)


def test_a_url_wheel_uv_has_in_its_cache_is_read_as_its_url() -> None:
    """uv shows a URL's wheel it holds in its cache as ``name==version (from URL)``: it is
    the URL's file, pinned by that URL (an index has no such name to find)."""
    text = (
        "Would download 1 package\nWould install 2 packages\n"
        " + demo-gpu==1.0+cu130 (from http://127.0.0.1:8000/files/"
        "demo_gpu-1.0+cu130-py3-none-any.whl#sha256=AB)\n"
        " + plainpkg==1.0\n"
    )
    (gpu, _) = read_uv_dry_run(text).items
    assert (gpu.version, gpu.direct, gpu.local, gpu.sha256) == ("1.0+cu130", True, False, "ab")
    assert gpu.url == "http://127.0.0.1:8000/files/demo_gpu-1.0+cu130-py3-none-any.whl"
    assert pinned_lines(read_uv_dry_run(text))[0] == f"demo-gpu @ {gpu.url}#sha256=ab"


def _report(*items: dict[str, object]) -> Resolution:
    """A pip report (version 1) installing ``items``, read."""
    return read_pip_report(json.dumps({"version": "1", "install": list(items)}))


def _hashed(name: str, version: str, sha256: str) -> dict[str, object]:
    url = f"https://x/{name}.whl"
    return _item(name, version, url=url, archive_info={"hashes": {"sha256": sha256}})


def test_hashes_on_every_line_or_on_none() -> None:
    hashed = _report(_hashed("a", "1.0", "aa"), _hashed("b", "2.0", "bb"))
    assert pinned_lines(hashed, option_lines=["--index-url https://i/"]) == [
        "--index-url https://i/",
        "a==1.0 --hash=sha256:aa",
        "b==2.0 --hash=sha256:bb",
    ]
    one_folder = _report(
        _hashed("a", "1.0", "aa"),
        _item("c", "0.1", url="file:///src/c", dir_info={"editable": True}),
    )
    # An editable folder has no hash: pip would then want one everywhere, so none is given.
    assert pinned_lines(one_folder) == ["a==1.0", "-e file:///src/c"]


def test_hashes_given_to_always_stay_on_their_line_alone() -> None:
    """uv checks each hash it is given and wants none elsewhere: a release pinned with
    the shipped snapshot's sha256 (env's passes on a mirror) keeps it beside unhashed
    lines, and the others get none."""
    text = "Would install 2 packages\n + demo-idx==2.0+cu130\n + plainpkg==1.0\n"
    lines = pinned_lines(read_uv_dry_run(text), always={"demo-idx": ["sha256:aa"]})
    assert lines == ["demo-idx==2.0+cu130 --hash=sha256:aa", "plainpkg==1.0"]


def test_a_vcs_requirement_is_pinned_to_its_commit() -> None:
    vcs = {"vcs": "git", "commit_id": "abc123", "requested_revision": "main"}
    report = {"version": "1", "install": [_item("a", "1.0", url="https://g/a", vcs_info=vcs)]}
    assert pinned_lines(read_pip_report(json.dumps(report))) == ["a @ git+https://g/a@abc123"]


def test_conflicts_as_pip_and_uv_word_them() -> None:
    pip = "The conflict is caused by:\n    ktil 0.1.4 depends on ktorch<2.13\n"
    uv = (
        "Because only ktorch>=2.13 is available and ktil>=0.1.4 depends on ktorch<2.13, we "
        "can conclude that ktil>=0.1.4 cannot be used.\n"
        "Because all versions of app depend on demo-gpu==1.0+cu126 and ...\n"
    )
    assert [c.text() for c in conflicts(pip)] == ["ktil 0.1.4 requires ktorch<2.13"]
    assert [c.text() for c in conflicts(uv)] == [
        "ktil>=0.1.4 requires ktorch<2.13",
        "app requires demo-gpu==1.0+cu126",
    ]
    assert [c.who_name for c in conflicts(uv)] == ["ktil", "app"]
