"""Lazy registration: ids come from the catalogue with "module:function" entry points, a
family loads only when one of its envs is made, specs pickle and convert to JSON, and every
id takes the shaping options."""

from __future__ import annotations

import inspect
import json
import pickle
import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.envs.registration import EnvSpec

import rlvr_envs
from rlvr_envs.catalogue import ENVS, FAMILIES
from rlvr_envs.registry import env_entry
from rlvr_envs.wrappers.shaping import SHAPING_KWARGS


def test_import_loads_no_family_and_no_sympy_until_an_env_is_made():
    code = ("import sys, gymnasium as gym, rlvr_envs\n"
            "loaded = lambda: sorted(m for m in sys.modules if m.startswith('rlvr_envs.tasks.') "
            "or m == 'sympy')\n"
            "print(loaded())\n"
            "gym.make('rlvr/Arithmetic-v0')\n"
            "print(loaded())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = (eval(line) for line in out.stdout.strip().splitlines())  # noqa: S307
    assert before == []
    assert "rlvr_envs.tasks.math.envs" in after and "sympy" in after
    assert not any(m.startswith(("rlvr_envs.tasks.code", "rlvr_envs.tasks.repo")) for m in after)


def test_every_catalogue_id_is_registered_with_a_string_entry_point():
    assert set(FAMILIES) == {e.family for e in ENVS}
    for listing in ENVS:
        spec = gym.spec(listing.id)
        assert spec.entry_point == listing.entry_point
        assert listing.id in rlvr_envs.list_envs(listing.family)


@pytest.mark.parametrize("env_id", ["rlvr/Math-v0", "rlvr/RG-ChainSum-v0"])
def test_spec_pickles_and_converts_to_json(env_id):
    env = gym.make(env_id, difficulty=2)
    try:
        assert pickle.loads(pickle.dumps(env.spec)) == env.spec
        back = EnvSpec.from_json(env.spec.to_json())
        assert back.id == env_id and back.kwargs == json.loads(env.spec.to_json())["kwargs"]
        again = gym.make(back)
        assert again.reset(seed=3)[1]["task"] == env.reset(seed=3)[1]["task"]
        again.close()
    finally:
        env.close()


def test_curated_ids_pin_their_generator():
    env = gym.make("rlvr/RG-ChainSum-v0")
    try:
        assert env.spec.kwargs == {"dataset": "chain_sum"}
        assert env.reset(seed=0)[1]["task"]["metadata"]["rg_dataset"] == "chain_sum"
    finally:
        env.close()


@pytest.mark.parametrize("listing", ENVS, ids=lambda listing: listing.id)
def test_every_family_takes_the_shaping_options(listing):
    accepted = inspect.signature(env_entry(listing.id).factory).parameters
    assert set(SHAPING_KWARGS) <= set(accepted)


def test_unknown_kwarg_names_the_id_and_the_valid_ones():
    with pytest.raises(TypeError, match=r"rlvr/Code-v0: unknown keyword argument\(s\) \['nope'\]; "
                                        r"valid ones are \[.*'format_reward'"):
        gym.make("rlvr/Code-v0", nope=1)
