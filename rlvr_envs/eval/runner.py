"""`evaluate`: run a policy on a suite, storing every episode durably, resumably.

The work of a run is split into units fixed by the suite alone: for single-turn entries a
batch of `batch_size` tasks with all their samples (one `generate` call), for multi-turn
entries one task with all its samples. Each unit's sampling seed is derived from the run seed
and the unit's task ids, and each unit is written in one transaction. A run interrupted at any
moment therefore holds whole units only, and `resume=True` computes exactly the missing units
with exactly the seeds a clean run would have used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rlvr_envs.core.policy import Completion, Messages, Policy, SamplingParams
from rlvr_envs.core.task import Task
from rlvr_envs.eval.multiturn import run_multi_turn
from rlvr_envs.eval.store import Episode, ResultStore
from rlvr_envs.eval.suites import ResolvedEntry, ResolvedSuite, Suite, load_suite, resolve_suite
from rlvr_envs.eval.summary import summarise
from rlvr_envs.rewards.monitors import hacking_flags

if TYPE_CHECKING:
    from rlvr_envs.core.scoring import Scorer

log = logging.getLogger(__name__)

#: run-configuration keys that must match for `resume` (anything else may change)
RESUME_KEYS = ("policy", "suite", "suite_definition", "task_ids", "seed", "batch_size",
               "entries")
_INFO_DROP = ("task", "messages", "monitors", "hacking", "reward_breakdown")


class EvalError(ValueError):
    """The run cannot start (existing run, mismatched resume, bad arguments)."""


class EvalStopped(RuntimeError):
    """The run stopped early (the policy kept failing); everything so far is saved."""

    def __init__(self, message: str, run_id: str):
        super().__init__(message)
        self.run_id = run_id


class PolicyFailed(RuntimeError):
    pass


@dataclass
class WorkUnit:
    entry_index: int
    task_indices: list[int]
    seed: int


@dataclass
class RunResult:
    run_id: str
    policy: str
    summary: dict[str, Any]
    store_path: Path
    new_episodes: int


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("rlvr-envs")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        import rlvr_envs

        return rlvr_envs.__version__


def default_run_id(suite: str, policy: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{suite}--{policy}")
    return safe.strip("_") or "run"


class RetryingPolicy:
    """Calls the wrapped policy, retrying failures with exponential backoff; checks the shape."""

    def __init__(self, policy: Policy, retries: int, backoff: float,
                 on_retry: Callable[[int, BaseException], None] | None = None):
        self.policy, self.retries, self.backoff = policy, retries, backoff
        self.name = policy.name
        self.on_retry = on_retry

    def generate(self, batch: Sequence[Messages], params: SamplingParams, *,
                 tasks: Sequence[Task] | None = None,
                 scorers: Sequence[Scorer] | None = None) -> list[list[Completion]]:
        last: BaseException | None = None
        for attempt in range(self.retries + 1):
            try:
                out = self.policy.generate(batch, params, tasks=tasks, scorers=scorers)
            except Exception as err:  # noqa: BLE001 - endpoint down, OOM, anything: retry
                last = err
                if attempt < self.retries:
                    if self.on_retry is not None:
                        self.on_retry(attempt + 1, err)
                    time.sleep(self.backoff * (2 ** attempt))
                continue
            if (not isinstance(out, list) or len(out) != len(batch)
                    or any(not isinstance(c, list) or len(c) != params.n for c in out)):
                raise PolicyFailed(f"policy {self.name!r} returned the wrong shape: expected "
                                   f"{len(batch)} lists of {params.n} completions")
            return out
        raise PolicyFailed(f"policy {self.name!r} failed {self.retries + 1} time(s) in a row; "
                           f"last error: {type(last).__name__}: {last}") from last


def _unit_seed(run_seed: int, entry_name: str, task_ids: Sequence[str]) -> int:
    digest = hashlib.sha256(json.dumps([run_seed, entry_name, list(task_ids)]).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def plan_units(resolved: ResolvedSuite, batch_size: int, seed: int) -> list[WorkUnit]:
    units = []
    for ei, entry in enumerate(resolved.entries):
        size = 1 if entry.multi_turn else batch_size
        for start in range(0, len(entry.tasks), size):
            indices = list(range(start, min(start + size, len(entry.tasks))))
            units.append(WorkUnit(ei, indices, _unit_seed(
                seed, entry.entry.name, [entry.tasks[i].id for i in indices])))
    return units


def entry_params(entry: ResolvedEntry, overrides: dict[str, Any], n: int | None) -> SamplingParams:
    sampling = {**entry.entry.sampling, **{k: v for k, v in overrides.items() if v is not None}}
    if "stop" in sampling:
        sampling["stop"] = tuple(sampling["stop"])
    return SamplingParams(n=n or entry.entry.n, **sampling)


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


#: where envs and wrappers put per-episode hacking-monitor flags (the shaping wrappers use
#: "hacking"); every boolean found there is counted
MONITOR_KEYS = ("hacking", "monitors")


def _monitor_flags(info: dict[str, Any]) -> dict[str, bool]:
    flags: dict[str, bool] = {}
    for key in MONITOR_KEYS:
        found = info.get(key)
        if isinstance(found, dict):
            flags.update({str(k): v for k, v in found.items() if isinstance(v, bool)})
    return flags


def _computed_flags(completion: Completion, params: SamplingParams) -> dict[str, bool]:
    """The shaping monitors' flags, computed here when the env did not flag the completion."""
    if completion.num_tokens is not None:  # the cap is in tokens: compare like with like
        return hacking_flags(completion.text, max_length=params.max_completion_length,
                             length=completion.num_tokens, finish_reason=completion.finish_reason)
    return hacking_flags(completion.text, finish_reason=completion.finish_reason)


