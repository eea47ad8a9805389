"""Math dataset sources: GSM8K- and MATH-schema rows from the Hugging Face hub or local files.

Where the rows come from, in order:
1. `data_files=` — local json / jsonl / parquet file(s), or a {split: files} mapping;
2. `path=` — a local file or directory (e.g. a `huggingface-cli download` snapshot), or a hub
   dataset name;
3. the environment variable `RLVR_GSM8K_PATH` / `RLVR_MATH_PATH` (a local file or directory);
4. the hub defaults (`openai/gsm8k` "main"; `HuggingFaceH4/MATH-500`).

The hub attempt fails fast: with `HF_HUB_OFFLINE=1` only the local `datasets` cache is used,
and otherwise the endpoint is probed with a short TCP connect before `datasets` (whose own
retries take tens of seconds) is called. When nothing works, `MathDatasetNotFound` names the
dataset, every place it looked and why each failed, and how to give a local path.

Gold answers: GSM8K's `answer` ends in `#### x` (gold x, commas stripped); MATH's gold is the
last `\\boxed{}` (or `\\fbox{}`) of `solution`. A gold that the math verifier cannot parse is
refused at load time with the row id (`on_bad_gold="raise"`), or skipped and counted
(`on_bad_gold="skip"`: see `source.skipped`).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rlvr_envs.core.datafiles import check_data_file
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task
from rlvr_envs.verify.math import check_gold

logger = logging.getLogger(__name__)

LOCAL_BUILDERS = {".json": "json", ".jsonl": "json", ".parquet": "parquet"}
HUB_PROBE_TIMEOUT_S = float(os.environ.get("RLVR_HUB_PROBE_TIMEOUT", "3"))
ON_BAD_GOLD = ("raise", "skip")


class MathDatasetNotFound(FileNotFoundError):
    """No rows could be loaded for a math dataset from any of the places tried."""


@dataclass(frozen=True)
class RowTask:
    """What one dataset row contributes to a Task."""

    prompt: str
    gold: str
    level: int
    metadata: dict[str, Any]


# -- GSM8K schema: question, answer ending in "#### x" -------------------------------------------

_GSM8K_CALCULATION = re.compile(r"<<[^<>]*>>")


def gsm8k_gold(answer: str) -> str:
    """The number after the final `####` of a GSM8K answer, commas stripped."""
    tail = answer.rsplit("####", 1)[1].strip() if "####" in answer else ""
    gold = tail.replace(",", "")
    if not gold or "\n" in gold:
        raise ValueError("the answer does not end with a '#### <final answer>' line")
    return gold


def gsm8k_steps(answer: str) -> int:
    """Solution steps: the `<<a*b=c>>` calculations, or the reasoning lines when unannotated."""
    body = answer.rsplit("####", 1)[0]
    calculations = len(_GSM8K_CALCULATION.findall(body))
    return calculations or sum(1 for line in body.splitlines() if line.strip())


def gsm8k_row(row: Mapping[str, Any]) -> RowTask:
    answer = _text(row, "answer")
    steps = gsm8k_steps(answer)
    return RowTask(prompt=_text(row, "question"), gold=gsm8k_gold(answer), level=max(1, steps),
                   metadata={"steps": steps, "solution": answer})


# -- MATH schema: problem, solution with a boxed answer, level, type -----------------------------

_BOX_COMMANDS = ("\\boxed", "\\fbox")


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` (or `\\boxed 5`) in `text`."""
    start = max(text.rfind(cmd) for cmd in _BOX_COMMANDS)
    if start < 0:
        return None
    i = start + (len("\\boxed") if text.startswith("\\boxed", start) else len("\\fbox"))
    if text.startswith(" ", i) and not text[i:].lstrip().startswith("{"):
        token = re.match(r"\s*([^\s$]+)", text[i:])
        return token.group(1) if token else None
    i = text.find("{", i)
    if i < 0:
        return None
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j].strip()
    return None


