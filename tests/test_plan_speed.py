"""Planning cost does not grow with history: the checks made cheap stay exact."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.version import Version

from resolver_hook._data import data_path
from resolver_hook.ground import cache as _cache
from resolver_hook.ground.credentials import keep
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.host import parse_target
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory.candidates import candidates
from resolver_hook.manifest import ManifestError, document, load, needs, parse_manifest, tables
from resolver_hook.manifest.model import IndexFlavour
from resolver_hook.manifest.urls import FORBIDDEN_URL_CHARACTERS, url_problem
from resolver_hook.resolve import resolve, rules
from resolver_hook.resolve.model import public_release
from tests.paths import REPO, python_child

TARGET = "linux-x86_64-py312-cuda13.0-sm100"

# Every character a URL may not hold, ASCII or not, each where the whole-URL check of
# an ASCII URL and the walk of any other URL must both find it (first, by position).
BAD = [*FORBIDDEN_URL_CHARACTERS, " ", "\t", "\n", "\x00", "\x7f", "\x85", "\u00a0", "\u3000"]


@pytest.mark.parametrize("ch", BAD)
def test_each_bad_character_is_named(ch: str) -> None:
    problem = url_problem(f"https://x.org/a{ch}b")
    assert problem is not None
    assert f"contains {ch!r}: percent-encode it" in problem


def test_the_first_bad_character_is_named() -> None:
    problem = url_problem("https://x.org/\u00e9/a$b c")
    assert problem is not None
    assert "contains '$'" in problem


@pytest.mark.parametrize(
    "url", ["https://download.pytorch.org/whl/cu128/torch/", "https://x.org/caf\u00e9/a%20b"]
)
def test_clean_urls_pass(url: str) -> None:
    assert url_problem(url) is None


# Links as index pages write them, and the ones only the full parse can judge: each with
# the verdict (None: allowed) that urllib's parse gives.
URL_VERDICTS = [
    ("https://download.pytorch.org/whl/cu130/torch-2.13.0%2Bcu130-cp312-x.whl", None),
    ("https://files.pythonhosted.org/packages/ab/cd/x.whl#sha256=00", None),
    ("https://Files.Example.ORG?x=1", None),
    ("https://user:pw@x.org/a.whl", None),
    ("https://x.org:443/a.whl", None),
    ("https://x.org:44x/a.whl", "is not a URL"),
    ("https://[::1/a.whl", "is not a URL"),
    ("https:///a.whl", "has no host"),
    ("https://#top", "has no host"),
    ("HTTPS://x.org/a.whl", None),
]


@pytest.mark.parametrize(("url", "verdict"), URL_VERDICTS, ids=[u for u, _ in URL_VERDICTS])
def test_a_link_gets_the_verdict_of_urllibs_parse(url: str, verdict: str | None) -> None:
    problem = url_problem(url)
    assert problem is None if verdict is None else verdict in (problem or "")


def test_a_plain_https_link_is_judged_and_kept_without_a_url_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page holds thousands of links: one without userinfo, port or brackets needs no
    urlsplit to be allowed, nor to be split from credentials it has none of."""
    calls: list[str] = []
    split = urllib.parse.urlsplit

    def counted(url: str, *args: object, **kwargs: object) -> object:
        calls.append(url)
        return split(url, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(urllib.parse, "urlsplit", counted)
    url = "https://files.pythonhosted.org/packages/ab/cd/torch-2.13.0-cp312-none-any.whl"
    assert url_problem(url) is None
    assert keep(url) == url
    assert calls == []


def test_a_pages_names_are_read_once_per_tag_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each flavour of a page asks which of its wheels may fit: the names are grouped by
    the text of their tag fields once, each text read once (two here, for 80 names), and
    each flavour tests the groups, not every name."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    names = [f"pkg-1.{i}-cp312-cp312-manylinux_2_28_x86_64.whl" for i in range(40)]
    names += [f"pkg-1.{i}-cp311-cp311-win_amd64.whl" for i in range(40)]
    page = Page(
        url="https://x.org/pkg/",
        links=tuple(Link(url=f"https://x.org/{n}", filename=n) for n in names),
    )
    read: list[tuple[str, ...]] = []
    tag_set = module._tag_set

    def counted(*fields: str) -> object:
        read.append(fields)
        return tag_set(*fields)

    monkeypatch.setattr(module, "_tag_set", counted)
    found = []
    for python in ("3.12", "3.11", "3.13"):
        flavour = IndexFlavour(
            url=page.url,
            name="pkg",  # type: ignore[arg-type]
            version=Version("1.0"),
            platforms=("manylinux_2_28_x86_64",),
            python=(python,),
        )
        found.append(len(candidates(flavour, page)))
    assert found == [40, 0, 0]
    assert sorted(read) == [
        ("cp311", "cp311", "win_amd64"),
        ("cp312", "cp312", "manylinux_2_28_x86_64"),
    ]


def test_a_plan_imports_no_resource_reader() -> None:
    """The package's data is read from its folder: importlib.resources (tempfile,
    zipfile, its readers: ~10 ms of a plan) is not imported to find it. (The second run:
    the first finds the installed plugins with importlib.metadata, which imports it,
    and keeps the list in the cache.)"""
    child = (
        "import contextlib, io, sys\n"
        # A site hook may load it before any code of ours runs (a .pth importing
        # certifi does): forget it, so that what is seen after is what the plan loaded.
        "for m in [m for m in sys.modules if m.startswith('importlib.resources')]:\n"
        "    del sys.modules[m]\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['plan', '--offline', '--example', '--target', '{TARGET}'])\n"
        "print(code, 'importlib.resources' in sys.modules)\n"
    )
    for _ in range(2):
        done = python_child(child, cwd=REPO)
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_the_install_commands_modules_import_no_socket() -> None:
    """``socket`` (its enums built at import: some 5 ms) is imported with urllib's
    opener, when a page is fetched; a plan or install whose pages the cache answers
    loads the index client, the installer check and the command without it."""
    child = (
        "import sys\n"
        "import resolver_hook.cli.install, resolver_hook.index.client\n"
        "import resolver_hook.install.checked\n"
        "print('socket' in sys.modules)\n"
    )
    done = python_child(child, cwd=REPO)
    assert done.stdout.split() == ["False"], done.stderr


def test_the_modules_of_a_plan_and_an_install_compile_no_pattern_of_a_rarer_path() -> None:
    """Patterns a plan or an install seldom uses (a netrc's token, a glibc override, PEP
    817 properties and targets, a manifest's dates, CUDA runtimes and arch_max, an AMD GPU
    name, a row of NVIDIA's libraries, a lock file's URLs, a requirements file's coding
    line, pip's version line, an installer's Python, uv's dry-run lines, a URL's userinfo
    in a text that may hold one) are compiled when first used, not as their modules load
    (~2 ms of start-up in all); each still matches as before."""
    child = (
        "import re, sys\n"
        "seen = []\n"
        "compile = re.compile\n"
        "def ours(p, flags=0):\n"
        "    if sys._getframe(1).f_globals['__name__'].startswith('resolver_hook'):\n"
        "        seen.append(p)\n"
        "    return compile(p, flags)\n"
        "re.compile = ours\n"
        "import resolver_hook.cli.plan, resolver_hook.cli.install, resolver_hook.install.checked\n"
        "import resolver_hook.manifest.nvidialibs, resolver_hook.manifest.urls\n"
        "marks = ('[!$-&', '2\\\\.', '::', '{4}-', '(\\\\d{1,3})', 'nvidia-[', '://[^\\\\s',\n"
        "         '#.*', 'compute_', '_(real', b'coding', '__version__',\n"
        "         '(\\\\d+)\\\\.(\\\\d+)\\\\s*', 'gfx', '^\\\\d+\\\\.\\\\d+$',\n"
        "         '(?P<source>', '(?P<version>[^-/]+)', '([^/?#\\\\s]*)@')\n"
        "print([p for p in seen if any(type(m) is type(p) and m in p for m in marks)])\n"
    )
    done = python_child(child, cwd=REPO)
    assert done.stdout.split() == ["[]"], done.stdout + done.stderr
    from resolver_hook import reqfile
    from resolver_hook.ground import credentials, patterns, userinfo
    from resolver_hook.install import backends
    from resolver_hook.manifest import nvidialibs, urls
    from resolver_hook.portable import cuda
    from resolver_hook.process import installers

    detect = importlib.import_module("resolver_hook.host.detect")  # not host.detect()
    assert re.fullmatch(credentials._NETRC_TOKEN, "user")
    assert re.findall(userinfo._USERINFO, "see https://u:p@h/x") == [("https://", "u:p")]
    assert not re.fullmatch(credentials._NETRC_TOKEN, "a b")
    assert re.fullmatch(detect._GLIBC, "2.39")
    assert not re.fullmatch(detect._GLIBC, "3.1")
    assert re.match(needs._PROPERTY, "nvidia :: sm :: 90")
    assert re.match(needs._DATE, "2025-01-31")
    assert re.match(needs._ARCH, "9.0")
    assert re.match(needs._RUNTIME, "13.2")
    assert not re.match(needs._RUNTIME, "13")
    assert re.fullmatch(patterns.GFX_NAME, "gfx90a")
    assert not re.fullmatch(patterns.GFX_NAME, "gfx9")
    assert re.fullmatch(nvidialibs._MAJOR, "nvidia-cublas-cu12")
    assert re.findall(urls._URL_IN_TEXT, re.sub(urls._COMMENT, "", "x @ https://h/x.whl # y"))
    assert [str(cuda.parse_target(t)) for t in ("compute_90", "100_real")] == [
        "compute_90",
        "sm_100",
    ]
    assert re.search(installers._PIP_VERSION_LINE, 'x = 1\n__version__ = "24.0"\n')
    assert re.fullmatch(backends._VERSION, "3.12\n")
    assert re.search(reqfile._PEP263, b"# -*- coding: latin-1 -*-")


def test_a_plan_for_a_target_loads_no_module_only_another_path_uses(tmp_path: Path) -> None:
    """A plan for a ``--target`` reads no host cache (its module), writes no JSON of its
    values (ground.plain, for ``--json``) and quotes no shell word (shlex: a file's option
    lines, a command shown): none of them is imported (~0.3 ms of start-up)."""
    unused = ("shlex", "resolver_hook.host.cache", "resolver_hook.ground.plain")
    argv = ["plan", "--offline", "torch", "-r", "reqs.txt", "--target", TARGET]
    child = (
        "import contextlib, io, sys\n"
        f"for m in {unused!r}:\n"
        "    sys.modules.pop(m, None)  # a site hook's import: see the tests above\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({argv!r})\n"
        f"print(code, [m for m in {unused!r} if m in sys.modules])\n"
    )
    (tmp_path / "reqs.txt").write_text("# a comment\nnumpy\n", encoding="utf-8")
    done = python_child(child, cwd=tmp_path)
    assert done.stdout.split() == ["0", "[]"], done.stderr


def test_an_offline_plan_imports_no_network_module(tmp_path: Path) -> None:
    """An offline plan checks its pages' URLs against the policy and serves them from the
    page cache and the shipped snapshot: the module that reads the network (~0.4 ms to
    import, with the user's network settings) is not loaded."""
    argv = ["plan", "--offline", "torch", "numpy", "--target", TARGET]
    child = (
        "import contextlib, io, sys\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({argv!r})\n"
        "print(code, 'resolver_hook.index.client' in sys.modules,"
        " 'resolver_hook.index.fetch' in sys.modules)\n"
    )
    done = python_child(child, cwd=tmp_path)
    assert done.stdout.split() == ["0", "True", "False"], done.stderr


def test_a_plan_imports_no_pathlib(tmp_path: Path) -> None:
    """A plan joins the paths it reads as text (the page cache's, pip's and uv's
    configuration files, ./pyproject.toml): pathlib (with fnmatch and ntpath, ~1 ms to
    import) is not loaded. (The second run: the first finds the installed plugins with
    importlib.metadata, which imports it, and keeps the list in the cache.)"""
    argv = ["plan", "--offline", "torch", "numpy", "--target", TARGET]
    child = (
        "import contextlib, io, sys\n"
        "sys.modules.pop('pathlib', None)  # a site hook's import: see the tests above\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({argv!r})\n"
        "print(code, 'pathlib' in sys.modules)\n"
    )
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\n', encoding="utf-8")
    for _ in range(2):
        done = python_child(child, cwd=tmp_path)
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_a_plan_imports_no_url_parser(tmp_path: Path) -> None:
    """A plan's URLs are the usual ``https://host/path`` (the policy's quick path reads
    them as text): urllib.parse, with the ipaddress module it imports (~2 ms), is loaded
    only for another (userinfo, a port, a mirror, a file: URL). (The second run, as
    above.)"""
    argv = ["plan", "--offline", "torch", "numpy", "--target", TARGET]
    child = (
        "import contextlib, io, sys\n"
        "for name in ('urllib.parse', 'ipaddress'):  # a site hook's import\n"
        "    sys.modules.pop(name, None)\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({argv!r})\n"
        "print(code, 'urllib.parse' in sys.modules, 'ipaddress' in sys.modules)\n"
    )
    for _ in range(2):
        done = python_child(child, cwd=tmp_path)
    assert done.stdout.split() == ["0", "False", "False"], done.stderr


def test_a_second_plan_parses_no_toml(tmp_path: Path) -> None:
    """The built-in data files a plan reads (the table of NVIDIA's library wheels, the
    twins table, the CUDA distributions without a manifest, the manifests named) and the
    folder's pyproject.toml are read back from the cache after the first run: the TOML
    parser (tomllib; tomli on Python 3.10) is not even imported."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\n', encoding="utf-8")
    names = ["torch", "nvidia-cublas-cu12", "nvidia-nccl-cu13"]
    child = (
        "import contextlib, io, sys\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['plan', '--offline', *{names!r}, '--target', '{TARGET}'])\n"
        "print(code, 'tomllib' in sys.modules or 'tomli' in sys.modules)\n"
    )
    seen = []
    for _ in range(2):
        done = python_child(child, cwd=tmp_path)
        seen.append(done.stdout.split())
    assert seen == [["0", "True"], ["0", "False"]], done.stderr


def test_a_cache_file_is_written_privately_without_tempfile(tmp_path: Path) -> None:
    """A cache file (a stored plan, a page, a kept document) is written as
    tempfile.mkstemp would make its temporary file (0600, created or failing, never
    through a link), then renamed over the old one, without importing tempfile (its
    shutil and random: ~3 ms of every run that stores what it read)."""
    victim = tmp_path / "victim"
    victim.write_text("kept", encoding="utf-8")
    target = tmp_path / "cache" / "plans" / "key.json"
    target.parent.mkdir(parents=True)
    target.symlink_to(victim)
    child = (
        "import os, sys\n"
        "sys.modules.pop('tempfile', None)\n"
        "from resolver_hook.ground.cache import write_private\n"
        f"ok = write_private({str(target)!r}, b'{{}}')\n"
        "print(ok, 'tempfile' in sys.modules)\n"
    )
    done = python_child(child, cwd=tmp_path)
    assert done.stdout.split() == ["True", "False"], done.stderr
    assert not target.is_symlink()
    assert target.read_bytes() == b"{}"
    assert target.stat().st_mode & 0o777 == 0o600
    assert victim.read_text(encoding="utf-8") == "kept"
    assert sorted(p.name for p in target.parent.iterdir()) == ["key.json"]


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_536, 65_537, 400_000])
def test_a_private_file_is_read_whole_in_a_buffer_of_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """A cache file is read in one buffer of its own size (and a small one that meets
    its end), not a 1 MiB buffer for each read: a page file of ~400 kB read into one
    costs ~0.05 ms more, cold (69 reads a plan of five: 1.7 -> 1.0 ms). The same
    bytes, and past ``limit`` the same refusal."""
    path = tmp_path / "entry.page"
    data = os.urandom(size)
    assert _cache.write_private(path, data)
    asked: list[int] = []
    read = os.read

    def reading(fd: int, n: int) -> bytes:
        asked.append(n)
        return read(fd, n)

    monkeypatch.setattr(os, "read", reading)
    assert _cache.read_private(path, 16 << 20) == (data, None)
    assert max(asked) <= max(size + 1, 1 << 16)
    if size:
        why = f"cache {path} ignored: unreadable (too large)"
        assert _cache.read_private(path, size - 1) == (None, why)


def test_a_private_file_that_grew_since_its_size_was_read_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "entry.page"
    data = os.urandom(200_000)
    assert _cache.write_private(path, data)
    fstat = os.fstat

    def stale(fd: int) -> os.stat_result:  # the size it had before 150,000 bytes more
        st = fstat(fd)
        return os.stat_result((*st[:6], 50_000, *st[7:10]))

    monkeypatch.setattr(os, "fstat", stale)
    assert _cache.read_private(path, 16 << 20) == (data, None)
    assert _cache.read_private(path, 100_000)[1] == f"cache {path} ignored: unreadable (too large)"


def test_a_plan_imports_no_shutil_and_help_is_as_wide_as_argparse_makes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """argparse would import shutil (bz2, lzma: ~3 ms) for each formatter's width; the
    command line reads that width itself, as shutil.get_terminal_size does."""
    import shutil

    from resolver_hook import cli

    for columns in (None, "", "0", "-5", "abc", "50", "200"):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        assert cli._help_width() == shutil.get_terminal_size().columns - 2, columns
    child = (
        "import contextlib, io, sys\n"
        "sys.modules.pop('shutil', None)  # a site hook's import: see the test above\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['plan', '--offline', '--example', '--target', '{TARGET}'])\n"
        "print(code, 'shutil' in sys.modules)\n"
    )
    for _ in range(2):  # the first finds the plugins with importlib.metadata: see above
        done = python_child(child, cwd=REPO)
    assert done.stdout.split() == ["0", "False"], done.stderr


@pytest.mark.parametrize(
    "argv",
    [["plan", "--offline", "torch", "--target", TARGET], ["pip", "--help"], ["uv", "--help"]],
)
def test_a_plan_runs_without_the_cyclic_garbage_collector(tmp_path: Path, argv: list[str]) -> None:
    """A plan makes next to no cyclic garbage and ends with the process, or with the
    installer it starts: the collector is off for it (its passes over the plan's objects
    cost 5% of the plan)."""
    child = (
        "import contextlib, gc, io, sys\n"
        f"sys.argv = ['resolver-hook', *{argv!r}]\n"
        "from resolver_hook._entry import main\n"
        "try:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        code = main()\n"
        "except SystemExit as exc:  # --help\n"
        "    code = exc.code\n"
        "print(code, gc.isenabled())\n"
    )
    done = python_child(child, cwd=tmp_path)
    assert done.stdout.split() == ["0", "False"], done.stderr


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the manifest readers parse as TOML from now on, in order."""
    parsed: list[str] = []
    loads = document.toml_loads

    def counted(text: str) -> dict[str, Any]:
        parsed.append(text)
        return loads(text)

    monkeypatch.setattr(document, "toml_loads", counted)
    monkeypatch.setattr(load, "toml_loads", counted)
    return parsed


def test_a_builtin_manifests_toml_is_parsed_once_per_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The TOML of a built-in manifest is kept in the user cache by its text's sha256:
    a later process reads the document back instead of parsing it; a new text (an
    upgrade, an edit) is parsed again and replaces it."""
    parsed = _count_parses(monkeypatch)
    with open(data_path("manifests", "torch.toml"), encoding="utf-8") as f:
        text = f.read()
    load._parse_builtin.cache_clear()
    first = load._parse_builtin("torch.toml")
    load._parse_builtin.cache_clear()  # as a new process finds it
    assert load._parse_builtin("torch.toml") == first
    assert len(parsed) == 1
    edited = text.replace('name = "torch"', 'name = "torch"\n# edited', 1)
    assert edited != text
    assert document.builtin_document("torch.toml", edited, "x") == toml_loads(edited)
    assert document.builtin_document("torch.toml", edited, "x") == toml_loads(edited)
    assert parsed == [text, edited]
    load._parse_builtin.cache_clear()


def test_a_users_manifest_and_pyproject_are_parsed_once_per_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A manifest file the user names and the folder's ``pyproject.toml`` are read every
    time, their TOML parsed once per text (kept by their path and their text's sha256): a
    later process with the same texts parses neither; an edit is parsed again, and the
    edited content is what the plan gets."""
    parsed = _count_parses(monkeypatch)
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path / "cache"))
    with open(data_path("manifests", "triton.toml"), encoding="utf-8") as f:
        text = f.read()
    manifest = tmp_path / "my manifests" / "triton.toml"
    manifest.parent.mkdir()
    manifest.write_text(text, encoding="utf-8")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.resolver-hook]\nmanifests = ["my manifests"]\n', encoding="utf-8")
    first = collect(tmp_path)
    assert len(parsed) == 2  # the pyproject, the manifest
    again = collect(tmp_path)
    assert again["triton"] == first["triton"]
    assert len(parsed) == 2
    manifest.write_text(text.replace('name = "triton"', 'name = "triton-edited"', 1))
    edited = collect(tmp_path)
    assert list(edited) == ["triton-edited"]
    assert len(parsed) == 3
    pyproject.write_text("[tool.resolver-hook]\nmanifests = []\n", encoding="utf-8")
    assert list(collect(tmp_path)) == []
    assert len(parsed) == 4
    # A text with credentials in a URL is not kept (nothing cached holds them).
    secret = "manifests = []\n# https://user:s3cret@example.org/simple/\n"
    pyproject.write_text(f"[tool.resolver-hook]\n{secret}", encoding="utf-8")
    collect(tmp_path)
    collect(tmp_path)
    assert len(parsed) == 6
    kept = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*.json"))
    assert b"s3cret" not in kept