def _episode(entry: ResolvedEntry, task: Task, sample_index: int, text: str, reward: float,
             info: dict[str, Any], num_tokens: int | None, finish_reason: str | None,
             turns: int, gen_s: float, score_s: float, num_chars: int | None = None) -> Episode:
    return Episode(
        env=entry.entry.name, task_id=task.id, sample_index=sample_index, env_id=entry.entry.env,
        family=task.family, source_id=task.source_id, level=task.difficulty.level,
        completion=text, reward=float(reward), correct=bool(info.get("correct", reward >= 1.0)),
        verifier=None if info.get("verifier") is None else str(info.get("verifier")),
        breakdown={str(k): float(v) for k, v in (info.get("reward_breakdown") or {}).items()},
        monitors=_monitor_flags(info), num_tokens=num_tokens,
        num_chars=len(text) if num_chars is None else num_chars,
        finish_reason=finish_reason, turns=turns, generate_seconds=gen_s, score_seconds=score_s,
        info=_json_safe({k: v for k, v in info.items() if k not in _INFO_DROP}))


class Evaluation:
    """One run of one policy on one resolved suite against a result store."""

    def __init__(self, store: ResultStore, run_id: str, policy: Policy, resolved: ResolvedSuite,
                 *, seed: int, batch_size: int, sampling: dict[str, Any], n: int | None,
                 retries: int, retry_backoff: float, progress: Any = None):
        self.store, self.run_id, self.resolved = store, run_id, resolved
        self.policy = RetryingPolicy(policy, retries, retry_backoff, self._on_retry)
        self.seed, self.batch_size = seed, batch_size
        self.params = [entry_params(e, sampling, n) for e in resolved.entries]
        self.units = plan_units(resolved, batch_size, seed)
        self.progress = progress
        self.new_episodes = 0

    def _on_retry(self, attempt: int, err: BaseException) -> None:
        log.warning("policy %s failed (%s: %s); retry %d", self.policy.name,
                    type(err).__name__, err, attempt)

    def expected_keys(self) -> set[tuple[str, str, int]]:
        return {(e.entry.name, t.id, s) for e, p in zip(self.resolved.entries, self.params)
                for t in e.tasks for s in range(p.n)}

    def run(self) -> None:
        done = self.store.episode_keys(self.run_id)
        for unit in self.units:
            entry = self.resolved.entries[unit.entry_index]
            params = replace(self.params[unit.entry_index], seed=unit.seed)
            keys = {(entry.entry.name, entry.tasks[i].id, s)
                    for i in unit.task_indices for s in range(params.n)}
            if keys <= done:
                continue
            started = time.perf_counter()
            if entry.multi_turn:
                episodes = self._multi_turn_unit(entry, unit, params, done)
            else:
                episodes = self._single_turn_unit(entry, unit, params, done)
            self.store.add_episodes(self.run_id, episodes,
                                    wall_seconds=time.perf_counter() - started)
            self.new_episodes += len(episodes)
            done |= {ep.key for ep in episodes}
            if self.progress is not None:
                self.progress(unit.entry_index, episodes)

    def _single_turn_unit(self, entry: ResolvedEntry, unit: WorkUnit, params: SamplingParams,
                          done: set) -> list[Episode]:
        tasks = [entry.tasks[i] for i in unit.task_indices]
        batch = [entry.messages[i] for i in unit.task_indices]
        started = time.perf_counter()
        groups = self.policy.generate(batch, params, tasks=tasks,
                                      scorers=[entry.scorer] * len(tasks))
        gen_each = (time.perf_counter() - started) / max(1, len(tasks) * params.n)
        episodes = []
        for task, completions in zip(tasks, groups):
            for sample_index, completion in enumerate(completions):
                if (entry.entry.name, task.id, sample_index) in done:
                    continue
                t0 = time.perf_counter()
                entry.env.reset(options={"task": task})
                _, reward, _, _, info = entry.env.step(completion.text)
                if not _monitor_flags(info):
                    info = {**info, "hacking": _computed_flags(completion, params)}
                episodes.append(_episode(entry, task, sample_index, completion.text, reward, info,
                                         completion.num_tokens, completion.finish_reason, 1,
                                         gen_each, time.perf_counter() - t0))
        return episodes

    def _multi_turn_unit(self, entry: ResolvedEntry, unit: WorkUnit, params: SamplingParams,
                         done: set) -> list[Episode]:
        episodes = []
        for i in unit.task_indices:
            task = entry.tasks[i]
            for sample_index in range(params.n):
                if (entry.entry.name, task.id, sample_index) in done:
                    continue
                sample_params = replace(params, n=1, seed=params.seed + 1000 * sample_index)
                outcome = run_multi_turn(entry.env, self.policy, sample_params, task,
                                         scorer=entry.scorer, max_turns=entry.entry.max_turns)
                info = {**outcome.info, "turns": outcome.turns}
                episodes.append(_episode(entry, task, sample_index, outcome.transcript,
                                         outcome.reward, info, outcome.num_tokens,
                                         outcome.finish_reason, outcome.turns,
                                         outcome.generate_seconds, outcome.step_seconds,
                                         num_chars=outcome.generated_chars))
        return episodes


