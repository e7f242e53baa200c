"""Plain-data codec between an untrusted child and the harness.

The child encodes what a call returned; the harness decodes it into nothing but
builtin values (None, bool, int, float, str, bytes, complex, list, tuple, dict,
set, frozenset) and compares those itself.  No pickle, no objects with their
own ``__eq__``: a sample can only *claim* a value, never a verdict.

JSON carries the scalars and lists; every other container is a one-key object
whose key is a type tag, so a JSON object is never ambiguous:
``{"t": [...]}`` tuple, ``{"d": [[k, v], ...]}`` dict, ``{"s": [...]}`` set,
``{"f": [...]}`` frozenset, ``{"b": "hex"}`` bytes, ``{"i": "0x..."}`` an int
too long for decimal, ``{"c": [re, im]}``
complex, ``{"g": [kind, [item, ...]]}`` an iterator (or a dict view) a program
returned, with the items it gave (:class:`Iterated`; only where a caller made one:
the nl2postcond corpus's observer), ``{"o": "typename", "r": "repr"}`` anything
else (never equal to a plain value).

This module is imported by the sandbox child before any sample code runs, so it
must stay standard-library only.
"""
from __future__ import annotations

import hashlib
import json
import sys
from typing import Any, Callable, Mapping

_PLAIN = (type(None), bool, int, float, str)
_SCALAR_KINDS = frozenset(_PLAIN)
_BIG = 10 ** 1000


def _ints_fit(values: list, kinds: set) -> bool:
    ints = values if kinds == {int} else [v for v in values if type(v) is int]
    return not ints or (-_BIG < min(ints) and max(ints) < _BIG)


class Opaque:
    """A value the child could not express as plain data; equal only to itself."""

    __slots__ = ("type_name", "text")

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name} {self.text}>"


class Iterated:
    """An iterator or a dict view a program returned (``kind``: its type's name, ``filter``,
    ``generator``, ``dict_items``, ...), with the items it gave when iterated (``items``, plain
    data).  Equal only to itself, as the objects are (a ``filter`` is never equal to a list),
    and never iterated where it is decoded: :func:`live` makes a fresh object of the kind over
    the items, in the process that hands it to a postcondition (nl2postcond: upstream's
    postcondition ran on the object itself, and ``all(... for i in return_value)`` holds on a
    ``filter`` of ints)."""

    __slots__ = ("kind", "items")

    def __init__(self, kind: str, items: list):
        self.kind, self.items = kind, items

    def __repr__(self) -> str:
        return f"<{self.kind} of {len(self.items)} items>"


def _yield_each(items: list):
    yield from items


def _kept(_item: Any) -> bool:
    return True


def _same(item: Any) -> Any:
    return item


_LIVE: dict[str, Callable[[list], Any]] = {
    "filter": lambda items: filter(_kept, items),
    "map": lambda items: map(_same, items),
    "list_iterator": iter,
    "list_reverseiterator": lambda items: reversed(items[::-1]),
    "tuple_iterator": lambda items: iter(tuple(items)),
    "dict_keys": lambda items: dict.fromkeys(items).keys(),
    "dict_values": lambda items: dict(enumerate(items)).values(),
    "dict_items": lambda items: dict(items).items(),
}


def live(value: Any) -> Any:
    """``value``, or for an :class:`Iterated` a fresh object of its kind over its items: a
    ``filter``, ``map``, list or tuple iterator, reversed list iterator or dict view where the
    kind is one of those, else a generator (another iterator's type is not remade; its items
    are the same).  Each call makes a new one: an iterator is used up by whoever reads it."""
    if type(value) is not Iterated:
        return value
    make = _LIVE.get(value.kind, _yield_each)
    try:
        return make(list(value.items))
    except (TypeError, ValueError):  # e.g. dict_items over items that are not pairs: the items still
        return _yield_each(list(value.items))


