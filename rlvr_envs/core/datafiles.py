"""Checks on a local dataset file before `datasets` reads it, so a bad file fails with one line
naming the file and the row (datasets' own errors are long, and name neither).

A file that cannot be read as a whole (empty, a line that is not JSON, a damaged parquet file)
aborts the load: rows after a broken line cannot be trusted to be the rows the user meant.
A row that reads but lacks a field its family needs is named by `RowError` (file, row,
field) by the family's loader, which also aborts.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


class RowError(ValueError):
    """A row of a dataset file that cannot become a task."""

    def __init__(self, origin: str, row: int | str, message: str):
        super().__init__(f"{origin}: row {row}: {message}")


def _open_text(path: Path):
    opener = _OPENERS.get(path.suffix.lower())
    return opener(path, "rt", encoding="utf-8") if opener else path.open(encoding="utf-8")


def check_data_file(path: str | Path) -> None:
    """ValueError naming `path` (and the line) when it is empty, has a line or document that
    is not JSON (.json/.jsonl, optionally compressed), or is not a readable parquet file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    name = path.name.lower()
    for suffix in _OPENERS:
        name = name.removesuffix(suffix)
    if name.endswith(".parquet"):
        _check_parquet(path)
        return
    if not name.endswith((".json", ".jsonl")):
        return
    try:
        with _open_text(path) as handle:
            text = handle.read()
    except (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError) as err:
        raise ValueError(f"{path}: cannot read it as UTF-8 text: {err}") from None
    if not text.strip():
        raise ValueError(f"{path} is empty: no rows to load")
    if name.endswith(".json") and text.lstrip()[:1] in "[{":
        try:
            json.loads(text)
            return
        except json.JSONDecodeError:
            pass  # JSON Lines saved as .json: check it line by line
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: line {number} is not JSON ({err.msg}): {line[:80]!r}") \
                from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}: line {number} is a JSON {type(row).__name__}, expected an "
                             f"object with the dataset's columns")


def _check_parquet(path: Path) -> None:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_metadata(path).num_rows
    except Exception as err:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
        raise ValueError(f"{path} is not a readable parquet file: {err}") from None
    if rows == 0:
        raise ValueError(f"{path} is empty: no rows to load")
