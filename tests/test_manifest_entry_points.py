"""Plugins found through the ``resolver_hook.manifests`` entry-point group, and the
cache that spares every command a scan of every installed distribution."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import importlib_metadata  # imported before the tests replace sys.path
import pytest

from resolver_hook.manifest import load


def add_plugin(site: Path, dist: str, name: str, value: str) -> None:
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[resolver_hook.manifests]\n{name} = {value}\n")


def found(site: Path) -> list[tuple[str, str]]:
    return sorted((e.name, e.value) for e in load._entry_points())


def test_plugins_are_found_cached_and_found_again_after_an_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    add_plugin(site, "plug_a", "a", "plug_a:manifest")
    assert found(site) == [("a", "plug_a:manifest")]
    cache = Path(os.environ["RESOLVER_HOOK_CACHE_DIR"]) / "entry-points.json"
    assert cache.is_file()
    assert cache.stat().st_mode & 0o777 == 0o600
    assert found(site) == [("a", "plug_a:manifest")]  # read back from the cache
    before = site.stat().st_mtime_ns
    add_plugin(site, "plug_b", "b", "plug_b:manifest")  # an install changes the folder
    os.utime(site, ns=(before + 10**9, before + 10**9))  # coarse file-system clocks
    assert found(site) == [("a", "plug_a:manifest"), ("b", "plug_b:manifest")]


def test_a_cache_for_another_path_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    add_plugin(one, "plug_a", "a", "plug_a:manifest")
    two.mkdir()
    monkeypatch.setattr(sys, "path", [str(one)])
    assert found(one) == [("a", "plug_a:manifest")]
    monkeypatch.setattr(sys, "path", [str(two)])
    assert found(two) == []


def test_a_tampered_cache_entry_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    add_plugin(site, "plug_a", "a", "plug_a:manifest")
    monkeypatch.setattr(sys, "path", [str(site)])
    found(site)
    cache = Path(os.environ["RESOLVER_HOOK_CACHE_DIR"]) / "entry-points.json"
    text = cache.read_text().replace('[["a", "plug_a:manifest"]]', '[["a", 5]]')
    cache.write_text(text)
    assert found(site) == [("a", "plug_a:manifest")]  # rescanned, not trusted


def test_a_file_saved_in_the_first_folder_keeps_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first folder of ``sys.path`` (the current one under ``python -m``) changes
    as its user works; the list stays cached until a distribution lands there."""
    work, site = tmp_path / "work", tmp_path / "site"
    work.mkdir()
    add_plugin(site, "plug_a", "a", "plug_a:manifest")
    monkeypatch.setattr(sys, "path", [str(work), str(site)])
    assert found(site) == [("a", "plug_a:manifest")]
    scans: list[str] = []
    real = importlib_metadata.entry_points

    def counted(**kw: str) -> importlib_metadata.EntryPoints:
        scans.append(kw["group"])
        return real(**kw)

    monkeypatch.setattr(importlib_metadata, "entry_points", counted)
    before = work.stat().st_mtime_ns
    (work / "notes.txt").write_text("saved\n")
    os.utime(work, ns=(before + 10**9, before + 10**9))  # coarse file-system clocks
    assert found(site) == [("a", "plug_a:manifest")]
    assert scans == []  # read back from the cache
    add_plugin(work, "plug_b", "b", "plug_b:manifest")
    assert found(site) == [("a", "plug_a:manifest"), ("b", "plug_b:manifest")]
    assert scans == ["resolver_hook.manifests"]
