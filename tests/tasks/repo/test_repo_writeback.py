"""The write-back never acts outside the graded tree, whatever links the agent made.

Unit tests drive `write_tree_changes` with hand-made change sets; the episode tests play the
link-chain attack through the env's bash tool on every backend and check that a canary
directory outside the workspace is untouched.
"""

import hashlib
import os
from pathlib import Path

import pytest
from rlvr_envs.tasks.repo.agents import ScriptAgent
from rlvr_envs.tasks.repo.writeback import link_stays_inside, write_tree_changes

from rlvr_envs.core.multiturn import format_tool_call, run_episode


def fingerprint(root: Path) -> dict[str, str]:
    """Every entry under root (links as targets, files as hashes), never following links."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


@pytest.fixture
def canary(tmp_path):
    """A directory outside every tree, holding names the attacks aim at."""
    root = tmp_path / "canary"
    (root / "sub").mkdir(parents=True)
    for name in ("__init__.py", "evaluator.py", "lexer.py", "parser.py", "sub/keep.txt"):
        (root / name).write_text(f"canary {name}\n")
    return root


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "grade" / "repo"
    (root / "pkg").mkdir(parents=True)
    for name in ("__init__.py", "evaluator.py", "lexer.py"):
        (root / "pkg" / name).write_text("x = 1\n")
    return root


def chain_to(target: Path, link_dir_depth: int, tree_depth: int) -> tuple[str, str, str]:
    """A link chain that stays inside the tree lexically but reaches `target` physically:
    (link value, helper path, helper value). The helper resolves to the tree root; each of
    its `..` climbs from the root itself."""
    deep = [f"d{i}" for i in range(tree_depth)]
    helper = "pkg-h/" + "/".join(deep) + "/h"
    helper_value = "/".join([".."] * (tree_depth + 1))
    link = ("../" * link_dir_depth + helper + "/" + "/".join([".."] * tree_depth)
            + str(target))
    return link, helper, helper_value


def test_link_chain_through_a_later_helper_is_refused_and_canary_survives(tree, canary):
    before = fingerprint(canary)
    depth = len(tree.parts) - 1
    link, helper, helper_value = chain_to(canary, 0, depth)
    written = {"pkg": link, helper: helper_value}
    deleted = {"pkg/__init__.py", "pkg/evaluator.py", "pkg/lexer.py"}
    left_out = write_tree_changes(tree, written, deleted)
    assert fingerprint(canary) == before
    assert "pkg" in left_out
    assert not (tree / "pkg").exists()


@pytest.mark.parametrize("attack", ["absolute", "climb", "helper_first", "helper_after",
                                    "dir_swap_then_write"])
def test_no_change_set_reaches_outside(tree, canary, attack):
    before = fingerprint(canary)
    depth = len(tree.parts) - 1
    rel_canary = os.path.relpath(canary, tree / "pkg")
    deleted = {"pkg/__init__.py", "pkg/evaluator.py", "pkg/lexer.py"}
    if attack == "absolute":
        written = {"pkg": str(canary)}
    elif attack == "climb":
        written = {"pkg": os.path.relpath(canary, tree)}
    elif attack == "helper_first":
        written = {"a/h": "..", "pkg": "a/h/../" + os.path.relpath(canary, tree)}
    elif attack == "helper_after":
        link, helper, value = chain_to(canary, 0, depth)
        written = {"pkg": link, helper: value}
    else:  # a write whose parent the agent swapped for a link into the canary
        written = {"pkg": str(canary), "pkg/evaluator.py": b"owned", "pkg/sub/keep.txt": b"x"}
        deleted = set()
    left_out = write_tree_changes(tree, written, deleted)
    assert fingerprint(canary) == before, attack
    assert "pkg" in left_out
    assert rel_canary  # the canary is really outside the tree
    for rel in written:
        path = tree / rel
        if path.is_symlink():
            assert link_stays_inside(os.open(tree, os.O_RDONLY), rel)


def test_inside_links_and_ordinary_changes_are_kept(tree):
    written = {"pkg/evaluator.py": b"x = 2\n", "pkg/alias.py": "evaluator.py",
               "top": "pkg/lexer.py", "new/deep/mod.py": b"y = 1\n", "pkg/up": "../new"}
    left_out = write_tree_changes(tree, written, {"pkg/lexer.py"})
    assert left_out == []
    assert (tree / "pkg/evaluator.py").read_bytes() == b"x = 2\n"
    assert os.readlink(tree / "pkg/alias.py") == "evaluator.py"
    assert not (tree / "pkg/lexer.py").exists() and (tree / "top").is_symlink()
    assert (tree / "new/deep/mod.py").read_text() == "y = 1\n"


def test_file_replaced_by_directory_and_back(tree):
    left_out = write_tree_changes(tree, {"pkg/lexer.py/inner.py": b"z\n", "pkg2": b"f\n"},
                                  {"pkg/lexer.py"})
    assert left_out == [] and (tree / "pkg/lexer.py/inner.py").read_text() == "z\n"


@pytest.mark.parametrize("rel", ["../escape.py", "/abs.py", "a/../../b.py", ".git/config",
                                 "a//b.py"])
def test_unsafe_paths_are_left_out(tree, rel):
    assert write_tree_changes(tree, {rel: b"x"}, set()) == [rel]
    assert not (tree.parent / "escape.py").exists()


def test_self_loop_and_long_chains_are_refused(tree):
    written = {"loop": "loop", "a": "b", "b": "a", "ok": "pkg"}
    assert write_tree_changes(tree, written, set()) == ["a", "b", "loop"]


# -- the attack through the env, per backend ------------------------------------------------


def _attack_actions(canary: Path, workspace_depth: int) -> list[str]:
    """bash: replace the package by a chain of links whose helper sorts between the package
    link and the base files' deletions (the order a path-sorted write-back would use)."""
    deep = "/".join(f"d{i}" for i in range(workspace_depth))
    helper_value = "/".join([".."] * (workspace_depth + 1))
    link = (f"minicalc-h/{deep}/h/" + "/".join([".."] * workspace_depth) + str(canary))
    script = (f"rm -rf minicalc && mkdir -p minicalc-h/{deep} && "
              f"ln -s {helper_value} minicalc-h/{deep}/h && ln -s {link} minicalc && "
              f"ln -s {canary} abs && ln -s {os.path.relpath(canary, '/')} rel")
    return [format_tool_call("bash", {"command": script})]


@pytest.mark.parametrize("backend", ["bwrap", *(pytest.param(b, marks=pytest.mark.slow)
                                              for b in ("local-unsafe", "local", "docker"))])
def test_canary_outside_the_workspace_survives_the_link_attack(request, backend, canary,
                                                               calc_task):
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    if backend == "docker":
        sandbox = request.getfixturevalue("repo_docker_sandbox")
    elif backend == "bwrap":
        sandbox = request.getfixturevalue("isolated_sandbox")
    elif backend == "local":
        sandbox = request.getfixturevalue("namespace_sandbox")
    else:
        sandbox = request.getfixturevalue("unsafe_local_sandbox")
    env = RepoEditEnv([calc_task], sandbox=sandbox)
    before = fingerprint(canary)
    try:
        env.reset(options={"task": calc_task.id})
        depth = len(env.workspace.parts) - 1
        episode = run_episode(env, ScriptAgent(_attack_actions(canary, depth)),
                              task=calc_task.id)
    finally:
        env.close()
    assert fingerprint(canary) == before
    assert episode.reward == 0.0
    assert "minicalc" in episode.info["protected_paths_dropped"]
