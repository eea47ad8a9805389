"""The Task record: ids, defaults, validation, round trips."""

import pytest

from rlvr_envs.core.task import Difficulty, Task


def test_id_is_content_hash_and_stable():
    a = Task(prompt="1+1?", answer="2", family="math")
    b = Task.from_dict({"prompt": "1+1?", "answer": "2"}, family="math")
    assert a.id == b.id and a.id.startswith("math-")
    assert Task(prompt="1+1?", answer="3", family="math").id != a.id


def test_plain_dict_gets_defaults_and_round_trips():
    task = Task.from_dict({"prompt": "p", "answer": 5})
    assert task.answer == "5" and task.family == "custom" and task.split == "train"
    assert task.difficulty == Difficulty(1, None)
    again = Task.from_dict(task.to_dict())
    assert again == task


@pytest.mark.parametrize("record, message", [
    ({"prompt": "p"}, "missing \\['answer'\\]"),
    ({"prompt": "p", "answer": "1", "colour": "red"}, "unknown task fields \\['colour'\\]"),
    ({"prompt": " ", "answer": "1"}, "prompt is empty"),
])
def test_bad_records_are_refused_with_a_clear_message(record, message):
    with pytest.raises(ValueError, match=message):
        Task.from_dict(record)


def test_difficulty_validation():
    with pytest.raises(ValueError, match="level must be an int >= 1"):
        Difficulty(0)
    with pytest.raises(ValueError, match="pass_rate"):
        Difficulty(1, 1.5)
    assert Difficulty.coerce({"level": 3}) == Difficulty(3)
    assert Task(prompt="p", answer="a").with_pass_rate(0.25).difficulty.pass_rate == 0.25


def test_procedural_source_remembers_a_bounded_number_of_tasks():
    from rlvr_envs.core.sources import ProceduralSource
    from rlvr_envs.tasks.math.generators import GENERATORS

    source = ProceduralSource({"arithmetic": GENERATORS["arithmetic"]}, family="math",
                              name="bounded")
    source.SEEN_LIMIT = 3
    made = [source.make("arithmetic", 1, seed) for seed in range(5)]
    assert len(source._seen) == 3
    assert source.get(made[-1].id) == made[-1]
    with pytest.raises(KeyError, match="made recently"):
        source.get(made[0].id)
    assert source.get(made[0].source_id) == made[0]  # a procedural id is remade
