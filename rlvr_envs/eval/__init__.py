"""Evaluation runs, pass@k, the result store and leaderboards.

- `suites`: suites as data (JSON/YAML in `tasks/suites/`), checked and resolved before sampling;
- `runner.evaluate`: run a policy on a suite into the store, resumable unit by unit;
- `store`: the SQLite result store (WAL) keyed by (run, env, task id, sample index);
- `passk`, `summary`: the unbiased pass@k estimator and every reported metric;
- `leaderboard`, `page`, `charts`: the Markdown table and the self-contained HTML page;
- `cli`: `rlvr eval` and `rlvr leaderboard`.
"""

from rlvr_envs.eval.passk import pass_at_k
from rlvr_envs.eval.runner import EvalError, EvalStopped, evaluate
from rlvr_envs.eval.store import ResultStore
from rlvr_envs.eval.suites import SuiteError, load_suite, resolve_suite

__all__ = ["EvalError", "EvalStopped", "ResultStore", "SuiteError", "evaluate", "load_suite",
           "pass_at_k", "resolve_suite"]
