"""pip requirements-file syntax, in and out.

Hand-written because the file format is pip's, not a standard: ``packaging`` parses
one requirement, not a file, and importing pip's private parser would break with pip
releases. Parity with pip is tested over a corpus of real files (tests/test_reqfile.py).

Reading follows pip's own order of operations (pip/_internal/req/req_file.py, checked
against pip 26.3 on every file of the shared requirements corpus):

1. split into lines; join backslash continuations (a comment line never continues);
2. drop comments: ``#`` at the start of a line or after whitespace (``numpy#x`` is
   not a comment, and is an invalid requirement, as in pip);
3. expand ``${NAME}`` (upper case, digits, ``_`` only) from the environment; an unset
   variable stays as written;
4. split the line at the first token starting with ``-``: before it is the
   requirement, after it the options (``--hash``, ``--config-settings`` belong to the
   requirement; file options on a requirement line are ignored, as pip ignores them);
5. a line with only options is an option line: ``-r``/``-c`` are followed (relative to
   the including file; cycles are an error), ``-e`` is an editable requirement, the
   rest (``--index-url``, ``--extra-index-url``, ``-f``, ``--pre``, ...) are recorded.

Requirements become :class:`ReqEntry` values holding a ``packaging`` Requirement
(PEP 508), or a URL/path for ``https://...whl``, VCS and local-path lines. Reading
is pure given a ``read`` callable; :func:`read_requirements` is the file-system edge.
"""

from __future__ import annotations

import codecs
import functools
import locale
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name, parse_wheel_filename

from resolver_hook.errors import UsageError
from resolver_hook.ground.record import NOWHERE, Recorder, path_kind
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.limits import (
    MAX_INCLUDE_DEPTH,
    MAX_REQUIREMENT_LINES,
    MAX_REQUIREMENTS_BYTES,
    check_version_text,
)

__all__ = [
    "ReqEntry",
    "ReqFile",
    "decode_requirements",
    "format_requirement",
    "includes_a_file",
    "installer_lines",
    "is_url_line",
    "parse_requirement_line",
    "parse_requirements",
    "read_requirements",
    "url_lines_first",
    "with_marker",
]

