"""resolver_hook.ground.valueclass: value classes behave as the dataclasses they replaced.

Each check puts a value class beside the standard-library dataclass of the same fields
(``frozen=True, slots=True``) and compares what users of the class see: construction,
equality, hashes (the same numbers: a set's order must not move), repr, frozenness,
slots, copies, and the stand-ins for ``dataclasses.replace`` and ``fields``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
from pathlib import Path
from types import CodeType

import pytest

from resolver_hook.ground._valueinits import SHAPES
from resolver_hook.ground.valueclass import (
    FrozenInstanceError,
    field,
    fields,
    from_columns,
    is_value,
    replace,
    template_text,
    valueclass,
)

ROOT = Path(__file__).resolve().parent.parent


@valueclass
class Item:
    """A value with every kind of field the package uses."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()
    extra: list[str] = field(default_factory=list, compare=False)
    note: str | None = field(default=None, compare=False, repr=False)
    hidden: str = field(default="", metadata={"json": False})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Twin:
    """Item's fields, made by the standard library."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()
    extra: list[str] = dataclasses.field(default_factory=list, compare=False)
    note: str | None = dataclasses.field(default=None, compare=False, repr=False)
    hidden: str = dataclasses.field(default="", metadata={"json": False})


@valueclass(kw_only=False)
class Pair:
    left: str
    right: int = 1


@valueclass(kw_only=False, frozen=False)
class Counter:
    name: str
    count: int = 0


@valueclass
class Base:
    when: str = "any"


@valueclass
class Child(Base):
    """A value class made on another: the base's fields first."""

    what: str


CASES = [
    {"name": "a"},
    {"name": "a", "size": 3, "tags": ("x", "y")},
    {"name": "b", "extra": ["v"], "note": "n", "hidden": "h"},
    {"name": "", "size": -1, "tags": (), "note": None},
]


@pytest.mark.parametrize("kwargs", CASES)
def test_a_value_equals_hashes_and_shows_as_its_dataclass_twin(kwargs: dict[str, object]) -> None:
    ours, theirs = Item(**kwargs), Twin(**kwargs)  # type: ignore[arg-type]
    assert repr(ours) == repr(theirs).replace("Twin(", "Item(", 1)
    # The same tuple hashed, so the same number (sets and dicts of values keep their order).
    assert hash(ours) == hash(theirs)
    assert ours == Item(**kwargs)  # type: ignore[arg-type]
    assert ours != theirs  # another class is never equal
    assert [getattr(ours, f.name) for f in fields(ours)] == [
        getattr(theirs, f.name) for f in dataclasses.fields(theirs)
    ]


def test_a_field_left_out_of_comparison_changes_neither_equality_nor_hash() -> None:
    a, b = Item(name="a", note="one"), Item(name="a", note="two")
    assert a == b
    assert hash(a) == hash(b)
    assert Item(name="a") != Item(name="a", size=1)
    assert Item(name="a").__eq__(object()) is NotImplemented


def test_a_frozen_value_refuses_assignment_and_deletion() -> None:
    item = Item(name="a")
    with pytest.raises(FrozenInstanceError, match="'name'"):
        item.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del item.size  # type: ignore[misc]
    assert not hasattr(item, "__dict__")  # slots, as slots=True makes
    assert Item.__slots__ == tuple(f.name for f in fields(Item))


def test_factories_make_a_fresh_default_each_time_and_defaults_are_shared() -> None:
    a, b = Item(name="a"), Item(name="b")
    assert a.extra == []
    assert a.extra is not b.extra
    assert a.tags is b.tags


def test_the_constructor_is_keyword_only_with_the_dataclass_signature() -> None:
    with pytest.raises(TypeError):
        Item("a")  # type: ignore[misc]
    with pytest.raises(TypeError, match="name"):
        Item()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bogus"):
        Item(name="a", bogus=1)  # type: ignore[call-arg]
    assert str(inspect.signature(Item)) == str(inspect.signature(Twin))


def test_positional_values_and_their_order_rule() -> None:
    assert Pair("a") == Pair(left="a", right=1)
    assert Pair.__match_args__ == ("left", "right")
    assert Item.__match_args__ == ()
    with pytest.raises(TypeError, match="follows"):

        @valueclass(kw_only=False)
        class Bad:
            first: int = 0
            second: int


def test_a_mutable_value_class_assigns_and_does_not_hash() -> None:
    c = Counter("n")
    c.count += 1
    assert c == Counter("n", 1)
    with pytest.raises(TypeError, match="unhashable"):
        hash(c)


