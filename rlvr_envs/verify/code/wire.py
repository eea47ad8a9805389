"""Type-tagged JSON for values that cross a sandbox boundary (plain data, never pickles).

Every value becomes `[tag, payload]` with an exact type: an `int` subclass, a `str` subclass
or an object with a rigged `__eq__` cannot be encoded (the candidate's process refuses or
forges bytes; either way the grader decodes fresh built-in values). This file is shipped
verbatim into sandboxes (stdlib only, no package imports).
"""

import json
import math

MAX_DEPTH = 64


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
    value = float(text)
    return value


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
    if tag == "int" and type(data) is str and len(data) < 4000:
        return int(data)
    if tag == "float":
        return _float(data)
    if tag == "str" and type(data) is str:
        return data
    if tag == "complex" and type(data) is list and len(data) == 2:
        return complex(_float(data[0]), _float(data[1]))
    if tag == "bytes" and type(data) is str:
        return bytes.fromhex(data)
    if tag in ("list", "tuple", "set", "frozenset") and type(data) is list:
        items = [decode(v, depth + 1) for v in data]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and type(data) is list:
        out = {}
        for pair in data:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict entry")
            out[decode(pair[0], depth + 1)] = decode(pair[1], depth + 1)
        return out
    raise WireError("unknown or malformed tag %r" % (tag,))


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
