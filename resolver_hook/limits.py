"""Every bound resolver-hook puts on what it reads, in one place.

Hostile or careless input (a 5,000-digit version, a matrix of millions of wheels, an
archive member claiming 65,535 section headers, a server sending a byte a second) must
end in one ``error:`` line, quickly and in bounded memory, never in a MemoryError, a
RecursionError or a hang. Each bound sits far above what real inputs use (the comment
says what real inputs look like); the README's "Limits" table lists them for users.
"""

from __future__ import annotations

import re

# typing is not imported at run time: a replayed install reads its bounds here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.tags import Tag
    from packaging.utils import BuildTag, NormalizedName
    from packaging.version import Version

__all__ = [
    "FORWARD_GRACE",
    "FORWARD_SIGINT_AFTER",
    "HOOK_LOCK_SECONDS",
    "INPUT_DEADLINE",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_COMPRESSION_RATIO",
    "MAX_CONCURRENT_PAGES",
    "MAX_ELF_DYNAMIC_BYTES",
    "MAX_ELF_DYNSTR_BYTES",
    "MAX_ELF_LIBRARY_NAME",
    "MAX_ELF_SECTIONS",
    "MAX_ELF_SECTION_NAME",
    "MAX_ELF_SHSTRTAB_BYTES",
    "MAX_FATBIN_ENTRIES",
    "MAX_FATBIN_FALSE_STARTS",
    "MAX_HINTED_PACKAGES",
    "MAX_HINT_CHANGES",
    "MAX_HOSTCONFIG_NESTING",
    "MAX_HOSTCONFIG_TOKENS",
    "MAX_INCLUDE_DEPTH",
    "MAX_INPUT_BYTES",
    "MAX_KERNEL_RECORDS_BYTES",
    "MAX_MACHINE_VERSION_DIGITS",
    "MAX_MANIFEST_BYTES",
    "MAX_MATRIX_EXCLUDES",
    "MAX_MATRIX_WHEELS",
    "MAX_MEMBER_BYTES",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_READS",
    "MAX_MIRRORS",
    "MAX_NETWORK_SECONDS",
    "MAX_OFFLOAD_BUNDLE_ENTRIES",
    "MAX_OFFLOAD_BUNDLE_ID",
    "MAX_PAGES_PER_CALL",
    "MAX_PAGE_BYTES",
    "MAX_PAGE_CACHE_BYTES",
    "MAX_PAGE_LINKS",
    "MAX_PAGE_URL_BYTES",
    "MAX_PLACEHOLDER_DATA_BYTES",
    "MAX_REFRESH_METADATA",
    "MAX_REFRESH_METADATA_WHEEL_BYTES",
    "MAX_REFRESH_SCANS",
    "MAX_REFRESH_WHEEL_BYTES",
    "MAX_REQUIREMENTS_BYTES",
    "MAX_REQUIREMENT_LINES",
    "MAX_SDIST_BYTES",
    "MAX_SDIST_MEMBERS",
    "MAX_SNAPSHOT_BYTES",
    "MAX_SUBPROCESS_OUTPUT",
    "MAX_URL_LENGTH",
    "MAX_VERSION_DIGITS",
    "MAX_VERSION_LENGTH",
    "MIN_DOWNLOAD_RATE",
    "NETWORK_DEADLINE",
    "PAGE_FRESH_SECONDS",
    "SHOWN_REJECTED_BUILDS",
    "SHOWN_VERSIONS",
    "SNAPSHOT_RELEASES",
    "check_version_text",
    "parse_wheel_name",
]

# --- versions -------------------------------------------------------------------------
# Python refuses to turn more than 4,300 digits into an int (ValueError); a version
# number with that many digits is never real. Date-based releases use up to 14 digits
# (20240101120000).
MAX_VERSION_DIGITS = 32
# A whole version string (``2.13.0+cu130torch2.13``): real ones stay under 64 characters.
MAX_VERSION_LENGTH = 256
# Machine versions (glibc minor, CUDA, ROCm, L4T parts): three digits each. glibc's
# minor number sets how many manylinux tags a machine accepts (one per minor).
MAX_MACHINE_VERSION_DIGITS = 3

