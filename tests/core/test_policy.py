"""SamplingParams: its checks, and the deprecated name of its token cap."""

from __future__ import annotations

import dataclasses

import pytest

from rlvr_envs.core.policy import SamplingParams


def test_the_cap_is_max_completion_length_and_is_checked():
    params = SamplingParams(max_completion_length=12, n=2)
    assert dataclasses.asdict(params)["max_completion_length"] == 12
    assert dataclasses.replace(params, n=3).max_completion_length == 12
    with pytest.raises(ValueError, match="max_completion_length must be >= 1"):
        SamplingParams(max_completion_length=0)


def test_the_old_name_still_works_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="'max_new_tokens' is now 'max_completion_length'"):
        params = SamplingParams(max_new_tokens=7)
    assert params.max_completion_length == 7 and "max_new_tokens" not in dataclasses.asdict(params)
    with pytest.warns(DeprecationWarning):
        assert params.max_new_tokens == 7
    with pytest.raises(TypeError, match="give max_completion_length only"):
        SamplingParams(max_new_tokens=7, max_completion_length=7)