def to_plain(value: Any) -> Any:
    """JSON-able form of ``value`` (child side).  Raises RecursionError on cycles."""
    t = type(value)
    if t is int and not -_BIG < value < _BIG:
        # Huge ints go as hex: linear to convert, and exempt from Python's
        # 4300-digit limit on decimal conversion.
        return {"i": hex(value)}
    if t in _PLAIN:
        return value
    if t is list:
        # Fast path for the common big outputs (long lists of numbers or strings):
        # json encodes them in C; only ints too long for decimal need a tag.
        kinds = set(map(type, value))
        if kinds <= _SCALAR_KINDS and (int not in kinds or _ints_fit(value, kinds)):
            return value
        return [to_plain(v) for v in value]
    if t is tuple:
        kinds = set(map(type, value))  # a tuple of scalars encodes as is (json writes it as an array)
        if kinds <= _SCALAR_KINDS and (int not in kinds or _ints_fit(list(value), kinds)):
            return {"t": value}
        return {"t": [to_plain(v) for v in value]}
    if t is dict:
        return {"d": [[to_plain(k), to_plain(v)] for k, v in value.items()]}
    if t is set:
        return {"s": [to_plain(v) for v in value]}
    if t is frozenset:
        return {"f": [to_plain(v) for v in value]}
    if t is bytes:
        return {"b": value.hex()}
    if t is complex:
        return {"c": [value.real, value.imag]}
    if t is Iterated:
        return {"g": [str(value.kind), [to_plain(v) for v in list(value.items)]]}
    # Subclasses of builtins (IntEnum, namedtuple, str subclasses) count as their
    # base value, read through the base type's own slots rather than theirs.
    if isinstance(value, int):
        return to_plain(int.__int__(value))
    if isinstance(value, dict):  # Counter, defaultdict, OrderedDict compare as dicts
        return {"d": [[to_plain(k), to_plain(v)] for k, v in dict.items(value)]}
    if isinstance(value, frozenset):
        return {"f": [to_plain(v) for v in frozenset.__iter__(value)]}
    if isinstance(value, set):
        return {"s": [to_plain(v) for v in set.__iter__(value)]}
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, tuple):
        return {"t": [to_plain(v) for v in tuple.__iter__(value)]}
    if isinstance(value, list):
        return [to_plain(v) for v in list.__iter__(value)]
    # numpy scalars compare equal to Python numbers in EvalPlus; keep that (for real ones only).
    item = numpy_item(value)
    if item is not _NOT_NUMPY and (type(item) in _PLAIN or type(item) is complex):
        return to_plain(item)
    try:
        text = repr(value)[:200]
    except BaseException:  # noqa: BLE001 - a hostile __repr__ must not break encoding
        text = "?"
    return {"o": f"{t.__module__}.{t.__qualname__}", "r": text}


_NOT_NUMPY = object()
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or type())
_TYPE_MRO = type.__dict__["__mro__"].__get__  # the slots, not a metaclass's properties
_TYPE_FLAGS = type.__dict__["__flags__"].__get__
_TYPE_MODULE = type.__dict__["__module__"].__get__
_GETSET = type(int.__dict__["real"])
_type_of, _attr_of = type, getattr  # bound now: the sample may replace builtins


def numpy_item(value: Any) -> Any:
    """``value.item()`` for a real numpy scalar (or 0-d array), else ``_NOT_NUMPY``.

    Real means as EvalPlus decides it (``==`` with a Python number works only
    for numpy's own types): a type in ``value``'s MRO is one of numpy's C
    types (static, not made by a class statement, its module ``numpy``), and
    ``item`` and ``ndim`` are read from that type, never from a class of the
    sample's.  A class that only says ``__module__ = "numpy"`` is not one
    (issue #50)."""
    for base in _TYPE_MRO(_type_of(value)):
        if not _TYPE_FLAGS(base) & _HEAPTYPE and _TYPE_MODULE(base) == "numpy":
            ndim, item = _attr_of(base, "ndim", None), _attr_of(base, "item", None)
            if item is None or _type_of(ndim) is not _GETSET or ndim.__get__(value) != 0:
                return _NOT_NUMPY
            return item(value)
    return _NOT_NUMPY