def test_a_value_class_on_another_takes_its_fields_first() -> None:
    child = Child(what="w")
    assert [f.name for f in fields(child)] == ["when", "what"]
    assert child == Child(when="any", what="w")
    assert repr(child) == "Child(when='any', what='w')"
    assert Child.__slots__ == ("what",)


def test_replace_keeps_the_other_fields_and_checks_the_names() -> None:
    item = Item(name="a", size=2, note="kept")
    changed = replace(item, size=5)
    assert (changed.name, changed.size, changed.note) == ("a", 5, "kept")
    assert item.size == 2
    with pytest.raises(TypeError, match="bogus"):
        replace(item, bogus=1)


def test_fields_carry_their_metadata_and_is_value_tells_instances() -> None:
    meta = {f.name: dict(f.metadata) for f in fields(Item)}
    assert meta["hidden"] == {"json": False}
    assert meta["name"] == {}
    assert is_value(Item(name="a"))
    assert not is_value(Item)
    assert not is_value(Twin(name="a"))
    with pytest.raises(TypeError):
        fields(Twin)


def test_copies_and_pickles_are_equal_values() -> None:
    item = Item(name="a", tags=("t",), note="n")
    for again in (copy.copy(item), copy.deepcopy(item), pickle.loads(pickle.dumps(item))):
        assert again == item
        assert again.note == "n"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("items: list[int] = []", ValueError),
        ("total: ClassVar[int] = 0", TypeError),
        ("def __eq__(self, other): return True", TypeError),
        ("self: int = 0", TypeError),
    ],
)
def test_what_is_not_supported_is_refused_when_the_class_is_made(
    body: str, error: type[Exception]
) -> None:
    space: dict[str, object] = {"valueclass": valueclass}
    head = "from __future__ import annotations\n@valueclass\nclass C:\n"
    text = f"{head}    x: int = 0\n    {body}\n"
    with pytest.raises(error):
        exec(text, space)


def test_a_field_may_be_named_as_any_other_name_of_its_module() -> None:
    """The generated ``__init__`` reads only its own ``__value_`` names (a class statement
    mangles such a name): fields named like helpers (``_set``, ``object``, ``_read``) are
    set, not confused with them."""

    @valueclass
    class Odd:
        _set: int = 1
        object: str = "o"
        _read: list[int] = field(default_factory=list)

    odd = Odd(_set=2)
    assert (odd._set, odd.object, odd._read) == (2, "o", [])


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the value-class module compiles from now on, in order."""
    texts: list[str] = []
    real = compile

    def counting(text: str, *args: object) -> object:
        texts.append(text)
        return real(text, *args)  # type: ignore[call-overload]

    monkeypatch.setattr(inspect.getmodule(valueclass), "compile", counting, raising=False)
    return texts


def test_classes_of_one_shape_share_one_compiled_body_each_with_its_own_names(
    monkeypatch: pytest.MonkeyPatch, compiled: list[str]
) -> None:
    """Value classes of one shape (frozen or not, keyword-only or not, which fields have a
    factory) compile their ``__init__`` once (~0.3 ms each) and put their own names in:
    fields named as the template's own (``_0``, ``_1``), in another order, land where
    they are named, as do positional arguments and a mutable class's assignments."""
    monkeypatch.setattr(inspect.getmodule(valueclass), "_TEMPLATES", {})

    @valueclass
    class A:
        _1: int
        _0: str = "zero"
        made: list[int] = field(default_factory=list)

    @valueclass
    class B:
        left: int
        right: str = "r"
        more: list[int] = field(default_factory=lambda: [1])

    @valueclass(frozen=False, kw_only=False)
    class C:
        _1: int
        _0: str = "zero"

    a, b, c = A(_1=1), B(left=2, right="x"), C(3)
    assert len(compiled) == 2  # A and B: one shape; C another
    assert (a._1, a._0, a.made, b.left, b.right, b.more) == (1, "zero", [], 2, "x", [1])
    assert (c._1, c._0) == (3, "zero")
    c._0 = "set"
    assert c == C(3, "set")
    with pytest.raises(
        TypeError, match=r"A\.__init__\(\) missing 1 required keyword-only argument: '_1'"
    ):
        A()
    with pytest.raises(TypeError, match=r"B\.__init__\(\) got an unexpected keyword argument '_0'"):
        B(left=1, _0="x")


