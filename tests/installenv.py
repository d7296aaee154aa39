"""Throwaway environments and a loopback index of real wheels, for install tests.

Real pip (the venv's own, bundled with the interpreter) and real uv (from PyPI,
a test dependency) install into fresh venvs. Nothing here reaches beyond
127.0.0.1; the process environment is scrubbed of pip/uv settings so a
developer's configuration cannot change what a test sees.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv as venv_module
from dataclasses import dataclass
from pathlib import Path

from tests.wheelfactory import BuiltWheel, LoopbackIndex, build_wheel

PY = f"{sys.version_info[0]}{sys.version_info[1]}"
UV = [sys.executable, "-m", "uv"]


def clean_env(tmpdir: Path | None = None, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_", "RESOLVER_HOOK_", "VIRTUAL_ENV", "CUDA_VISIBLE"))
    }
    # The test's own cache folder, never the user's, and no index page read from the
    # internet (tests/conftest.py).
    for kept in ("RESOLVER_HOOK_CACHE_DIR", "RESOLVER_HOOK_OFFLINE"):  # tests/conftest.py
        if kept in os.environ:
            env[kept] = os.environ[kept]
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_CONFIG_FILE"] = os.devnull  # no user configuration (global/site still apply)
    env["PIP_NO_CACHE_DIR"] = "1"
    env["UV_NO_CACHE"] = "1"
    env["UV_NO_CONFIG"] = "1"
    env["UV_OFFLINE"] = "0"
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    env.update(extra)
    return env


def installed(python: Path) -> dict[str, str]:
    """Name -> version of every distribution in the environment of ``python``."""
    code = (
        "import importlib.metadata as m, json; "
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def download_pip(folder: Path, spec: str) -> Path | str:
    """A wheel of pip (``spec``, e.g. "pip==23.2.1") from the package registry, or why not.

    The integration tests run the pip bundled with the interpreter and others users run
    (docs/facts.md section 3); the registry is the one place this reaches beyond 127.0.0.1.
    """
    download = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
    proc = subprocess.run(
        [*download, "-d", str(folder), spec],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
        check=False,
    )
    wheels = sorted(folder.glob("pip-*.whl"))
    if proc.returncode != 0 or not wheels:
        return f"no {spec} from the package registry: {proc.stderr.strip()[-200:]}"
    return wheels[-1]


_TEMPLATE: list[Path] = []


def _template_site() -> Path:
    """site-packages of one venv seeded by ensurepip, made once per test session.

    ensurepip takes seconds per venv; copying what it installed (the interpreter's
    bundled pip and setuptools) takes a fraction of that and gives the same files.
    """
    if not _TEMPLATE:
        root = Path(tempfile.mkdtemp(prefix="resolver-hook-venv-template-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        venv_module.EnvBuilder(with_pip=True).create(root / "venv")
        _TEMPLATE.append(root / "venv")
    return _site_packages(_TEMPLATE[0])


def _site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def _shebang(python: Path) -> str:
    """A launcher's first line(s) as pip writes them: a /bin/sh trampoline where a
    plain ``#!`` line would be too long for the kernel or would hold a space."""
    if len(str(python)) < 120 and " " not in str(python):
        return f"#!{python}\n"
    return f"#!/bin/sh\n'''exec' \"{python}\" \"$0\" \"$@\"\n' '''\n"


def make_venv(path: Path, *, with_pip: bool = True) -> Path:
    """A fresh venv; returns its python. ``with_pip`` seeds the interpreter's bundled pip.

    The seeded files are copied from a session-wide template venv (see _template_site),
    and the pip launchers get this venv's interpreter in their first line, as ensurepip
    would write it.
    """
    venv_module.EnvBuilder(with_pip=False, clear=True).create(path)
    python = path / "bin" / "python"
    if with_pip:
        template = _template_site()
        site = _site_packages(path)
        for item in template.iterdir():
            if item.name == "__pycache__":
                continue
            copy = shutil.copytree if item.is_dir() else shutil.copy2
            copy(item, site / item.name)
        for launcher in (template.parent.parent.parent / "bin").glob("pip*"):
            first, _, rest = launcher.read_text().partition("\n")
            assert first.startswith("#!"), launcher
            target = path / "bin" / launcher.name
            target.write_text(_shebang(python) + rest)
            target.chmod(0o755)
    return python


def make_uv_venv(path: Path) -> Path:
    """A venv made by real uv (``uv venv``, no pip in it) for the running interpreter."""
    cmd = [*UV, "venv", "-q", "--python", sys.executable, str(path)]
    subprocess.run(cmd, check=True, env=clean_env())
    return path


def venv_for(tool: str, path: Path) -> Path:
    """A fresh venv at ``path`` for the installer ``tool``: pip's own, or one uv makes."""
    if tool == "pip":
        make_venv(path)
        return path
    return make_uv_venv(path)


@dataclass
class GpuIndex:
    """The loopback index every install test uses, with its manifests."""

    index: LoopbackIndex
    wheels: dict[str, BuiltWheel]
    manifests: Path

    @property
    def simple(self) -> str:
        return self.index.simple_url