def math_level(value: Any) -> tuple[int, bool]:
    """(level, known) from MATH's "Level 3" or MATH-500's 3; "Level ?" gives (1, False)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value, True
    match = re.fullmatch(r"\s*(?:Level\s*)?(\d+)\s*", str(value or ""))
    if match and int(match.group(1)) >= 1:
        return int(match.group(1)), True
    return 1, False


def math_row(row: Mapping[str, Any]) -> RowTask:
    solution = _text(row, "solution")
    gold = last_boxed(solution)
    if gold is None and isinstance(row.get("answer"), str) and row["answer"].strip():
        gold = row["answer"].strip()  # MATH-500 also carries the answer in its own column
    if not gold:
        raise ValueError("the solution has no \\boxed{} answer")
    level, known = math_level(row.get("level"))
    metadata: dict[str, Any] = {"type": row.get("type") or row.get("subject"),
                                "solution": solution}
    if not known:
        metadata["level_raw"] = row.get("level")
    return RowTask(prompt=_text(row, "problem"), gold=gold, level=level, metadata=metadata)


def _text(row: Mapping[str, Any], column: str) -> str:
    value = row.get(column)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"column {column!r} is missing or empty (columns: {sorted(row)})")
    return value


# -- the datasets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MathDataset:
    """One dataset schema: how to read a row, where the hub copy lives, what it is called."""

    name: str
    row_to_task: Callable[[Mapping[str, Any]], RowTask]
    hub_defaults: tuple[tuple[str, str | None], ...]
    env_var: str
    schema_help: str
    id_columns: tuple[str, ...] = ("unique_id", "id")


GSM8K = MathDataset(
    name="gsm8k", row_to_task=gsm8k_row, hub_defaults=(("openai/gsm8k", "main"),),
    env_var="RLVR_GSM8K_PATH",
    schema_help="GSM8K schema: columns 'question' and 'answer' (ending in '#### <number>')")
MATH = MathDataset(
    name="math", row_to_task=math_row, hub_defaults=(("HuggingFaceH4/MATH-500", None),),
    env_var="RLVR_MATH_PATH",
    schema_help="MATH schema: columns 'problem', 'solution' (with a \\boxed{} answer), "
                "optional 'level' ('Level 3' or 3) and 'type'")
DATASETS = {d.name: d for d in (GSM8K, MATH)}


class MathDatasetSource(TaskList):
    """A TaskList built from dataset rows; `skipped` lists (row id, reason) of refused golds."""

    def __init__(self, tasks: list[Task], *, name: str, skipped: list[tuple[str, str]],
                 origin: str):
        super().__init__(tasks, family="math", name=name)
        self.skipped = skipped
        self.origin = origin


def load_math_dataset(dataset: str | MathDataset, *, path: str | os.PathLike | None = None,
                      data_files: str | os.PathLike | Sequence[str | os.PathLike]
                      | Mapping[str, Any] | None = None,
                      split: str = "test", config: str | None = None,
                      on_bad_gold: str = "raise", limit: int | None = None,
                      levels: Sequence[int] | None = None,
                      validate: Callable[[str], None] = check_gold) -> MathDatasetSource:
    """Load a GSM8K- or MATH-schema dataset as a validated task list (see the module doc).

    `levels` keeps only rows of those difficulty levels; `limit` keeps the first n usable rows.
    """
    spec = DATASETS[dataset] if isinstance(dataset, str) else dataset
    if on_bad_gold not in ON_BAD_GOLD:
        raise ValueError(f"on_bad_gold must be one of {list(ON_BAD_GOLD)}, got {on_bad_gold!r}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive int or None, got {limit!r}")
    rows, origin = _load_rows(spec, path=path, data_files=data_files, split=split, config=config)
    tasks: list[Task] = []
    skipped: list[tuple[str, str]] = []
    for index, row in enumerate(rows):
        if limit is not None and len(tasks) >= limit:
            break
        row_id = _row_id(spec, row, split, index)
        try:
            made = spec.row_to_task(row)
            if levels is not None and made.level not in levels:
                continue
            validate(made.gold)
        except ValueError as err:
            if on_bad_gold == "skip":
                skipped.append((row_id, str(err)))
                continue
            raise ValueError(f"{spec.name} ({origin}): row {row_id} is refused: {err}. Fix the "
                             f"row, or pass on_bad_gold='skip' to leave such rows out.") from err
        tasks.append(Task(prompt=made.prompt, answer=made.gold, family="math", source=spec.name,
                          source_id=row_id, difficulty=Difficulty(made.level), split=split,
                          metadata=made.metadata))
    if skipped:
        logger.warning("%s (%s): skipped %d row(s) whose gold answer cannot be scored, e.g. %s",
                       spec.name, origin, len(skipped), skipped[0])
    if not tasks:
        raise ValueError(f"{spec.name} ({origin}): no usable rows"
                         + (f" at levels {list(levels)}" if levels is not None else "")
                         + (f" ({len(skipped)} skipped for bad golds)" if skipped else ""))
    return MathDatasetSource(tasks, name=spec.name, skipped=skipped, origin=origin)


def _row_id(spec: MathDataset, row: Mapping[str, Any], split: str, index: int) -> str:
    for column in spec.id_columns:
        if row.get(column) not in (None, ""):
            return str(row[column])
    return f"{spec.name}/{split}/{index}"


# -- where rows come from -------------------------------------------------------------------------


def _load_rows(spec: MathDataset, *, path, data_files, split: str, config: str | None):
    """(rows, origin) from the first place that works; MathDatasetNotFound otherwise."""
    if data_files is not None:
        return _load_local_files(data_files, split), f"data_files={_describe(data_files)}"
    looked: list[str] = []
    if path is None and os.environ.get(spec.env_var):
        path = os.environ[spec.env_var]
        looked_from = f"${spec.env_var}"
    else:
        looked_from = "path="
    if path is not None:
        local = Path(os.fspath(path)).expanduser()
        if local.exists():
            if local.is_dir():
                return _load_local_dir(local, split, config), f"{looked_from}{local}"
            return _load_local_files(str(local), split), f"{looked_from}{local}"
        if _looks_local(os.fspath(path)) or looked_from != "path=":
            looked.append(f"{looked_from}{local}: no such file or directory")
            hub_candidates: tuple[tuple[str, str | None], ...] = ()
        else:
            hub_candidates = ((os.fspath(path), config),)
    else:
        looked.append(f"data_files / path: not given; ${spec.env_var}: not set")
        hub_candidates = tuple((hub_id, config or default_config)
                               for hub_id, default_config in spec.hub_defaults)
    for hub_id, hub_config in hub_candidates:
        rows, failure = _load_from_hub(hub_id, hub_config, split)
        if rows is not None:
            return rows, f"hub {hub_id}"
        looked.append(f"hub {hub_id!r} (config {hub_config!r}, split {split!r}): {failure}")
    raise MathDatasetNotFound(_not_found_message(spec, split, looked))


def _not_found_message(spec: MathDataset, split: str, looked: list[str]) -> str:
    places = "\n".join(f"  - {entry}" for entry in looked)
    env_id = "rlvr/GSM8K-v0" if spec is GSM8K else "rlvr/MATH-v0"
    return (f"could not load the {spec.name} dataset (split {split!r}). Looked in:\n{places}\n"
            f"Give a local copy in the {spec.schema_help}, as json, jsonl or parquet:\n"
            f"  gym.make({env_id!r}, data_files='path/to/{split}.jsonl')   # or a list, or "
            f"{{split: files}}\n"
            f"  gym.make({env_id!r}, path='path/to/snapshot_dir')   # e.g. a "
            f"huggingface-cli download\n"
            f"  or set {spec.env_var}=path/to/file_or_dir. A copy already in the datasets cache "
            f"loads with HF_HUB_OFFLINE=1.")


def _looks_local(path: str) -> bool:
    """A path, not a hub name ("owner/name"): rooted, relative, nested, or a data file."""
    suffix = Path(path.lower().removesuffix(".gz")).suffix
    return path.startswith((".", "/", "~")) or suffix in LOCAL_BUILDERS or path.count("/") > 1


def _describe(data_files: Any) -> str:
    if isinstance(data_files, Mapping):
        return "{" + ", ".join(f"{k}: {_describe(v)}" for k, v in data_files.items()) + "}"
    if isinstance(data_files, (list, tuple)):
        return "[" + ", ".join(map(os.fspath, data_files)) + "]"
    return os.fspath(data_files)


def _builder_for(files: Sequence[str]) -> str:
    builders = set()
    for file in files:
        name = file.lower().removesuffix(".gz").removesuffix(".bz2").removesuffix(".xz")
        builder = LOCAL_BUILDERS.get(Path(name).suffix)
        if builder is None:
            raise ValueError(f"unsupported data file {file!r}: expected one of "
                             f"{sorted(LOCAL_BUILDERS)} (optionally compressed)")
        builders.add(builder)
    if len(builders) != 1:
        raise ValueError(f"data files mix formats {sorted(builders)}; give one format")
    return builders.pop()


def _as_file_list(files: Any) -> list[str]:
    listed = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    out = [os.fspath(Path(os.fspath(f)).expanduser()) for f in listed]
    missing = [f for f in out if not any(c in f for c in "*?[") and not Path(f).exists()]
    if missing:
        raise MathDatasetNotFound(f"data file(s) not found: {missing}")
    for file in out:
        if not any(c in file for c in "*?["):
            check_data_file(file)
    return out


def _load_local_files(data_files: Any, split: str):
    """Rows of `split` from local files: a {split: files} mapping selects the split; plain
    files are the split."""
    import datasets

    if isinstance(data_files, Mapping):
        if split not in data_files:
            raise ValueError(f"split {split!r} is not among the data_files splits "
                             f"{sorted(data_files)}")
        files = _as_file_list(data_files[split])
    else:
        files = _as_file_list(data_files)
    split_name = re.match(r"[\w.]+", split).group(0)  # "train[:100]" slices split "train"
    return datasets.load_dataset(_builder_for(files), data_files={split_name: files},
                                 split=split)


def _load_local_dir(directory: Path, split: str, config: str | None):
    """Rows of `split` from a local dataset directory (a hub snapshot or a folder of files)."""
    import datasets

    try:
        return datasets.load_dataset(str(directory), config, split=split)
    except ValueError as err:
        raise MathDatasetNotFound(f"{directory}: no {split!r} split readable by datasets "
                                  f"({err})") from err


def _hub_offline() -> bool:
    import huggingface_hub.constants as hub_constants

    flags = (os.environ.get(v, "").strip().lower() for v in
             ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))
    return hub_constants.HF_HUB_OFFLINE or any(f in ("1", "true", "yes", "on") for f in flags)


def _hub_endpoint() -> str:
    import huggingface_hub.constants as hub_constants

    return os.environ.get("HF_ENDPOINT") or hub_constants.ENDPOINT


def probe_endpoint(endpoint: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> str | None:
    """None when a TCP connection to the endpoint opens within `timeout`, else why not.

    Runs in a daemon thread so a hanging DNS lookup cannot hold the caller past the timeout.
    """
    url = urllib.parse.urlparse(endpoint)
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    outcome: dict[str, str] = {}

    def connect() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome["ok"] = ""
        except OSError as err:
            outcome["error"] = f"{type(err).__name__}: {err}"

    worker = threading.Thread(target=connect, daemon=True)
    worker.start()
    worker.join(timeout)
    if "ok" in outcome:
        return None
    return outcome.get("error", f"no answer within {timeout:g} s")


def _load_from_hub(hub_id: str, config: str | None, split: str):
    """(rows, None) from the hub (or the datasets cache when offline), else (None, why)."""
    import huggingface_hub.constants as hub_constants

    if _hub_offline() and not hub_constants.HF_HUB_OFFLINE:
        # the variable was set after huggingface_hub was imported: datasets would still go online
        return None, "skipped: HF_HUB_OFFLINE is set"
    if not _hub_offline():
        endpoint = _hub_endpoint()
        unreachable = probe_endpoint(endpoint)
        if unreachable:
            return None, f"hub endpoint {endpoint} unreachable ({unreachable})"
    import datasets

    try:
        return datasets.load_dataset(hub_id, config, split=split), None
    except Exception as err:  # noqa: BLE001 - every failure becomes a line of the final error
        return None, f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
