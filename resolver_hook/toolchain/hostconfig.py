"""Which host compilers a CUDA toolkit accepts, read from its own ``crt/host_config.h``.

nvcc runs the host compiler's preprocessor over ``crt/host_config.h``; a chain of
``#if`` blocks there ends in ``#error -- unsupported GNU version! gcc versions later
than 15 are not supported!`` (CUDA 13.0 and 13.2), ``#error -- unsupported clang
version! ...`` (``__clang_major__ >= 21``) or the Visual Studio range on Windows.
The limits change with every toolkit release, so this module keeps no table: it
parses the header's conditional structure and evaluates it, like a preprocessor
would, against the predefined macros of a compiler. ``#error`` lines that would be
reached are the rejections, with the header's own words.

The evaluator understands what the header uses: ``#if/#ifdef/#ifndef/#elif/#else/
#endif``, ``#define``/``#undef`` of object-like macros, ``defined``, integer
arithmetic, comparisons and logic. Anything else in a condition (a function-like
macro such as ``__has_include``) makes that condition *unknown*: it is taken as false
and reported, never guessed silently.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import MAX_HOSTCONFIG_NESTING, MAX_HOSTCONFIG_TOKENS

__all__ = [
    "HostConfig",
    "HostConfigError",
    "Rejection",
    "Verdict",
    "accepted_range",
    "evaluate",
    "parse_host_config",
]


class HostConfigError(ValueError):
    """The header's conditional structure could not be parsed (unbalanced #if...)."""


@valueclass
class Rejection:
    """An ``#error`` the host compiler would reach: ``line`` in the header, its text."""

    line: int
    message: str

    @property
    def short(self) -> str:
        """The message without nvcc's standard '-allow-unsupported-compiler' tail."""
        text = self.message
        cut = text.find(" The nvcc flag")
        return text[:cut].strip() if cut > 0 else text


@valueclass
class Verdict:
    """Result of evaluating the header for one set of predefined macros.

    ``rejections`` are the ``#error`` lines reached (empty: accepted). ``unknown``
    lists the conditions that could not be evaluated (line and reason); they were
    taken as false, so an ``accepted`` verdict with unknowns is not certain.
    """

    rejections: tuple[Rejection, ...]
    unknown: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return not self.rejections


# --- the conditional structure -------------------------------------------------

# An expression tree: ("num", n) | ("id", name) | ("defined", name) | (op, a[, b[, c]]).
_Node = tuple[Any, ...]


@valueclass
class _Directive:
    line: int
    name: str  # if, ifdef, ifndef, elif, elifdef, elifndef, else, endif, define, undef, error
    text: str  # the rest of the line
    expr: _Node | None = None  # parsed condition of #if / #elif
    expr_error: str | None = None  # why the condition could not be parsed


@valueclass
class HostConfig:
    """A parsed ``crt/host_config.h``: its directives in order, conditions pre-parsed."""

    path: str
    directives: tuple[_Directive, ...]


_DIRECTIVE_RE = re.compile(r"^\s*#\s*([A-Za-z_]\w*)\s*(.*)$")
_KNOWN = frozenset(
    {
        "if",
        "ifdef",
        "ifndef",
        "elif",
        "elifdef",
        "elifndef",
        "else",
        "endif",
        "define",
        "undef",
        "error",
    }
)