# pip: COMMENT_RE and ENV_VAR_RE in pip/_internal/req/req_file.py.
_COMMENT = r"(^|\s+)#.*$"
_ENV_VAR = r"\$\{([A-Z0-9_]+)\}"
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_VCS = re.compile(r"^(git|hg|svn|bzr)\+", re.IGNORECASE)
_EGG = r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled when first used: the patterns of a file's lines (and of an
    ``#egg=`` name) are compiled only by a command that reads one; names given on the
    command line need none of them (~1 ms of start-up, ``_LINE`` most of it)."""
    return re.compile(pattern)


# Options a requirements file may hold (pip 26 SUPPORTED_OPTIONS): name -> takes a value.
_FILE_OPTIONS: dict[str, bool] = {
    "-r": True,
    "--requirement": True,
    "-c": True,
    "--constraint": True,
    "-e": True,
    "--editable": True,
    "-i": True,
    "--index-url": True,
    "--extra-index-url": True,
    "--no-index": False,
    "-f": True,
    "--find-links": True,
    "--no-binary": True,
    "--only-binary": True,
    "--prefer-binary": False,
    "--require-hashes": False,
    "--pre": False,
    "--trusted-host": True,
    "--use-feature": True,
}
# Options that belong to one requirement line (pip SUPPORTED_OPTIONS_REQ).
_REQ_OPTIONS: dict[str, bool] = {
    "--hash": True,
    "-C": True,
    "--config-settings": True,
    "--global-option": True,
}
_CANONICAL = {
    "--requirement": "-r",
    "--constraint": "-c",
    "--editable": "-e",
    "--index-url": "-i",
    "--find-links": "-f",
    "--config-settings": "-C",
}

Reader = Callable[[str], str]


@valueclass
class ReqEntry:
    """One logical line of a requirements file that pip would act on.

    ``kind``: ``"requirement"`` (PEP 508, maybe ``name @ url``), ``"url"`` (a bare
    URL: wheel, sdist or VCS), ``"path"`` (a local file or folder), ``"option"``
    (``--index-url X`` and friends; ``option`` and ``value`` are set).
    """

    kind: str
    text: str  # the line as pip sees it (joined, comment removed, variables expanded)
    source: str = "<command line>"
    lineno: int = 0
    requirement: Requirement | None = None
    name: NormalizedName | None = None
    url: str | None = None
    marker: Marker | None = None
    editable: bool = False
    constraint: bool = False
    hashes: tuple[str, ...] = ()  # "sha256:hex"
    line_options: tuple[str, ...] = ()  # options pip ignores on a requirement line
    # The line's own build options, in order: ("-C", "key=value"), ("--global-option", x).
    build_options: tuple[tuple[str, str], ...] = ()
    option: str | None = None
    value: str | None = None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.lineno}" if self.lineno else self.source

    def as_line(self) -> str:
        """This entry as a line of a generated requirements file, meaning what it meant
        where it was written: ``-e``, its hashes and build options kept; a relative local
        path made absolute as pip and uv read it (from the current folder); ``-f`` with
        the folder pip found (see :func:`parse_requirements`)."""
        if self.kind == "option":
            if self.option == "-f" and self.value is not None:
                return f"-f {_quoted(self.value)}"
            return self.text
        head = self.text
        local = (
            self.kind == "path" and self.url and not _URL.match(self.url) and "@" not in self.url
        )
        if local and self.url and not os.path.isabs(self.url):
            head = os.path.abspath(self.url) + head.strip()[len(self.url) :]
        if self.editable:
            head = f"-e {head}"
        return " ".join(
            [
                head,
                *(f"--hash={h}" for h in self.hashes),
                *(f"{k} {_quoted(v)}" for k, v in self.build_options),
            ]
        )


@valueclass
class ReqFile:
    """Everything read from requirement files and command-line requirements, in order."""

    entries: tuple[ReqEntry, ...] = ()
    files: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = ()

    @property
    def requirements(self) -> tuple[ReqEntry, ...]:
        return tuple(e for e in self.entries if e.kind != "option" and not e.constraint)

    @property
    def constraints(self) -> tuple[ReqEntry, ...]:
        return tuple(e for e in self.entries if e.kind != "option" and e.constraint)

    @property
    def options(self) -> tuple[ReqEntry, ...]:
        return tuple(e for e in self.entries if e.kind == "option")


# --- reading ----------------------------------------------------------------------


# str.splitlines()'s line boundaries (pip splits with splitlines), one line at a time:
# a list of every line of a 4 MB file of short lines would take ~70 MB.
_LINE = (
    "([^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]*)(\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]|\\Z)"
)


def _physical_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` exactly as ``text.splitlines()`` gives them, lazily."""
    pos = 0
    lines = _compiled(_LINE)
    while pos < len(text):
        m = lines.match(text, pos)
        assert m is not None  # the pattern matches at every position before the end
        yield m.group(1)
        pos = m.end()


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """pip's join_lines + ignore_comments: (first line number, line without comment)."""
    primary = 0
    pending: list[str] = []
    comment = _compiled(_COMMENT)

    def clean(n: int, line: str) -> tuple[int, str] | None:
        line = comment.sub("", line).strip()
        return (n, line) if line else None

    for n, physical in enumerate(_physical_lines(text), start=1):
        line = physical
        if not line.endswith("\\") or comment.match(line):
            if comment.match(line):
                line = " " + line  # a comment ends a continuation and is dropped
            if pending:
                pending.append(line)
                out = clean(primary, "".join(pending))
                pending = []
            else:
                out = clean(n, line)
            if out:
                yield out
        else:
            if not pending:
                primary = n
            pending.append(line.strip("\\"))
    if pending:
        out = clean(primary, "".join(pending))
        if out:
            yield out


