"""Type-tagged JSON for values that cross a sandbox boundary (plain data, never pickles).

Every value becomes `[tag, payload]` of a built-in type; the other side decodes fresh
built-in values, so an object with a rigged `__eq__` never reaches a comparison. A subclass
of a built-in (`Counter`, `OrderedDict`, `defaultdict`, a namedtuple, an `IntEnum`) is sent
as its base type's value, read through the base type's own methods (what its overrides say
is never asked): the value a harness comparing with `==` would accept. Anything else cannot
be encoded. This file is shipped verbatim into sandboxes (stdlib only, no package imports).
"""

import json
import math
from collections import Counter

MAX_DEPTH = 64
#: the longest protocol line either side accepts (a value of a few million elements)
MAX_MESSAGE_BYTES = 32 * 2**20
#: the most JSON values one line may hold: a wire scalar is three (`["int","7"],`), so a list
#: of a million scalars fits, and no line costs the parser much more than such a list does
MAX_MESSAGE_VALUES = 3_200_000
#: the longest int literal a message may hold (also Python's own int/str conversion limit)
MAX_INT_DIGITS = 4000
#: the most elements of one set (keys of one dict) that may share a hash: int, float and
#: tuple hashes are not randomised, so n values of one hash would take O(n^2) to build;
#: distinct values seldom share one (2**k does for k 61 apart: {2**k for k in range(1952)} is
#: the largest set of powers of two that decodes)
MAX_SHARED_HASH = 32


class WireError(ValueError):
    """A value that cannot cross the boundary (unsupported type, too deep, malformed)."""


