"""History safety: the workspace holds the base commit and nothing from which the fix could
be recovered; building fails loudly when it would leak."""

import subprocess

import pytest
from rlvr_envs.tasks.repo.snapshot import BASE_TREES
from rlvr_envs.tasks.repo.workspace import (
    HistoryLeak,
    audit_history,
    blob_hashes,
    build_workspace,
    collect_changes,
    git,
)


def _git(ws, *args):
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True).stdout


@pytest.fixture
def workspace(tmp_path, calc_task):
    base = BASE_TREES.base_tree(calc_task.metadata)
    ws = tmp_path / "ws"
    build_workspace(base, ws, expected_commit=calc_task.metadata["workspace_commit"],
                    forbidden_blobs=calc_task.metadata["fixed_blobs"])
    return ws


def test_workspace_is_one_commit_with_no_trace_of_the_fix(workspace, calc_task):
    figures = audit_history(workspace, calc_task.metadata["workspace_commit"],
                            calc_task.metadata["fixed_blobs"])
    assert figures["commits"] == 1 and figures["refs"] == ["refs/heads/main"]
    assert figures["loose_objects"] == figures["reachable_objects"]
    assert _git(workspace, "rev-list", "--all").split() == [calc_task.metadata["workspace_commit"]]
    assert len(_git(workspace, "log", "--all", "--oneline").splitlines()) == 1
    assert _git(workspace, "reflog") == "" and _git(workspace, "stash", "list") == ""
    assert _git(workspace, "tag") == ""
    assert "dangling" not in _git(workspace, "fsck", "--lost-found")
    assert not (workspace / ".git" / "packed-refs").exists()
    everything = _git(workspace, "log", "--all", "-p") + _git(workspace, "grep", "precedence")
    assert "precedence + 1" not in everything  # the fix
    for blob in calc_task.metadata["fixed_blobs"]:
        assert subprocess.run(["git", "cat-file", "-e", blob], cwd=workspace).returncode != 0


def test_workspace_commit_is_deterministic(tmp_path, calc_task):
    base = BASE_TREES.base_tree(calc_task.metadata)
    commits = {build_workspace(base, tmp_path / f"w{i}") for i in range(2)}
    assert commits == {calc_task.metadata["workspace_commit"]}


@pytest.mark.parametrize("leak", ["second_commit", "tag", "stash", "dangling_blob", "packed",
                                  "reflog"])
def test_audit_catches_every_kind_of_leak(workspace, calc_task, leak):
    fixed = (workspace / "minicalc/evaluator.py").read_text().replace(
        "next_min = precedence\n", "next_min = precedence if right_assoc else precedence + 1\n")
    if leak == "second_commit":
        (workspace / "minicalc/evaluator.py").write_text(fixed)
        git(["commit", "-qam", "fix"], workspace)
        git(["reset", "-q", "--hard", "HEAD~1"], workspace)
        git(["reflog", "expire", "--expire=now", "--all"], workspace)
    elif leak == "tag":
        git(["tag", "v1"], workspace)
    elif leak == "stash":
        (workspace / "minicalc/evaluator.py").write_text(fixed)
        git(["stash", "-q"], workspace)
    elif leak == "dangling_blob":
        git(["hash-object", "-w", "--stdin"], workspace, input=fixed.encode())
    elif leak == "packed":
        git(["gc", "-q"], workspace)
    elif leak == "reflog":
        git(["commit", "-q", "--allow-empty", "-m", "x"], workspace)
    forbidden = blob_hashes([fixed.encode()], workspace)
    with pytest.raises(HistoryLeak, match="would leak"):
        audit_history(workspace, calc_task.metadata["workspace_commit"], forbidden)


def test_building_over_a_tree_with_git_history_fails_loudly(tmp_path, calc_task):
    base = BASE_TREES.base_tree(calc_task.metadata)
    ws = tmp_path / "ws"
    build_workspace(base, ws)
    with pytest.raises(HistoryLeak, match="already holds a .git"):
        build_workspace(ws, tmp_path / "again")


def test_collect_changes_sees_edits_additions_deletions(workspace, calc_task):
    base = BASE_TREES.base_tree(calc_task.metadata)
    (workspace / "minicalc/lexer.py").unlink()
    (workspace / "minicalc/new.py").write_text("X = 1\n")
    (workspace / "README").write_text("hello\n")
    (workspace / "minicalc/__pycache__").mkdir()
    (workspace / "minicalc/__pycache__/x.pyc").write_bytes(b"junk")
    changes = collect_changes(base, workspace)
    assert changes.deleted == {"minicalc/lexer.py"}
    assert set(changes.written) == {"minicalc/new.py", "README"}


def test_base_tree_cache_verifies_evicts_and_cleans_up(shipped_tasks):
    from rlvr_envs.tasks.repo.snapshot import BaseTreeCache
    calc, other = shipped_tasks[0], next(t for t in shipped_tasks
                                         if t.metadata["snapshot"] != shipped_tasks[0].metadata["snapshot"])
    cache = BaseTreeCache()
    cache.acquire()
    tree = cache.base_tree(calc.metadata)
    victim = next(p for p in sorted(tree.rglob("*.py")))
    pristine = victim.read_bytes()
    victim.write_text("planted = True\n")  # e.g. a background process of a local-unsafe run
    (tree / "conftest.py").write_text("planted\n")
    again = cache.base_tree(calc.metadata)
    assert cache.rebuilt == 1 and victim.read_bytes() == pristine
    assert not (again / "conftest.py").exists() or "planted" not in (again / "conftest.py").read_text()
    # past the size cap, the least recently used tree goes
    cache.max_bytes = 1
    second = cache.base_tree(other.metadata)
    assert second.is_dir() and not tree.exists()
    root = cache.root
    cache.release()
    assert not root.exists()