def _expand(line: str, env: Mapping[str, str]) -> str:
    # pip: only ${NAME}; a variable that is unset or empty stays as written.
    for m in _compiled(_ENV_VAR).finditer(line):
        value = env.get(m.group(1))
        if value:
            line = line.replace(m.group(0), value)
    return line


def installer_lines(text: str, env: Mapping[str, str]) -> list[str]:
    """The lines pip reads in ``text`` (steps 1 to 3 above: continuations joined,
    comments dropped, ``${NAME}`` expanded from ``env``), each as the installer sees it."""
    return [_expand(line, env) for _, line in _logical_lines(text.removeprefix("\ufeff"))]


def includes_a_file(line: str) -> bool:
    """Whether ``line`` (one of :func:`installer_lines`) has the installer read another
    requirements file (``-r``/``-c`` in any spelling)."""
    _, options = _split_args(line)
    try:
        return any(k in ("-r", "-c") for k, _ in _parse_options(options, "", []))
    except UsageError:
        return False  # not an option line pip reads either


def _split_args(line: str) -> tuple[str, str]:
    """pip's break_args_options: requirement text, then options from the first '-' token."""
    tokens = line.split(" ")
    args: list[str] = []
    for i, token in enumerate(tokens):
        if token.startswith("-"):
            return " ".join(args), " ".join(tokens[i:])
        args.append(token)
    return " ".join(args), ""


def _quoted(text: str) -> str:
    """``text`` quoted for a shell's line; shlex is imported here, as the options of a
    file's lines are split: most lines written out have no option to quote."""
    import shlex

    return shlex.quote(text)


def _parse_options(text: str, where: str, warnings: list[str]) -> list[tuple[str, str | None]]:
    import shlex  # here: the option lines of a file only (see _quoted)

    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{where}: cannot split options {text!r}: {exc}") from None
    known = {**_FILE_OPTIONS, **_REQ_OPTIONS}
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name, value = tok, None
        if tok.startswith("--") and "=" in tok:
            name, value = tok.split("=", 1)
        elif not tok.startswith("--") and tok.startswith("-") and len(tok) > 2:
            name, value = tok[:2], tok[2:]  # -rfile, -fURL
        if not tok.startswith("-"):
            # pip's option parser drops stray words after the options without a word.
            warnings.append(
                f"{where}: pip ignores {tok!r} after the options: "
                "put each requirement on its own line, before any option"
            )
            i += 1
            continue
        if name not in known:
            raise UsageError(f"{where}: no such option: {name}")
        if known[name] and value is None:
            if i + 1 >= len(tokens):
                raise UsageError(f"{where}: {name} needs a value")
            i += 1
            value = tokens[i]
        elif not known[name] and value is not None:
            raise UsageError(f"{where}: {name} takes no value")
        out.append((_CANONICAL.get(name, name), value))
        i += 1
    return out