def index_hook(
    gi: GpuIndex, *args: str, venv: Path | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``python -m resolver_hook ARGS...`` with ``gi``'s manifests, pip and uv reading its
    pages, in ``venv`` where given, ``extra`` variables set on top."""
    env = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gi.manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
        UV_DEFAULT_INDEX=gi.simple,
        PIP_INDEX_URL=gi.simple,
    )
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", *args],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def build_gpu_index(root: Path) -> GpuIndex:
    """Wheels with CUDA flavours and the manifests that describe them.

    - ``demo-gpu`` 1.0+cu126 / 1.0+cu130: pure wheels, direct-URL flavours;
    - ``demo-idx`` 2.0+cu126 / 2.0+cu130: index flavours on find-links pages;
    - ``plainpkg`` 1.0: no manifest, from the simple index;
    - ``app`` 1.0: depends on ``demo-gpu==1.0+cu126`` (a transitive exact pin);
    - ``demo-broken`` 1.0+cu130: installs, needs ``helperlib==2.0``, fails to import;
    - ``helperlib`` 1.0 and 2.0: no manifest.
    """
    out = root / "built"
    w = {
        "gpu126": build_wheel(out, "demo-gpu", "1.0+cu126"),
        "gpu130": build_wheel(out, "demo-gpu", "1.0+cu130"),
        "idx126": build_wheel(out, "demo-idx", "2.0+cu126"),
        "idx130": build_wheel(out, "demo-idx", "2.0+cu130"),
        "plain": build_wheel(out, "plainpkg", "1.0"),
        "app": build_wheel(out, "app", "1.0", requires=["demo-gpu==1.0+cu126"]),
        "broken": build_wheel(
            out,
            "demo-broken",
            "1.0+cu130",
            requires=["helperlib==2.0"],
            code="raise ImportError('kernels missing')\n",
        ),
        "helper1": build_wheel(out, "helperlib", "1.0"),
        "helper2": build_wheel(out, "helperlib", "2.0"),
    }
    index = LoopbackIndex(root / "index")
    index.add(w["plain"])
    index.add(w["app"])
    index.add(w["helper1"])
    index.add(w["helper2"])
    for key in ("gpu126", "gpu130", "broken"):
        index.add(w[key], simple=False)
    index.add(w["idx126"], simple=False, flavour="cu126")
    index.add(w["idx130"], simple=False, flavour="cu130")
    return GpuIndex(index=index, wheels=w, manifests=root / "manifests")


Entry = dict[str, str | list[str]]


def wheel_entry(index: LoopbackIndex, wheel: BuiltWheel, cuda: str, gpu: list[str]) -> Entry:
    """One ``[[wheel]]`` table: the wheel's URL on ``index`` and its own sha256."""
    return {"url": index.wheel_url(wheel), "sha256": wheel.sha256, "cuda": cuda, "gpu": gpu}


def write_manifest(folder: Path, name: str, table: str, *entries: Entry, **package: str) -> Path:
    """Write ``folder/name.toml``: a flavour manifest with one ``[[table]]`` per entry.

    Values are strings or lists of strings, written as JSON, which TOML reads alike.
    """
    pairs = {"name": name, **package}
    lines = ["schema = 1", "[package]", *(f"{k} = {json.dumps(v)}" for k, v in pairs.items())]
    for entry in entries:
        lines += ["", f"[[{table}]]", *(f"{k} = {json.dumps(v)}" for k, v in entry.items())]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_manifests(gi: GpuIndex, *, bad_sha: bool = False) -> Path:
    """Write the manifests for ``gi`` (its server must be running: URLs carry the port)."""
    gi.manifests.mkdir(exist_ok=True)
    w, idx, m = gi.wheels, gi.index, gi.manifests

    def wheel(key: str, cuda: str, gpu: list[str]) -> Entry:
        entry = wheel_entry(idx, w[key], cuda, gpu)
        return {**entry, "sha256": "0" * 64} if bad_sha else entry

    def flavour(label: str, cuda: str, gpu: list[str]) -> Entry:
        url = idx.links_url(label, "demo-idx")
        return {"url": url, "version": f"2.0+{label}", "cuda": cuda, "gpu": gpu}

    new_gpus = ["sm_90", "sm_100", "sm_120"]
    write_manifest(
        m,
        "demo-gpu",
        "wheel",
        wheel("gpu126", ">=12.6", ["sm_80", "sm_86", "sm_89", "sm_90"]),
        wheel("gpu130", ">=13.0", new_gpus),
        downloads=f"{idx.url}/files/",
    )
    write_manifest(
        m,
        "demo-idx",
        "index",
        flavour("cu126", ">=12.6", ["sm_80", "sm_90"]),
        flavour("cu130", ">=13.0", new_gpus),
    )
    write_manifest(m, "demo-broken", "wheel", wheel_entry(idx, w["broken"], ">=13.0", ["sm_100"]))
    return m
