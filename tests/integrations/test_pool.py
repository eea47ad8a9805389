"""The scoring pool: a stuck or crashing verifier costs one item, never the server."""

from __future__ import annotations

import asyncio

from rlvr_envs.integrations.pool import ScoringPool

from pool_helpers import hostile_or_fine


def test_timeouts_and_crashes_cost_only_their_item():
    async def scenario():
        pool = ScoringPool(2, item_timeout=1.5, work=hostile_or_fine)
        try:
            first = await pool.score([("ok", 0)] * 4)
            mixed = await pool.score([("sleep", 30), ("ok", 0), ("crash", 0), ("ok", 0)])
            recycled_by_crash = pool.recycled
            stuck = await pool.score([("sleep", 30), ("ok", 0)])
            after = await pool.score([("ok", 0)] * 4)
            return first, mixed, stuck, after, (recycled_by_crash, pool.recycled)
        finally:
            pool.shutdown()

    first, mixed, stuck, after, recycled = asyncio.run(scenario())
    assert [r["verifier"] for r in first] == ["fine"] * 4
    assert mixed[0]["verifier"] == "server_timeout" and mixed[0]["reward"] == 0.0
    assert mixed[2]["verifier"] == "worker_crashed" and mixed[2]["reward"] == 0.0
    assert mixed[1]["verifier"] == mixed[3]["verifier"] == "fine"  # innocent items retried
    assert [r["verifier"] for r in stuck] == ["server_timeout", "fine"]
    assert [r["verifier"] for r in after] == ["fine"] * 4  # the replacement pool serves
    assert recycled == (1, 2)
