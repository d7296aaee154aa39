"""Issue 49: a lock's hint fits what was given. A user who already wrote ``{target}`` in
``-o`` is not told to write it: the name hint keeps it where it was, and a package that
fits one target only is hinted to be locked apart, not to be written one file per target.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clirun import cli
from tests.indexreplica import File, PageServer, pytorch_html

SM100 = "linux-x86_64-py312-cuda13.0-sm100"
SM80 = "linux-x86_64-py312-cuda13.0-sm80"  # only the GPU differs: no marker sees it
X86 = "manylinux_2_28_x86_64"


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)  # read the replica


def test_the_name_hint_keeps_target_where_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "locks" / "{target}.lock")
    code, _, err = cli(capsys, "lock", "torch", "--target", SM100, "-o", out)
    assert code == 2, err
    hint = err.split("\nhint: ", 1)[1]
    folder = str(tmp_path / "locks")
    assert hint.startswith(f"name it {folder}/{{target}}_lock.txt or {folder}/pylock."), hint


def _demo(server: PageServer, tmp_path: Path) -> str:
    """demo: one cu130 build, for sm_100 only."""
    pytorch_html(server, "/whl/cu130/demo/", f"{server.url}/whl/cu130/", [
        File(f"demo-1.0+cu130-cp312-cp312-{X86}.whl", sha256="10" * 32),
    ])  # fmt: skip
    path = tmp_path / "demo.toml"
    path.write_text(
        'schema = 1\n[package]\nname = "demo"\n[[index]]\n'
        f'url = "{server.url}/whl/cu130/demo/"\nversion = "1.0+cu130"\n'
        'cuda = ">=13.0"\ngpu = ["sm_100"]\n'
    )
    return str(path)


@pytest.mark.parametrize("per_target", [False, True])
def test_the_split_hint_fits_the_output_given(
    online: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], per_target: bool
) -> None:
    server = PageServer()
    with server.serving():
        manifest = _demo(server, tmp_path)
        out = str(tmp_path / ("{target}.txt" if per_target else "all.txt"))
        code, _, err = cli(capsys, "lock", "demo", "--manifest", manifest,
                           "--allow-insecure-urls", "--target", SM100, "--target", SM80,
                           "-o", out)  # fmt: skip
    assert code == 1, err
    hint = next(line for line in err.splitlines() if line.startswith("hint: demo fits"))
    assert "no marker tells them apart" in hint
    if per_target:
        assert "{target}" not in hint, hint
        assert f"lock {SM80} apart, without demo" in hint
    else:
        assert "one file per target (-o with '{target}')" in hint
    assert list(tmp_path.glob("*.txt")) == []
