"""What a fresh process per sample costs on this machine, before any grading: the CPU of
fork + _exit + wait for processes of several sizes, with and without the namespaces a run
gets, and the cost of one copy-on-write page fault. The floor under `bench_code_humaneval.py`:
a fork-server run pays one such fork and exit per sample and ~470 page copies
(`bench_code_faults.py`).

Each configuration runs in a fresh interpreter (this one, `-I -S`), forking `--forks` children
that exit at once (or after writing to N pages of a buffer the parent filled); the parent's
and the children's CPU per fork are printed, medians of `--repeats`. With a C compiler (`cc`)
on the PATH the same loop in C is printed too, for scale. Namespaced clones need root or
unprivileged user namespaces (skipped otherwise).

    .venv/bin/python benchmarks/bench_fork_floor.py [--forks 300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

#: the modules a zygote holds (rlvr_envs.sandbox.zygote.PRELOAD and what its own code imports)
ZYGOTE_MODULES = ("bisect", "collections", "copy", "functools", "heapq", "itertools", "math",
                  "operator", "re", "string", "typing", "json", "socket", "select", "marshal",
                  "ctypes", "resource", "signal")
CLONE_FLAGS = {"fork": 0,
               "mount+pid+ipc+uts namespaces": 0x00020000 | 0x20000000 | 0x08000000 | 0x04000000,
               "+ network namespace": 0x00020000 | 0x20000000 | 0x08000000 | 0x04000000
               | 0x40000000}

CHILD_LOOP = """
import ctypes, os, resource, sys, json, gc
modules, ballast_mb, flags, pages, forks = json.loads(sys.argv[1])
for name in modules:
    __import__(name)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
if flags and os.geteuid() != 0:
    flags |= 0x10000000  # a user namespace of its own, where unprivileged namespaces work
ballast = bytearray(b"x" * (ballast_mb << 20))
buffer = bytearray(b"x" * (max(pages, 1) * 4096))
gc.collect()
gc.freeze()
nr, sig = ctypes.c_long(56), ctypes.c_long(flags | 17)  # clone(2) on x86_64, SIGCHLD


def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


before = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
for _ in range(forks):
    pid = libc.syscall(nr, sig, 0, 0, 0, 0)
    if pid == 0:
        for offset in range(0, pages * 4096, 4096):
            buffer[offset] = 1
        os._exit(0)
    if pid < 0:
        print(json.dumps({"error": os.strerror(ctypes.get_errno())}))
        sys.exit(0)
    os.waitpid(pid, 0)
after = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
anon = [line.split()[1] for line in open("/proc/self/status") if line.startswith("RssAnon")]
print(json.dumps({"parent_ms": 1000 * (after[0] - before[0]) / forks,
                  "child_ms": 1000 * (after[1] - before[1]) / forks,
                  "anon_mb": int(anon[0]) / 1024 if anon else None}))
"""

C_LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
static double ms(struct rusage *a, struct rusage *b) {
  return ((b->ru_utime.tv_sec - a->ru_utime.tv_sec) + (b->ru_stime.tv_sec - a->ru_stime.tv_sec))
         * 1e3 + ((b->ru_utime.tv_usec - a->ru_utime.tv_usec)
                  + (b->ru_stime.tv_usec - a->ru_stime.tv_usec)) / 1e3;
}
int main(int argc, char **argv) {
  size_t mb = atoi(argv[1]); int forks = atoi(argv[2]);
  char *p = malloc((mb << 20) + 1); memset(p, 1, (mb << 20) + 1);
  struct rusage a, b, c, d;
  getrusage(RUSAGE_SELF, &a); getrusage(RUSAGE_CHILDREN, &c);
  for (int i = 0; i < forks; i++) { pid_t pid = fork(); if (!pid) _exit(p[0] - 1); waitpid(pid, 0, 0); }
  getrusage(RUSAGE_SELF, &b); getrusage(RUSAGE_CHILDREN, &d);
  printf("{\"parent_ms\": %f, \"child_ms\": %f}\n", ms(&a, &b) / forks, ms(&c, &d) / forks);
  return 0;
}
"""


def python_run(modules, ballast_mb, flags, pages, forks) -> dict:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", CHILD_LOOP,
                           json.dumps([list(modules), ballast_mb, flags, pages, forks])],
                          capture_output=True, text=True, check=False)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": done.stderr.strip().splitlines()[-1:] or "no output"}


def median_of(runs: list[dict]) -> dict:
    if any("error" in run for run in runs):
        return next(run for run in runs if "error" in run)
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]
            if runs[0][key] is not None}


def show(label: str, figures: dict) -> None:
    if "error" in figures:
        print(f"  {label:58s} skipped: {figures['error']}")
        return
    anon = f"   ({figures['anon_mb']:.1f} MB anonymous)" if "anon_mb" in figures else ""
    print(f"  {label:58s} parent {figures['parent_ms']:.3f} ms + child "
          f"{figures['child_ms']:.3f} ms{anon}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forks", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    def measure(*config) -> dict:
        return median_of([python_run(*config, args.forks) for _ in range(args.repeats)])

    print(f"CPU per fork + _exit + wait, median of {args.repeats} runs of {args.forks} forks "
          f"({sys.executable}, Python {sys.version.split()[0]}):")
    compiler = shutil.which("cc")
    if compiler:
        with tempfile.TemporaryDirectory() as tmp:
            source, binary = Path(tmp) / "fork.c", Path(tmp) / "fork"
            source.write_text(C_LOOP)
            subprocess.run([compiler, "-O2", "-o", str(binary), str(source)], check=True)
            for mb in (0, 6):
                runs = [json.loads(subprocess.run([str(binary), str(mb), str(args.forks)],
                                                  capture_output=True, text=True,
                                                  check=True).stdout) for _ in range(args.repeats)]
                show(f"C, {mb} MB written", median_of(runs))
    show("python -I -S, nothing imported", measure((), 0, 0, 0))
    zygote = measure(ZYGOTE_MODULES, 0, 0, 0)
    show("python -I -S holding a zygote's modules", zygote)
    for mb in (3, 6):
        show(f"  + {mb} MB of ballast", measure(ZYGOTE_MODULES, mb, 0, 0))
    for label, flags in list(CLONE_FLAGS.items())[1:]:
        show(f"  cloned into {label}", measure(ZYGOTE_MODULES, 0, flags, 0))
    written = {pages: measure(ZYGOTE_MODULES, 0, 0, pages) for pages in (100, 400)}
    for pages, figures in written.items():
        if "error" not in figures and "error" not in zygote:
            extra = figures["child_ms"] - zygote["child_ms"]
            print(f"  the child writing {pages} pages of the parent's buffer: +{extra:.3f} ms, "
                  f"{1000 * extra / pages:.2f} µs per copied page")


if __name__ == "__main__":
    main()