def collect(cwd: Path) -> load.ManifestSet:
    """The manifests a plan in ``cwd`` would read, but for the built-in ones."""
    return load.collect_manifests(cwd=cwd, env={}, entry_points=list, builtin=False)


def test_a_wheels_platform_is_judged_once_per_tag_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 1 of a wheel depends on its tags and requires-python only: a page's files
    share a few dozen tag sets, and each is judged once a plan; the words for the
    platforms it is built for are made once per list of them (tag sets of two Pythons
    for one platform share them)."""
    said: list[object] = []
    platform_reason = rules.platform_reason

    def counted(plats: object, p: object) -> str:
        said.append(plats)
        return platform_reason(plats, p)  # type: ignore[arg-type]

    monkeypatch.setattr(rules, "platform_reason", counted)
    base = "https://x.org/pkg-1.{0}-{1}-{1}-{2}.whl"
    wheels = [
        {"url": base.format(i, py, plat), "cuda": ">=12.0", "gpu": ["sm_100"]}
        for i in range(20)
        for py in ("cp312", "cp311")
        for plat in ("win_amd64", "manylinux_2_28_x86_64")
    ]
    pkg = parse_manifest({"package": {"name": "pkg"}, "wheel": wheels}, source="pkg.toml")
    plan = resolve(["pkg"], {"pkg": pkg}, parse_target(TARGET))
    chosen = plan.package("pkg")
    assert chosen is not None
    assert chosen.version == "1.19"
    assert len(chosen.rejected) == 79  # the refused builds' words made as read
    assert said == [("win_amd64",)]


def test_a_wheels_python_is_worded_once_per_interpreter_and_abi(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 1's Python words read a wheel's interpreter and ABI tags alone: the tag sets
    of one Python for several platforms share them, and every such file says them."""
    said: list[object] = []
    python_reason = rules.python_reason

    def counted(pythons: Any, p: Any) -> str:
        said.append(tuple(pythons))
        return python_reason(pythons, p)

    monkeypatch.setattr(rules, "python_reason", counted)
    base = "https://x.org/pkg-1.{0}-{1}-{1}-{2}.whl"
    wheels = [
        {"url": base.format(i, py, plat), "cuda": ">=12.0", "gpu": ["sm_100"]}
        for i in range(5)
        for py in ("cp312", "cp311")
        for plat in ("win_amd64", "manylinux_2_28_x86_64", "manylinux_2_28_aarch64")
    ]
    pkg = parse_manifest({"package": {"name": "pkg"}, "wheel": wheels}, source="pkg.toml")
    plan = resolve(["pkg"], {"pkg": pkg}, parse_target(TARGET))
    chosen = plan.package("pkg")
    assert chosen is not None
    assert chosen.version == "1.4"
    words = [x.reason for r in chosen.rejected if " cp311 " in r.candidate for x in r.failures]
    assert said == [("3.11",)]  # the refused builds' read above
    assert len(words) == 15 + 10  # every cp311 file; those for another platform say both
    assert len([w for w in words if w.startswith("built for Python 3.11;")]) == 15


