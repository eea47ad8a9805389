"""Load test of `rlvr serve` on loopback: concurrent clients POST mixed /score batches.

Starts the server (the `rlvr serve` CLI, 127.0.0.1, a free port), warms it, then runs
`--clients` concurrent clients for `--duration` seconds. Each request is a batch of
`--batch` samples in OpenRLHF's shape (query = prompt + response, prompts, labels), mixing
- math (rlvr/Math-v0): gold answers, wrong answers;
- code (rlvr/Code-v0, when that id is registered): reference solutions, wrong solutions;
- hostile: huge completions (past the env's action space), deep brace nesting, exponent
  towers for the symbolic checker, and for code an infinite loop and a flood of output.
Every request names its env (`"env"`), and every reply is checked: HTTP errors and wrong
rewards (a gold sample not scoring 1, a wrong or hostile one not scoring 0) are counted.
`--hostile-share 0` sends no hostile sample at all; `--families` picks math, code or both.
With `--heavy-batch N`, one more client keeps sending batches of N expensive (hostile math)
items, and the honest clients' latency is reported apart: the p99 an honest request sees
while one heavy request competes for the same workers. Reports requests/s, samples/s,
p50/p99 latency, server RSS (process tree) before and after, and, as the peer, one process
scoring the same samples in-process (no HTTP, no pool).

    .venv/bin/python benchmarks/bench_server_load.py            # 64 clients, 60 s
    .venv/bin/python benchmarks/bench_server_load.py --quick    # 10 s smoke
    .venv/bin/python benchmarks/bench_server_load.py --hostile-share 0 --families math
    .venv/bin/python benchmarks/bench_server_load.py --heavy-batch 40 --clients 8
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

import rlvr_envs
from rlvr_envs.integrations.ground_truth import encode_ground_truth
from rlvr_envs.integrations.scoring import cached_env
from rlvr_envs.integrations.task_rows import task_rows

RSS_GROWTH_BOUND_MB = 150.0


@dataclass
class Sample:
    kind: str          # "math", "code", "hostile-math", ...
    prompt: str
    response: str
    label: str
    env: str
    expected: float    # the reward a correct server must give


def chat_prompt(messages) -> str:
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + "<|im_start|>assistant\n"


def math_samples(n: int, seed: int) -> list[Sample]:
    env = cached_env("rlvr/Math-v0")
    out = []
    for row in task_rows("rlvr/Math-v0", n, seed=seed):
        prompt, label = chat_prompt(row.messages), encode_ground_truth(row.task)
        gold = env.scorer.gold_completion(row.task)
        out.append(Sample("math", prompt, gold + "<|im_end|>", label, "rlvr/Math-v0", 1.0))
        out.append(Sample("math", prompt, "I believe it is \\boxed{-0.123456789}.<|im_end|>",
                          label, "rlvr/Math-v0", 0.0))
    hostile = [
        "x" * 1_200_000 + "\\boxed{1}",                       # past the action space: too_long
        "\\boxed{" + "{" * 20_000 + "1" + "}" * 20_000 + "}",   # deep nesting
        "\\boxed{9^{9^{9^{9^{9^{9}}}}}}",                       # an exponent tower
        "\\boxed{" + "+".join(["x"] * 5_000) + "}",             # a very long expression
    ]
    label = out[0].label
    out += [Sample("hostile-math", out[0].prompt, text, label, "rlvr/Math-v0", 0.0)
            for text in hostile]
    return out


def code_samples(n: int, seed: int) -> list[Sample]:
    if "rlvr/Code-v0" not in rlvr_envs.list_envs():
        return []
    env = cached_env("rlvr/Code-v0")
    out = []
    for row in task_rows("rlvr/Code-v0", n, seed=seed):
        prompt, label = chat_prompt(row.messages), encode_ground_truth(row.task)
        gold = env.scorer.gold_completion(row.task)
        out.append(Sample("code", prompt, gold, label, "rlvr/Code-v0", 1.0))
        out.append(Sample("code", prompt, "```python\nraise SystemExit(1)\n```", label,
                          "rlvr/Code-v0", 0.0))
    label, prompt = out[0].label, out[0].prompt
    out += [Sample("hostile-code", prompt, f"```python\n{body}\n```", label, "rlvr/Code-v0", 0.0)
            for body in ("while True:\n    pass", "print('A' * 10**9)",
                         "import os\nwhile True:\n    os.fork()")]
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tree_rss_mb(pid: int) -> float:
    root = psutil.Process(pid)
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


def start_server(port: int, workers: int, item_timeout: float) -> subprocess.Popen:
    rlvr = Path(sys.executable).with_name("rlvr")
    log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a full pipe would stall it
    process = subprocess.Popen([str(rlvr), "serve", "--host", "127.0.0.1", "--port", str(port),
                                "--workers", str(workers), "--item-timeout", str(item_timeout),
                                "--log-level", "warning"],
                               stdout=log, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    log.seek(0)
    raise RuntimeError(f"server did not start: {log.read()[-2000:]}")


def request_body(batch: list[Sample]) -> dict:
    """One env per request (as one OpenRLHF dataset is), named so the server scores with it."""
    envs = {s.env for s in batch}
    if len(envs) != 1:
        raise ValueError(f"a request's samples must share one env, got {sorted(envs)}")
    return {"query": [s.prompt + s.response for s in batch], "prompts": [s.prompt for s in batch],
            "labels": [s.label for s in batch], "env": envs.pop()}


def choose_batch(pools: dict[str, list[Sample]], weights: dict[str, float], batch: int,
                 rng: random.Random) -> list[Sample]:
    """`batch` samples of one env; kinds drawn by weight among those that env has (a kind of
    weight 0 is never sent)."""
    envs = sorted({s.env for kind, pool in pools.items() if weights.get(kind, 0) > 0
                   for s in pool})
    env = rng.choice(envs)
    by_kind = {kind: [s for s in pools[kind] if s.env == env] for kind in pools
               if weights.get(kind, 0) > 0}
    kinds = [kind for kind, samples in by_kind.items() if samples]
    chosen_kinds = rng.choices(kinds, [weights[kind] for kind in kinds], k=batch)
    return [rng.choice(by_kind[kind]) for kind in chosen_kinds]


async def client_loop(http: httpx.AsyncClient, url: str, pools: dict[str, list[Sample]],
                      weights: dict[str, float], batch: int, stop: float, rng: random.Random,
                      stats: dict) -> None:
    while time.monotonic() < stop:
        chosen = choose_batch(pools, weights, batch, rng)
        started = time.perf_counter()
        try:
            reply = await http.post(url, json=request_body(chosen))
            stats["latency"].append(time.perf_counter() - started)
            if reply.status_code != 200:
                stats["errors"] += 1
                stats["error_samples"].append(f"{reply.status_code} {reply.text[:200]}")
                continue
            rewards = reply.json()["rewards"]
            stats["requests"] += 1
            stats["samples"] += len(chosen)
            for sample, reward, detail in zip(chosen, rewards, reply.json()["details"]):
                stats["by_kind"][sample.kind] = stats["by_kind"].get(sample.kind, 0) + 1
                stats["verifiers"][detail["verifier"]] = stats["verifiers"].get(detail["verifier"], 0) + 1
                if reward != sample.expected:
                    stats["wrong_rewards"] += 1
        except Exception as err:  # noqa: BLE001 - a transport error is a counted error
            stats["errors"] += 1
            stats["error_samples"].append(f"{type(err).__name__}: {err}"[:200])


def new_stats() -> dict:
    return {"latency": [], "errors": 0, "error_samples": [], "requests": 0, "samples": 0,
            "wrong_rewards": 0, "by_kind": {}, "verifiers": {}}


async def load(url: str, pools, weights, clients: int, duration: float, batch: int, seed: int,
               heavy_batch: int = 0):
    """Honest clients' stats, and the heavy client's (None without `heavy_batch`)."""
    stats, heavy = new_stats(), new_stats() if heavy_batch else None
    limits = httpx.Limits(max_connections=clients + 1, max_keepalive_connections=clients + 1)
    async with httpx.AsyncClient(timeout=180, limits=limits) as http:  # OpenRLHF's total=180
        stop = time.monotonic() + duration
        started = time.monotonic()
        loops = [client_loop(http, url, pools, weights, batch, stop, random.Random(seed + i),
                             stats) for i in range(clients)]
        if heavy_batch:
            loops.append(client_loop(http, url, {"heavy": pools["heavy"]}, {"heavy": 1.0},
                                     heavy_batch, stop, random.Random(seed - 1), heavy))
        await asyncio.gather(*loops)
        stats["elapsed"] = time.monotonic() - started
    return stats, heavy


def in_process_peer(samples: list[Sample], seconds: float) -> float:
    """Samples/s when one process scores the same (non-hostile) samples directly, its math
    verifier warmed first (as the server's workers are)."""
    from rlvr_envs.integrations.scoring import score_one
    from rlvr_envs.verify.math import warm_up

    warm_up()
    for sample in {s.env: s for s in samples}.values():  # each env built and used once
        score_one(sample.env, sample.label, sample.response.removesuffix("<|im_end|>"))
    done, stop = 0, time.monotonic() + seconds
    started = time.monotonic()
    while time.monotonic() < stop:
        for sample in samples:
            score_one(sample.env, sample.label, sample.response.removesuffix("<|im_end|>"))
            done += 1
            if time.monotonic() >= stop:
                break
    return done / (time.monotonic() - started)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--batch", type=int, default=1,
                        help="samples per request (OpenRLHF's single-turn executor sends 1)")
    parser.add_argument("--workers", type=int, default=None, help="server scoring processes")
    parser.add_argument("--item-timeout", type=float, default=5.0)
    parser.add_argument("--hostile-share", type=float, default=0.05,
                        help="share of hostile samples (0: none at all)")
    parser.add_argument("--families", choices=("math", "code", "both"), default="both",
                        help="honest payloads: math, code, or both (code only if registered)")
    parser.add_argument("--heavy-batch", type=int, default=0,
                        help="one more client sends batches of this many expensive items")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="10 s smoke run")
    args = parser.parse_args()
    duration = 10.0 if args.quick else args.duration
    workers = args.workers or psutil.cpu_count() or 2

    if not 0 <= args.hostile_share < 1:
        parser.error(f"--hostile-share must be in [0, 1), got {args.hostile_share}")
    math = math_samples(40, args.seed) if args.families in ("math", "both") else []
    code = code_samples(20, args.seed) if args.families in ("code", "both") else []
    if args.families == "code" and not code:
        parser.error("--families code: rlvr/Code-v0 is not registered")
    pools = {"math": [s for s in math if s.kind == "math"],
             "code": [s for s in code if s.kind == "code"],
             "hostile": [s for s in math + code if s.kind.startswith("hostile")],
             "heavy": [s for s in math_samples(1, args.seed)  # expensive to check, not big
                       if s.kind == "hostile-math" and len(s.response) < 100_000]}
    honest = {"math": len(pools["math"]), "code": len(pools["code"])}
    shares = {kind: n / sum(honest.values()) for kind, n in honest.items() if n}
    weights = {kind: share * (1 - args.hostile_share) for kind, share in shares.items()}
    weights["hostile"] = args.hostile_share
    print(f"payloads: math {len(pools['math'])}, code {len(pools['code'])}, hostile "
          f"{len(pools['hostile'])} (share {args.hostile_share:.0%}); heavy batch "
          f"{args.heavy_batch or '-'}")

    port = free_port()
    server = start_server(port, workers, args.item_timeout)
    url = f"http://127.0.0.1:{port}/score"
    try:
        asyncio.run(load(url, pools, weights, 4, 3.0, args.batch, args.seed + 10_000))  # warm
        rss_before = tree_rss_mb(server.pid)
        stats, heavy = asyncio.run(load(url, pools, weights, args.clients, duration, args.batch,
                                        args.seed, heavy_batch=args.heavy_batch))
        rss_after = tree_rss_mb(server.pid)
        health = httpx.get(f"http://127.0.0.1:{port}/health").json()
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()

    normal = pools["math"] + pools.get("code", [])
    peer = in_process_peer(normal, min(10.0, duration))
    latency = stats["latency"] or [float("nan")]
    samples_per_s = stats["samples"] / stats["elapsed"]
    growth = rss_after - rss_before
    print(f"\nserver: {workers} scoring processes, item timeout {args.item_timeout:g} s; "
          f"{args.clients} clients x {duration:g} s, {args.batch} samples/request, "
          f"{args.hostile_share:.0%} hostile")
    print(f"requests        {stats['requests']}  ({stats['requests'] / stats['elapsed']:.1f} req/s)")
    print(f"samples         {stats['samples']}  ({samples_per_s:.1f} samples/s)")
    print(f"latency         p50 {statistics.median(latency) * 1000:.0f} ms   "
          f"p99 {percentile(latency, 0.99) * 1000:.0f} ms")
    if heavy is not None:
        heavy_latency = heavy["latency"] or [float("nan")]
        print(f"heavy client    {heavy['requests']} batches of {args.heavy_batch} expensive "
              f"items, p50 {statistics.median(heavy_latency):.1f} s; honest p99 above is "
              f"measured while they run")
        stats["errors"] += heavy["errors"]
        stats["wrong_rewards"] += heavy["wrong_rewards"]
    print(f"errors          {stats['errors']}  (target 0)")
    print(f"wrong rewards   {stats['wrong_rewards']}  (target 0)")
    print(f"server RSS      {rss_before:.0f} MB before, {rss_after:.0f} MB after "
          f"(growth {growth:+.0f} MB; bound {RSS_GROWTH_BOUND_MB:.0f} MB: "
          f"{'ok' if growth <= RSS_GROWTH_BOUND_MB else 'EXCEEDED'})")
    print(f"pools recycled  {health['pools_recycled']} (stuck verifiers replaced)")
    print(f"samples by kind {stats['by_kind']}")
    print(f"verdicts        {stats['verifiers']}")
    print(f"peer: one process scoring in-process {peer:.1f} samples/s (normal samples only); "
          f"server/peer = {samples_per_s / peer:.2f}x (the server's figure includes hostile "
          f"samples and HTTP)")
    for line in stats["error_samples"][:5]:
        print(f"  error: {line}")
    if stats["errors"] or stats["wrong_rewards"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
