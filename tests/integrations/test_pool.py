"""The scoring pool: a stuck or crashing verifier costs one item, never the server."""

from __future__ import annotations

import asyncio
import signal
import time

import httpx
import psutil
import pytest
from pool_helpers import hostile_or_fine, spin
from server_helpers import start_rlvr_serve

from rlvr_envs.integrations.pool import ScoringPool
from rlvr_envs.sandbox.cpu_wait import cpu_stall_seconds

pytestmark = pytest.mark.slow  # worker processes, deadlines of seconds each


def test_timeouts_and_crashes_cost_only_their_item():
    async def scenario():
        pool = ScoringPool(2, item_timeout=2.0, work=hostile_or_fine)
        try:
            first = await pool.score([("ok", 0)] * 4)
            pids = set(pool.pids())
            mixed = await pool.score([("sleep", 30), ("ok", 0), ("crash", 0), ("ok", 0),
                                      ("ok", 0), ("ok", 0)])
            after = await pool.score([("ok", 0)] * 4)
            return first, pids, mixed, after, pool
        finally:
            pool.shutdown()

    first, pids, mixed, after, pool = asyncio.run(scenario())
    assert [r["verifier"] for r in first] == ["fine"] * 4
    assert {r["pid"] for r in first} <= pids
    assert mixed[0]["verifier"] == "server_timeout" and mixed[0]["reward"] == 0.0
    assert mixed[2]["verifier"] == "worker_crashed" and mixed[2]["reward"] == 0.0
    assert [mixed[i]["verifier"] for i in (1, 3, 4, 5)] == ["fine"] * 4  # bystanders unharmed
    assert [r["verifier"] for r in after] == ["fine"] * 4
    assert pool.recycled == 2 and not set(pool.pids()) & pids  # both workers were replaced


def test_queue_wait_does_not_count_against_the_deadline():
    async def scenario():
        pool = ScoringPool(1, item_timeout=1.5, work=hostile_or_fine)
        try:  # four 0.6 s items on one worker: 2.4 s in all, each well under its deadline
            return await pool.score([("sleep", 0.6)] * 4)
        finally:
            pool.shutdown()

    assert [r["verifier"] for r in asyncio.run(scenario())] == ["fine"] * 4


def test_a_busy_machine_does_not_turn_slow_work_into_a_timeout(busy_machine):
    """0.6 s of CPU behind a 1 s deadline, beside two busy processes per CPU (the item gets
    about a third of a CPU: ~1.8 s of wall time): the deadline moves by the time the machine's
    tasks waited for a CPU, so the item is scored, not timed out."""
    async def scenario():
        pool = ScoringPool(1, item_timeout=1.0, work=spin)
        try:
            await pool.score([("spin", 0.0)])  # the worker has booted
            return await pool.score([("spin", 0.6)])
        finally:
            pool.shutdown()

    if cpu_stall_seconds() is None:
        pytest.skip("this kernel keeps no CPU pressure count (/proc/pressure/cpu)")
    assert [r["verifier"] for r in asyncio.run(scenario())] == ["fine"]


def test_a_heavy_request_takes_turns_with_a_later_light_one():
    async def scenario():
        pool = ScoringPool(1, item_timeout=30, work=hostile_or_fine)
        try:
            await pool.score([("ok", 0)])  # the worker has booted
            heavy = asyncio.ensure_future(pool.score([("sleep", 0.3)] * 8))
            while pool.waiting() < 7:  # the heavy request holds the worker, 7 items queued
                await asyncio.sleep(0.01)
            light = await pool.score([("ok", 0)])
            return await heavy, light
        finally:
            pool.shutdown()

    heavy, light = asyncio.run(scenario())
    before_light = [r for r in heavy if r["finished"] < light[0]["finished"]]
    # first-come-first-served would finish all 8 heavy items first; in turns, the light item
    # waits for the running one and at most the heavy request's next turn
    assert len(before_light) <= 2 and all(r["verifier"] == "fine" for r in heavy)


def test_workers_die_with_a_killed_server():
    process, url = start_rlvr_serve()
    try:
        workers = httpx.get(f"{url}/health").json()["workers"]
        assert len(workers) == 2 and all(psutil.pid_exists(pid) for pid in workers)
    finally:
        process.send_signal(signal.SIGKILL)  # no shutdown hook runs
        process.wait()
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