def parse_requirement_line(
    text: str,
    *,
    where: str = "<command line>",
    lineno: int = 0,
    source: str = "<command line>",
    editable: bool = False,
    constraint: bool = False,
    hashes: tuple[str, ...] = (),
    line_options: tuple[str, ...] = (),
    build_options: tuple[tuple[str, str], ...] = (),
) -> ReqEntry:
    """One requirement as pip reads it: PEP 508, ``name @ url``, bare URL or local path."""
    common: dict[str, Any] = {
        "text": text,
        "source": source,
        "lineno": lineno,
        "editable": editable,
        "constraint": constraint,
        "hashes": hashes,
        "line_options": line_options,
        "build_options": build_options,
    }
    if _URL.match(text) or _VCS.match(text):
        # pip splits a URL's marker at "; " (a URL may hold ';').
        url, _, marker_text = text.partition("; ") if "; " in text else (text, "", "")
        url = url.strip()
        marker = _marker(marker_text, where) if marker_text.strip() else None
        name = _name_from_url(url)
        req = None
        if name and url.split("#", 1)[0].endswith(".whl"):
            req = _requirement(f"{name} @ {url}", where, text)
        return ReqEntry(kind="url", requirement=req, name=name, url=url, marker=marker, **common)
    if not _named_url(text) and (
        text.startswith((".", "/", "~"))
        or (editable and "@" not in text)
        or re.match(r"^[A-Za-z]:[\\/]", text)
        or text.endswith((".whl", ".tar.gz", ".zip"))
    ):
        path, _, marker_text = text.partition(";")
        marker = _marker(marker_text, where) if marker_text.strip() else None
        return ReqEntry(
            kind="path",
            url=path.strip(),
            name=_name_from_url(path.strip()),
            marker=marker,
            **common,
        )
    req = _requirement(text, where, text)
    return ReqEntry(
        kind="requirement",
        requirement=req,
        name=canonicalize_name(req.name),
        url=req.url,
        marker=req.marker,
        **common,
    )


def _named_url(text: str) -> bool:
    """``name @ url``: an ``@`` whose left side does not look like a path is a PEP 508
    direct reference, whatever the URL ends with (pip's ``_get_url_from_path``)."""
    before, at, _ = text.partition("@")
    return bool(at) and not ("/" in before or "\\" in before or before.startswith("."))


def _requirement(text: str, where: str, original: str) -> Requirement:
    try:
        req = Requirement(text)
        for spec in req.specifier:
            too_big = check_version_text(spec.version)
            if too_big is not None:
                raise InvalidRequirement(f"version {spec.version[:40]!r}... {too_big}")
        if req.marker is not None:
            too_big = check_version_text(str(req.marker), max_length=None)
            if too_big is not None:
                raise InvalidRequirement(f"marker {str(req.marker)[:40]!r}... {too_big}")
        return req
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0]
        hint = None
        parts = original.split()
        if len(parts) > 1 and all(_parses(p) for p in parts):
            hint = "pip reads one requirement per line: put each on its own line"
        elif "${" in original:
            hint = "pip expands ${NAME} only when the variable is set and not empty"
        shown = original if len(original) <= 200 else original[:200] + "..."
        raise UsageError(f"{where}: invalid requirement {shown!r}: {reason}", hint=hint) from None


def _parses(text: str) -> bool:
    try:
        Requirement(text)
    except InvalidRequirement:
        return False
    return True


def _marker(text: str, where: str) -> Marker:
    try:
        too_big = check_version_text(text, max_length=None)
        if too_big is not None:
            raise InvalidMarker(too_big)
        return Marker(text.strip())
    except InvalidMarker as exc:
        raise UsageError(
            f"{where}: invalid marker {text.strip()[:200]!r}: {str(exc).splitlines()[0]}"
        ) from None


def _name_from_url(url: str) -> NormalizedName | None:
    m = _compiled(_EGG).search(url)
    if m:
        return canonicalize_name(m.group(1))
    filename = url.split("#", 1)[0].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    if filename.endswith(".whl"):
        from urllib.parse import unquote

        try:
            return parse_wheel_filename(unquote(filename))[0]
        except ValueError:  # InvalidWheelFilename, InvalidVersion, a 5,000-digit number
            return None
    return None


