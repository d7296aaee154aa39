"""The one copy of each identifier pattern: sha256 digests, project names, version numbers,
AMD GPU names.

Use them with ``fullmatch`` only: ``$`` in ``re.match`` also matches before a final
newline, and ``"<64 hex>\\n"`` would pass and split a lock line in two.
"""

from __future__ import annotations

import re

__all__ = [
    "GFX_NAME",
    "PROJECT_NAME",
    "SHA256",
    "is_project_name",
    "is_sha256",
    "version_numbers",
]

# 64 hex digits, either case (pip compares them case-insensitively); store lower case.
SHA256 = re.compile(r"[0-9a-fA-F]{64}")
# A valid (not necessarily normalised) project name: PEP 508 "identifier"; see
# https://packaging.python.org/en/latest/specifications/name-normalization/
PROJECT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
# An AMD GPU as ``detect`` names it (KFD's gfx_target_version, or rocm_agent_enumerator)
# and as a ROCm build's arch list does (PYTORCH_ROCM_ARCH): ``gfx`` + major + minor and
# stepping in hex: gfx90a, gfx942, gfx1100, gfx1151. Kept as text, compiled when first
# used (``re.fullmatch(GFX_NAME, name)``, re's cache): a plan reads no AMD GPU name
# unless its target or a ROCm manifest being parsed has one.
GFX_NAME = r"gfx\d{1,2}[0-9a-f]{2}"


def is_sha256(text: object) -> bool:
    """Whether ``text`` is exactly 64 hex digits (nothing before or after)."""
    return isinstance(text, str) and SHA256.fullmatch(text) is not None


def is_project_name(text: object) -> bool:
    """Whether ``text`` is exactly a valid project name."""
    return isinstance(text, str) and PROJECT_NAME.fullmatch(text) is not None


def version_numbers(text: str | None) -> tuple[int, ...]:
    """The numbers of a version word, for ordering: ``"3.13t"`` -> ``(3, 13)``,
    ``"13.0.88"`` -> ``(13, 0, 88)``; ``()`` for None or a word without digits."""
    return tuple(int(x) for x in re.findall(r"\d+", text or ""))