def _config(policy_spec: str, policy: Policy, suite: Suite, resolved: ResolvedSuite, seed: int,
            batch_size: int, params: list[SamplingParams]) -> dict[str, Any]:
    return _json_safe({
        "policy": policy_spec, "policy_name": getattr(policy, "name", policy_spec),
        "suite": suite.name, "suite_definition": suite.definition, "k": list(suite.k),
        "task_ids": resolved.task_ids(), "seed": seed, "batch_size": batch_size,
        "entries": {e.entry.name: {"env": e.entry.env, "kwargs": e.entry.kwargs,
                                   "multi_turn": e.multi_turn, "sampling": asdict(p)}
                    for e, p in zip(resolved.entries, params)},
    })


def evaluate(policy: str | Policy, suite: str | Path | Suite, *, runs_dir: str | Path = "runs",
             run_id: str | None = None, resume: bool = False, overwrite: bool = False,
             seed: int = 0, batch_size: int | None = None, n: int | None = None,
             sampling: dict[str, Any] | None = None, retries: int = 3,
             retry_backoff: float = 1.0, progress_factory: Callable[..., Any] | None = None
             ) -> RunResult:
    """Evaluate `policy` (a name or a Policy) on `suite` (a name, a path or a Suite).

    Errors in the suite or the policy name are raised before any sampling. With `resume`, an
    existing run of the same id continues (its configuration must match); without it an
    existing run is an error unless `overwrite`. A policy that keeps failing stops the run
    with `EvalStopped` (status `failed`); Ctrl-C marks it `interrupted`. Both are resumable.
    """
    suite_obj = suite if isinstance(suite, Suite) else load_suite(suite)
    batch = batch_size or suite_obj.batch_size
    if batch < 1 or (n is not None and n < 1) or retries < 0:
        raise EvalError(f"batch_size and n must be >= 1 and retries >= 0; got batch_size={batch},"
                        f" n={n}, retries={retries}")
    if n is not None and max(suite_obj.k) > n:
        raise EvalError(f"n={n} is smaller than the suite's largest k ({max(suite_obj.k)})")
    resolved = resolve_suite(suite_obj)
    try:
        if isinstance(policy, str):
            from rlvr_envs.agents.registry import resolve_policy  # the agents load on first use

            policy_spec, policy_obj = policy, resolve_policy(policy)
        else:
            policy_spec, policy_obj = policy.name, policy
        store = ResultStore(runs_dir)
        try:
            return _evaluate_resolved(store, policy_spec, policy_obj, suite_obj, resolved,
                                      run_id=run_id or default_run_id(suite_obj.name, policy_spec),
                                      resume=resume, overwrite=overwrite, seed=seed, batch=batch,
                                      n=n, sampling=dict(sampling or {}), retries=retries,
                                      retry_backoff=retry_backoff,
                                      progress_factory=progress_factory)
        finally:
            store.close()
    finally:
        resolved.close()