def _strip_comments(text: str) -> str:
    """Replace comments with spaces, keeping newlines (so line numbers stay right).

    String and character literals are copied as they are; a literal ends at its closing
    quote or at the end of the line (``#error`` text may hold a lone apostrophe).
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
        elif c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n) if j < n and text[j] == c else j
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield (first line number, line) with backslash-newline continuations joined."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        yield start, " ".join(pending)
        pending = []
    if pending:
        yield start, " ".join(pending)


def parse_host_config(text: str, *, path: str = "crt/host_config.h") -> HostConfig:
    """Parse the preprocessor structure of a ``host_config.h``.

    Raises :class:`HostConfigError` when the ``#if``/``#endif`` nesting is broken or the
    header holds no ``#error`` at all (then it is not a host_config.h we understand).
    """
    directives: list[_Directive] = []
    depth = 0
    errors = 0
    for line, content in _logical_lines(_strip_comments(text)):
        match = _DIRECTIVE_RE.match(content)
        if not match or match.group(1) not in _KNOWN:
            continue
        name, rest = match.group(1), match.group(2).strip()
        expr: _Node | None = None
        expr_error: str | None = None
        if name in ("if", "elif"):
            try:
                expr = _Parser(rest).parse()
            except _ExprError as exc:
                expr_error = str(exc)
        if name in ("if", "ifdef", "ifndef"):
            depth += 1
        elif name == "endif":
            depth -= 1
            if depth < 0:
                raise HostConfigError(f"{path}:{line}: #endif without #if")
        elif name in ("elif", "elifdef", "elifndef", "else") and depth == 0:
            raise HostConfigError(f"{path}:{line}: #{name} without #if")
        elif name == "error":
            errors += 1
        directives.append(
            _Directive(line=line, name=name, text=rest, expr=expr, expr_error=expr_error)
        )
    if depth:
        blocks = "#if block" if depth == 1 else "#if blocks"
        raise HostConfigError(f"{path}: {depth} {blocks} not closed by #endif")
    if not errors:
        raise HostConfigError(f"{path}: no #error directive; not a host_config.h this tool reads")
    return HostConfig(path=path, directives=tuple(directives))


# --- #if expressions ---------------------------------------------------------------


class _ExprError(Exception):
    pass


_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>\|\||&&|==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),]))"
)

# Binary operators by precedence, loosest first (C11 6.5).
_BINARY = (
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", ">", "<=", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)


class _Parser:
    """Recursive-descent parser of a C preprocessor ``#if`` expression.

    Bounded (resolver_hook/limits.py): at most ``MAX_HOSTCONFIG_TOKENS`` tokens and
    ``MAX_HOSTCONFIG_NESTING`` levels of parentheses, unary operators and ``?:``, so a
    hostile header (5,000 ``!``, 500 nested parentheses) is an unknown condition, not a
    RecursionError.
    """

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        self.depth = 0
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            if len(self.tokens) >= MAX_HOSTCONFIG_TOKENS:
                raise _ExprError(f"condition longer than {MAX_HOSTCONFIG_TOKENS} tokens")
            match = _TOKEN_RE.match(text, pos)
            if not match or match.end() == pos:
                rest = text[pos:].strip()[:20]
                raise _ExprError(f"cannot read {text.strip()[:60]!r} at {rest!r}")
            kind = match.lastgroup or ""
            self.tokens.append((kind, match.group(kind)))
            pos = match.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0

    def parse(self) -> _Node:
        if not self.tokens:
            raise _ExprError("empty condition")
        node = self._conditional()
        if self.i != len(self.tokens):
            raise _ExprError(f"unexpected {self.tokens[self.i][1]!r}")
        return node

    def _peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise _ExprError("condition ends too early")
        self.i += 1
        return self.tokens[self.i - 1]

    def _expect(self, value: str) -> None:
        if self._take()[1] != value:
            raise _ExprError(f"expected {value!r}")

    def _deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_HOSTCONFIG_NESTING:
            raise _ExprError(f"condition nested more than {MAX_HOSTCONFIG_NESTING} levels")

    def _conditional(self) -> _Node:
        self._deeper()
        cond = self._binary(0)
        if self._peek() == "?":
            self._take()
            yes = self._conditional()
            self._expect(":")
            cond = ("?", cond, yes, self._conditional())
        self.depth -= 1
        return cond

    def _binary(self, level: int) -> _Node:
        if level == len(_BINARY):
            return self._unary()
        node = self._binary(level + 1)
        while self._peek() in _BINARY[level]:
            op = self._take()[1]
            node = (op, node, self._binary(level + 1))
        return node

    def _unary(self) -> _Node:
        if self._peek() in ("!", "~", "-", "+"):
            op = self._take()[1]
            self._deeper()
            node = ("u" + op, self._unary())
            self.depth -= 1
            return node
        return self._primary()

    def _primary(self) -> _Node:
        kind, value = self._take()
        if kind == "num":
            return ("num", _number(value))
        if kind == "id" and value == "defined":
            paren = self._peek() == "("
            if paren:
                self._take()
            kind, name = self._take()
            if kind != "id":
                raise _ExprError("defined needs a macro name")
            if paren:
                self._expect(")")
            return ("defined", name)
        if kind == "id":
            if self._peek() == "(":
                raise _ExprError(f"function-like macro {value}(...) is not evaluated")
            return ("id", value)
        if value == "(":
            node = self._conditional()
            self._expect(")")
            return node
        raise _ExprError(f"unexpected {value!r}")


# The preprocessor computes in intmax_t: 64 bits (docs/facts.md section 1).
_INT_BITS = 64


def _number(text: str) -> int:
    """A C integer constant: decimal, ``0x`` hex or ``0`` octal (``08`` is not one;
    docs/facts.md section 1)."""
    try:
        value = int(text, 8) if re.fullmatch(r"0\d+", text) else int(text, 0)
    except ValueError:
        raise _ExprError(f"{text[:20]!r} is not a C integer constant") from None
    if value >= 1 << _INT_BITS:
        raise _ExprError(f"integer constant {text[:20]}... does not fit in 64 bits")
    return _wrap(value)


def _wrap(value: int) -> int:
    """``value`` as a signed 64-bit integer, wrapped as GCC's preprocessor does."""
    value &= (1 << _INT_BITS) - 1
    return value - (1 << _INT_BITS) if value >> (_INT_BITS - 1) else value


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)  # C truncates toward zero; integer arithmetic, no float overflow
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


