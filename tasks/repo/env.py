"""RepoEditEnv: fix a bug in a real Python repository through tools (rlvr/RepoEdit-v0).

`reset` builds a fresh, history-safe git workspace of the task's base tree (under a second
locally; the base tree itself is built once per process) and shows the problem statement.
The agent acts with bash / view / str_replace / create / run_tests, and `submit` grades its
changes with `RepoScorer` (tests restored from the pristine tree, run in the sandbox). After
every command and before grading, every process the episode started is killed.
"""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rlvr_envs.tasks.repo import tools
from rlvr_envs.tasks.repo.disk_budget import DiskWatch
from rlvr_envs.tasks.repo.grading import project_config, pytest_command, pytest_env
from rlvr_envs.tasks.repo.processes import kill_tagged
from rlvr_envs.tasks.repo.records import check_repo_task, load_repo_tasks
from rlvr_envs.tasks.repo.scoring import COMPONENTS, RepoScorer
from rlvr_envs.tasks.repo.workspace import build_workspace, remove_tree

from rlvr_envs.core.multiturn import MultiTurnEnv, ToolCall, ToolCallError, ToolResult
from rlvr_envs.core.scoring import Score, zero_score
from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox

SYSTEM_PROMPT = """You are a software engineer fixing a bug in a Python repository. The \
repository is your current working directory. Use the tools to explore the code, edit it and \
run the tests, then call `submit` when the bug is fixed. The grader runs the project's own \
tests (test files are restored before grading, so fix the code, not the tests).

Call exactly one tool per turn, as JSON inside tags:
<tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>

Tools: bash(command, timeout), view(path, start_line, end_line), str_replace(path, old_str, \
new_str), create(path, content), run_tests(tests), submit()."""

MAX_BASH_TIMEOUT = 120


def statement_text(task: Task) -> str:
    meta = task.metadata
    return (f"Repository: {meta['repo']}\n\n{task.prompt.strip()}\n\n"
            f"Visible tests (run them with the run_tests tool): "
            f"{', '.join(meta.get('visible_tests', [])) or 'none'}")