# --- manifests ------------------------------------------------------------------------
# The built-in manifests are 1-3 KB; an imported page of 5,000 wheels is ~1.5 MB. The
# TOML reader needs ~25 bytes of memory per byte of a hostile document ({},{},...).
MAX_MANIFEST_BYTES = 2 << 20
# Wheels one ``[[matrix]]`` may expand into (checked before expanding): a real matrix
# of 4 CUDA x 6 Python x 3 platforms x 3 torch is 216.
MAX_MATRIX_WHEELS = 10_000
# ``exclude`` entries of one matrix (each is tried against every combination): real
# matrices exclude a handful. Wheels times their needs entries stay under 10 x the above.
MAX_MATRIX_EXCLUDES = 256
# A URL in a manifest or on an index page (GitHub release asset URLs are ~200).
MAX_URL_LENGTH = 8192

# --- requirement files ----------------------------------------------------------------
# One requirements or constraints file (a pip freeze of 1,000 packages is ~30 KB), and
# the requirement lines of all files read together.
MAX_REQUIREMENTS_BYTES = 4 << 20
MAX_REQUIREMENT_LINES = 20_000
# ``-r``/``-c`` nesting (cycles are refused separately).
MAX_INCLUDE_DEPTH = 64

# --- archives (wheels, sdists) ---------------------------------------------------------
# Members of one wheel or sdist (torch's wheel has ~13,000).
MAX_ARCHIVE_MEMBERS = 200_000
# Declared uncompressed size of one member (libtorch_cuda.so is ~1.5 GB).
MAX_MEMBER_BYTES = 2 << 30
# Declared size over compressed size; real shared objects deflate 2-6:1.
MAX_COMPRESSION_RATIO = 200

# --- ELF objects and fat binaries -------------------------------------------------------
# Section headers of one object (libtorch_cuda.so has ~40; extended numbering allows
# more, which only a hostile object uses).
MAX_ELF_SECTIONS = 1 << 16
# Bytes of a section name kept (the names read are ``.nv_fatbin``, ``.dynamic``): a
# longer name is cut, so 65,535 headers naming one long string stay small.
MAX_ELF_SECTION_NAME = 256
# Bytes of a DT_NEEDED/DT_SONAME library name kept (``libcudart.so.13``; a path is at
# most 4,096 bytes): a million entries naming one long string stay small.
MAX_ELF_LIBRARY_NAME = 4096
MAX_ELF_SHSTRTAB_BYTES = 16 << 20
MAX_ELF_DYNSTR_BYTES = 64 << 20  # libtorch_cuda.so's .dynstr is ~4 MB
MAX_ELF_DYNAMIC_BYTES = 16 << 20
# Fatbin entries of one object, in all its containers wherever they lie, counting those
# of candidate containers that turned out not to parse (libcublasLt.so.13 has ~5,400;
# libcufft.so.11 of cuFFT 11.2.1.3 17,608 in 17,608 containers).
MAX_FATBIN_ENTRIES = 100_000
# Fatbin magic numbers in one object's data sections that start no valid container
# (none in the nvidia-*-cu12 12.4 libraries; a hostile object could hold millions).
MAX_FATBIN_FALSE_STARTS = 4096
# Entries of one clang offload bundle (a ROCm ``.hip_fatbin``: one per gfx target plus
# the host's; real ones have under 20), and bytes of one entry's target ID.
MAX_OFFLOAD_BUNDLE_ENTRIES = 4096
MAX_OFFLOAD_BUNDLE_ID = 1024

# --- host_config.h (doctor --build) ----------------------------------------------------
# Tokens of one ``#if`` condition (CUDA 13's longest has ~40) and parenthesis/unary
# nesting inside it.
MAX_HOSTCONFIG_TOKENS = 512
MAX_HOSTCONFIG_NESTING = 32

