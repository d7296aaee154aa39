"""Variant labels in wheel filenames (PEP 825 draft; docs/facts.md section 2).

PEP 825 extends the wheel filename with an optional last component::

    {name}-{version}(-{build})?-{python}-{abi}-{platform}(-{variant label})?.whl

A build tag starts with a digit and (from PEP 825) a Python tag never does, so a name
of six dash-separated parts is a variant wheel when its third part does not start with
a digit; seven parts always carry a label. ``null`` is the label of the variant with no
properties. ``packaging`` and pip read variant filenames as invalid: split the label off
before parsing the rest as an ordinary wheel filename.
"""

from __future__ import annotations

import re

__all__ = ["NULL_LABEL", "VARIANT_LABEL", "split_variant_label"]

NULL_LABEL = "null"
VARIANT_LABEL = re.compile(r"[0-9a-z_.]+")  # fullmatch only: "$" also matches before "\n"


def split_variant_label(filename: str) -> tuple[str, str | None]:
    """``(the filename without its label, the label)``; ``(filename, None)`` when none."""
    if not filename.endswith(".whl"):
        return filename, None
    parts = filename[: -len(".whl")].split("-")
    if len(parts) == 7 or (len(parts) == 6 and not parts[2][:1].isdigit()):
        label = parts[-1]
        if VARIANT_LABEL.fullmatch(label):
            return "-".join(parts[:-1]) + ".whl", label
    return filename, None
