"""UnicodeText: membership, sampling, and the shared-memory round trip used by async vector envs."""

import copy
import multiprocessing as mp

from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from rlvr_envs.core.spaces import UnicodeText


def test_contains_any_unicode_up_to_the_limit():
    space = UnicodeText(10)
    assert space.contains("héllo 世界 🙂")
    assert not space.contains("x" * 11)
    assert not space.contains(b"bytes")
    space.seed(0)
    assert all(space.contains(space.sample()) for _ in range(20))


def test_shared_memory_round_trip():
    space = UnicodeText(16)
    memory = create_shared_memory(space, n=3, ctx=mp)
    values = ["", "∫x dx = x²/2 🙂", "plain"]
    for i, value in enumerate(values):
        write_to_shared_memory(space, i, value, memory)
    view = read_from_shared_memory(space, memory, n=3)
    assert tuple(view) == tuple(values)
    snapshot = copy.deepcopy(view)
    write_to_shared_memory(space, 0, "changed", memory)
    assert view[0] == "changed" and snapshot == tuple(values)
