"""Immutable value classes without the start-up cost of `dataclasses`.

`yarp run` wraps every shell command an agent runs. Frozen, slotted
dataclasses generate and compile several methods per class and import
`inspect`; on that path they cost tens of milliseconds per invocation. A
`Record` subclass lists its fields in `__slots__` (defaults in `_defaults`) and
shares one set of plain methods: positional or keyword construction,
immutability, value equality and hashing, a readable repr, `replace`, and
pickling (the broker's worker pool sends records between processes).

Use it only for the small value objects on `yarp run`'s import path; elsewhere
dataclasses are fine.
"""

# typing costs milliseconds at start-up and is needed by annotations only
# (quoted: this path also goes without `from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar


class Record:
    """The base of the value classes on `yarp run`'s path: fields in `__slots__`, defaults in `_defaults`.

    Immutable, compared and hashed by value, picklable; see the module docstring for why not `dataclasses`.
    """

    __slots__ = ()
    #: Field names in declaration order (every `__slots__` of the class and its bases).
    _fields: "ClassVar[tuple[str, ...]]" = ()
    #: Default values for trailing optional fields.
    _defaults: "ClassVar[dict[str, object]]" = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        fields: list[str] = []
        for klass in reversed(cls.__mro__):
            fields.extend(klass.__dict__.get("__slots__", ()))
        cls._fields = tuple(fields)

    def __init__(self, *args: object, **kwargs: object) -> None:
        fields = self._fields
        # Every field given, all by position (unpickling) or all by name (the
        # operation parser): nothing to match up or default.
        if len(args) == len(fields) and not kwargs:
            for name, value in zip(fields, args):
                object.__setattr__(self, name, value)
            return
        if len(kwargs) == len(fields) and not args:
            try:
                values = [kwargs[name] for name in fields]
            except KeyError:
                pass  # an unknown name: the general path below says which
            else:
                for name, value in zip(fields, values):
                    object.__setattr__(self, name, value)
                return
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} arguments")
        values = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError(f"{type(self).__name__} got an unexpected or repeated argument {name!r}")
            values[name] = value
        defaults = self._defaults
        for name in fields:
            if name in values:
                value = values[name]
            elif name in defaults:
                value = defaults[name]
            else:
                raise TypeError(f"{type(self).__name__} is missing the argument {name!r}")
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({inner})"

    def __reduce__(self):
        return (type(self), self._values())

    def replace(self, **changes: object):
        """A copy with some fields changed."""
        values = dict(zip(self._fields, self._values()))
        values.update(changes)
        return type(self)(**values)
