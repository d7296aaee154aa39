"""Record pip's own reading of the requirements corpus (tests/data/pip-verdicts.json).

Run with the pip whose verdict the tests compare against (pip 26.3 when recorded):

    /path/to/venv-with-pip/bin/python scripts/pip_verdicts.py tests/data/requirements-corpus

It uses pip's internal parser (parse phase only, no network), which is fine for a
maintainer script; resolver-hook itself never imports pip.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from pip import __version__ as pip_version
from pip._internal.network.session import PipSession
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.req.req_file import parse_requirements

# Repository layouts that give the corpus files the neighbours they include (shared
# with tests/test_reqfile.py).
LAYOUTS = json.loads(
    (Path(__file__).resolve().parent.parent / "tests/data/corpus-layouts.json").read_text()
)


def verdict(path: str) -> dict[str, object]:
    entries = []
    try:
        for pr in parse_requirements(path, session=PipSession()):
            r = install_req_from_parsed_requirement(pr)
            entries.append(
                {
                    "name": r.req.name if r.req else None,
                    "specifier": str(r.req.specifier) if r.req else None,
                    "url": r.link.url if r.link and not r.link.url.startswith("file:") else None,
                    "marker": str(r.markers) if r.markers else None,
                    "editable": r.editable,
                    "constraint": pr.constraint,
                    "hashes": sum(len(v) for v in r.hash_options.values()),
                }
            )
    except Exception as exc:  # pip's verdict is the point
        return {"error": str(exc).splitlines()[0]}
    return {"entries": entries}


def main() -> None:
    corpus = Path(sys.argv[1]).resolve()
    out: dict[str, object] = {"pip": pip_version, "files": {}, "layouts": {}, "env": {}}
    for f in sorted(corpus.glob("*.txt")):
        out["files"][f.name] = verdict(str(f))  # type: ignore[index]
    for name, files in LAYOUTS.items():
        d = tempfile.mkdtemp()
        for target, src in files.items():
            shutil.copy(corpus / src, os.path.join(d, target))
        first = next(iter(files))
        out["layouts"][name] = verdict(os.path.join(d, first))  # type: ignore[index]
    os.environ["CUDA_TAG"] = "cu126"
    f = "EveryVoiceTTS__EveryVoice__requirements.torch.txt"
    out["env"][f] = {"CUDA_TAG": "cu126", **verdict(str(corpus / f))}  # type: ignore[index]
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