# --- hints (resolve/hints.py) -------------------------------------------------------------
# A hint re-plans with one fact of the machine changed: at most this many changes of one
# kind (nearest first) and this many packages with no fit get one per plan, so a
# manifest listing thousands of Pythons or a plan of 1,000 refused packages stays quick.
MAX_HINT_CHANGES = 32
MAX_HINTED_PACKAGES = 24
# Output, not input: without -v, a package with no fit shows this many rejected builds
# (the nearest: fewest rules failed) and this many of its versions, then a count.
SHOWN_REJECTED_BUILDS = 3
SHOWN_VERSIONS = 12

# --- inputs, subprocesses and the network ----------------------------------------------
# One input file or pipe (requirement files, manifests, profiles, saved pages) and the
# seconds a pipe (``-r <(...)``) may take to deliver all of it.
MAX_INPUT_BYTES = 64 << 20
INPUT_DEADLINE = 5.0
# How long enable/disable/status wait for another one changing the same venv's hook
# state (an enable plans and writes in about a second).
HOOK_LOCK_SECONDS = 30.0
# Output kept from one captured command, stdout and stderr each (nvidia-smi prints a
# few KB; a pip run inside ``placeholder check`` some 100 KB); past it, it is killed.
MAX_SUBPROCESS_OUTPUT = 8 << 20
# Seconds an installer gets to exit after a forwarded SIGINT/SIGTERM before it is killed.
FORWARD_GRACE = 10.0
# Seconds an installer gets to stop on a terminal's Ctrl-C (which reaches it directly)
# before resolver-hook forwards the SIGINT it received too. pip stops in well under a
# second; a second SIGINT during its cleanup leaves its temporary folders behind.
FORWARD_SIGINT_AFTER = 2.0
# ``placeholder check``: an sdist's members and unpacked bytes, its data file.
MAX_SDIST_MEMBERS = 10_000
MAX_SDIST_BYTES = 64 << 20
MAX_PLACEHOLDER_DATA_BYTES = 4 << 20
# One index page (download.pytorch.org/whl/torch/ is ~1 MB), its links, and the bytes of
# the URLs they resolve to (a long <base href> times many short hrefs).
MAX_PAGE_BYTES = 32 << 20
MAX_PAGE_LINKS = 100_000
MAX_PAGE_URL_BYTES = 16 << 20
# pip's installation report (``install --dry-run --report``): ~2 KB per package, so a
# 1,000-package resolution is ~2 MB.
MAX_INSTALL_REPORT_BYTES = 64 << 20
# ``--verify-kernels``: wheel scans kept in the cache (one small JSON file each, by sha256).
MAX_KERNEL_SCANS = 256
# The default total deadline for a page (``--timeout``, ``manifest import --timeout``),
# connect to last byte, redirects included, and the largest accepted. An index page is
# a few MB at most: 10 s is a slow link's time for it, and what a hung host costs a plan
# (resolver_hook.index.client asks a host that let one page run out no more pages).
NETWORK_DEADLINE = 10.0
MAX_NETWORK_SECONDS = 3600.0
# A file downloaded whole (a wheel hashed for a lock, read for its kernels): the page
# deadline (``--timeout``), plus one second per MIN_DOWNLOAD_RATE bytes received so far,
# in all. 128 KiB/s is a slow link (1 Mbit/s); a 3 GB torch wheel is then allowed ~7 h,
# a server trickling a byte every 2 s ends at the deadline alone.
MIN_DOWNLOAD_RATE = 128 << 10
# The index client (resolver_hook/index/): pages read at once (threads; a plan reads a
# handful, a lock a few dozen), pages one call may ask for, one metadata file (torch's
# METADATA is ~10 KB; a long description makes some ~200 KB), and mirror pairs.
MAX_CONCURRENT_PAGES = 8
MAX_PAGES_PER_CALL = 1_000
MAX_METADATA_BYTES = 4 << 20
MAX_MIRRORS = 64
# The page cache (user cache folder, ``index/``): how long a page is used without asking
# the server again (then it is revalidated with ETag / Last-Modified), and its total size
# (download.pytorch.org's torch page is ~1 MB; oldest entries go first past it).
PAGE_FRESH_SECONDS = 600.0
MAX_PAGE_CACHE_BYTES = 256 << 20
# The inventory (resolver_hook/inventory/): metadata files one plan reads (one per
# flavoured file that fits the machine, newest first), and the shipped snapshot (wheel
# links of the built-in flavours only, of each flavour's newest SNAPSHOT_RELEASES
# releases: tens of KB; an offline plan of an older pin reads the manifest alone).
MAX_METADATA_READS = 64
MAX_SNAPSHOT_BYTES = 8 << 20
SNAPSHOT_RELEASES = 3
# The kernel lists read from wheel files (``inventory/data/kernels.json``, ~300 bytes a
# file). ``scripts/refresh_data.py``: the largest wheel it downloads to scan unless
# raised (torch's CUDA wheels are 0.9-3 GB; most extensions under 200 MB), and the
# wheels one run scans (a rerun goes on with the rest). The core metadata files one run
# reads for the snapshot (a .metadata file is ~2-10 KB), and the largest wheel it
# downloads to read its METADATA member from where the page offers no .metadata file
# (tilert's and torchvision's wheels are under 9 MB; torch's and triton's are 80-300 MB
# and are left without metadata unless raised).
MAX_KERNEL_RECORDS_BYTES = 8 << 20
MAX_REFRESH_WHEEL_BYTES = 512 << 20
MAX_REFRESH_SCANS = 200
MAX_REFRESH_METADATA = 500
MAX_REFRESH_METADATA_WHEEL_BYTES = 16 << 20


