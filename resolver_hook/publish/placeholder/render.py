"""Render the placeholder project from ``placeholder_template/`` and the data.

Manifest strings reach the generated files only as data: JSON in
``_placeholder_data.json`` (read at run time), TOML strings escaped by
:func:`toml_string`, and Markdown escaped by :func:`markdown_text`. The kernel-target
code is ``resolver_hook/portable/*.py`` copied verbatim (:data:`PORTABLE_MODULES`,
each as ``_placeholder_<module>.py``), so there is one copy of each fact.
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import json
import re
import string
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import tomli_w
from packaging.utils import canonicalize_name

from resolver_hook.errors import OperationalError
from resolver_hook.manifest.urls import markdown_url
from resolver_hook.publish.placeholder.data import import_name

_KNOWN_CLASSIFIERS: set[str] | None
try:
    from trove_classifiers import classifiers as _KNOWN_CLASSIFIERS
except ImportError:  # pragma: no cover - hatchling depends on trove-classifiers
    _KNOWN_CLASSIFIERS = None

__all__ = [
    "PORTABLE_MODULES",
    "markdown_text",
    "render_files",
    "render_project",
    "runtime",
    "template_dir",
    "toml_string",
]


# The modules of resolver_hook/portable/ the placeholder runtime imports, embedded
# verbatim next to it as _placeholder_<name>.py.
PORTABLE_MODULES = ("cuda", "overrides", "platforms", "visible")


def template_dir() -> Path:
    """``placeholder_template/``: inside the installed wheel, or in a source checkout."""
    installed = Path(str(importlib.resources.files("resolver_hook"))) / "_placeholder_template"
    if installed.is_dir():
        return installed
    checkout = Path(__file__).resolve().parents[3] / "placeholder_template"
    if checkout.is_dir():
        return checkout
    raise OperationalError(
        "the placeholder template is missing from this installation", hint="reinstall resolver-hook"
    )


@functools.cache
def runtime() -> ModuleType:
    """The template's runtime module (``_placeholder.py``), for its words and checks.

    Loaded from the template file itself, so the generator, the README and the
    generated package all describe platforms with the same code.
    """
    path = template_dir() / "package" / "_placeholder.py"
    spec = importlib.util.spec_from_file_location("_resolver_hook_placeholder_runtime", path)
    if spec is None or spec.loader is None:  # pragma: no cover - a file path always loads
        raise OperationalError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- escaping ----------------------------------------------------------------------


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string that reads back exactly (written by tomli-w)."""

    return tomli_w.dumps({"x": text})[len("x = ") : -1]


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|&~-])")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown on one line: punctuation escaped, whitespace folded."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _one_line(text: str) -> str:
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())


# --- the generated files -------------------------------------------------------------


def _platform_tags(flavour: dict[str, Any]) -> list[str]:
    tags: list[str] = runtime()._flavour_platform_tags(flavour)
    return tags


def classifiers(data: dict[str, Any]) -> list[str]:
    """Trove classifiers that tell the truth about the real builds."""
    rt = runtime()
    found: set[str] = set()
    tags = [p for f in data["flavours"] for p in _platform_tags(f)]
    systems = {rt.parse_platform(t)["os"] for t in tags}
    if not tags or "any" in systems:
        found.add("Operating System :: OS Independent")
    os_classifier = {
        "linux": "Operating System :: POSIX :: Linux",
        "windows": "Operating System :: Microsoft :: Windows",
        "macos": "Operating System :: MacOS",
    }
    found.update(os_classifier[s] for s in systems if s in os_classifier)
    impls = set()
    for flavour in data["flavours"]:
        for interpreter, abi, _ in flavour.get("tags") or ():
            p = rt.parse_python(interpreter, abi)
            impls.add(p["impl"])
            if p["version"] and p["version"][0] == 3:
                found.add("Programming Language :: Python :: 3")
                if len(p["version"]) == 2 and not p["abi3"]:
                    found.add(f"Programming Language :: Python :: 3.{p['version'][1]}")
    if impls == {"cp"}:
        found.add("Programming Language :: Python :: Implementation :: CPython")
    for flavour in data["flavours"]:
        if flavour.get("cuda") or flavour.get("gpu"):
            found.add("Environment :: GPU :: NVIDIA CUDA")
        m = re.fullmatch(r">=\s*(\d+)(?:\.\d+)*", flavour.get("cuda") or "")
        if m:
            found.add(f"Environment :: GPU :: NVIDIA CUDA :: {m.group(1)}")
    if _KNOWN_CLASSIFIERS is None:  # pragma: no cover - hatchling depends on trove-classifiers
        return sorted(found)
    return sorted(c for c in found if c in _KNOWN_CLASSIFIERS)