def _evaluate_resolved(store: ResultStore, policy_spec: str, policy: Policy, suite: Suite,
                       resolved: ResolvedSuite, *, run_id: str, resume: bool, overwrite: bool,
                       seed: int, batch: int, n: int | None, sampling: dict[str, Any],
                       retries: int, retry_backoff: float,
                       progress_factory: Callable[..., Any] | None) -> RunResult:
    evaluation = Evaluation(store, run_id, policy, resolved, seed=seed, batch_size=batch,
                            sampling=sampling, n=n, retries=retries, retry_backoff=retry_backoff)
    config = _config(policy_spec, policy, suite, resolved, seed, batch, evaluation.params)
    existing = store.get_run(run_id)
    if existing is not None and overwrite:
        store.delete_run(run_id)
        existing = None
    if existing is not None and not resume:
        raise EvalError(f"run {run_id!r} already exists in {store.path} (status "
                        f"{existing.status}); pass --resume to continue it, --overwrite to "
                        f"replace it, or --run NAME for a new run")
    if existing is None:
        store.create_run(run_id, policy=policy_spec, suite=suite.name, config=config,
                         package_version=package_version())
    else:
        changed = [k for k in RESUME_KEYS if existing.config.get(k) != config.get(k)]
        if changed:
            raise EvalError(f"cannot resume run {run_id!r}: its {', '.join(changed)} differ from "
                            f"this invocation's; resume with the same policy, suite, seed, "
                            f"batch size and sampling, or start a new run with --run NAME")
        if existing.package_version != package_version():
            log.warning("run %s was started with rlvr-envs %s, resuming with %s", run_id,
                        existing.package_version, package_version())
        store.start_session(run_id)
    expected = evaluation.expected_keys()
    progress = progress_factory(evaluation, store.episode_keys(run_id)) if progress_factory else None
    evaluation.progress = progress
    try:
        evaluation.run()
    except PolicyFailed as err:
        saved = store.count_episodes(run_id)
        message = (f"{err}. Run {run_id!r} stopped with {saved} of {len(expected)} episodes "
                   f"saved in {store.path}; resume it with --resume once the policy works.")
        store.set_status(run_id, "failed", message)
        raise EvalStopped(message, run_id) from err
    except KeyboardInterrupt:
        store.set_status(run_id, "interrupted", "interrupted by the user")
        raise
    except BaseException as err:
        store.set_status(run_id, "failed", f"{type(err).__name__}: {err}")
        raise
    finally:
        if progress is not None and hasattr(progress, "close"):
            progress.close()
    have = store.episode_keys(run_id)
    if have != expected:
        raise EvalError(f"run {run_id!r}: stored episodes differ from the plan "
                        f"({len(have - expected)} extra, {len(expected - have)} missing)")
    record = store.get_run(run_id)
    summary = summarise(store.episodes(run_id))
    summary.update({"run_id": run_id, "policy": policy_spec, "suite": suite.name,
                    "k": list(suite.k), "wall_seconds": record.wall_seconds if record else 0.0,
                    "sessions": record.sessions if record else 1})
    store.save_summary(run_id, summary)
    store.set_status(run_id, "complete")
    return RunResult(run_id, policy_spec, summary, store.path, evaluation.new_episodes)