# An ASCII number longer than the bound (str.isdigit is [0-9] on ASCII text).
_LONG_NUMBER = re.compile(f"[0-9]{{{MAX_VERSION_DIGITS + 1}}}")
# The same in a long text (a page's wheel names at once): its digits made zeros, then
# one substring search. The regex engine steps through every character of the text
# (~18 ns each); translate and ``in`` run in C (the 983 names of a page: 1.2 ms -> 0.07).
_DIGITS_AS_ZEROS = str.maketrans("123456789", "000000000")
_LONG_ZEROS = "0" * (MAX_VERSION_DIGITS + 1)
_LONG_TEXT = 512


def check_version_text(text: str, *, max_length: int | None = MAX_VERSION_LENGTH) -> str | None:
    """None when ``text`` is within the version bounds, else the problem in words.

    Call before handing text to ``packaging.version.Version`` (or anything that parses
    versions: wheel filenames, specifiers, markers), which converts each number with
    ``int()``. ``max_length=None`` checks the numbers only (a marker, a long line).
    """
    if max_length is not None and len(text) > max_length:
        return f"longer than {MAX_VERSION_LENGTH} characters"
    if text.isascii():  # the common case, in one search (a plan checks thousands of names)
        if len(text) > _LONG_TEXT:
            long_number = _LONG_ZEROS in text.translate(_DIGITS_AS_ZEROS)
        else:
            long_number = _LONG_NUMBER.search(text) is not None
        if not long_number:
            return None
        return f"has a number of more than {MAX_VERSION_DIGITS} digits"
    run = 0
    for ch in text:
        run = run + 1 if ch.isdigit() else 0
        if run > MAX_VERSION_DIGITS:
            return f"has a number of more than {MAX_VERSION_DIGITS} digits"
    return None


def parse_wheel_name(
    filename: str,
) -> tuple[NormalizedName, Version, BuildTag, frozenset[Tag]]:
    """``packaging.utils.parse_wheel_filename`` within the version bounds: a name that
    breaks them raises ``InvalidWheelFilename`` (a ValueError) like any bad name,
    instead of the plain ValueError ``int()`` gives past 4,300 digits."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    too_big = check_version_text(filename)
    if too_big is not None:
        raise InvalidWheelFilename(too_big)
    return parse_wheel_filename(filename)