def pyproject(data: dict[str, Any]) -> str:
    if data.get("kind") == "retired":
        description = (
            f"Retired name: install {data['replacement']} instead; installing "
            f"{data['name']} fails with the exact pip and uv lines"
        )
    else:
        where = data["downloads"] or data["homepage"]
        description = (
            f"Placeholder for {_one_line(data['display_name'])}: the real builds are at "
            f"{where}; installing this one fails with an explanation"
        )
    urls = []
    if data["homepage"]:
        urls.append(f"Homepage = {toml_string(data['homepage'])}")
    if data["downloads"]:
        urls.append(f"Download = {toml_string(data['downloads'])}")
    found = classifiers(data) if data.get("kind") != "retired" else [_INACTIVE]
    items = "".join(f"\n    {toml_string(c)}," for c in found)
    text = (template_dir() / "pyproject.toml.in").read_text(encoding="utf-8")
    return string.Template(text).substitute(
        name=toml_string(data["name"]),
        version=toml_string(data["version"]),
        description=toml_string(description),
        classifiers=f"[{items}\n]" if items else "[]",
        urls="\n".join(urls),
    )


# Trove classifier of a project that is no longer developed (pypi.org/classifiers).
_INACTIVE = "Development Status :: 7 - Inactive"


def retired_readme(data: dict[str, Any]) -> str:
    """The README of a retired-name placeholder: the replacement and the exact lines.

    Names are validated project names (letters, digits, ``.-_``), escaped as Markdown
    text outside code; inside code blocks they are literal.
    """
    rt = runtime()
    name, new = data["name"], data["replacement"]
    pip_line, uv_line = rt.retired_install_lines(data)
    link = f"https://pypi.org/project/{canonicalize_name(new)}/"
    lines = [
        f"# {markdown_text(name)}: retired name",
        "",
        f"**The name `{name}` is retired; install [{markdown_text(new)}]({link}) instead.**",
        f"`pip install {name}` and `uv pip install {name}` stop with a message that says so;",
        "a copy installed anyway refuses to import with the same message. Replace the name",
        "where it is written (requirements files, `pyproject.toml`, `setup.py`) and run:",
        "",
        "```sh",
        pip_line,
        uv_line,
        "```",
        "",
    ]
    if data.get("homepage"):
        lines += [f"- Homepage: <{data['homepage']}>", ""]
    lines += [
        "## About this placeholder",
        "",
        f"It keeps the name `{name}` from being taken by someone else. It fails every time",
        "(no brownout): a failure that comes and goes gets dismissed as flakiness.",
        f"`{rt.escape_hatch(name)}=1` lets it install (for example to satisfy a dependency",
        "resolver); importing it still fails with the message. Generated by resolver-hook.",
    ]
    return "\n".join(lines) + "\n"


def _cell(words: Iterable[str]) -> str:
    return markdown_text("; ".join(words)) or "any"