def test_classes_share_the_names_their_init_is_given() -> None:
    """The names each field's factory and setter are given to a class's ``__init__`` by
    (``__value_make_0``, ``__value_set_1``, ...) are written once a process, not again
    for each class: two classes' ``__init__`` globals hold the same strings."""

    @valueclass
    class A:
        one: int
        two: list[int] = field(default_factory=list)

    @valueclass
    class B:
        first: str
        second: list[str] = field(default_factory=list)

    def names(cls: type) -> list[str]:
        return [k for k in cls.__init__.__globals__ if k.startswith("__value_")]

    assert (
        names(A)
        == names(B)
        == [
            "__value_factory",
            "__value_set_0",
            "__value_make_1",
            "__value_set_1",
        ]
    )
    assert all(a is b for a, b in zip(names(A), names(B), strict=True))


def test_the_shipped_init_bodies_are_those_of_the_packages_shapes() -> None:
    """_valueinits.py holds the shape of every value class the package's modules make
    (scripts/value_shapes.py writes it): a class added in a shape of its own, with the
    file not written again, fails here rather than quietly compiling at every start."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "value_shapes.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(SHAPES) >= 20


def test_a_shipped_body_is_the_code_its_text_compiles_to() -> None:
    """Each shipped ``__init__`` is what compiling its shape's text gives (the same
    bytecode, names, constants, flags and lines, once it is put at line 1 as a class's
    ``__init__`` is): a class gets the same method whichever way its body came."""
    for shape, shipped in SHAPES.items():
        module = compile(template_text(*shape), "<value>", "exec")
        compiled = next(c for c in module.co_consts if isinstance(c, CodeType))
        assert shipped.replace(co_firstlineno=1) == compiled, shape


def test_a_class_of_a_shipped_shape_compiles_nothing(compiled: list[str]) -> None:
    """A class whose shape is shipped is made without compiling (the 2.3 ms a plan's
    imports spent compiling their classes' bodies); one of a new shape still compiles,
    and works the same."""
    assert (True, True, (False, False)) in SHAPES

    @valueclass
    class Two:
        left: int
        right: str

    assert compiled == []
    assert Two(left=1, right="r") == Two(left=1, right="r")
    with pytest.raises(TypeError, match=r"Two\.__init__\(\) missing 1 required keyword-only"):
        Two(left=1)  # type: ignore[call-arg]
    assert (True, True, (False,) * 40) not in SHAPES
    many = valueclass(type("Many", (), {"__annotations__": {f"f{i}": "int" for i in range(40)}}))
    assert len(compiled) == 1
    assert many(**{f"f{i}": i for i in range(40)}).f39 == 39  # type: ignore[attr-defined]


ROWS = [
    {"name": "a", "size": 1, "tags": (), "extra": [], "note": None, "hidden": ""},
    {"name": "b", "size": 2, "tags": ("x",), "extra": ["e"], "note": "n", "hidden": "h"},
    {"name": "c", "size": 3, "tags": ("y", "z"), "extra": [], "note": None, "hidden": "i"},
]


@pytest.mark.parametrize("rows", [ROWS, ROWS[:1], []], ids=["three", "one", "none"])
def test_from_columns_makes_what_the_constructor_makes(rows: list[dict[str, object]]) -> None:
    columns = {name: [row[name] for row in rows] for name in ROWS[0]}
    made = from_columns(Item, columns)
    assert made == [Item(**row) for row in rows]  # type: ignore[arg-type]
    for value, row in zip(made, rows, strict=True):
        assert type(value) is Item
        assert {f.name: getattr(value, f.name) for f in fields(value)} == row
        assert repr(value) == repr(Item(**row))  # type: ignore[arg-type]
        assert hash(value) == hash(Item(**row))  # type: ignore[arg-type]
        with pytest.raises(FrozenInstanceError):
            value.name = "x"  # type: ignore[misc]
    # A base's fields, and a mutable value class, alike.
    assert from_columns(Child, {"when": ["w"], "what": ["t"]}) == [Child(when="w", what="t")]
    (counter,) = from_columns(Counter, {"name": ["n"], "count": [4]})
    counter.count += 1
    assert counter == Counter("n", 5)


@pytest.mark.parametrize(
    ("columns", "error"),
    [
        ({"when": ["w"]}, TypeError),  # a field without its column
        ({"when": ["w"], "what": ["t"], "other": ["o"]}, TypeError),  # a column of no field
        ({"when": ["w", "v"], "what": ["t"]}, ValueError),  # not one length
    ],
)
def test_from_columns_refuses_columns_that_are_not_the_fields(
    columns: dict[str, list[str]], error: type[Exception]
) -> None:
    with pytest.raises(error):
        from_columns(Child, columns)
