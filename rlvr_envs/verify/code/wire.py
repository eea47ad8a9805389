"""Type-tagged JSON for values that cross a sandbox boundary (plain data, never pickles).

Every value becomes `[tag, payload]` with an exact type: an `int` subclass, a `str` subclass
or an object with a rigged `__eq__` cannot be encoded (the candidate's process refuses or
forges bytes; either way the grader decodes fresh built-in values). This file is shipped
verbatim into sandboxes (stdlib only, no package imports).
"""

import json
import math

MAX_DEPTH = 64
#: the longest protocol line either side accepts (a value of a few million elements)
MAX_MESSAGE_BYTES = 32 * 2**20
#: the longest int literal a message may hold (also Python's own int/str conversion limit)
MAX_INT_DIGITS = 4000


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
    raise WireError("cannot send a value of type %s (only None, bool, int, float, complex, "
                    "str, bytes, list, tuple, dict, set, frozenset)" % kind.__name__)


def _float(text):
    if type(text) is not str:
        raise WireError("malformed float")
    try:
        return float(text)
    except ValueError:
        raise WireError("malformed float") from None


def load_message(line):
    """One protocol line (bytes) → a dict, or WireError for anything else: too long, not
    UTF-8, not JSON, nested too deeply for the parser, a huge number, not an object. Bytes
    from a candidate go through here and nowhere else, so no input makes a reader raise
    anything but WireError."""
    if len(line) > MAX_MESSAGE_BYTES:
        raise WireError("message longer than %d bytes" % MAX_MESSAGE_BYTES)
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
        try:
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        except TypeError:
            raise WireError("unhashable set element") from None
    if tag == "dict" and type(data) is list:
        out = {}
        for pair in data:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict entry")
            try:
                out[decode(pair[0], depth + 1)] = decode(pair[1], depth + 1)
            except TypeError:
                raise WireError("unhashable dict key") from None
        return out
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
        for key, value in a.items():
            if key not in b or type(key) is not type(next(k for k in b if k == key)):
                return False
            if not same_value(value, b[key], float_tolerance):
                return False
        return True
    return a == b
