"""Per-run sandbox latency (p50/p99) of `python -c pass` for local, bwrap and docker, plus the
warm-container alternative for Docker (`docker exec` into a running container) to judge
whether a container pool pays off.

    .venv/bin/python benchmarks/bench_sandbox_latency.py [--runs 50] [--docker-runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
import uuid


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return statistics.median(ordered) * 1000, p99 * 1000


def time_runs(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--docker-runs", type=int, default=20)
    args = parser.parse_args()
    from rlvr_envs.sandbox import SandboxUnavailable, get_sandbox

    rows = []
    for backend, runs in (("local", args.runs), ("bwrap", args.runs), ("docker", args.docker_runs)):
        try:
            sandbox = get_sandbox(backend)
        except SandboxUnavailable as err:
            print(f"{backend:8s} unavailable: {err}")
            continue
        cmd = [sandbox.python, "-I", "-S", "-c", "pass"]
        sandbox.run(cmd)  # warm caches
        samples = time_runs(lambda: sandbox.run(cmd), runs)
        rows.append((f"{backend} (fresh sandbox per run)", *percentiles(samples), runs))
        if backend == "docker":
            name = f"rlvr-warm-{uuid.uuid4().hex[:8]}"
            subprocess.run(["docker", "run", "-d", "--rm", "--name", name, "--network", "none",
                            "--read-only", "--user", "65534:65534", "--cap-drop", "ALL",
                            sandbox.image, "sleep", "600"], check=True, capture_output=True)
            try:
                exec_cmd = ["docker", "exec", "-i", name, sandbox.python, "-I", "-S", "-c", "pass"]
                cleanup = ["docker", "exec", name, "sh", "-c", "kill -9 -1 2>/dev/null; true"]
                samples = time_runs(lambda: subprocess.run(exec_cmd, capture_output=True), runs)
                rows.append(("docker exec into a warm container", *percentiles(samples), runs))
                samples = time_runs(lambda: (subprocess.run(exec_cmd, capture_output=True),
                                             subprocess.run(cleanup, capture_output=True)), runs)
                rows.append(("docker exec + cleanup exec (pool)", *percentiles(samples), runs))
            finally:
                subprocess.run(["docker", "kill", name], capture_output=True)
    print(f"\n{'backend':40s} {'p50 ms':>8s} {'p99 ms':>8s} {'runs':>5s}")
    for name, p50, p99, runs in rows:
        print(f"{name:40s} {p50:8.1f} {p99:8.1f} {runs:5d}")
    base = {r[0].split()[0]: r[1] for r in rows}
    if "local" in base:
        for name, p50, *_ in rows:
            print(f"  {name}: {p50 / base['local']:.1f}x the local p50")


if __name__ == "__main__":
    main()