class RepoEditEnv(MultiTurnEnv):
    """Multi-turn repository editing with verified, hack-resistant grading."""

    #: the gold patch, the hidden tests, and what would point at the fix: the injected bug
    #: (its reverse is the fix), where it was injected, the fixed files' blob ids
    hidden_metadata = ("gold_patch", "test_patch", "setup_patch", "mutation", "fixed_blobs")

    def __init__(self, tasks: Any = "default", *, sandbox: str | Sandbox = "auto", max_turns: int = 30,
                 bash_timeout: float = 30.0, test_timeout: float | None = None,
                 partial_credit: bool = False, strict_diff: bool = True, levels: Sequence[int] | None = None,
                 repos: Sequence[str] | None = None, max_observation_chars: int = 16_000,
                 workspace_root: str | None = None, render_mode: str | None = None,
                 sandbox_options: dict[str, Any] | None = None,
                 split: str | Sequence[str] | None = None, statement: str | None = None,
                 max_workspace_mb: int = 1024):
        super().__init__(load_repo_tasks(tasks, levels=levels, repos=repos, split=split,
                                         statement=statement), SYSTEM_PROMPT,
                         max_turns=max_turns, max_observation_chars=max_observation_chars,
                         render_mode=render_mode)
        self.scorer = RepoScorer(sandbox, partial_credit=partial_credit, strict_diff=strict_diff,
                                 test_timeout=test_timeout, sandbox_options=sandbox_options)
        self.bash_timeout = float(bash_timeout)
        if not isinstance(max_workspace_mb, int) or max_workspace_mb < 1:
            raise ValueError(f"max_workspace_mb must be a positive int, got {max_workspace_mb!r}")
        self.max_workspace_mb = max_workspace_mb
        self.workspace_root = workspace_root
        self._episode_dir: Path | None = None
        self._workspace: Path | None = None
        self._token = ""
        self._session = None  # the episode's long-lived container (Docker)

    # -- episode state ---------------------------------------------------------------------------

    @property
    def workspace(self) -> Path | None:
        """The directory the agent edits (None between episodes)."""
        return self._workspace

    def tool_specs(self):
        return tools.TOOL_SPECS

    def begin_episode(self, task: Task) -> str:
        check_repo_task(task)
        meta = task.metadata
        base = self.scorer.base_trees.base_tree(meta)
        self._episode_dir = Path(tempfile.mkdtemp(prefix="rlvr-ws-", dir=self.workspace_root))
        self._workspace = self._episode_dir / "repo"
        self._token = secrets.token_hex(12)
        forbidden = list(meta.get("fixed_blobs", []))
        build_workspace(base, self._workspace, expected_commit=meta.get("workspace_commit"),
                        forbidden_blobs=forbidden)
        return statement_text(task)

    def end_episode(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._episode_dir is not None:
            kill_tagged(self._token, self._workspace)
            remove_tree(self._episode_dir)
        self._episode_dir = self._workspace = None

    def scripted_agents(self) -> dict[str, Any]:
        from rlvr_envs.tasks.repo.agents import GoldPatchAgent, NullAgent
        return {"null": NullAgent(), "gold": GoldPatchAgent()}

    def score_on_truncation(self) -> Score:
        return zero_score("turn_budget_exhausted", COMPONENTS)

    # -- tools -----------------------------------------------------------------------------------

    def _run(self, command: list[str], timeout: float, env: dict[str, str] | None = None,
             stdin: str | None = None, max_output_bytes: int = 200_000,
             merge_output: bool = False):
        from rlvr_envs.sandbox.base import Limits

        assert self._workspace is not None
        sandbox = self.scorer.sandbox
        run_env = {"RLVR_EPISODE": self._token, **tools.tool_env(sandbox), **(env or {})}
        limits = Limits(wall_time=timeout, memory_mb=2048, max_output_bytes=max_output_bytes)
        watch = DiskWatch(self._workspace, self.max_workspace_mb << 20,
                          lambda: kill_tagged(self._token, self._workspace))
        try:
            with watch:
                if hasattr(sandbox, "session"):  # one container per episode, not per command
                    if self._session is None:
                        self._session = sandbox.session(self._workspace, limits)
                    result = self._session.run(command, env=run_env, limits=limits,
                                               stdin=stdin, merge_output=merge_output)
                else:
                    result = sandbox.run(command, workdir=self._workspace, env=run_env,
                                         stdin=stdin, limits=limits)
            if watch.exceeded:
                raise _OverBudget(watch.usage)
            return result
        finally:
            # an isolating backend (a PID namespace, the session's server in Docker) already
            # killed whatever the command left; plain processes need the host-wide sweep
            if not getattr(sandbox, "isolating", False):
                kill_tagged(self._token, self._workspace)

    def call_tool(self, call: ToolCall) -> ToolResult:
        try:
            return self._call_tool(call)
        except _OverBudget as over:  # the disk is the host's: the episode ends here
            used, entries = over.usage
            message = (f"the command was killed: the repository holds more than its "
                       f"{self.max_workspace_mb} MiB disk budget ({used >> 20} MiB, {entries} "
                       f"files and directories counted); the episode ends with reward 0")
            return ToolResult(message, score=zero_score(
                "workspace_too_large", COMPONENTS, used_bytes=used, entries=entries))
        except OSError as err:  # e.g. create under a path that is a file: the model's mistake
            raise ToolCallError(f"{call.name}: {type(err).__name__}: {err.strerror or err}"
                                ) from None
        except (RuntimeError, UnicodeError) as err:  # a symlink loop; a lone surrogate
            raise ToolCallError(f"{call.name}: {type(err).__name__}: {err}") from None

    def _call_tool(self, call: ToolCall) -> ToolResult:
        ws, args = self._workspace, call.arguments
        assert ws is not None and self.task is not None
        if call.name == "bash":
            timeout = args.get("timeout", self.bash_timeout)
            if not 0 < timeout <= MAX_BASH_TIMEOUT:
                raise ToolCallError(f"timeout must be in (0, {MAX_BASH_TIMEOUT}] seconds")
            if hasattr(self.scorer.sandbox, "session"):  # the session's server cuts it
                result = self._run(["bash", "-c", args["command"]], float(timeout),
                                   max_output_bytes=tools.output_keep(
                                       self.max_observation_chars) * 2, merge_output=True)
            else:
                result = self._run(tools.bash_argv(args["command"], float(timeout),
                                                   self.max_observation_chars),
                                   float(timeout) + 10)
            return ToolResult(_command_output(result), details={"exit_code": result.exit_code})
        if call.name == "view":
            return ToolResult(tools.view(ws, args["path"], args.get("start_line"),
                                         args.get("end_line")))
        if call.name == "str_replace":
            return ToolResult(tools.str_replace(ws, args["path"], args["old_str"],
                                                args["new_str"]))
        if call.name == "create":
            return ToolResult(tools.create(ws, args["path"], args["content"]))
        if call.name == "run_tests":
            meta = self.task.metadata
            selected = tools.select_tests(ws, list(meta.get("visible_tests", [])),
                                          args.get("tests"))
            base = self.scorer.base_trees.base_tree(meta)
            command = pytest_command(self.scorer.sandbox, ws, project_config(base), selected)
            # the report stream (stdout) is the grader's; the agent reads pytest's output
            result = self._run(command, float(meta.get("test_timeout", 300)),
                               env=pytest_env(meta, ws), stdin=secrets.token_hex(32) + "\n")
            result.stdout = ""
            return ToolResult(_command_output(result), details={"exit_code": result.exit_code})
        if call.name == "submit":
            kill_tagged(self._token, ws)
            score = self.scorer.score_workspace(self.task, ws)
            return ToolResult(f"submitted: reward {score.reward:g} ({score.verifier})",
                              score=score)
        raise ToolCallError(f"unknown tool {call.name!r}")

    def close(self) -> None:
        super().close()
        self.scorer.close()


class _OverBudget(Exception):
    """An agent command took the workspace past its disk budget (`usage`: bytes, entries)."""

    def __init__(self, usage: tuple[int, int]):
        super().__init__(usage)
        self.usage = usage


def _command_output(result) -> str:
    parts = [result.stdout]
    if result.stderr:
        parts.append(result.stderr)
    text = "\n".join(p.rstrip("\n") for p in parts if p)
    if result.timed_out:
        status = "timed out (killed)"
    elif result.exit_code is None:
        status = "killed"
    else:
        status = f"exit code {result.exit_code}"
    note = " [output truncated]" if result.truncated else ""
    return f"{text}\n[{status}{note}]".lstrip("\n")
