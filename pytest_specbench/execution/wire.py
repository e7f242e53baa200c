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
complex, ``{"o": "typename", "r": "repr"}`` anything else (never equal to a
plain value).

This module is imported by the sandbox child before any sample code runs, so it
must stay standard-library only.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

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
    # numpy scalars compare equal to Python numbers in EvalPlus; keep that.
    if t.__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        item = value.item()
        if type(item) in _PLAIN or type(item) is complex:
            return to_plain(item)
    try:
        text = repr(value)[:200]
    except BaseException:  # noqa: BLE001 - a hostile __repr__ must not break encoding
        text = "?"
    return {"o": f"{t.__module__}.{t.__qualname__}", "r": text}


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
    if set(obj) == {"o", "r"}:
        return Opaque(str(obj["o"]), str(obj["r"]))
    raise ValueError(f"unknown tag {sorted(obj)!r}")


def loads(text: str | bytes) -> Any:
    """Decode (harness side).  Raises ValueError/RecursionError/TypeError on garbage."""
    return json.loads(text, object_hook=_from_tagged)


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
