"""Bad dataset files and rows fail with one line naming the file, the row and the field; a gold
answer of None is refused instead of becoming the gold "None"."""

from __future__ import annotations

import gzip
import json

import pytest
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.mbpp import load_mbpp
from rlvr_envs.tasks.code.stdio import stdio_tasks
from rlvr_envs.tasks.math.datasets import load_math_dataset

from rlvr_envs.core.datafiles import RowError, check_data_file
from rlvr_envs.core.task import Task

MBPP_ROW = {"task_id": 7, "text": "Add two numbers.", "code": "def add(a, b):\n    return a + b",
            "test_list": ["assert add(1, 2) == 3"]}
HUMANEVAL_ROW = {"task_id": "Mini/0", "prompt": "def one():\n", "canonical_solution": "    return 1\n",
                 "test": "def check(candidate):\n    assert candidate() == 1\n",
                 "entry_point": "one"}


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("name, content, message", [
    ("empty.jsonl", b"", "is empty"),
    ("blank.json", b"\n  \n", "is empty"),
    ("broken.jsonl", b'{"a": 1}\n{"a": \n', "line 2 is not JSON"),
    ("list.jsonl", b'{"a": 1}\n[1, 2]\n', "line 2 is a JSON list"),
    ("corrupt.parquet", b"PAR1 this is not parquet", "not a readable parquet file"),
    ("latin1.jsonl", b'{"a": "\xe9"}\n', "cannot read it as UTF-8"),
])
def test_bad_files_are_named_with_the_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as raised:
        check_data_file(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_good_files_pass_and_compressed_jsonl_is_read(tmp_path):
    check_data_file(_jsonl(tmp_path / "ok.jsonl", [MBPP_ROW]))
    (tmp_path / "doc.json").write_text(json.dumps([MBPP_ROW]))
    check_data_file(tmp_path / "doc.json")
    with gzip.open(tmp_path / "ok.jsonl.gz", "wt") as handle:
        handle.write('{"a": 1}\nnot json\n')
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        check_data_file(tmp_path / "ok.jsonl.gz")


def test_mbpp_rows_without_fields_name_the_row_and_field(tmp_path):
    assert len(load_mbpp(str(_jsonl(tmp_path / "good.jsonl", [MBPP_ROW])))) == 1
    bad = _jsonl(tmp_path / "bad.jsonl", [MBPP_ROW, {"task_id": 9, "text": "x", "code": "pass"}])
    with pytest.raises(RowError, match=r"bad.jsonl: row 9: missing or empty field\(s\) "
                                       r"\['test_list'\]"):
        load_mbpp(str(bad))
    (tmp_path / "broken.jsonl").write_text("{\n")
    with pytest.raises(ValueError, match="broken.jsonl: line 1 is not JSON"):
        load_mbpp(str(tmp_path / "broken.jsonl"))


def test_humaneval_rows_without_fields_name_the_row(tmp_path):
    assert len(load_humaneval(str(_jsonl(tmp_path / "he.jsonl", [HUMANEVAL_ROW])))) == 1
    row = {k: v for k, v in HUMANEVAL_ROW.items() if k != "test"}
    with pytest.raises(RowError, match=r"row Mini/0: missing or non-text field\(s\) \['test'\]"):
        load_humaneval(str(_jsonl(tmp_path / "bad.jsonl", [row])))
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ValueError, match="is empty"):
        load_humaneval(str(tmp_path / "empty.jsonl"))


def test_stdio_rows_are_skipped_with_a_count_and_none_usable_is_an_error(caplog):
    usable = {"question": "Echo.", "inputs": ["1\n"], "outputs": ["1\n"],
              "solution": "print(input())"}
    assert len(stdio_tasks([usable, {"question": "no tests"}])) == 1
    assert "skipped 1 of 2" in caplog.text
    with pytest.raises(ValueError, match="none of the 1 stdio rows"):
        stdio_tasks([{"question": "no tests"}])


def test_math_dataset_file_errors_name_the_file(tmp_path):
    (tmp_path / "gsm.jsonl").write_text('{"question": "1+1?", "answer": "#### 2"}\n{oops\n')
    with pytest.raises(ValueError, match="gsm.jsonl: line 2 is not JSON"):
        load_math_dataset("gsm8k", data_files=str(tmp_path / "gsm.jsonl"))


@pytest.mark.parametrize("answer", [None, True, ["1"], {"a": 1}])
def test_a_task_record_whose_answer_is_not_text_is_refused(answer):
    with pytest.raises(TypeError, match="'answer' must be a str or a number"):
        Task.from_dict({"prompt": "p", "answer": answer})
    assert Task.from_dict({"prompt": "p", "answer": 42}).answer == "42"
