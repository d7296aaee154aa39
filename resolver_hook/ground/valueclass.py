"""Value classes: what ``@dataclass(frozen=True, slots=True, kw_only=True)`` makes, cheaper.

A standard-library dataclass compiles five or six generated methods with ``exec`` when
its class statement runs: 1.2-1.5 ms per class on Python 3.10 to 3.13, measured, and a
plan or a first hook run imports some forty of them before any work starts (about a
quarter of a first hook run's own time). :func:`valueclass` makes the same class with at
most one compile, its ``__init__``'s (keyword-only by default, the defaults and factories
as dataclasses give them, each field set past a frozen class's ``__setattr__`` as a frozen
dataclass's ``object.__setattr__`` does, but through the field's slot directly: a third
quicker an instance), and none for a class of a shape compiled before or shipped
compiled (the package's own shapes: ``_valueinits.py``; the same body with its own names
put in); ``__eq__``, ``__hash__`` and ``__repr__`` compare,
hash and show the fields' tuple through one shared :func:`operator.attrgetter`, with the
results a dataclass gives (the same tuples, so the same hashes); assigning to a frozen
instance raises :class:`FrozenInstanceError`. The class is made again with
``__slots__``, as ``slots=True`` does.

What is not here is not used in this package: ``ClassVar`` and ``InitVar`` fields,
``__post_init__``, ordering, ``init=False`` fields. :func:`fields` and :func:`replace`
stand in for their :mod:`dataclasses` namesakes; :func:`field` takes ``default``,
``default_factory``, ``repr``, ``compare`` and ``metadata``. :func:`from_columns` makes
many instances at once from a column of values per field.
"""

from __future__ import annotations

import keyword
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from operator import attrgetter
from types import CodeType, FunctionType, MappingProxyType, MemberDescriptorType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from resolver_hook.ground._valueinits import SHAPES as _SHIPPED

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # typing has it from Python 3.11; only the type checker reads it

    def dataclass_transform(**_: object) -> Callable[[Any], Any]:
        return lambda f: f


__all__ = [
    "Field",
    "FrozenInstanceError",
    "field",
    "fields",
    "from_columns",
    "is_value",
    "replace",
    "template_text",
    "valueclass",
]

T = TypeVar("T")


class FrozenInstanceError(AttributeError):
    """An assignment to (or deletion of) a field of a frozen value."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


class _Factory:
    __slots__ = ()

    def __repr__(self) -> str:  # what a signature shows for a factory's default
        return "<factory>"


MISSING: Any = _Missing()
_FACTORY: Any = _Factory()
_NO_METADATA: Mapping[str, Any] = MappingProxyType({})
_MUTABLE = (list, dict, set)  # the defaults a field may not share between instances


class Field:
    """One field of a value class: its name, default or factory, and what it takes part in."""

    __slots__ = ("compare", "default", "default_factory", "metadata", "name", "repr", "type")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        repr: bool = True,
        compare: bool = True,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot give both default and default_factory")
        self.name = ""
        self.type: Any = None  # the annotation (its text, under annotations from __future__)
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare
        self.metadata = MappingProxyType(dict(metadata)) if metadata else _NO_METADATA

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r})"


@overload
def field(
    *,
    default: T,
    repr: bool = ...,
    compare: bool = ...,
    metadata: Mapping[str, Any] | None = ...,
) -> T: ...
@overload
def field(
    *,
    default_factory: Callable[[], T],
    repr: bool = ...,
    compare: bool = ...,
    metadata: Mapping[str, Any] | None = ...,
) -> T: ...
@overload
def field(
    *,
    repr: bool = ...,
    compare: bool = ...,
    metadata: Mapping[str, Any] | None = ...,
) -> Any: ...
def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    repr: bool = True,
    compare: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> Any:
    """A field's default or factory, and whether ``repr`` shows it and ``==`` compares it."""
    return Field(default, default_factory, repr, compare, metadata)


@overload
@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field, Field))
def valueclass(cls: type[T], /) -> type[T]: ...
@overload
def valueclass(*, kw_only: bool = True, frozen: bool = True) -> Callable[[type[T]], type[T]]: ...
def valueclass(cls: Any = None, /, *, kw_only: bool = True, frozen: bool = True) -> Any:
    """``cls`` made a value class: ``@valueclass``, ``@valueclass(kw_only=False, frozen=False)``."""

    def wrap(cls: type[T]) -> type[T]:
        return _make(cls, kw_only=kw_only, frozen=frozen)

    return wrap if cls is None else wrap(cls)


def fields(obj: Any) -> tuple[Field, ...]:
    """The fields of a value class or of its instance, in order."""
    try:
        return tuple(obj.__value_fields__)
    except AttributeError:
        raise TypeError(f"not a value class or instance: {obj!r}") from None


