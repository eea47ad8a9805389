"""Reading code out of completions written the way models write them: our extraction next to
EvalPlus's `sanitize` (the peer's post-processing of model output), both graded the same way.

Each of HumanEval's 164 canonical solutions is written into completions of several shapes that
chat models produce — a fenced function; a body-only continuation; the solution followed by a
block of example calls or of the model's own asserts; drafts inside `<think>` and the final
code after it; DeepSeek-R1 `<answer>` tags; the solution split over a helper block and a main
block — and, as controls that must score 0, a right draft left in the reasoning with a wrong
final answer, and a right block followed by a wrong final one. Our side is
`CodeScorer.score`; the peer's side extracts with `evalplus.sanitize.sanitize(completion,
entry_point)` (the prompt put in front of a continuation first, as EvalPlus does for base
models) and grades that program with the same `CodeScorer.grade` (the task's prompt put
in front when the code does not define the entry point, as for our side), so the two differ
only in what they read out of the text. Printed: the share of completions scored 1, per shape.

Needs the peer: `pip install --no-deps evalplus==0.3.1 && pip install tree_sitter
tree_sitter_python tempdir wget appdirs termcolor multipledispatch` (only `sanitize` is used).

`--completions FILE` grades real model output instead: a JSON list (or JSONL) of
{"task": "HumanEval/N", "completion": text}; printed are the rewards of both sides and every
completion on which they disagree.

    .venv/bin/python benchmarks/bench_code_extraction.py [--tasks 164] [--sandbox auto]
        [--completions FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

FENCE = "```"


def fenced(code: str, label: str = "python") -> str:
    return f"{FENCE}{label}\n{code.rstrip()}\n{FENCE}"


def first_calls(test: str, entry: str, limit: int = 2) -> list[str]:
    """The candidate calls of the first asserts of a HumanEval test, spelled with `entry`."""
    calls = []
    for line in test.splitlines():
        line = line.strip()
        if line.startswith("assert ") and "candidate(" in line:
            calls.append(line.replace("candidate", entry))
        if len(calls) == limit:
            break
    return calls


def helper_split(solution: str, entry: str) -> str | None:
    """The solution as two blocks: its body moved into a helper `_solve` (first block) and the
    entry point calling it (second block); None when the solution is not one plain function."""
    match = re.search(rf"^def {re.escape(entry)}\((.*?)\)(\s*->\s*[^:]+)?:\n", solution, re.M)
    if match is None or solution.count("\ndef ") + solution.startswith("def ") != 1:
        return None
    params = [p.split(":")[0].split("=")[0].strip() for p in match.group(1).split(",")
              if p.strip()]
    if any(p.startswith("*") for p in params):
        return None
    head, body = solution[:match.start()], solution[match.end():]
    helper = f"{head}def _solve({match.group(1)}):\n{body}"
    main = f"def {entry}({match.group(1)}):\n    return _solve({', '.join(params)})\n"
    return (f"First a helper that does the work:\n\n{fenced(helper)}\n\n"
            f"Then the function itself:\n\n{fenced(main)}")


def shapes(task) -> dict[str, tuple[str, float]]:
    """Completion shape → (completion, the reward it deserves)."""
    prompt, solution = task.metadata["prefix"], task.answer  # the answer: prompt + canonical
    body = solution[len(prompt):]
    entry, test = task.metadata["entry"], task.metadata["test"]
    wrong = f"def {entry}(*args, **kwargs):\n    return None\n"
    calls = first_calls(test, entry)
    usage = "\n".join("print(" + c[len("assert "):].split("==")[0].strip() + ")" for c in calls)
    out = {
        "fenced function": (f"Here is the solution:\n\n{fenced(solution)}\n\nIt passes the "
                            f"examples.", 1.0),
        "body-only continuation": (body, 1.0),
        "solution, then example calls": (f"{fenced(solution)}\n\nExample usage:\n\n"
                                         f"{fenced(usage or 'print()')}", 1.0),
        "solution, then its own asserts": (f"{fenced(solution)}\n\nTests:\n\n"
                                           f"{fenced(chr(10).join(calls) or 'pass')}", 1.0),
        "drafts in <think>, final after": (f"<think>\nA first try:\n{fenced(wrong)}\nNo, that "
                                           f"is wrong.\n</think>\n{fenced(solution)}", 1.0),
        "R1 <answer> tags": (f"<think>\nStraightforward.\n</think>\n<answer>\n{solution}"
                             f"</answer>", 1.0),
        "control: right draft, wrong final": (f"<think>\n{fenced(solution)}\n</think>\n"
                                              f"{fenced(wrong)}", 0.0),
        "control: right block, then wrong final": (f"{fenced(solution)}\n\nSimpler:\n\n"
                                                   f"{fenced(wrong)}", 0.0),
    }
    split = helper_split(solution, entry)
    if split is not None:
        out["helper and main in two blocks"] = (split, 1.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--completions", help="JSON list or JSONL of {task, completion}")
    args = parser.parse_args()
    try:
        from evalplus.sanitize import sanitize
    except ImportError as err:
        raise SystemExit(f"the peer is not installed ({err}); see this script's docstring")

    from rlvr_envs.tasks.code.humaneval import load_humaneval
    from rlvr_envs.tasks.code.scoring import CodeScorer, compose_program

    tasks = list(load_humaneval())[:args.tasks]
    scorer = CodeScorer(args.sandbox)
    scorer.batch_workers = args.workers
    scorer.warm_up()

    def peer(task, completion: str) -> float:
        if FENCE not in completion and f"def {task.metadata['entry']}(" not in completion:
            completion = task.metadata["prefix"] + completion  # a continuation, as EvalPlus reads one
        code = sanitize(completion, task.metadata["entry"])
        if not code.strip():
            return 0.0
        return 1.0 if scorer.grade(task, compose_program(task, code)).passed else 0.0

    if args.completions:
        compare_real(args.completions, scorer, peer, args.workers)
        scorer.close()
        return
    jobs = [(name, task, text, want) for task in tasks
            for name, (text, want) in shapes(task).items()]
    started = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        ours = list(pool.map(lambda job: scorer.score(job[1], job[2]).reward, jobs))
        theirs = list(pool.map(lambda job: peer(job[1], job[2]), jobs))
    elapsed = time.perf_counter() - started
    scorer.close()
    names = list(dict.fromkeys(job[0] for job in jobs))
    print(f"HumanEval canonical solutions written as model output, {len(tasks)} tasks "
          f"({elapsed:.0f} s): share scored 1 (deserved: 1 for a shape, 0 for a control)")
    print(f"  {'shape':42s} {'n':>4s} {'rlvr-envs':>10s} {'evalplus':>10s}")
    right = {"ours": 0, "theirs": 0}
    for name in names:
        rows = [i for i, job in enumerate(jobs) if job[0] == name]
        mine = sum(ours[i] for i in rows) / len(rows)
        other = sum(theirs[i] for i in rows) / len(rows)
        right["ours"] += sum(ours[i] == jobs[i][3] for i in rows)
        right["theirs"] += sum(theirs[i] == jobs[i][3] for i in rows)
        print(f"  {name:42s} {len(rows):4d} {mine:10.3f} {other:10.3f}")
    print(f"  scored as deserved: rlvr-envs {right['ours']}/{len(jobs)}, evalplus "
          f"{right['theirs']}/{len(jobs)}")


def read_completions(path: str) -> list[dict]:
    text = open(path, encoding="utf-8").read()
    rows = json.loads(text) if text.lstrip().startswith("[") else \
        [json.loads(line) for line in text.splitlines() if line.strip()]
    return rows


def compare_real(path: str, scorer, peer, workers: int) -> None:
    from rlvr_envs.tasks.code.humaneval import load_humaneval

    tasks = load_humaneval()
    rows = read_completions(path)
    items = [(tasks.get(row["task"]), row["completion"]) for row in rows]
    with ThreadPoolExecutor(workers) as pool:
        ours = list(pool.map(lambda item: scorer.score(*item).reward, items))
        theirs = list(pool.map(lambda item: peer(*item), items))
    print(f"{len(items)} completions from {path}: rlvr-envs {sum(ours):.0f} scored 1, "
          f"evalplus {sum(theirs):.0f}; they disagree on "
          f"{sum(a != b for a, b in zip(ours, theirs))}")
    for (task, text), a, b in zip(items, ours, theirs):
        if a != b:
            print(f"--- {task.source_id}: rlvr-envs {a:.0f}, evalplus {b:.0f}\n{text[:1500]}")


if __name__ == "__main__":
    main()
