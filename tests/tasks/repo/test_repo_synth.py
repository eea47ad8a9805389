"""Bug synthesis: AST mutation operators and the whole pipeline on a local sdist (no
download), with the built tasks cached and served by the env."""

import io
import random
import tarfile

import pytest
from repo_helpers import fake_sdist
from rlvr_envs.tasks.repo.agents import GoldPatchAgent, NullAgent
from rlvr_envs.tasks.repo.mutate import OPERATORS, find_mutations, sample_mutations

from rlvr_envs.core.multiturn import run_episode

SOURCE = '''\
def clamp(value, low=0, high=10, strict=False):
    """Clamp value."""
    total = value + 1
    total -= 1
    if value < low and not strict:
        return max(low, value)
    return min(high, value)
'''


def test_each_operator_makes_a_minimal_edit():
    mutations = find_mutations(SOURCE, "m.py")
    by_op = {}
    for m in mutations:
        by_op.setdefault(m.operator, []).append(m)
    assert set(by_op) == set(OPERATORS)
    edits = {(m.operator, m.original, m.replacement) for m in mutations}
    assert ("flipped_comparison", "<", "<=") in edits
    assert ("wrong_operator", "+", "-") in edits
    assert ("wrong_operator", "-=", "+=") in edits
    assert ("wrong_operator", "and", "or") in edits
    assert ("off_by_one", "1", "0") in edits
    assert ("swapped_arguments", "low, value", "value, low") in edits
    assert ("wrong_default", "False", "True") in edits
    assert ("wrong_default", "10", "9") in edits
    dropped = [m for m in by_op["dropped_statement"]]
    assert {m.original.strip() for m in dropped} == {"total = value + 1", "total -= 1"}
    for m in mutations:
        mutated = m.apply(SOURCE)
        compile(mutated, "m.py", "exec")  # still valid Python
        changed = [a for a, b in zip(SOURCE.splitlines(), mutated.splitlines()) if a != b]
        assert len(changed) <= 1 or m.operator in ("dropped_statement", "removed_branch",
                                                   "removed_body")


def test_sampling_spreads_over_operators():
    picked = sample_mutations(find_mutations(SOURCE, "m.py"), 6, random.Random(0))
    assert len({m.operator for m in picked}) == 6


@pytest.mark.slow
def test_pipeline_builds_cached_tasks_that_pass_the_audit(tmp_path, monkeypatch, repo_sandbox):
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    from rlvr_envs.tasks.repo.snapshot import cache_dir
    from rlvr_envs.tasks.repo.synth import build_package_tasks

    monkeypatch.setenv("RLVR_CACHE_DIR", str(tmp_path / "cache"))
    report = build_package_tasks("intervals", repo_sandbox, max_tasks=2, max_tries=8,
                                 sdist=fake_sdist(tmp_path))
    assert report.tests_passing == 9 and report.tried >= len(report.kept) >= 1
    assert (cache_dir() / "tasks" / "intervals.jsonl").is_file()
    assert (cache_dir() / "snapshots" / "intervals-0.1.0.tar.gz").is_file()
    env = RepoEditEnv("cache", sandbox=repo_sandbox)
    try:
        assert len(env.source) == len(report.kept)
        for task in env.source:
            meta = task.metadata
            assert meta["license"].startswith("MIT")
            assert meta["mutation"]["operator"] in OPERATORS
            assert meta["snapshot"] == "cache:intervals-0.1.0.tar.gz"
            # the statement names failing tests, never the mutated code
            assert meta["FAIL_TO_PASS"][0] in task.prompt
            fix = [line[1:].strip() for line in task.answer.splitlines()
                   if line.startswith("+") and not line.startswith("+++")]
            assert all(line not in task.prompt for line in fix if line)
            assert meta["mutation"]["file"] not in task.prompt
            assert run_episode(env, NullAgent(), task=task).reward == 0.0
            assert run_episode(env, GoldPatchAgent(), task=task).reward == 1.0
    finally:
        env.close()


def test_package_without_passing_tests_is_refused(tmp_path, repo_sandbox):
    from rlvr_envs.tasks.repo.synth import SynthesisError, build_package_tasks

    archive = tmp_path / "broken-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, body in (("broken-1.0/LICENSE", b"Apache License\n"),
                           ("broken-1.0/test_x.py", b"def test_x():\n    assert False\n")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    with pytest.raises(SynthesisError, match="does not pass"):
        build_package_tasks("broken", repo_sandbox, sdist=archive, out_dir=tmp_path / "out")