def is_value(obj: object) -> bool:
    """Whether ``obj`` is an instance of a value class (not the class itself)."""
    return not isinstance(obj, type) and hasattr(type(obj), "__value_fields__")


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` with ``changes`` to its fields (the others as they are)."""
    cls = type(obj)
    for name in cls.__value_names__:  # type: ignore[attr-defined]
        if name not in changes:
            changes[name] = getattr(obj, name)
    return cls(**changes)


def from_columns(cls: type[T], columns: Mapping[str, Sequence[Any]]) -> list[T]:
    """Instances of the value class ``cls``, one per row of ``columns`` (a sequence of
    values for each of its fields, every field named, all of one length): what
    ``cls(**row)`` makes for each row, no defaults or factories involved. Each field is
    set column by column as ``__init__`` sets it (:func:`_setter`: at C speed through
    its slot), no ``__init__`` call per instance: under half the time for the thousands
    of links of an index page."""
    names = cls.__value_names__  # type: ignore[attr-defined]
    if set(columns) != set(names):
        raise TypeError(f"{cls.__qualname__}: columns {sorted(columns)}, fields {sorted(names)}")
    sizes = {len(column) for column in columns.values()}
    if len(sizes) > 1:
        raise ValueError(f"{cls.__qualname__}: columns of different lengths {sorted(sizes)}")
    if cls.__new__ is not object.__new__:
        raise TypeError(f"{cls.__qualname__}: its own __new__ is not supported")
    made: list[T] = list(map(object.__new__, repeat(cls, sizes.pop() if sizes else 0)))
    for name in names:
        deque(map(_setter(cls, name), made, columns[name]), 0)
    return made


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[Any]:  # copy and pickle, as a frozen slotted dataclass has
    return [getattr(self, name) for name in type(self).__value_names__]


def _setstate(self: Any, state: list[Any]) -> None:
    for name, v in zip(type(self).__value_names__, state, strict=True):
        object.__setattr__(self, name, v)


def _tuple_of(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """A function giving an instance's ``names`` as a tuple (attrgetter's one name: bare)."""
    if len(names) >= 2:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _make(cls: type[T], *, kw_only: bool, frozen: bool) -> type[T]:
    bases = cls.__mro__[1:]
    # A class of no base but object (most) inherits no fields and no slots: its bases
    # are not asked (a missing attribute of a class costs an AttributeError made and
    # dropped).
    plain = bases == (object,)
    found: dict[str, Field] = {}
    if not plain:
        for base in reversed(bases):
            for f in getattr(base, "__value_fields__", ()):
                found[f.name] = f
    # The class's own annotations (strings: every module here imports annotations from
    # __future__), read without inspect (~10 ms to import); 3.14 makes them on request.
    space = cls.__dict__
    own = space.get("__annotations__")
    if own is None:
        own = cls.__annotations__ if "__annotate__" in space else {}
    for name, annotation in own.items():
        text = str(annotation)
        if "ClassVar" in text or "InitVar" in text:
            raise TypeError(f"{cls.__qualname__}.{name}: ClassVar and InitVar are not supported")
        default = space.get(name, MISSING)
        f = default if isinstance(default, Field) else Field(default=default)
        if isinstance(f.default, _MUTABLE):
            raise ValueError(f"{cls.__qualname__}.{name}: a mutable default; use default_factory")
        f.name, f.type = name, annotation
        found[name] = f
    every = tuple(found.values())
    names = tuple(found)

    namespace = dict(space)
    for name in own:
        namespace.pop(name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    if plain:
        namespace["__slots__"] = names
    else:
        inherited = {s for base in bases for s in getattr(base, "__slots__", ())}
        namespace["__slots__"] = tuple(n for n in names if n not in inherited)
    namespace["__value_fields__"] = every
    namespace["__value_names__"] = names
    namespace["__match_args__"] = () if kw_only else names
    if "__repr__" not in namespace:
        namespace["__repr__"] = _repr_of(tuple([f.name for f in every if f.repr]))
    if "__eq__" in namespace or "__hash__" in namespace:
        raise TypeError(f"{cls.__qualname__}: its own __eq__ or __hash__ is not supported")
    key = _tuple_of(tuple([f.name for f in every if f.compare]))

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    namespace["__eq__"] = __eq__
    # As dataclasses: a frozen value hashes its fields' tuple; a mutable one is unhashable.
    namespace["__hash__"] = (lambda self: hash(key(self))) if frozen else None
    if frozen:
        namespace["__setattr__"] = _frozen_setattr
        namespace["__delattr__"] = _frozen_delattr
        namespace["__getstate__"] = _getstate
        namespace["__setstate__"] = _setstate
    made: Any = type(cls)(cls.__name__, cls.__bases__, namespace)  # type: ignore[misc]
    made.__qualname__ = cls.__qualname__
    made.__init__ = _init_of(made, every, kw_only=kw_only, frozen=frozen)
    return made  # type: ignore[no-any-return]


def _repr_of(names: tuple[str, ...]) -> Callable[[object], str]:
    def __repr__(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _init_of(
    cls: type, every: tuple[Field, ...], *, kw_only: bool, frozen: bool
) -> Callable[..., None]:
    """``__init__``: the compiled body of its shape (:func:`_template`) with the fields'
    names put in for the template's (its parameters' names; a mutable class's attribute
    names, a frozen one's slot setters by place), the defaults and factories passed in,
    never written into code."""
    given: dict[str, Any] = {"__name__": cls.__module__, "__value_factory": _FACTORY}
    names, defaults, factories = [], [], []
    real: dict[str, str] = {}  # the template's names of the fields (_0, _1, ...): theirs
    annotations: dict[str, Any] = {}
    required_after_default = False
    for f, (placeholder, make, set_) in zip(every, _names_in_template(len(every)), strict=True):
        name = f.name
        if not name.isidentifier() or keyword.iskeyword(name):
            raise TypeError(f"{cls.__qualname__}: field {name!r} is not an identifier")
        if name == "self":
            raise TypeError(f"{cls.__qualname__}: a field named 'self'")
        factory = f.default_factory is not MISSING
        if factory:
            given[make] = f.default_factory
            defaults.append((name, _FACTORY))
        elif f.default is not MISSING:
            defaults.append((name, f.default))
        elif not kw_only and required_after_default:
            raise TypeError(f"{cls.__qualname__}: field {name!r} without a default follows one")
        required_after_default |= factory or f.default is not MISSING
        names.append(name)
        factories.append(factory)
        real[placeholder] = name
        annotations[name] = f.type
        if frozen:
            given[set_] = _setter(cls, name)
    template = _template(frozen, kw_only, tuple(factories))
    # The template's own names are its fields' (_0, _1, ...: its parameters, and a
    # mutable class's attributes) and the __value_ ones: only the former are put in for
    # (no field can be named __value_...: see template_text).
    code = template.replace(
        co_varnames=("self", *names),
        co_names=tuple(map(real.get, template.co_names, template.co_names)),
        co_filename=f"<value {cls.__module__}.{cls.__qualname__}>",
        co_firstlineno=1,  # as compiled on its own, where a shipped one starts further down
    )
    init: Any = FunctionType(code, given, "__init__")
    if kw_only:
        init.__kwdefaults__ = dict(defaults) or None
    else:
        init.__defaults__ = tuple(d for _, d in defaults) or None
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    annotations["return"] = None
    init.__annotations__ = annotations
    return init  # type: ignore[no-any-return]


# The template's names of each field by place (its parameter ``_i``, the factory
# ``__value_make_i`` and the setter ``__value_set_i`` it calls): written once a process
# per place, not three times per field of each class.
_NAMES: list[tuple[str, str, str]] = []


def _names_in_template(count: int) -> list[tuple[str, str, str]]:
    """The template's names of the first ``count`` fields."""
    for i in range(len(_NAMES), count):
        _NAMES.append((f"_{i}", f"__value_make_{i}", f"__value_set_{i}"))
    return _NAMES[:count]


def _setter(cls: type, name: str) -> Callable[[object, object], None]:
    """What sets field ``name`` of a frozen ``cls``'s instance past its ``__setattr__``:
    its slot's own setter (a third quicker than ``object.__setattr__``, which looks the
    slot up by name first), or ``object.__setattr__`` where the field has no slot."""
    slot = getattr(cls, name, None)
    if isinstance(slot, MemberDescriptorType):
        return slot.__set__
    return lambda obj, value: object.__setattr__(obj, name, value)


# The compiled ``__init__`` of each shape met: frozen or not, keyword-only or not, and
# which of its fields have a factory. A process makes some forty value classes of a
# few dozen shapes; compiling costs ~70 us plus ~30 us per field (2.3 ms for the
# classes a plan imports), putting the names in ~10 us. The shapes this package's own
# classes have are written out in _valueinits.py, whose bytecode is compiled when the
# package is installed: only a shape not there is compiled here.
_TEMPLATES: dict[tuple[bool, bool, tuple[bool, ...]], CodeType] = dict(_SHIPPED)


def _template(frozen: bool, kw_only: bool, factories: tuple[bool, ...]) -> CodeType:
    """The code of ``__init__`` for fields named ``_0``, ``_1``, ... (``factories``: which
    have one): :func:`template_text` compiled, or the same text shipped compiled."""
    key = (frozen, kw_only, factories)
    code = _TEMPLATES.get(key)
    if code is None:
        module = compile(template_text(frozen, kw_only, factories), "<value>", "exec")
        code = _TEMPLATES[key] = next(c for c in module.co_consts if isinstance(c, CodeType))
    return code


def template_text(frozen: bool, kw_only: bool, factories: tuple[bool, ...]) -> str:
    """The source of ``__init__`` for a shape. Its names other than the fields' start
    with ``__value_``: in a class statement such a name is mangled
    (``_Class__value_...``), so no field can be one of them."""
    lines = []
    for i, made in enumerate(factories):
        got = f"__value_make_{i}() if _{i} is __value_factory else _{i}" if made else f"_{i}"
        lines.append(f"__value_set_{i}(self, {got})" if frozen else f"self._{i} = {got}")
    params = ", ".join(f"_{i}" for i in range(len(factories)))
    star = "*, " if kw_only and factories else ""
    text = f"def __init__(self, {star}{params}):\n"
    return text + ("".join(f"    {line}\n" for line in lines) if lines else "    pass\n")
