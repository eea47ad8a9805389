"""Per-run sandbox latency (p50/p99) of `python -c pass` for local, bwrap and docker, plus the
warm alternatives: a fresh child of the backend's warm fork server (local, bwrap; what the
code grader uses) and, for Docker, a run in a container of the backend's warm pool (one
container per run, pre-started; `--gap` seconds of idle time between runs, untimed, let the
pool start the replacements as it would between batches) and a bare `docker exec` into a
running container.

    .venv/bin/python benchmarks/bench_sandbox_latency.py [--runs 50] [--docker-runs 20]
        [--gap 1.0]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import time
import uuid

#: a fork-server program that answers one byte (the `python -c pass` of a warm child)
PONG = "import os\ndef main(fd):\n    os.write(fd, b'.')\n"


def fork_server_run(server, limits) -> None:
    ours, theirs = socket.socketpair()
    with server.job(limits) as job:
        job.spawn("pong", [theirs], isolate=True)
        theirs.close()
        ours.recv(1)
    ours.close()


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
    parser.add_argument("--gap", type=float, default=1.0,
                        help="idle seconds between docker pool runs (untimed)")
    args = parser.parse_args()
    from rlvr_envs.sandbox import Limits, SandboxUnavailable, get_sandbox

    rows = []
    for backend, runs in (("local", args.runs), ("bwrap", args.runs), ("docker", args.docker_runs)):
        try:
            sandbox = get_sandbox(backend, **({"warm": False} if backend == "docker" else {}))
        except SandboxUnavailable as err:
            print(f"{backend:8s} unavailable: {err}")
            continue
        cmd = [sandbox.python, "-I", "-S", "-c", "pass"]
        sandbox.run(cmd)  # warm caches
        samples = time_runs(lambda: sandbox.run(cmd), runs)
        rows.append((f"{backend} (fresh sandbox per run)", *percentiles(samples), runs))
        server = sandbox.fork_server({"pong": PONG})
        if server is not None:
            limits = Limits()
            fork_server_run(server, limits)
            samples = time_runs(lambda: fork_server_run(server, limits), runs)
            kind = "own namespaces" if server.namespaces else "process group"
            rows.append((f"{backend} fork-server child ({kind})", *percentiles(samples), runs))
            sandbox.close()
        if backend == "docker":
            pooled = get_sandbox("docker")

            def pooled_run():
                time.sleep(args.gap)
                start = time.perf_counter()
                pooled.run(cmd)
                return time.perf_counter() - start

            pooled_run()
            samples = [pooled_run() for _ in range(runs)]
            pooled.close()
            rows.append(("docker warm pool (one container per run)", *percentiles(samples),
                         runs))
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
    base = next((r[1] for r in rows if r[0] == "local (fresh sandbox per run)"), None)
    if base:
        for name, p50, *_ in rows:
            print(f"  {name}: {p50 / base:.2f}x the p50 of a fresh local sandbox")


if __name__ == "__main__":
    main()