def test_a_couplings_pin_is_read_from_its_parsed_specifier(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The solver asks which release a coupling pins of every pair of coupled builds:
    it reads the requirement's own specifier, never a rendered and reparsed copy, and
    still pairs each build with the release it pins."""
    module = sys.modules["resolver_hook.resolve.solve"]
    parsed: list[str] = []
    specifier_set = module.SpecifierSet

    def counted(text: str = "", *args: Any) -> object:
        parsed.append(text)
        return specifier_set(text, *args)

    monkeypatch.setattr(module, "SpecifierSet", counted)
    page = "https://x.org/whl/"
    top = [{"url": page, "version": f"7.{i}", "requires": [f"base==9.7.{i}"]} for i in range(6)]
    base = [{"url": page, "version": f"9.7.{i}"} for i in range(5)]
    manifests = {
        "top": parse_manifest({"package": {"name": "top"}, "index": top}, source="top.toml"),
        "base": parse_manifest({"package": {"name": "base"}, "index": base}, source="b.toml"),
    }
    plan = resolve(["top"], manifests, parse_target(TARGET))
    assert [(p.name, p.version) for p in plan.packages] == [("top", "7.4"), ("base", "9.7.4")]
    assert [t for t in parsed if t] == []


def test_a_builds_public_release_is_never_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ranking and the plan's words both read a labelled build's public release
    (``1.3`` of ``1.3+cu130``): it is made from the parsed version, never parsed from
    text, and both still say it."""
    parsed: list[str] = []

    class Counted(Version):
        def __init__(self, text: str) -> None:
            parsed.append(text)
            super().__init__(text)

    for name in ("model", "rules", "assemble"):
        monkeypatch.setattr(sys.modules[f"resolver_hook.resolve.{name}"], "Version", Counted)
    page = "https://x.org/whl/"
    entries = [{"url": page, "version": f"1.{i}+cu130", "cuda": ">=13.0"} for i in range(4)]
    pkg = parse_manifest({"package": {"name": "pkg"}, "index": entries}, source="pkg.toml")
    plan = resolve(["pkg"], {"pkg": pkg}, parse_target(TARGET))
    chosen = plan.package("pkg")
    assert chosen is not None
    assert chosen.version == "1.3+cu130"
    ranked = [r.failures[0].reason for r in chosen.rejected]
    assert (
        ranked == ["fits, ranked below the chosen build: the chosen build is a newer version"] * 3
    )
    assert [t for t in parsed if t.startswith("1.")] == []


@pytest.mark.parametrize(
    "text", ["2.13.0+cu130", "1!2.0rc1.post2.dev3+abc.5", "2.7+cpu", "0.0.33.post2+cu128", "3.9"]
)
def test_a_public_release_is_the_version_of_its_public_text(text: str) -> None:
    public = public_release(Version(text))
    assert public == Version(Version(text).public)
    assert str(public) == Version(text).public
    assert public.local is None


def test_a_couplings_marker_is_evaluated_once_a_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The builds of a manifest share a coupling written once (one marker object): the
    solver asks whether it holds in every pass and for every pair, and evaluates it
    once per machine."""
    evaluated: list[str] = []
    evaluate = Marker.evaluate

    def counted(self: Marker, *args: Any, **kwargs: Any) -> bool:
        evaluated.append(str(self))
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(Marker, "evaluate", counted)
    page = "https://x.org/whl/"
    coupling = 'base>=9.7.2; python_version >= "3"'
    top = [{"url": page, "version": f"7.{i}", "requires": [coupling]} for i in range(6)]
    base = [{"url": page, "version": f"9.7.{i}"} for i in range(5)]
    manifests = {
        "top": parse_manifest({"package": {"name": "top"}, "index": top}, source="top.toml"),
        "base": parse_manifest({"package": {"name": "base"}, "index": base}, source="b.toml"),
    }
    plan = resolve(["top", "base<9.7.4"], manifests, parse_target(TARGET))
    assert [(p.name, p.version) for p in plan.packages] == [("top", "7.5"), ("base", "9.7.3")]
    assert evaluated == ['python_version >= "3"']


def _worded(monkeypatch: pytest.MonkeyPatch, *names: str) -> list[str]:
    """Each call of the rules' word makers ``names`` from now on, in order, by the
    rule's word (``python`` for ``python_reason``)."""
    said: list[str] = []
    for name in names:
        real = getattr(rules, name)

        def counted(*args: Any, _real: Any = real, _word: str = name) -> str:
            said.append(_word.removesuffix("_reason"))
            return _real(*args)  # type: ignore[no-any-return]

        monkeypatch.setattr(rules, name, counted)
    return said


def test_an_index_entrys_python_and_compiler_are_worded_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The entries of a manifest name a few lists of Pythons and a few newest GPUs
    their compilers know: rule 1 and the compiler's rule 3 are judged and worded once
    for each, and every entry still says them."""
    said = _worded(monkeypatch, "python_reason", "arch_max_reason")
    page = "https://x.org/whl/"
    old = [{"url": page, "version": f"1.{i}", "python": ["3.11"]} for i in range(5)]
    old += [{"url": page, "version": f"2.{i}", "arch_max": "9.0"} for i in range(5)]
    entries = [*old, {"url": page, "version": "0.1"}]
    pkg = parse_manifest({"package": {"name": "pkg"}, "index": entries}, source="pkg.toml")
    plan = resolve(["pkg"], {"pkg": pkg}, parse_target(TARGET))
    chosen = plan.package("pkg")
    assert chosen is not None
    assert chosen.version == "0.1"
    reasons = [x.reason for r in chosen.rejected for x in r.failures]
    assert sorted(said) == ["arch_max", "python"]  # the refused builds' read above
    assert len([r for r in reasons if r.startswith("built for Python 3.11;")]) == 5
    assert len([r for r in reasons if r.startswith("its compiler knows GPUs up to")]) == 5


def test_a_builds_description_ranks_only_builds_equal_up_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ranking's last word is the build's description, read only where two builds
    are equal up to it: a plan whose builds differ in version describes none before
    its rejections are read, and the same build is chosen from either order."""
    described: list[str] = []
    describe = IndexFlavour.describe

    def counted(self: IndexFlavour) -> str:
        described.append(str(self.version))
        return describe(self)

    monkeypatch.setattr(IndexFlavour, "describe", counted)
    page = "https://x.org/whl/"
    entries = [{"url": page, "version": f"1.{i}", "cuda": ">=13.0"} for i in range(5)]
    for order in (entries, entries[::-1]):
        pkg = parse_manifest({"package": {"name": "pkg"}, "index": order}, source="pkg.toml")
        chosen = resolve(["pkg"], {"pkg": pkg}, parse_target(TARGET)).package("pkg")
        assert chosen is not None
        assert chosen.version == "1.4"
    assert described == []
    tie = [{"url": f"https://x.org/{x}/", "version": "1.0", "cuda": ">=13.0"} for x in "ba"]
    pkg = parse_manifest({"package": {"name": "pkg"}, "index": tie}, source="pkg.toml")
    chosen = resolve(["pkg"], {"pkg": pkg}, parse_target(TARGET)).package("pkg")
    assert chosen is not None
    assert chosen.find_links == "https://x.org/a/"
    assert described


def test_a_couplings_exact_pin_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A coupling pinned to a release without a label (``base==31.4.3``) names its own
    public release: the pin's version is parsed once, not again for that (releases no
    other test pins: a coupling's text is parsed once per process, and its pin kept)."""
    parsed: list[str] = []

    class Counted(Version):
        def __init__(self, text: str) -> None:
            parsed.append(text)
            super().__init__(text)

    monkeypatch.setattr(sys.modules["resolver_hook.resolve.model"], "Version", Counted)
    page = "https://x.org/whl/"
    top = [{"url": page, "version": f"7.{i}", "requires": [f"base==31.4.{i}"]} for i in range(6)]
    base = [{"url": page, "version": f"31.4.{i}"} for i in range(5)]
    manifests = {
        "top": parse_manifest({"package": {"name": "top"}, "index": top}, source="top.toml"),
        "base": parse_manifest({"package": {"name": "base"}, "index": base}, source="b.toml"),
    }
    plan = resolve(["top"], manifests, parse_target(TARGET))
    assert [(p.name, p.version) for p in plan.packages] == [("top", "7.4"), ("base", "31.4.4")]
    pins = sorted(t for t in parsed if t.startswith("31.4."))
    assert pins == [f"31.4.{i}" for i in range(6)]


def _tag_facts_by_splitting(tags: tuple[str, ...]) -> tuple[object, ...]:
    """What the rules read from a machine's tags, the plain way: every tag split."""
    parsed = [t.split("-") for t in tags]
    first: dict[str, int] = {}
    for i, p in enumerate(parsed):
        if len(p) == 3:
            first.setdefault(p[2], i)
    return (
        {t: i for i, t in enumerate(tags)},
        {p[2] for p in parsed if len(p) == 3},
        {(p[0], p[1]) for p in parsed if len(p) == 3},
        first,
    )


@pytest.mark.parametrize(
    "tags",
    [
        parse_target(TARGET).tags,
        parse_target("linux-aarch64-py313t").tags,
        parse_target("windows-x86_64-py310").tags,
        ("cp312-cp312-a", "bad", "cp312-none-b", "x-y-z-w", "cp312-cp312-a", "py3-none-a"),
    ],
    ids=["linux", "free-threaded", "windows", "odd"],
)
def test_a_machines_tag_facts_are_those_of_splitting_every_tag(tags: tuple[str, ...]) -> None:
    """The rules read each tag's rank, the platforms, the interpreter/ABI pairs and each
    platform's best rank from one pass over the ~1,000 tags: the same facts."""
    assert rules._tag_facts.__wrapped__(tags) == _tag_facts_by_splitting(tags)


def test_rule_5_is_worded_once_per_version_across_the_hints_plans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refused line is planned again by the hints with one fact of the machine
    changed at a time: the user's specifier is the same object in each, so each
    build's rule 5 is worded once, and every plan still says it."""
    said: list[str] = []
    specifier_reason = rules.specifier_reason

    def counted(f: Any, spec: Any) -> str:
        said.append(str(f.version))
        return specifier_reason(f, spec)

    monkeypatch.setattr(rules, "specifier_reason", counted)
    page = "https://x.org/whl/"
    entries = [
        {"url": page, "version": f"5.{i}", "cuda": ">=12.0", "gpu": ["sm_90"]} for i in range(3)
    ]
    entries.append({"url": page, "version": "5.3", "cuda": ">=12.0", "gpu": ["sm_120"]})
    pkg = parse_manifest({"package": {"name": "pkg"}, "index": entries}, source="pkg.toml")
    plan = resolve(["pkg==5.3"], {"pkg": pkg}, parse_target("linux-x86_64-py312-cuda12.8-sm90"))
    refused = plan.package("pkg")
    assert refused is not None
    assert refused.action == "error"
    assert sorted(said) == ["5.0", "5.1", "5.2"]
    words = [x.reason for r in refused.rejected for x in r.failures if x.rule == "specifier"]
    assert words == [f"5.{i} does not match your requirement ==5.3" for i in range(3)]
    assert refused.fix is not None  # found by planning again on another GPU


def test_a_manifests_repeated_rule_text_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cuda = ">=13.0"`` and ``gpu = ["sm_100"]`` on most entries of a manifest: each
    text is parsed and checked once (in a process: here one whose readers have read
    nothing yet), and a bad one is still said at every key path it is written at."""
    monkeypatch.setattr(tables, "_VALID", {False: {}, True: {}})
    read: list[str] = []
    specifier_set, parse_target_ = needs.SpecifierSet, needs.parse_target

    def spec(text: str) -> object:
        read.append(text)
        return specifier_set(text)

    def target(text: str) -> object:
        read.append(text)
        return parse_target_(text)

    monkeypatch.setattr(needs, "SpecifierSet", spec)
    monkeypatch.setattr(needs, "parse_target", target)
    entries = [
        {
            "url": "https://x.org/whl/",
            "version": f"1.{i}+cu130",
            "cuda": ">=13.0",
            "gpu": ["sm_100"],
        }
        for i in range(10)
    ]
    pkg = parse_manifest({"package": {"name": "pkg"}, "index": entries}, source="pkg.toml")
    assert len(pkg.indexes) == 10
    assert all(f.needs.cuda is pkg.indexes[0].needs.cuda for f in pkg.indexes)
    assert sorted(read) == [">=13.0", "sm_100"]
    bad = [{**e, "cuda": ">=13.0,<13.0"} for e in entries[:2]]
    with pytest.raises(ManifestError) as caught:
        parse_manifest({"package": {"name": "pkg"}, "index": bad}, source="pkg.toml")
    assert [p.split(": ")[1] for p in caught.value.problems] == ["index[0].cuda", "index[1].cuda"]


def test_a_pages_files_are_parsed_once_for_all_its_flavours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every flavour of a page reads the same files: each name is cut into its fields
    once (for its parse), parsed once, and the flavours that keep a file share its one
    candidate."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    names = [f"pkg-1.{i}-cp312-cp312-manylinux_2_28_x86_64.whl" for i in range(20)]
    names += [f"pkg-1.{i}-cp312-cp312-manylinux_2_28_aarch64.whl" for i in range(20)]
    page = Page(
        url="https://x.org/pkg/",
        links=tuple(Link(url=f"https://x.org/{n}", filename=n) for n in names),
    )
    cut: list[str] = []
    parsed: list[str] = []
    cut_name, fields = module._cut, module._cut_fields

    def cutting(filename: str, *, bounded: bool) -> object:
        cut.append(filename)
        return cut_name(filename, bounded=bounded)

    def counted(fields_of: list[str]) -> object:
        parsed.append("-".join(fields_of) + ".whl")
        return fields(fields_of)

    monkeypatch.setattr(module, "_cut", cutting)
    monkeypatch.setattr(module, "_cut_fields", counted)
    found = []
    for platforms in ((), ("manylinux_2_28_x86_64",), ("manylinux_2_28_aarch64",), ()):
        flavour = IndexFlavour(
            url=page.url,
            name="pkg",  # type: ignore[arg-type]
            version=Version("1.0"),
            platforms=platforms,
            python=("3.12",),
        )
        found.append(candidates(flavour, page))
    assert [len(x) for x in found] == [40, 20, 20, 40]
    assert sorted(cut) == sorted(parsed) == sorted(names)
    assert all(a is b for a, b in zip(found[0], found[3], strict=True))
    assert {id(c) for c in found[1] + found[2]} == {id(c) for c in found[0]}


def _two_platform_page() -> tuple[list[str], Page]:
    """A page of five releases' wheels for x86_64 and aarch64: the names and the page."""
    names = [f"pkg-1.{i}-cp312-cp312-manylinux_2_28_{arch}.whl" for i in range(5)
             for arch in ("x86_64", "aarch64")]  # fmt: skip
    page = Page(
        url="https://x.org/pkg/",
        links=tuple(Link(url=f"https://x.org/{n}", filename=n) for n in names),
    )
    return names, page


def test_a_pages_names_of_other_platforms_and_releases_are_never_cut() -> None:
    """A flavour of some platforms finds its files by the text after their names'
    versions (a page's names share a few dozen) and by their version fields: the names
    of its page's other platforms and older releases (most of a PyPI page's thousands)
    are never cut into their fields, only those of the files it reads."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    names, page = _two_platform_page()
    flavour = IndexFlavour(
        url=page.url,
        name="pkg",  # type: ignore[arg-type]
        version=Version("1.0"),
        platforms=("manylinux_2_28_x86_64",),
    )
    found = candidates(flavour, page, since=Version("1.3"))
    assert [c.filename for c in found] == [
        "pkg-1.4-cp312-cp312-manylinux_2_28_x86_64.whl",
        "pkg-1.3-cp312-cp312-manylinux_2_28_x86_64.whl",
    ]
    cut = module._page_files(page).cuts
    assert sorted(names[i] for i in cut) == sorted(c.filename for c in found)
    # All of its releases: the names of its platform, and no more.
    assert len(candidates(flavour, page)) == 5
    assert sorted(names[i] for i in cut) == [n for n in sorted(names) if "x86_64" in n]


def test_a_page_read_for_every_platform_and_python_judges_no_tag_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A flavour of every platform and Python takes every wheel of its page: the page's
    tag sets are not read (the names are cut, for the parse, and no more); a flavour of
    some platforms reads them then."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    _, page = _two_platform_page()
    read: list[str] = []
    tag_set = module._tag_set

    def spy(*fields: str) -> object:
        read.append("-".join(fields))
        return tag_set(*fields)

    monkeypatch.setattr(module, "_tag_set", spy)

    def flavour(*platforms: str) -> IndexFlavour:
        return IndexFlavour(
            url=page.url,
            name="pkg",  # type: ignore[arg-type]
            version=Version("1.0"),
            platforms=platforms,
        )

    assert len(candidates(flavour(), page)) == 10
    assert read == []
    assert len(candidates(flavour("manylinux_2_28_x86_64"), page)) == 5
    assert sorted(read) == [f"cp312-cp312-manylinux_2_28_{a}" for a in ("aarch64", "x86_64")]


def test_pages_at_hand_are_read_without_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages at hand (offline, every one: the page cache's; online, the page cache's
    fresh ones and a URL the policy refuses) are read one after another on the calling
    thread, no thread started; only the pages a server must be asked for (stale in the
    cache, or not in it) go to the pool, and every page is told read once, answered in
    the order asked."""
    client_module = importlib.import_module("resolver_hook.index.client")
    cache_module = importlib.import_module("resolver_hook.index.cache")
    pooled: list[list[str]] = []

    def pool(fn: Any, items: list[str], **kwargs: object) -> list[object]:
        pooled.append(list(items))
        return [f"asked {x}" for x in items]  # no server: the asks are not made

    monkeypatch.setattr(importlib.import_module("resolver_hook.ground.pool"), "map_threads", pool)
    urls = [f"https://x.org/simple/p{i}/" for i in range(3)]
    got = client_module.IndexClient(offline=True, cache_dir=tmp_path).pages(urls)
    assert list(got) == urls
    assert all("--offline" in str(x) for x in got.values())
    assert pooled == []

    body = b'<a href="https://x.org/p-1.0-py3-none-any.whl">p-1.0-py3-none-any.whl</a>'
    client = client_module.IndexClient(cache_dir=tmp_path)
    now = time.time()
    for url, fetched in ((urls[0], now), (urls[2], now - 3600)):
        entry = cache_module.CacheEntry(
            url=url, body=body, content_type="text/html", fetched=fetched
        )
        client.cache.put(f"page\n{url}", entry)
    refused = "http://x.org/simple/plain/"
    told: list[str] = []
    client.on_read = told.append
    asked = [*urls, refused, "https://x.org/simple/p4/"]
    got = client.pages(asked)
    assert list(got) == asked
    assert [link.filename for link in got[urls[0]].links] == ["p-1.0-py3-none-any.whl"]
    assert "plain http" in str(got[refused])
    assert pooled == [[urls[1], urls[2], "https://x.org/simple/p4/"]]
    assert sorted(told) == sorted([urls[0], refused])  # the pool tells of its own

    # One page to ask (a closed port of this machine's): asked on this thread, told once.
    closed = "http://127.0.0.1:9/simple/p/"
    client = client_module.IndexClient(cache_dir=tmp_path, allow_insecure=True)
    client.on_read = told.append
    got = client.pages([urls[0], closed])
    assert isinstance(got[urls[0]], Page)
    assert isinstance(got[closed], client_module.ResolverHookError), got[closed]
    assert len(pooled) == 1
    assert told.count(closed) == 1


def test_a_plan_of_the_snapshots_packages_imports_no_email_parser(tmp_path: Path) -> None:
    """The shipped snapshot's METADATA files are read without email.parser (~12 ms of
    imports: resolver_hook/index/metadata.py), and the plan does read some."""
    names = ["torch", "torchvision", "torchaudio", "xformers", "triton"]
    child = (
        "import contextlib, io, sys\n"
        "from resolver_hook.cli import main\n"
        "from resolver_hook.index import metadata\n"
        "read = []\n"
        "made = metadata.Metadata\n"
        "metadata.Metadata = lambda **fields: read.append(fields) or made(**fields)\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['plan', '--offline', *{names!r}, '--target', '{TARGET}'])\n"
        "print(code, len(read) > 0, 'email.parser' in sys.modules)\n"
    )
    cache = tmp_path / "cache"
    seen = []
    for _ in range(2):  # the first run lists the installed plugins (importlib.metadata)
        # (the expansion kept by the first run too: the second reads its metadata again)
        for kept in ("plans", "expansions"):
            shutil.rmtree(cache / kept, ignore_errors=True)
        done = python_child(child, cwd=tmp_path, env={"RESOLVER_HOOK_CACHE_DIR": str(cache)})
        seen.append(done.stdout.split())
    assert seen[-1] == ["0", "True", "False"], done.stderr


def test_a_plan_that_fits_imports_no_reader_it_does_not_use(
    tmp_path: Path,
) -> None:
    """The matrix expander is imported where a manifest has a matrix, the input reader
    where a file is read (``-r``, ``--profile``), the words of a package with no fit
    and the hints where a plan has an error, a computed page's filler where a build
    has one, the table of CUDA distributions where a package has no manifest,
    ``base64`` where a request carries credentials: a plan of requirement names over
    the built-in manifests for a target that fits, from the page cache, loads none of
    them (~2.9 ms of imports), and a manifest with a matrix still expands."""
    child = (
        "import contextlib, io, sys\n"
        "sys.modules.pop('base64', None)  # a site hook may have loaded it\n"
        "from resolver_hook.cli import main\n"
        "from resolver_hook.manifest import parse_manifest\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['plan', '--offline', 'torch', '--target', '{TARGET}'])\n"
        "print(code, 'resolver_hook.manifest.matrix' in sys.modules,\n"
        "      'resolver_hook.ground.input' in sys.modules,\n"
        "      [m for m in sys.modules if m.startswith('resolver_hook.') and m.endswith(\n"
        "       ('.hints', '.hintwords', '.nofit', '.computedpage', '.gpunames'))],\n"
        "      'base64' in sys.modules)\n"
        "m = parse_manifest({'package': {'name': 'pkg'}, 'matrix': [{\n"
        "    'url': 'https://x.org/pkg-1.0-{py}-{py}-linux_x86_64.whl',\n"
        "    'axes': {'py': ['cp311', 'cp312']}}]}, source='pkg.toml')\n"
        "print(len(m.wheels), 'resolver_hook.manifest.matrix' in sys.modules)\n"
    )
    # The second run: the first lists the installed plugins with importlib.metadata
    # (whose metadata reader may import base64) and keeps the list in the cache.
    for _ in range(2):
        done = python_child(
            child, cwd=tmp_path, env={"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")}
        )
    assert done.stdout.split() == ["0", "False", "False", "[]", "False", "2", "True"], done.stderr


