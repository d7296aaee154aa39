"""What a local version label such as ``+cu130`` or ``+torch2130cu130`` says about a build.

Projects encode the CUDA runtime and the torch build a wheel was made for in the local
version label (PEP 440 "local version identifiers"), in a few house styles:

=============================  ===============  ======================
label                          CUDA runtime     torch
=============================  ===============  ======================
``cu130`` (PyTorch)            13.0             --
``cu126``                      12.6             --
``cu1210`` (4 digits)          12.10            --
``cu12torch2.6cxx11abiFALSE``  12 (major only)  ``==2.6.*``
  (flash-attn)
``cu130torch2.13``             13.0             ``==2.13.*``
``torch2.13.0cu130``           13.0             ``==2.13.0``
``torch2130cu130``             13.0             ``==2.13.0``
``torch260`` / ``torch27``     --               ``==2.6.0`` / ``==2.7.*``
``cpu``, ``rocm6.4``           none (noted)     --
=============================  ===============  ======================

Rules: ``cu`` + 2 digits is a major version; + 3 digits is ``MM.m``; + 4 digits is
``MM.mm``. ``torch`` + a dotted version is that version (two parts mean "any patch",
``==X.Y.*``); undotted digits are read as major = first digit, patch = last digit,
minor = the digits between (``2130`` -> 2.13.0), or with two digits major.minor.
Anything else is reported as not understood rather than guessed.
"""

from __future__ import annotations

import re

from resolver_hook.ground.valueclass import valueclass

__all__ = ["LabelFacts", "parse_local_label"]

_CUDA = re.compile(r"cu(\d+)")
_TORCH = re.compile(r"torch(\d+(?:\.\d+)*)")


@valueclass
class LabelFacts:
    """Facts read from one local version label."""

    label: str
    cuda: str | None = None
    """CUDA runtime version the build uses, ``"13.0"`` or just ``"12"``."""
    torch: str | None = None
    """Version specifier on torch, ``"==2.13.0"`` or ``"==2.13.*"``."""
    notes: tuple[str, ...] = ()

    @property
    def cuda_lower_bound(self) -> str | None:
        """PEP 440 specifier on the driver's CUDA version: ``>=13.0`` for ``cu130``.

        A build for CUDA runtime X.y runs on any driver for CUDA X.0 or newer
        (NVIDIA's minor-version compatibility; docs/facts.md section 1).
        """
        if self.cuda is None:
            return None
        major = self.cuda.split(".")[0]
        return f">={major}.0"


def _cuda_version(digits: str) -> str | None:
    if len(digits) == 2:
        return str(int(digits))
    if len(digits) == 3:
        return f"{int(digits[:2])}.{int(digits[2])}"
    if len(digits) == 4:
        return f"{int(digits[:2])}.{int(digits[2:])}"
    return None


def _torch_spec(text: str) -> str | None:
    if "." in text:
        parts = text.split(".")
        if len(parts) == 2:
            return f"=={text}.*"
        return f"=={text}"
    if len(text) == 2:
        return f"=={text[0]}.{text[1]}.*"
    if len(text) in (3, 4):
        return f"=={text[0]}.{int(text[1:-1])}.{text[-1]}"
    return None


def parse_local_label(label: str) -> LabelFacts:
    """Read the CUDA runtime and torch pin from ``label`` (the text after ``+``)."""
    text = label.lower()
    cuda = torch = None
    notes: list[str] = []
    match = _CUDA.search(text)
    if match:
        cuda = _cuda_version(match.group(1))
        if cuda is None:
            notes.append(f"local label {label!r}: 'cu{match.group(1)}' is not a CUDA version")
    match = _TORCH.search(text)
    if match:
        torch = _torch_spec(match.group(1))
        if torch is None:
            notes.append(
                f"local label {label!r}: 'torch{match.group(1)}' is not a torch version "
                "this tool can read"
            )
    if "rocm" in text:
        notes.append(f"local label {label!r} names a ROCm build (not described here)")
    return LabelFacts(label=label, cuda=cuda, torch=torch, notes=tuple(notes))
