"""Rows of a dataset through `datasets`: a local file (json/jsonl/parquet/csv) or a hub name.

The hub is often unreachable (offline machines, CI): that is checked first, with a short
timeout, so a hub name fails at once with a message that says to pass a local file. A local
file is checked first (`core.datafiles`): an empty or malformed file fails naming the file
and line.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from rlvr_envs.core.datafiles import check_data_file

_FORMATS = {".json": "json", ".jsonl": "json", ".parquet": "parquet", ".csv": "csv"}


def hub_reachable(host: str = "huggingface.co", timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def load_rows(data: str, *, split: str = "test", config: str | None = None) -> list[dict[str, Any]]:
    """All rows of `data` (a local file path or a hub dataset name) as plain dicts."""
    import datasets

    path = Path(os.path.expanduser(data))
    if path.exists():
        fmt = _FORMATS.get(path.suffix.lower().replace(".gz", ""))
        if fmt is None and path.name.endswith((".jsonl.gz", ".json.gz")):
            fmt = "json"
        if fmt is None:
            raise ValueError(f"cannot read {str(path)!r}: expected a .json, .jsonl, .parquet or "
                             f".csv file")
        check_data_file(path)
        dataset = datasets.load_dataset(fmt, data_files=str(path), split="train")
        return [dict(row) for row in dataset]
    if "/" not in data and not data.isidentifier():
        raise FileNotFoundError(f"{data!r} is neither an existing file nor a hub dataset name")
    if os.environ.get("HF_DATASETS_OFFLINE") != "1" and not hub_reachable():
        raise ConnectionError(f"cannot reach the Hugging Face hub to download {data!r}; pass a "
                              f"local file in the same schema instead (data='path/to/file.jsonl')")
    dataset = datasets.load_dataset(data, config, split=split)
    return [dict(row) for row in dataset]