def test_an_offline_plan_imports_no_thread_pool(tmp_path: Path) -> None:
    """Offline, every page and metadata file is a local file (the page cache), read one
    after another: the plan does not import the thread pool (ground.pool)."""
    child = (
        "import contextlib, io, sys\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['plan', '--offline', 'torch', 'triton', '--target', '{TARGET}'])\n"
        "print(code, 'resolver_hook.ground.pool' in sys.modules)\n"
    )
    done = python_child(
        child, cwd=tmp_path, env={"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_a_plan_over_kept_builtin_manifests_imports_no_validator(tmp_path: Path) -> None:
    """A plan whose built-in manifests are made again from the user cache validates
    none: the validator's modules (validate, templates, variantname, and the readers of
    a document's tables and of a flavour's needs, ~0.3 ms) are not imported, and
    ``parse_manifest`` is still there to import from the package when asked."""
    validator = [
        f"resolver_hook.manifest.{m}"
        for m in ("validate", "templates", "variantname", "tables", "needs")
    ]
    child = (
        "import contextlib, io, sys\n"
        "from resolver_hook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['plan', '--offline', 'torch', 'triton', '--target', '{TARGET}'])\n"
        f"print(code, [m for m in {validator!r} if m in sys.modules])\n"
        "from resolver_hook.manifest import parse_manifest\n"
        "print(parse_manifest.__module__)\n"
    )
    # The first run validates the manifests and keeps them in the cache.
    for _ in range(2):
        done = python_child(
            child, cwd=tmp_path, env={"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")}
        )
    assert done.stdout.split() == ["0", "[]", "resolver_hook.manifest.validate"], done.stderr


def test_rules_2_and_3_are_worded_once_per_need(monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest's entries share one parsed ``cuda`` and one kernel list per text: the
    driver and GPU rules judge each once a plan, and every build still says both."""
    said = _worded(monkeypatch, "cuda_reason", "gpu_reason")
    entries = [
        {"url": "https://x.org/whl/", "version": f"1.{i}+cu130", "cuda": ">=13.0", "gpu": ["sm_80"]}
        for i in range(10)
    ]
    fits = {"url": "https://x.org/whl/", "version": "1.0+cu128", "cuda": ">=12.8"}
    entries.append({**fits, "gpu": ["sm_100"]})
    pkg = parse_manifest({"package": {"name": "pkg"}, "index": entries}, source="pkg.toml")
    plan = resolve(["pkg"], {"pkg": pkg}, parse_target("linux-x86_64-py312-cuda12.8-sm100"))
    chosen = plan.package("pkg")
    assert chosen is not None
    assert chosen.version == "1.0+cu128"
    assert sorted(said) == ["cuda", "gpu"]
    rejected = list(chosen.rejected)
    assert len(rejected) == 10
    assert all([x.rule for x in r.failures] == ["cuda", "gpu"] for r in rejected)
    assert len({x.reason for r in rejected for x in r.failures}) == 2


# A child that runs the program as its console script does, with an atexit handler of
# its own, and ``os._exit`` saying when it ends the process; with ``thread``, a thread
# that runs until the main one has ended.
_PROGRAM = (
    "import atexit, os, sys, threading\n"
    "end = os._exit\n"
    "def said(code):\n"
    "    os.write(2, b'ended by os._exit %d\\n' % code)\n"
    "    end(code)\n"
    "os._exit = said\n"
    "atexit.register(lambda: sys.stdout.write('atexit\\n'))\n"
    "if {thread}:\n"
    "    threading.Thread(target=threading.main_thread().join).start()\n"
    "sys.argv = ['resolver-hook', *{argv!r}]\n"
    "from resolver_hook._entry import program\n"
    "raise SystemExit(program())\n"
)


def test_the_program_ends_without_the_interpreters_teardown(tmp_path: Path) -> None:
    """The process ends when the plan is printed, its objects not freed one by one
    (some 4 ms of a plan made anew); its atexit handlers run first, its output is
    whole, its exit code is the plan's."""
    argv = ["plan", "--offline", "torch", "--target", TARGET]
    done = python_child(_PROGRAM.format(thread=False, argv=argv), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "torch" in done.stdout
    assert done.stdout.endswith("atexit\n")
    assert done.stderr.endswith("ended by os._exit 0\n")
    # A usage error leaves argparse as SystemExit: the interpreter's exit, as before.
    refused = python_child(
        _PROGRAM.format(thread=False, argv=["plan", "--bad-option"]), cwd=tmp_path
    )
    assert refused.returncode == 2
    assert refused.stdout == "atexit\n"
    assert "os._exit" not in refused.stderr


def test_a_thread_still_running_gets_the_interpreters_exit(tmp_path: Path) -> None:
    """Where a thread other than the main one is alive, the interpreter's own exit
    waits for it, as it always did: the process is not ended under it."""
    argv = ["plan", "--offline", "torch", "--target", TARGET]
    done = python_child(_PROGRAM.format(thread=True, argv=argv), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("atexit\n")
    assert "os._exit" not in done.stderr
