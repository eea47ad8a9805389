"""Tasks from reasoning-gym's generators, made one at a time from (generator, level, seed).

Each task is item 0 of `reasoning_gym.create_dataset(name, seed=seed, size=1, **config)`,
where `config` is the generator's own curriculum configuration at the task's level (level L is
curriculum global level L-1), with the user's overrides on top. The task keeps the generator,
level, seed and config in its metadata, so the scorer regenerates the exact entry (with the
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
    return json.loads(json.dumps(value, default=list))


def level_config(name: str, level: int) -> dict[str, Any]:
    """The generator's config at `level` from its own curriculum (empty without one)."""
    factory = reasoning_gym().factory
    if not factory.has_curriculum(name):
        return {}
    curriculum = factory.create_curriculum(name)
    curriculum.set_global_level(level - 1)
    config = dataclasses.asdict(curriculum.generate_configuration())
    for key in ("seed", "size"):
        config.pop(key, None)
    return _json_safe(config)


@functools.lru_cache(maxsize=4096)
def _entry_cached(name: str, seed: int, config_json: str) -> tuple[Any, dict[str, Any]]:
    dataset = reasoning_gym().create_dataset(name, seed=seed, size=1, **json.loads(config_json))
    return dataset, dataset[0]


def entry_for(name: str, seed: int, config: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(dataset, entry) for one task; cached, since scoring regenerates what reset made."""
    return _entry_cached(name, int(seed), json.dumps(dict(config), sort_keys=True))


def _generator(name: str, overrides: Mapping[str, Any]):
    def generate(rng: random.Random, level: int) -> Generated:
        seed = rng.randrange(2**31 - 1)
        config = {**level_config(name, level), **overrides}
        _, entry = entry_for(name, seed, config)
        if entry.get("answer") is None:
            raise ValueError(f"reasoning-gym {name!r} gives no reference answer, so its tasks "
                             f"cannot be verified here")
        return Generated(prompt=str(entry["question"]), answer=str(entry["answer"]),
                         metadata={"rg_dataset": name, "rg_seed": seed, "rg_config": config})

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
    chosen = tuple(levels) if levels is not None else tuple(l for l in DEFAULT_LEVELS if l <= top)
    try:  # a bad config field fails here, naming the generator, not at the first reset
        entry_for(name, 0, {**level_config(name, (chosen or (1,))[0]), **overrides})
    except (TypeError, ValueError, AssertionError) as err:
        raise ValueError(f"reasoning-gym {name!r} refused config {overrides}: {err}") from err
    return ProceduralSource({name: _generator(name, overrides)}, family="reasoning",
                            name=f"reasoning-gym:{name}", levels=chosen or (1,), max_level=top)