def encode(value, depth=0):
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    kind = type(value)
    if value is None:
        return ["none", None]
    if kind is bool:
        return ["bool", value]
    if kind is int:
        return ["int", str(value)]
    if kind is float:
        return ["float", repr(value)]
    if kind is str:
        return ["str", value]
    if kind is complex:
        return ["complex", [repr(value.real), repr(value.imag)]]
    if kind is bytes:
        return ["bytes", value.hex()]
    if kind is list:
        return ["list", [encode(v, depth + 1) for v in value]]
    if kind is tuple:
        return ["tuple", [encode(v, depth + 1) for v in value]]
    if kind is dict:
        return ["dict", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
    if kind is set or kind is frozenset:
        items = [encode(v, depth + 1) for v in value]
        items.sort(key=lambda item: json.dumps(item))
        return ["set" if kind is set else "frozenset", items]
    for base in _BASES:
        if isinstance(value, base):
            return encode(_AS_BASE[base](value), depth)
    raise WireError("cannot send a value of type %s (only None, bool, int, float, complex, "
                    "str, bytes, list, tuple, dict, set, frozenset, and their subclasses)"
                    % kind.__name__)


#: a subclass's value as its base type, through the base type's own methods (a subclass's
#: __iter__, __str__, keys or items may say anything)
_AS_BASE = {
    int: lambda v: int.__index__(v),
    float: lambda v: float.__float__(v),
    complex: lambda v: complex(complex.real.__get__(v), complex.imag.__get__(v)),
    str: lambda v: str.__str__(v),
    bytes: lambda v: bytes(memoryview(v)),
    list: lambda v: [*list.__iter__(v)],
    tuple: lambda v: (*tuple.__iter__(v),),
    dict: lambda v: {k: item for k, item in dict.items(v)},
    set: lambda v: {*set.__iter__(v)},
    frozenset: lambda v: frozenset(frozenset.__iter__(v)),
}
_BASES = tuple(_AS_BASE)


def _float(text):
    if type(text) is not str:
        raise WireError("malformed float")
    try:
        return float(text)
    except ValueError:
        raise WireError("malformed float") from None


def _structural(data, start=0, end=None):
    """How many `,` `:` `[` `{` bytes data[start:end] holds."""
    return sum(data.count(char, start, end) for char in (b",", b":", b"[", b"{"))


def _value_count(line):
    """An upper bound on the JSON values in `line`: every value but the first follows a `,`,
    `:`, `[` or `{` outside a string. Counted over all its bytes at C speed, then, for a line
    over the limit that way with at most 2**16 strings (a long string of commas is legitimate),
    again outside its strings (a regex would build an object per string: more than it saves)."""
    count = _structural(line)
    if count <= MAX_MESSAGE_VALUES or line.count(b'"') > 2 * 2**16:
        return count
    plain = line.replace(b"\\\\", b"").replace(b'\\"', b"")  # no quote left is escaped
    count = start = 0
    while True:
        opening = plain.find(b'"', start)
        closing = plain.find(b'"', opening + 1) if opening >= 0 else -1
        if closing < 0:
            return count + _structural(plain, start)
        count += _structural(plain, start, opening)
        start = closing + 1


def load_message(line):
    """One protocol line (bytes) → a dict, or WireError for anything else: too long, more
    values than MAX_MESSAGE_VALUES, not UTF-8, not JSON, nested too deeply for the parser, a
    huge number, not an object. Bytes from a candidate go through here and nowhere else, so
    no input makes a reader raise anything but WireError."""
    if len(line) > MAX_MESSAGE_BYTES:
        raise WireError("message longer than %d bytes" % MAX_MESSAGE_BYTES)
    if _value_count(line) > MAX_MESSAGE_VALUES:
        raise WireError("message with more than %d values" % MAX_MESSAGE_VALUES)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("message is not UTF-8") from None
    try:
        message = _DECODER.decode(text)
    except RecursionError:
        raise WireError("message nested too deeply") from None
    except WireError:
        raise
    except (ValueError, MemoryError) as err:
        raise WireError("malformed message: %s" % str(err)[:200]) from None
    if type(message) is not dict:
        raise WireError("message is not a JSON object")
    return message


def _json_int(text):
    if len(text) > MAX_INT_DIGITS:
        raise WireError("number with more than %d digits" % MAX_INT_DIGITS)
    return int(text)


def _json_constant(name):
    raise WireError("non-standard JSON constant %s" % name)


#: made once (json.loads with these hooks builds a decoder and its scanner per message)
_DECODER = json.JSONDecoder(parse_int=_json_int, parse_constant=_json_constant)


def _check_hashes(items, what):
    """WireError unless every item is hashable and at most MAX_SHARED_HASH share a hash. Linear:
    the counts are keyed by hashes, ints that are their own hash, so they never collide."""
    try:
        counts = Counter(map(hash, items))
    except TypeError:
        raise WireError("unhashable %s" % what) from None
    if counts and max(counts.values()) > MAX_SHARED_HASH:
        raise WireError("more than %d %ss sharing one hash" % (MAX_SHARED_HASH, what))


def decode(item, depth=0):
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if type(item) is not list or len(item) != 2 or type(item[0]) is not str:
        raise WireError("malformed value")
    tag, data = item
    if tag == "none" and data is None:
        return None
    if tag == "bool" and type(data) is bool:
        return data
    if tag == "int" and type(data) is str and len(data) <= MAX_INT_DIGITS:
        try:
            return int(data)
        except ValueError:
            raise WireError("malformed int") from None
    if tag == "float":
        return _float(data)
    if tag == "str" and type(data) is str:
        return data
    if tag == "complex" and type(data) is list and len(data) == 2:
        return complex(_float(data[0]), _float(data[1]))
    if tag == "bytes" and type(data) is str:
        try:
            return bytes.fromhex(data)
        except ValueError:
            raise WireError("malformed bytes") from None
    if tag in ("list", "tuple", "set", "frozenset") and type(data) is list:
        items = [decode(v, depth + 1) for v in data]
        if tag in ("set", "frozenset"):
            _check_hashes(items, "set element")
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and type(data) is list:
        keys, values = [], []
        for pair in data:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict entry")
            keys.append(decode(pair[0], depth + 1))
            values.append(decode(pair[1], depth + 1))
        _check_hashes(keys, "dict key")
        return dict(zip(keys, values))
    raise WireError("unknown or malformed tag %r" % (tag,))


def short_repr(value, limit=200):
    """repr of a decoded value, cut to `limit` characters without building a huge string."""
    import reprlib
    shorter = reprlib.Repr()
    shorter.maxstring = shorter.maxother = shorter.maxlong = limit
    shorter.maxlist = shorter.maxtuple = shorter.maxdict = shorter.maxset = 20
    shorter.maxfrozenset = 20
    return shorter.repr(value)[:limit]


def same_value(a, b, float_tolerance=None):
    """Exact, type-strict equality (bool is not int, 1 is not 1.0, list is not tuple);
    floats within `float_tolerance` (relative and absolute) when one is given."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if float_tolerance is None:
            return a == b
        return math.isclose(a, b, rel_tol=float_tolerance, abs_tol=float_tolerance)
    if type(a) is complex:
        return (same_value(a.real, b.real, float_tolerance)
                and same_value(a.imag, b.imag, float_tolerance))
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same_value(x, y, float_tolerance) for x, y in zip(a, b))
    if type(a) is dict:
        if len(a) != len(b):
            return False
        by_key = {_typed(key): value for key, value in b.items()}
        for key, value in a.items():
            typed = _typed(key)
            if typed not in by_key or not same_value(value, by_key[typed], float_tolerance):
                return False
        return True
    if type(a) in (set, frozenset):  # elements as exact as anywhere else: {True} is not {1}
        return len(a) == len(b) and {_typed(v) for v in a} == {_typed(v) for v in b}
    return a == b


def _typed(value):
    """A hashable value's type-tagged form, for set elements and dict keys: equal only where
    `same_value` (without tolerance) would call the values equal."""
    kind = type(value)
    if kind is tuple:
        return ("tuple", tuple(_typed(v) for v in value))
    if kind is frozenset:
        return ("frozenset", frozenset(_typed(v) for v in value))
    if kind is float and value != value:
        return ("float", "nan")
    if kind is complex and (value.real != value.real or value.imag != value.imag):
        return ("complex", repr(value))
    return (kind.__name__, value)