_BINARY_OPS: dict[str, Callable[[int, int], int | bool]] = {
    "|": operator.or_,
    "^": operator.xor,
    "&": operator.and_,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _c_div,
    "%": _c_mod,
}


def _value(node: _Node, macros: Mapping[str, str], depth: int = 0) -> int:
    """Evaluate an expression tree; undefined identifiers are 0, as in C."""
    op = node[0]
    if op == "num":
        return int(node[1])
    if op == "defined":
        return int(node[1] in macros)
    if op == "id":
        body = macros.get(node[1])
        if body is None:
            return 0
        if depth > 20:
            raise _ExprError(f"macro {node[1]} expands too deeply")
        if not body.strip():
            raise _ExprError(f"macro {node[1]} is defined empty")
        return _value(_Parser(body).parse(), macros, depth + 1)
    if op == "?":
        return _value(node[2] if _value(node[1], macros, depth) else node[3], macros, depth)
    if op == "||":
        return int(bool(_value(node[1], macros, depth) or _value(node[2], macros, depth)))
    if op == "&&":
        return int(bool(_value(node[1], macros, depth) and _value(node[2], macros, depth)))
    if op.startswith("u"):
        x = _value(node[1], macros, depth)
        return _wrap({"u!": int(not x), "u~": ~x, "u-": -x, "u+": x}[op])
    a, b = _value(node[1], macros, depth), _value(node[2], macros, depth)
    if op in ("/", "%") and b == 0:
        raise _ExprError("division by zero")
    if op in ("<<", ">>") and not 0 <= b < 64:
        raise _ExprError(f"shift by {b}")
    return _wrap(int(_BINARY_OPS[op](a, b)))


# --- evaluation --------------------------------------------------------------------------

_DEFINE_RE = re.compile(r"^([A-Za-z_]\w*)(\()?\s*(.*)$")


def evaluate(config: HostConfig, macros: Mapping[str, str]) -> Verdict:
    """Walk the header as a preprocessor would with ``macros`` predefined.

    ``macros`` maps names to their replacement text (``{"__GNUC__": "16"}``); nvcc's own
    ``__CUDACC__`` and friends must be in it. Returns the ``#error`` lines reached.
    """
    defined = dict(macros)
    rejections: list[Rejection] = []
    unknown: list[str] = []
    # Each frame: (enclosing region active, a branch of this chain already taken, active now)
    stack: list[tuple[bool, bool, bool]] = []
    active = True

    def test(d: _Directive) -> bool:
        words = d.text.split()
        if d.name in ("ifdef", "elifdef"):
            return bool(words) and words[0] in defined
        if d.name in ("ifndef", "elifndef"):
            return not (words and words[0] in defined)
        if d.expr is None:
            unknown.append(f"line {d.line}: {d.expr_error}")
            return False
        try:
            return bool(_value(d.expr, defined))
        except (_ExprError, RecursionError) as exc:
            unknown.append(f"line {d.line}: {exc}")
            return False

    for d in config.directives:
        if d.name in ("if", "ifdef", "ifndef"):
            taken = active and test(d)
            stack.append((active, taken, taken))
            active = taken
        elif d.name in ("elif", "elifdef", "elifndef"):
            outer, done, _ = stack[-1]
            taken = outer and not done and test(d)
            stack[-1] = (outer, done or taken, taken)
            active = taken
        elif d.name == "else":
            outer, done, _ = stack[-1]
            stack[-1] = (outer, True, outer and not done)
            active = outer and not done
        elif d.name == "endif":
            active = stack.pop()[0]
        elif not active:
            continue
        elif d.name == "define":
            match = _DEFINE_RE.match(d.text)
            if match:
                # A function-like macro counts as defined; its body is never evaluated.
                defined[match.group(1)] = "" if match.group(2) else match.group(3)
        elif d.name == "undef":
            defined.pop(d.text.split()[0] if d.text.split() else "", None)
        elif d.name == "error":
            message = re.sub(r"^[-!\s]+|[-\s]+$", "", d.text) or "#error"
            rejections.append(Rejection(line=d.line, message=message))
    return Verdict(rejections=tuple(rejections), unknown=tuple(unknown))


def accepted_range(
    config: HostConfig, macros: Mapping[str, str], macro: str, *, span: range = range(1, 100)
) -> tuple[int, int] | None:
    """The lowest and highest value of ``macro`` (``__GNUC__``, ``__clang_major__``) accepted.

    Every other macro keeps its value from ``macros``: this derives "GNU up to 15" from
    the header itself instead of a table. None when no value in ``span`` is accepted.
    """
    ok = [v for v in span if evaluate(config, {**macros, macro: str(v)}).accepted]
    return (ok[0], ok[-1]) if ok else None