def string_digest(text: str) -> str:
    """The digest a long string result travels as (``CallsJob.str_digest_over``):
    blake2b-128 of its UTF-8 bytes, on both sides of the sandbox boundary."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


_encode = json.JSONEncoder(allow_nan=True, separators=(",", ":")).encode  # = dumps of plain data


def dumps(value: Any) -> str:
    # One encoder made once: json.dumps with options builds a new one per call (half the cost of a small value).
    return _encode(to_plain(value))


def _from_tagged(obj: dict) -> Any:
    if len(obj) == 1:
        (tag, body), = obj.items()
        if tag == "t":
            return tuple(body)
        if tag == "d":
            return {k if not isinstance(k, list) else tuple(k): v for k, v in body}
        if tag == "s":
            return set(body)
        if tag == "f":
            return frozenset(body)
        if tag == "b":
            return bytes.fromhex(body)
        if tag == "c":
            return complex(body[0], body[1])
        if tag == "i":
            return int(body, 16)
        if tag == "g":
            kind, items = body
            if type(kind) is not str or type(items) is not list:
                raise ValueError("an iterated value is [kind, items]")
            return Iterated(kind, items)
    if set(obj) == {"o", "r"}:
        return Opaque(str(obj["o"]), str(obj["r"]))
    raise ValueError(f"unknown tag {sorted(obj)!r}")


def loads(text: str | bytes, tags: Mapping[str, Callable[[Any], Any]] | None = None) -> Any:
    """Decode (harness side).  Raises ValueError (or RecursionError) on garbage:
    whatever the bytes are (a tag with a body of the wrong shape, ``{"c": [1]}``,
    is a ValueError, not an IndexError out of the decoder).  ``tags``: a caller's own
    one-key tags (``{tag: decode(body)}``, none of wire's), for data it stores itself."""
    hook = _from_tagged
    if tags:
        def hook(obj: dict) -> Any:
            if len(obj) == 1:
                (tag, body), = obj.items()
                if tag in tags:
                    return tags[tag](body)
            return _from_tagged(obj)
    try:
        return json.loads(text, object_hook=hook)
    except (ValueError, RecursionError):
        raise
    except (TypeError, IndexError, KeyError, AttributeError, OverflowError) as exc:
        raise ValueError(f"malformed value ({type(exc).__name__})") from None


# ------------------------------------------------------- large outputs (digest)

_EXACT = frozenset((list, tuple, str, int, type(None), bytes))
_STREAM_OVER = 4096  # elements: smaller containers are encoded in one go


def _exact(value: Any) -> bool:
    """Is equality of ``value`` with any other value decided by its encoding
    alone?  True for nests of lists, tuples, str, int, None and bytes (no float
    tolerance, no bool == int, no set or dict order)."""
    todo = [value]
    while todo:
        v = todo.pop()
        t = type(v)
        if t is list or t is tuple:
            kinds = set(map(type, v))  # one C-level pass per container
            if not kinds <= _EXACT:
                return False
            if list in kinds or tuple in kinds:
                todo.extend(x for x in v if type(x) is list or type(x) is tuple)
        elif t not in _EXACT:
            return False
    return True


def is_exact(value: Any) -> bool:
    """Public name of :func:`_exact`: may a digest of ``value``'s encoding decide equality with it?"""
    return _exact(value)


def iter_dumps(value: Any, batch: int = 1024):
    """:func:`dumps` in pieces (their concatenation is ``dumps(value)``), so a
    huge list or tuple is encoded, hashed and dropped as it goes."""
    t = type(value)
    if (t is not list and t is not tuple) or len(value) <= _STREAM_OVER:
        yield dumps(value)
        return
    yield "[" if t is list else '{"t":['
    for start in range(0, len(value), batch):
        # One C-encoder call per batch: the encoding of a list of the pieces, without its brackets.
        part = _encode([to_plain(v) for v in value[start:start + batch]])[1:-1]
        yield part if start == 0 else "," + part
    yield "]" if t is list else "]}"


def encode_capped(value: Any, limit: int) -> tuple[str | None, tuple[str, int, str] | None]:
    """``(dumps(value), None)``, or, when that encoding is over ``limit`` bytes
    and the value is :func:`_exact`, ``(None, (digest, length, prefix))``: the
    blake2b-128 digest of the very bytes ``dumps`` would give, computed as they
    are produced, never holding them all."""
    kept: list[str] = []
    size = 0
    pieces = iter_dumps(value)
    for piece in pieces:
        kept.append(piece)
        size += len(piece)  # json.dumps escapes to ASCII: characters are bytes
        if size > limit:
            break
    else:
        return "".join(kept), None
    if not _exact(value):
        kept.extend(pieces)
        return "".join(kept), None
    h = hashlib.blake2b(digest_size=16)
    prefix = "".join(kept)[:100]
    for piece in kept:
        h.update(piece.encode("ascii"))
    del kept
    for piece in pieces:
        size += len(piece)
        h.update(piece.encode("ascii"))
    return None, (h.hexdigest(), size, prefix)


# ------------------------------------------- large outputs of strings (value hash)
#
# Mbpp/255's output on one input is 1.66 M tuples of 77 strings: encoding it to
# digest it costs ~6x the program.  A list or tuple of non-empty strings, or of
# tuples (or lists) of non-empty strings, is instead known by Python's own hash
# of it: the C tuple hash over the strings' hashes, which each string caches.
# The digest this gives is one hash value (64 bits on 64-bit builds) plus the
# container types, length and number of strings; equal values give equal
# digests, and unequal ones collide with probability 2**-64.  String hashes
# depend on the hash seed: the sandbox fixes it (PYTHONHASHSEED, see
# docs/execution.md), and the digest names the interpreter's hash algorithm.
#
# The domain ("value-hashable") is a property of the plain value (subclasses
# counted as their base value, as to_plain does), so two equal values are both
# in it or both out of it: a list or tuple whose items are all non-empty str,
# or all tuples (or all lists) of non-empty str; or the same with numbers
# (int, bool, float: finite, within +-(2**61 - 1), not -1) in place of strings.  For an expected output in the
# domain, an output outside it cannot be equal.
#
# Soundness against the sample, which shares the process: only C code of
# builtin types may produce the hash.  Containers must be exact list/tuple; the
# strings are checked to be str instances by ``"".startswith(tuple)`` (a C loop
# with no dispatch, which stops early only at an empty string, hence "non-empty"),
# and a str subclass is trusted only while no str subclass in the process has a
# ``__hash__`` of its own (checked on the real MROs and dicts, before and after
# hashing, with signals blocked, the collector off and no other thread); else every
# string's exact type is checked (``set(map(type, ...))``, ~1x the program), and
# failing that the value is copied as plain data first (Python speed).

import _thread
import gc as _gc
import signal as _signal
from itertools import chain as _chain

# Everything the value hash uses, bound when this module is imported (before any
# sample code runs): a sample that replaces builtins.hash, tuple, set or a module's
# function before returning changes nothing here.
_hash, _set, _map, _type, _tuple, _list, _len, _sum, _any, _id = hash, set, map, type, tuple, list, len, sum, any, id
_issubclass, _isinstance, _str, _TypeError = issubclass, isinstance, str, TypeError
_str_str, _tuple_iter, _list_iter = str.__str__, tuple.__iter__, list.__iter__
_thread_count, _gc_disable, _gc_enable, _gc_isenabled = _thread._count, _gc.disable, _gc.enable, _gc.isenabled
_sigmask, _SIG_BLOCK, _SIG_SETMASK, _ALL_SIGNALS = (_signal.pthread_sigmask, _signal.SIG_BLOCK, _signal.SIG_SETMASK,
                                                    _signal.valid_signals())
_settrace, _setprofile = sys.settrace, sys.setprofile
_STR_HASH = str.__dict__["__hash__"]
_SUBCLASSES = type.__dict__["__subclasses__"]
_MRO_OF = type.__dict__["__mro__"].__get__
_DICT_OF = type.__dict__["__dict__"].__get__
_startswith = "".startswith
# Names the hash function: a digest from another interpreter never matches by accident.
HASH_TAG = f"vh1/{sys.hash_info.algorithm}{sys.hash_info.hash_bits}/{sys.version_info[0]}.{sys.version_info[1]}"
_HASH_MASK = (1 << sys.hash_info.hash_bits) - 1


def _str_hashes_faithful() -> bool:
    """Does every str subclass in this process hash as its content (no class
    before ``str`` in its real MRO has a ``__hash__``, and every key of those
    classes' dicts is an exact str, so that lookup cannot be fooled)?"""
    if _DICT_OF(_str).get("__hash__") is not _STR_HASH:
        return False
    todo, seen = _list(_SUBCLASSES(_str)), _set()
    while todo:
        cls = todo.pop()
        if _id(cls) in seen:
            continue
        seen.add(_id(cls))
        for base in _MRO_OF(cls):
            if base is _str:
                break
            names = _DICT_OF(base)
            for name in names:
                if _type(name) is not _str:
                    return False
            if "__hash__" in names:
                return False
        todo.extend(_SUBCLASSES(cls))
    return True


_NUMBERS = frozenset((int, bool, float))
_INJECTIVE = (1 << 61) - 1  # ints and integral floats hash as themselves below this (64-bit builds)
_min, _max, _complex, _float = min, max, complex, float
_int_int, _float_float = int.__int__, float.__float__
# Exact types whose decoding is themselves: a value of only these that is outside the
# domain stays outside after decoding (no subclass, complex or numpy scalar to normalize).
_PLAIN_TYPES = frozenset((type(None), bool, int, float, str, bytes, dict, set, frozenset, list, tuple))
_SMALL = "small"


def _shape(value: Any):
    """``(outer, inner, items)`` of an exact list/tuple whose items are all leaves
    (inner "s") or all exact tuples ("t") or all exact lists ("l", made tuples),
    with the exact types of the items; else None.  Leaves are not checked here."""
    t = _type(value)
    if t is not _list and t is not _tuple:
        return None
    outer = "l" if t is _list else "t"
    items = value if t is _tuple else _tuple(value)
    kinds = _set(_map(_type, items))  # one C pass over the items (not the leaves inside them)
    if _list not in kinds and _tuple not in kinds:
        return outer, "s", items, kinds
    if kinds == {_tuple}:
        return outer, "t", items, kinds
    if kinds == {_list}:
        return outer, "l", _tuple(_map(_tuple, items)), kinds
    return kinds <= _PLAIN_TYPES or None  # True: exact, but mixes leaves and containers


def _leaves(inner: str, items: tuple):
    return items if inner == "s" else _chain.from_iterable(items)


def _leaves_ok(kinds, inner: str, items: tuple) -> bool:
    """Given the exact types of all leaves: all non-empty str, or all numbers (int,
    bool, float) that hash injectively (finite, |x| < 2**61 - 1, not -1, which
    hashes as -2)?  C loops over exact builtin types: nothing dispatches."""
    if kinds <= {_str}:
        return _strings_ok(inner, items)
    if not kinds <= _NUMBERS:
        return False
    # Exact numbers hash without dispatch: their distinct values (one C pass; few, in
    # outputs this large) are checked one by one.
    for v in _set(_leaves(inner, items)):
        if not -_INJECTIVE < v < _INJECTIVE or v == -1:  # also false for a NaN
            return False
    return True


def _strings_ok(inner: str, items: tuple) -> bool:
    """Are all leaves str instances and non-empty?  (C loops, no dispatch.)"""
    try:
        if inner == "s":
            return not _startswith(items)
        return not _any(_map(_startswith, items))
    except _TypeError:  # an item that is not a str
        return False


def _signature(outer: str, inner: str, items: tuple) -> tuple[str, int]:
    leaves = _len(items) if inner == "s" else _sum(_map(_len, items))
    return f"{HASH_TAG}/{outer}{inner}/{_len(items)}/{leaves}/{_hash(items) & _HASH_MASK:x}", leaves


def _prefix(items: tuple) -> str:
    return _encode([_list(v) if _type(v) is _tuple else v for v in items[:3]])[:100]


def _exact_hash(value: Any, min_leaves: int, fast_strings: bool, flat_floats: bool = True):
    """:func:`value_hash` by exact types only: the triple; False (a value of
    exact builtin types outside the domain); ``_SMALL`` (in the domain, fewer
    leaves than ``min_leaves``); None (something a decoding may change: a
    subclass, a complex number, a foreign object)."""
    shape = _shape(value)
    if shape is None or shape is True:
        return False if shape else None
    outer, inner, items, kinds = shape
    leaves = _len(items) if inner == "s" else _sum(_map(_len, items))
    if fast_strings and inner != "s" and _thread_count() == 0 and _strings_ok(inner, items):
        if leaves < min_leaves:
            return _SMALL
        # Strings inside tuples: trusted without a per-string type check while no
        # str subclass hashes otherwise than its content.  The sample's hooks
        # (trace, profile, collector callbacks, signal handlers; other threads
        # are excluded above) must not run between the checks and the hash.
        digest = None
        _settrace(None)
        _setprofile(None)
        was = _gc_isenabled()
        _gc_disable()
        blocked = _sigmask(_SIG_BLOCK, _ALL_SIGNALS)
        try:
            if _str_hashes_faithful():
                signed = _signature(outer, inner, items)[0]
                if _str_hashes_faithful():
                    digest = signed
        finally:
            _sigmask(_SIG_SETMASK, blocked)
            if was:
                _gc_enable()
        if digest is not None:
            return digest, leaves, _prefix(items)
    if inner != "s":
        kinds = _set(_map(_type, _chain.from_iterable(items)))  # every leaf's exact type (~1x the program)
    if not _leaves_ok(kinds, inner, items):
        return False if kinds <= _PLAIN_TYPES else None
    if leaves < min_leaves or (not flat_floats and inner == "s" and kinds == {_float}):
        return _SMALL
    return _signature(outer, inner, items)[0], leaves, _prefix(items)


class _Outside(Exception):
    pass


def _leaf(v: Any) -> Any:
    """A leaf as the harness decodes it (:func:`to_plain`, then ``loads``), made an
    exact str, int, bool or float; raises :class:`_Outside` for anything else."""
    t = _type(v)
    if t is _str or t is int or t is bool or t is _float:
        return v
    if t is _complex:
        if v.imag == 0:  # equal to its real part
            return v.real
        raise _Outside
    if _issubclass(t, int):
        return _int_int(v)
    if _issubclass(t, _float):
        return _float_float(v)
    if _issubclass(t, _str):
        return _str_str(v)
    item = numpy_item(v)  # as to_plain
    if item is not _NOT_NUMPY:
        return _leaf(item)
    raise _Outside


def _plain_copy(value: Any) -> Any:
    """The list or tuple as the harness decodes it, with exact types (subclasses read
    through their base types, as :func:`to_plain` reads them).  Python speed, with
    the builtins bound at import: for what the exact-type C checks cannot decide."""
    def container(v):
        t = _type(v)
        if t is _list or _issubclass(t, _list):
            return _list(_map(item, _list_iter(v)))
        if t is _tuple or _issubclass(t, _tuple):
            return _tuple(_map(item, _tuple_iter(v)))
        return None

    def item(v):
        got = container(v)
        return _leaf(v) if got is None else got

    got = container(value)
    if got is None:
        raise _Outside
    return got


def value_hash(value: Any, min_leaves: int = 0, flat_floats: bool = True):
    """``(digest, leaves, prefix)`` for a list or tuple in the value-hash domain
    with at least ``min_leaves`` leaves; ``False`` for a list or tuple outside
    the domain; None for anything else, or a value of the domain with fewer leaves.

    The domain: a list or tuple whose items are all leaves, or all tuples (or all
    lists) of leaves; the leaves all non-empty strings, or all numbers (int,
    bool, float) that are finite, within +-(2**61 - 1) and not -1 (Python's hash
    is injective there: 1, 1.0 and True hash alike, as they are equal).  Decided
    on the value as the harness decodes it: what the exact-type C checks cannot
    decide (subclasses, numpy scalars, complex numbers, foreign objects) is
    copied as plain data first (Python speed).  ``flat_floats=False``: a flat list or
    tuple of floats only is None too (EvalPlus compares those with a tolerance)."""
    if not _isinstance(value, (_list, _tuple)):
        return None
    got = _exact_hash(value, min_leaves, True, flat_floats)
    if got is None:
        try:
            plain = _plain_copy(value)
        except (_Outside, RecursionError):  # a leaf no str or number equals, or a cycle
            return False
        got = _exact_hash(plain, min_leaves, False, flat_floats)
        if got is None:  # decoded, yet not plain: opaque objects, tags
            return False
    return None if got is _SMALL else got