def readme(data: dict[str, Any]) -> str:
    if data.get("kind") == "retired":
        return retired_readme(data)
    rt = runtime()
    name = data["name"]
    rows = [
        "| build | version | platform | Python | NVIDIA driver | GPU kernels |",
        "|---|---|---|---|---|---|",
    ]
    install: dict[str, list[str]] = {}
    for f in data["flavours"]:
        platforms = rt.platform_words(_platform_tags(f))
        python = rt.python_words(rt._flavour_python_words(f))
        cuda = [rt.describe_cuda(f["cuda"])] if f.get("cuda") else ["not needed"]
        gpu = [rt._cuda.describe_target(rt._cuda.parse_target(t)) for t in f.get("gpu") or ()]
        if f["kind"] == "wheel":
            build = f"[{markdown_text(f['filename'])}]({markdown_url(f['url'])})"
        elif f.get("url"):
            build = (
                f"[{markdown_text(name)} {markdown_text(f['version'])} (find-links page)]"
                f"({markdown_url(f['url'])})"
            )
        else:
            build = f"{markdown_text(name)} {markdown_text(f['version'])} from PyPI"
        rows.append(
            f"| {build} | {markdown_text(f['version'])} | {_cell(platforms)} | "
            f"{_cell(python) if python else 'not stated'} | {_cell(cuda)} | "
            f"{_cell(gpu) if gpu else 'none (CPU)'} |"
        )
        heading = ", ".join(platforms or ["any platform"])
        if python:
            heading += ", " + " or ".join(python)
        install.setdefault(heading, []).append(rt.install_line(data, f))
    if not data["flavours"]:
        rows.append("| none listed | | | | | |")
    install_md = []
    for heading, lines in install.items():
        install_md.append(f"### {markdown_text(heading)}\n\n```sh\n{lines[0]}\n```\n")
    if not install_md:
        install_md.append("No build is listed yet.\n")
    links = []
    if data["downloads"]:
        links.append(f"- Real downloads: <{markdown_url(data['downloads'])}>")
    if data["homepage"]:
        links.append(f"- Homepage: <{markdown_url(data['homepage'])}>")
    where = f"<{markdown_url(data['downloads'] or data['homepage'])}>"
    text = (template_dir() / "README.md.in").read_text(encoding="utf-8")
    return string.Template(text).substitute(
        title=markdown_text(data["display_name"]),
        name=name,
        where=where,
        links="\n".join(links),
        table="\n".join(rows),
        install="\n".join(install_md).rstrip("\n"),
        hatch=rt.escape_hatch(name),
    )


def render_files(data: dict[str, Any]) -> dict[str, bytes]:
    """Relative path -> content of every file of the placeholder project."""
    template = template_dir()
    package = f"src/{data.get('import_name') or import_name(data['name'])}"
    portable = importlib.resources.files("resolver_hook.portable")
    return {
        "pyproject.toml": pyproject(data).encode("utf-8"),
        "README.md": readme(data).encode("utf-8"),
        "_placeholder_backend/placeholder_backend.py": (
            template / "backend" / "placeholder_backend.py"
        ).read_bytes(),
        f"{package}/__init__.py": (template / "package" / "__init__.py").read_bytes(),
        f"{package}/_placeholder.py": (template / "package" / "_placeholder.py").read_bytes(),
        **{
            f"{package}/_placeholder_{name}.py": portable.joinpath(f"{name}.py").read_bytes()
            for name in PORTABLE_MODULES
        },
        f"{package}/_placeholder_data.json": (
            json.dumps(data, indent=2, sort_keys=True, ensure_ascii=True) + "\n"
        ).encode(),
    }


def render_project(data: dict[str, Any], dest: Path) -> Path:
    """Write the placeholder project into the empty folder ``dest``; return ``dest``.

    Every path is checked to stay inside ``dest``.
    """
    root = dest.resolve()
    for rel, content in sorted(render_files(data).items()):
        path = (root / rel).resolve()
        if not path.is_relative_to(root):  # names are validated; this is the backstop
            raise OperationalError(f"refusing to write {rel!r} outside {root}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return dest
