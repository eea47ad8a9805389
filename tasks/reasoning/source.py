"""Tasks from reasoning-gym's generators, made one at a time from (generator, level, seed).

Each task is item 0 of `reasoning_gym.create_dataset(name, seed=seed, size=1, **config)`,
where `config` is the generator's own curriculum configuration at the task's level (level L is
curriculum global level L-1), with the user's overrides on top. The task keeps the generator,
seed, level and overrides in its metadata, so the scorer regenerates the exact entry (with the
metadata reasoning-gym's own scorer needs) from the task record alone, in any process.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from typing import Any, Mapping, Sequence

from rlvr_envs.core.sources import Generated, ProceduralSource

INSTALL_HINT = "pip install 'rlvr-envs[reasoning]' (the reasoning-gym package)"
DEFAULT_LEVELS = (1, 2, 3)
MAX_DRAWS = 20


def reasoning_gym():
    """The reasoning_gym package, imported on first use (it takes about a second)."""
    try:
        import reasoning_gym
    except ImportError as err:  # pragma: no cover - the extra is part of [all]
        raise ImportError(f"rlvr/ReasoningGym-v0 needs reasoning-gym: {INSTALL_HINT}") from err
    return reasoning_gym


def generator_names() -> list[str]:
    return sorted(reasoning_gym().factory.DATASETS)


def check_generator(name: str) -> str:
    names = generator_names()
    if name not in names:
        import difflib

        close = difflib.get_close_matches(name, names, n=3)
        raise ValueError(f"unknown reasoning-gym dataset {name!r}"
                         f"{f'; close matches: {close}' if close else ''}; "
                         f"known: {len(names)} names, see reasoning_gym.factory.DATASETS")
    return name


def level_count(name: str) -> int:
    """How many curriculum levels the generator defines (1 when it has no curriculum)."""
    factory = reasoning_gym().factory
    if not factory.has_curriculum(name):
        return 1
    curriculum = factory.create_curriculum(name)
    return max(len(attr.levels) for attr in curriculum.attributes.values())


def _json_safe(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as err:
        raise ValueError(f"config overrides must be JSON values (they travel in the task "
                         f"record): {err}") from None


def level_config(name: str, level: int) -> dict[str, Any]:
    """The generator's config fields at `level` from its own curriculum (empty without one)."""
    factory = reasoning_gym().factory
    if not factory.has_curriculum(name):
        return {}
    curriculum = factory.create_curriculum(name)
    curriculum.set_global_level(level - 1)
    config = curriculum.generate_configuration()
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)
            if f.name not in ("seed", "size")}


@functools.lru_cache(maxsize=4096)
def _entry_cached(name: str, seed: int, level: int, overrides_json: str) -> tuple[Any, dict]:
    config = {**level_config(name, level), **json.loads(overrides_json)}
    dataset = reasoning_gym().create_dataset(name, seed=seed, size=1, **config)
    return dataset, dataset[0]


def entry_for(name: str, seed: int, level: int,
              overrides: Mapping[str, Any] | str | None = None) -> tuple[Any, dict[str, Any]]:
    """(dataset, entry) of one task, rebuilt from what its record keeps (overrides as a dict or
    the JSON text the record holds); cached, since scoring regenerates what reset made."""
    if isinstance(overrides, str):
        overrides = json.loads(overrides)
    return _entry_cached(name, int(seed), int(level), json.dumps(dict(overrides or {}),
                                                                 sort_keys=True))


def _refused(name: str, level: int, overrides: Mapping[str, Any]) -> str | None:
    """Why the generator cannot make tasks at `level` (some curricula overshoot their own
    config checks at high levels), or None."""
    try:
        entry_for(name, 0, level, overrides)
    except (TypeError, ValueError, AssertionError, AttributeError) as err:
        return f"{type(err).__name__}: {err}"
    return None


def _generator(name: str, overrides: Mapping[str, Any]):
    def generate(rng: random.Random, level: int) -> Generated:
        for _ in range(MAX_DRAWS):  # an empty gold cannot be told from no answer: draw again
            seed = rng.randrange(2**31 - 1)
            _, entry = entry_for(name, seed, level, overrides)
            if entry.get("answer") is None:
                raise ValueError(f"reasoning-gym {name!r} gives no reference answer, so its "
                                 f"tasks cannot be verified here")
            if str(entry["answer"]).strip():
                break
        else:
            raise ValueError(f"reasoning-gym {name!r} gave {MAX_DRAWS} empty answers in a row")
        return Generated(prompt=str(entry["question"]), answer=str(entry["answer"]),
                         metadata={"rg_dataset": name, "rg_seed": seed, "rg_level": level,
                                   "rg_config": json.dumps(dict(overrides), sort_keys=True)})

    return generate


def reasoning_gym_source(dataset: str, *, levels: Sequence[int] | None = None,
                         config: Mapping[str, Any] | None = None) -> ProceduralSource:
    """A procedural source over one reasoning-gym generator; ids are `<dataset>/L<level>/<seed>`."""
    name = check_generator(dataset)
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict of {name}'s config fields, "
                        f"got {type(config).__name__}")
    overrides = _json_safe(dict(config or {}))
    top = level_count(name)
    if levels is None:
        chosen = tuple(lvl for lvl in DEFAULT_LEVELS if lvl <= top and not _refused(
            name, lvl, overrides)) or (1,)
    else:
        chosen = tuple(levels)
    for level in chosen:  # a bad config or level fails here, named, not at the first reset
        if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= top:
            raise ValueError(f"reasoning-gym {name!r} has curriculum levels 1..{top}, "
                             f"got {level!r}")
        problem = _refused(name, level, overrides)
        if problem:
            raise ValueError(f"reasoning-gym {name!r} refused its config at level {level} "
                             f"(overrides {overrides}): {problem}")
    return ProceduralSource({name: _generator(name, overrides)}, family="reasoning",
                            name=f"reasoning-gym:{name}", levels=chosen or (1,), max_level=top)
