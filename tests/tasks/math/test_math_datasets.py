"""Math dataset sources: GSM8K and MATH schemas from local jsonl / json / parquet files, gold
extraction, load-time refusal of bad golds, and the error when no copy can be found."""

from __future__ import annotations

import json

import pytest

from math_fixture_data import GSM8K_ROWS, MATH_ROWS, write_jsonl
from rlvr_envs.tasks.math import datasets as mds
from rlvr_envs.tasks.math.datasets import (MathDatasetNotFound, gsm8k_gold, gsm8k_steps,
                                           last_boxed, load_math_dataset, math_level)


def test_gsm8k_gold_is_the_number_after_the_final_marks_with_commas_stripped():
    assert gsm8k_gold("a\nb\n#### 72") == "72"
    assert gsm8k_gold("x #### 1 #### 1,234,567  \n") == "1234567"
    assert gsm8k_gold("#### -3.5") == "-3.5"
    for bad in ("no marks at all", "work\n####   ", "#### 5\nmore text after"):
        with pytest.raises(ValueError, match="####"):
            gsm8k_gold(bad)


def test_gsm8k_steps_count_calculations_or_reasoning_lines():
    assert gsm8k_steps(GSM8K_ROWS[2]["answer"]) == 3
    assert gsm8k_steps(GSM8K_ROWS[3]["answer"]) == 2  # no <<>> annotations: two lines


def test_last_boxed_handles_nesting_fbox_and_the_space_form():
    assert last_boxed("so \\boxed{\\frac{1}{\\sqrt{2}}}.") == "\\frac{1}{\\sqrt{2}}"
    assert last_boxed("\\boxed{1} then \\boxed{2}") == "2"
    assert last_boxed("\\fbox{9\\pi}") == "9\\pi"
    assert last_boxed("$\\boxed 5$") == "5"
    assert last_boxed("no box") is None
    assert last_boxed("\\boxed{unclosed") is None


def test_math_level_reads_both_schemas():
    assert math_level("Level 3") == (3, True)
    assert math_level(5) == (5, True)
    assert math_level("4") == (4, True)
    assert math_level("Level ?") == (1, False)
    assert math_level(None) == (1, False)


@pytest.mark.parametrize("fixture", ["gsm8k_jsonl", "gsm8k_parquet"])
def test_gsm8k_rows_load_from_jsonl_and_parquet(fixture, request):
    source = load_math_dataset("gsm8k", data_files=request.getfixturevalue(fixture), split="test")
    assert len(source) == len(GSM8K_ROWS)
    answers = [t.answer for t in source]
    assert answers == ["37", "3600", "17", "2.5"]
    first = source[0]
    assert first.prompt == GSM8K_ROWS[0]["question"]
    assert (first.family, first.source, first.split) == ("math", "gsm8k", "test")
    assert first.source_id == "gsm8k/test/0" and source.get("gsm8k/test/0") is first
    assert [t.difficulty.level for t in source] == [2, 1, 3, 2]
    assert first.metadata["steps"] == 2 and "####" in first.metadata["solution"]


@pytest.mark.parametrize("fixture", ["math_jsonl", "math_parquet"])
def test_math_rows_load_from_jsonl_and_parquet(fixture, request):
    source = load_math_dataset("math", data_files=request.getfixturevalue(fixture))
    assert [t.answer for t in source] == ["\\frac{5}{6}", "3", "9\\pi", "(2, 1)"]
    assert [t.difficulty.level for t in source] == [1, 2, 1, 4]
    assert source.get("test/algebra/4.json").metadata["type"] == "Algebra"  # from `subject`
    assert source[0].metadata["type"] == "Prealgebra"
    assert source[2].metadata["level_raw"] == "Level ?"
    assert "level_raw" not in source[0].metadata


def test_a_json_records_file_a_split_mapping_and_a_directory_load(tmp_path):
    records = tmp_path / "records.json"
    records.write_text(json.dumps(MATH_ROWS))
    assert len(load_math_dataset("math", data_files=str(records))) == 4
    train = write_jsonl(tmp_path / "train.jsonl", GSM8K_ROWS[:1])
    test = write_jsonl(tmp_path / "test.jsonl", GSM8K_ROWS)
    picked = load_math_dataset("gsm8k", data_files={"train": str(train), "test": str(test)},
                               split="train")
    assert len(picked) == 1 and picked[0].split == "train"
    with pytest.raises(ValueError, match="validation"):
        load_math_dataset("gsm8k", data_files={"train": str(train)}, split="validation")
    folder = tmp_path / "snapshot"
    folder.mkdir()
    write_jsonl(folder / "test.jsonl", GSM8K_ROWS)
    write_jsonl(folder / "train.jsonl", GSM8K_ROWS[:2])
    assert len(load_math_dataset("gsm8k", path=folder, split="train")) == 2
    assert len(load_math_dataset("gsm8k", path=str(folder), split="test")) == 4


def test_the_environment_variable_points_at_a_local_copy(monkeypatch, math_jsonl):
    monkeypatch.setenv("RLVR_MATH_PATH", str(math_jsonl))
    source = load_math_dataset("math")
    assert len(source) == 4 and "RLVR_MATH_PATH" in source.origin


def test_levels_and_limit_select_rows(gsm8k_jsonl, math_jsonl):
    assert [t.difficulty.level for t in
            load_math_dataset("math", data_files=math_jsonl, levels=[1])] == [1, 1]
    assert len(load_math_dataset("gsm8k", data_files=gsm8k_jsonl, limit=2)) == 2
    with pytest.raises(ValueError, match="no usable rows at levels \\[9\\]"):
        load_math_dataset("math", data_files=math_jsonl, levels=[9])


