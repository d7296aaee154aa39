#!/usr/bin/env python3
"""Time `scan_wheel` against `unzip -p WHEEL > /dev/null` on one large generated wheel.

    PYTHONPATH=. python3 scripts/bench_scan.py [--mb 300] [--runs 5] [--layout LAYOUT]

Layouts: ``members`` (the CUDA fixture objects plus many members of random,
incompressible data: the common case of big data files next to small extensions),
``bigelf`` (one large ELF whose ``.nv_fatbin`` holds the random data, like
libtorch_cuda.so: read through the streamed two-pass path) and ``cubins`` (``--count``
standalone cubins, 16,000 by default, like flashinfer-cubin's 15,970; also prints the
peak RSS of ``resolver-hook scan`` and ``scan --json`` run as processes, beside that of
``unzip -p``, and how many note lines the scan printed). The wheel lives in a temp
directory removed at exit, including on Ctrl-C. Prints the median of each and the ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolver_hook.binaries.scan import scan_wheel  # noqa: E402

DATA = REPO / "tests" / "data" / "cuda"


def _huge_elf(directory: Path, megabytes: int) -> Path:
    """libcpu.so plus a ``.nv_fatbin`` of ~``megabytes`` MB of 4 MiB random sm_90 entries.

    Like libtorch_cuda.so, the big section lies before the section header table, so the
    scanner must decompress to the end, rewind, and walk the fatbin (two passes).
    """
    entries = []
    for _ in range(megabytes // 4):
        payload = os.urandom(4 << 20)
        head = struct.pack("<HHIQ", 2, 0x0101, 64, len(payload)) + bytes(8)
        head += struct.pack("<HHI", 8, 1, 90) + bytes(8) + struct.pack("<Q", 0x11) + bytes(16)
        entries.append(head + payload)
    body = b"".join(entries)
    fatbin = directory / "fatbin.bin"
    fatbin.write_bytes(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body)
    out = directory / "libhuge.so"
    subprocess.run(
        ["objcopy", "--add-section", f".nv_fatbin={fatbin}", str(DATA / "libcpu.so"), str(out)],
        check=True,
    )
    fatbin.unlink()
    return out


def _cubin_wheel(directory: Path, count: int) -> Path:
    """A py3-none-any wheel of ``count`` cubins (the fixture cubins, each made distinct
    by 16 KiB of random bytes appended: ignored by the ELF reader, not by zip)."""
    path = directory / "bench-1.0-py3-none-any.whl"
    cubins = sorted(DATA.glob("*.cubin"))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for i in range(count):
            data = cubins[i % len(cubins)].read_bytes() + os.urandom(16 << 10)
            zf.writestr(f"bench/cubins/{i:05d}/kernel.cubin", data)
        zf.writestr("bench-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: bench\n")
    return path


def peak_rss(argv: list[str], *, keep: bool = True) -> tuple[int, str]:
    """(peak RSS in MB, stdout or "" unless ``keep``) of ``argv`` run as a process.

    RUSAGE_CHILDREN reports the largest child waited for so far, so each measurement
    runs in a fresh interpreter that itself runs only ``argv``."""
    probe = (
        "import resource, subprocess, sys; "
        "out = subprocess.PIPE if sys.argv[1] == '1' else subprocess.DEVNULL; "
        "p = subprocess.run(sys.argv[2:], stdout=out, check=True); "
        "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
        "sys.stdout.buffer.write(p.stdout or b'')"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "1" if keep else "0", *argv],
        capture_output=True,
        check=True,
    )
    return int(done.stderr.decode().strip().splitlines()[-1]) // 1024, done.stdout.decode()


def make_wheel(directory: Path, megabytes: int, layout: str, count: int = 16_000) -> Path:
    if layout == "cubins":
        return _cubin_wheel(directory, count)
    path = directory / "bench-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for so in sorted(DATA.glob("*.so")):
            zf.write(so, f"bench/{so.name}")
        if layout == "members":
            for i in range(megabytes // 4):
                zf.writestr(f"bench/data/blob{i:04d}.bin", os.urandom(4 << 20))
        else:
            zf.write(_huge_elf(directory, megabytes), "bench/libhuge.so")
        zf.writestr("bench-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: bench\n")
    return path


def timed(func: object, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        func()  # type: ignore[operator]
        out.append(time.perf_counter() - start)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--layout", choices=("members", "bigelf", "cubins"), default="members")
    parser.add_argument("--count", type=int, default=16_000, help="cubins (layout cubins)")
    args = parser.parse_args()
    if shutil.which("unzip") is None:
        print("unzip is not installed", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="bench-scan-"))
    try:
        wheel = make_wheel(tmp, args.mb, args.layout, args.count)
        size = wheel.stat().st_size
        report = scan_wheel(wheel)  # warm the page cache, check it works
        assert report.gpu, report

        def unzip() -> None:
            subprocess.run(["unzip", "-p", str(wheel)], stdout=subprocess.DEVNULL, check=True)

        t_unzip = statistics.median(timed(unzip, args.runs))
        t_scan = statistics.median(timed(lambda: scan_wheel(wheel), args.runs))
        print(f"layout {args.layout}: wheel {size / 1e6:.0f} MB, {args.runs} runs each")
        print(f"unzip -p > /dev/null: {t_unzip:.3f} s (median)")
        print(f"scan_wheel:           {t_scan:.3f} s (median)")
        print(f"ratio scan/unzip:     {t_scan / t_unzip:.2f}")
        if args.layout == "cubins":
            cli = [sys.executable, "-m", "resolver_hook", "scan", str(wheel)]
            rss_unzip, _ = peak_rss(["unzip", "-p", str(wheel)], keep=False)
            rss_scan, words = peak_rss(cli)
            rss_json, _ = peak_rss([*cli, "--json"], keep=False)
            notes = sum(1 for line in words.splitlines() if line.startswith("  note:"))
            print(
                f"peak RSS: unzip -p {rss_unzip} MB, scan {rss_scan} MB, scan --json {rss_json} MB"
            )
            print(f"scan printed {len(words.splitlines())} lines, {notes} of them notes")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