def parse_requirements(
    text: str,
    *,
    source: str = "<requirements>",
    read: Reader | None = None,
    env: Mapping[str, str] | None = None,
    constraint: bool = False,
    _stack: tuple[str, ...] = (),
    record: Recorder = NOWHERE,
) -> ReqFile:
    """Parse requirements-file text. ``read(path)`` returns an included file's text
    (None: ``-r``/``-c`` are an error). Pure: the environment is a parameter; a
    ``-f`` folder looked for beside the file is declared to ``record``."""
    env = {} if env is None else env
    if len(text) > MAX_REQUIREMENTS_BYTES:
        raise UsageError(f"{source}: larger than the {MAX_REQUIREMENTS_BYTES} bytes allowed")
    # pip decodes a file by its byte-order mark and drops the mark (docs/facts.md
    # section 3); a UTF-8 BOM is common from Windows editors.
    text = text.removeprefix("\ufeff")
    entries: list[ReqEntry] = []
    warnings: list[str] = []
    files = [source]
    stack = (*_stack, source)
    for lineno, raw in _logical_lines(text):
        if len(entries) > MAX_REQUIREMENT_LINES:
            raise UsageError(f"{source}: more than {MAX_REQUIREMENT_LINES} requirement lines")
        line = _expand(raw, env)
        where = f"{source}:{lineno}"
        args, opt_text = _split_args(line)
        opts = _parse_options(opt_text, where, warnings) if opt_text else []
        if args:
            hashes = tuple(v for k, v in opts if k == "--hash" and v)
            ignored = tuple(k for k, _ in opts if k not in _REQ_OPTIONS and k != "-C")
            build = tuple((k, v) for k, v in opts if k in ("-C", "--global-option") and v)
            entries.append(
                parse_requirement_line(
                    args,
                    where=where,
                    lineno=lineno,
                    source=source,
                    constraint=constraint,
                    hashes=hashes,
                    line_options=ignored,
                    build_options=build,
                )
            )
            continue
        for name, given in opts:
            value = given
            assert value is not None or not _FILE_OPTIONS.get(name, False)
            if name in ("-r", "-c"):
                nested = _include(
                    value or "", source, where, read, env, stack, constraint=name == "-c",
                    record=record,
                )  # fmt: skip
                entries.extend(nested.entries)
                warnings.extend(nested.warnings)
                files.extend(f for f in nested.files if f not in files)
            elif name == "-e":
                entries.append(
                    parse_requirement_line(
                        value or "",
                        where=where,
                        lineno=lineno,
                        source=source,
                        editable=True,
                        constraint=constraint,
                    )
                )
            elif name == "--hash":
                continue  # pip: "has --hash but no requirement, and will be ignored"
            else:
                if name == "-f" and value and not _URL.match(value) and source[:1] != "<":
                    # pip (req_file.py, handle_option_line) and uv: a folder relative to
                    # the requirements file when it exists there, else as written.
                    beside = os.path.join(os.path.dirname(os.path.abspath(source)), value)
                    value = beside if path_kind(beside, record) is not None else value
                entries.append(
                    ReqEntry(
                        kind="option",
                        text=line,
                        source=source,
                        lineno=lineno,
                        option=name,
                        value=value,
                        constraint=constraint,
                    )
                )
    return ReqFile(entries=tuple(entries), files=tuple(files), warnings=tuple(warnings))


def _include(  # noqa: PLR0917 - pip's include state, passed down
    target: str,
    source: str,
    where: str,
    read: Reader | None,
    env: Mapping[str, str],
    stack: tuple[str, ...],
    *,
    constraint: bool,
    record: Recorder,
) -> ReqFile:
    if _URL.match(target):
        raise UsageError(
            f"{where}: {target!r} is a URL: resolver-hook reads local requirement files only",
            hint="download it and pass the file",
        )
    if read is None:
        raise UsageError(
            f"{where}: cannot follow '-r/-c {target}' here",
            hint="pass the requirements as a file with -r",
        )
    base = os.path.dirname(source) if source not in ("<requirements>", "<command line>") else ""
    path = os.path.normpath(os.path.join(base, target))
    if path in stack:
        chain = " -> ".join((*stack[stack.index(path) :], path))
        raise UsageError(f"{where}: requirement files include each other: {chain}")
    if len(stack) > MAX_INCLUDE_DEPTH:
        raise UsageError(f"{where}: -r/-c nested more than {MAX_INCLUDE_DEPTH} files deep")
    text = _open(read, path, constraint=constraint, where=f"{where}: ")
    return parse_requirements(
        text, source=path, read=read, env=env, constraint=constraint, _stack=stack, record=record
    )