BAD_GSM8K = GSM8K_ROWS[:2] + [{"question": "How many?", "answer": "I do not know."}]
BAD_MATH = MATH_ROWS[:2] + [
    {"problem": "Say nothing.", "solution": "$\\boxed{\\text{}}$", "unique_id": "bad/empty.json"},
    {"problem": "No box.", "solution": "The answer is 4.", "unique_id": "bad/nobox.json"},
]


def test_a_gold_that_does_not_parse_is_refused_at_load_time_with_the_row_id(tmp_path):
    gsm = write_jsonl(tmp_path / "gsm.jsonl", BAD_GSM8K)
    with pytest.raises(ValueError, match=r"gsm8k/test/2 is refused.*####.*on_bad_gold='skip'"):
        load_math_dataset("gsm8k", data_files=gsm)
    math = write_jsonl(tmp_path / "math.jsonl", BAD_MATH)
    with pytest.raises(ValueError, match=r"bad/empty\.json is refused"):
        load_math_dataset("math", data_files=math)


def test_on_bad_gold_skip_leaves_the_rows_out_and_counts_them(tmp_path, caplog):
    math = write_jsonl(tmp_path / "math.jsonl", BAD_MATH)
    source = load_math_dataset("math", data_files=math, on_bad_gold="skip")
    assert len(source) == 2
    assert [row_id for row_id, _ in source.skipped] == ["bad/empty.json", "bad/nobox.json"]
    assert "boxed" in source.skipped[1][1]
    assert "skipped 2 row(s)" in caplog.text
    with pytest.raises(ValueError, match="on_bad_gold must be one of"):
        load_math_dataset("math", data_files=math, on_bad_gold="ignore")


def test_rows_in_the_wrong_schema_are_refused_naming_the_missing_column(math_jsonl):
    with pytest.raises(ValueError, match="column 'answer' is missing"):
        load_math_dataset("gsm8k", data_files=math_jsonl)


def test_missing_dataset_error_names_the_dataset_the_places_and_the_fix():
    with pytest.raises(MathDatasetNotFound) as caught:
        load_math_dataset("gsm8k", split="test")
    message = str(caught.value)
    for expected in ("gsm8k", "'test'", "openai/gsm8k", "HF_HUB_OFFLINE", "RLVR_GSM8K_PATH",
                     "data_files=", "path=", "jsonl", "'question'", "#### <number>"):
        assert expected in message, (expected, message)
    with pytest.raises(MathDatasetNotFound, match="HuggingFaceH4/MATH-500"):
        load_math_dataset("math")


def test_unreachable_hub_endpoint_fails_fast_with_the_reason(monkeypatch):
    import huggingface_hub.constants as hub_constants

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # loopback, nothing listens
    with pytest.raises(MathDatasetNotFound, match=r"127\.0\.0\.1:9 unreachable"):
        load_math_dataset("gsm8k")
    assert mds.probe_endpoint("http://127.0.0.1:9", timeout=2) is not None


def test_missing_local_paths_and_unsupported_files_are_named(tmp_path):
    with pytest.raises(MathDatasetNotFound, match="nope.jsonl"):
        load_math_dataset("gsm8k", data_files=tmp_path / "nope.jsonl")
    with pytest.raises(MathDatasetNotFound, match="no such file or directory"):
        load_math_dataset("gsm8k", path=str(tmp_path / "missing_dir" / "x"))
    csv = tmp_path / "rows.csv"
    csv.write_text("question,answer\n")
    with pytest.raises(ValueError, match="unsupported data file"):
        load_math_dataset("gsm8k", data_files=csv)


def test_a_hub_name_as_path_is_tried_on_the_hub():
    with pytest.raises(MathDatasetNotFound, match="hub 'someone/my-gsm8k'"):
        load_math_dataset("gsm8k", path="someone/my-gsm8k")


def test_bundled_samples_load_and_every_gold_is_checked():
    from rlvr_envs.tasks.math.envs import GSM8K_SAMPLE, MATH_SAMPLE

    gsm, math = (load_math_dataset(n, data_files=p)
                 for n, p in (("gsm8k", GSM8K_SAMPLE), ("math", MATH_SAMPLE)))
    assert len(gsm) >= 10 and len(math) >= 10
    assert {t.difficulty.level for t in math} >= {1, 2, 3}


def test_a_hub_style_snapshot_directory_loads_by_config_and_split(tmp_path):
    """The layout `huggingface-cli download openai/gsm8k` leaves: README configs + parquet."""
    from math_fixture_data import write_parquet

    (tmp_path / "main").mkdir()
    write_parquet(tmp_path / "main" / "test-00000-of-00001.parquet", GSM8K_ROWS)
    write_parquet(tmp_path / "main" / "train-00000-of-00001.parquet", GSM8K_ROWS[:2])
    (tmp_path / "README.md").write_text(
        "---\nconfigs:\n- config_name: main\n  data_files:\n  - split: train\n"
        "    path: main/train-*\n  - split: test\n    path: main/test-*\n---\n")
    assert len(load_math_dataset("gsm8k", path=tmp_path, config="main", split="test")) == 4
    train = load_math_dataset("gsm8k", path=tmp_path, config="main", split="train")
    assert [t.answer for t in train] == ["37", "3600"] and train[0].split == "train"