def _open(read: Reader, path: str, *, constraint: bool, where: str = "") -> str:
    """``read(path)``, with pip's words when the file cannot be opened."""
    from resolver_hook.ground.input import InputError

    try:
        return read(path)
    except (OSError, InputError) as exc:
        if isinstance(exc, InputError) and not exc.opening:
            raise  # a folder, a device, a pipe nobody writes to: said as it is
        kind = "constraint" if constraint else "requirements"
        reason = (
            exc.problem.removeprefix("cannot read: ")
            if isinstance(exc, InputError)
            else (exc.strerror or exc)
        )
        shown = repr(path) if "\0" in path else path
        raise UsageError(f"{where}could not open {kind} file {shown}: {reason}") from None


# pip's rules for the bytes of a requirements file (pip/_internal/req/req_file.py,
# _decode_req_file, pip 26.0; docs/facts.md section 3): a byte-order mark (UTF-32's
# before UTF-16's, whose little-endian mark begins UTF-32's), else a PEP 263 coding
# comment in the first two lines, else UTF-8, else the locale's encoding, with a warning.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF16, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)
_PEP263 = rb"coding[:=]\s*([-\w.]+)"  # compiled when a file has a comment first


def decode_requirements(data: bytes, shown: str, warnings: list[str]) -> str:
    """The text of a requirements file's bytes, decoded as pip decodes it; a UsageError
    naming the file when pip could not decode it either."""
    encoding = None
    for bom, name in _BOMS:
        if data.startswith(bom):
            data, encoding = data[len(bom) :], name
            break
    else:
        for line in data.split(b"\n")[:2]:
            m = re.search(_PEP263, line) if line[:1] == b"#" else None
            if m is not None:
                encoding = m.group(1).decode("ascii")
                break
    if encoding is not None:
        try:
            return data.decode(encoding)
        except LookupError:
            raise UsageError(f"{shown}: unknown encoding {encoding!r} in its coding line") from None
        except UnicodeDecodeError as exc:
            raise UsageError(f"{shown}: not valid {encoding} text: {exc.reason}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    local = locale.getpreferredencoding(False) or sys.getdefaultencoding()
    try:
        text = data.decode(local)
    except (UnicodeDecodeError, LookupError):
        raise UsageError(
            f"{shown}: neither UTF-8 nor this locale's {local} text",
            hint="save it as UTF-8, or name its encoding in a first line "
            "'# -*- coding: NAME -*-' as pip reads it",
        ) from None
    warnings.append(
        f"{shown}: not UTF-8: read as this locale's {local}, as pip does; name the encoding "
        f"in a first line '# -*- coding: {local} -*-' if that is right"
    )
    return text


def _text_reader(
    warnings: list[str], stdin: bytes | None = None, record: Recorder = NOWHERE
) -> Reader:
    """The file-system reader of requirement files: the one input opener (folders and
    devices refused, pipes read with a cap and a deadline), pip's decoding; ``-`` is
    ``stdin`` when given. Each file read (an include too) is declared to ``record``."""

    def read(path: str) -> str:
        if path == "-" and stdin is not None:
            record.refuse("standard input")
            return decode_requirements(stdin, "-", warnings)
        from resolver_hook.ground.input import read_input  # a plan of names reads no file

        return decode_requirements(read_input(path, record=record), path, warnings)

    return read


def read_requirements(
    files: Iterable[str] = (),
    lines: Iterable[str] = (),
    *,
    constraints: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    record: Recorder = NOWHERE,
) -> ReqFile:
    """The file-system edge: read ``-r`` files, ``-c`` files and command-line requirements.

    Command-line requirements come first, as pip lists them. ``stdin``: what ``-r -``
    reads (uv's standard input; its ``-r`` lines are relative to the current folder).
    ``record``: where each file read is declared (:mod:`resolver_hook.ground.record`).
    """
    env = os.environ if env is None else env
    entries: list[ReqEntry] = []
    warnings: list[str] = []
    seen: list[str] = []
    for i, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:  # pip: "ERROR: Invalid requirement: ''"; a blank file line is fine
            raise UsageError(f"invalid requirement {line!r}: an empty requirement")
        entries.append(
            parse_requirement_line(
                text,
                where=f"requirement {text[:200]!r}",
                lineno=0,
                source=f"<command line {i}>",
            )
        )
    read = _text_reader(warnings, stdin, record)
    for path, constraint in [(f, False) for f in files] + [(f, True) for f in constraints]:
        text = _open(read, path, constraint=constraint)
        parsed = parse_requirements(
            text, source=path, read=read, env=env, constraint=constraint, record=record
        )
        entries.extend(parsed.entries)
        if len(entries) > MAX_REQUIREMENT_LINES:
            raise UsageError(f"{path}: more than {MAX_REQUIREMENT_LINES} requirement lines in all")
        warnings.extend(parsed.warnings)
        seen.extend(f for f in parsed.files if f not in seen)
    return ReqFile(entries=tuple(entries), files=tuple(seen), warnings=tuple(warnings))


# --- writing ----------------------------------------------------------------------


def format_requirement(
    name: str,
    *,
    url: str | None = None,
    sha256: str | None = None,
    version: str | None = None,
    extras: Iterable[str] = (),
    marker: Marker | str | None = None,
    specifier: str | None = None,
) -> str:
    """One pip line: ``name[x] @ url#sha256=... ; marker`` or ``name[x]==version ; marker``.

    The space before ``;`` matters: PEP 508 parsers read ``url;marker`` as part of
    the URL (docs/facts.md section 3).
    """
    ex = sorted(extras)
    head = f"{name}[{','.join(ex)}]" if ex else name
    if url:
        frag = f"#sha256={sha256}" if sha256 and "#sha256=" not in url else ""
        line = f"{head} @ {url}{frag}"
    elif version:
        line = f"{head}=={version}"
    elif specifier:
        line = f"{head}{specifier}"
    else:
        line = head
    if marker is not None and str(marker):
        line += f" ; {marker}"
    return line


def url_lines_first(lines: Iterable[str]) -> list[str]:
    """``lines`` with the URL lines first, each group in its own order: pip wants a URL
    line before a plain line of the same name (docs/facts.md section 3)."""
    lines = list(lines)
    return [x for x in lines if is_url_line(x)] + [x for x in lines if not is_url_line(x)]


def is_url_line(line: str) -> bool:
    """Whether a requirement line names a URL (``name @ url`` or a bare URL).

    pip wants such a line before a plain line of the same name (docs/facts.md section 3).
    """
    head = line.split(" ;", 1)[0]
    return " @ " in head or "://" in head.split(" ", 1)[0]


def with_marker(line: str, marker: str) -> str:
    """A requirements-file line that holds only where ``marker`` holds too.

    The line's own marker, if any, is ANDed with ``marker``; its options (``--hash``)
    stay after the requirement, where pip reads them: a marker written after them
    would be read as stray words and ignored.
    """
    text, options = _split_args(line)
    own = parse_requirement_line(text).marker
    if own is not None:
        # The marker starts at the first ';' after which the rest is that marker (a URL
        # before it may hold ';').
        cut = next(i for i, ch in enumerate(text) if ch == ";" and _same_marker(text[i + 1 :], own))
        text = text[:cut].rstrip()
        marker = f"({own}) and ({marker})"
    return f"{text} ; {marker}" + (f" {options}" if options else "")


def _same_marker(text: str, marker: Marker) -> bool:
    try:
        return Marker(text.strip()) == marker
    except InvalidMarker:
        return False
