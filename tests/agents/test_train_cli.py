"""`rlvr train` options are generated from the settings dataclasses: every field is an option
with its help text, and the options build exactly the settings object."""

from __future__ import annotations

import dataclasses

import pytest
import typer
from typer.testing import CliRunner

from rlvr_envs.agents.cli import OPTION_NAMES, app, settings_from_options, settings_parameters
from rlvr_envs.agents.settings import (DistillSettings, ExpertIterationSettings, GRPOSettings,
                                       PPOSettings)

COMMANDS = {"grpo": GRPOSettings, "ppo": PPOSettings, "expert-iteration": ExpertIterationSettings,
            "distill": DistillSettings}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_setting_is_an_option_with_help(command):
    settings_cls = COMMANDS[command]
    wide = {"COLUMNS": "300", "TERMINAL_WIDTH": "300"}  # option names unabbreviated
    out = CliRunner().invoke(app, [command, "--help"], env=wide)
    assert out.exit_code == 0, out.output
    for field in dataclasses.fields(settings_cls):
        assert field.metadata.get("help"), f"{settings_cls.__name__}.{field.name} has no help"
        if field.name == "families":
            continue  # --family NAME=ENV_ID / --expert NAME=CHECKPOINT
        option = OPTION_NAMES.get(field.name, "--" + field.name.replace("_", "-"))
        assert option in out.output, f"{command}: {option} missing"
    assert "--max-new-tokens" not in out.output and "--save-every" not in out.output


def test_options_build_the_settings_with_json_kwargs_and_defaults():
    params = {p.name: p.default.default for p in settings_parameters(PPOSettings)}
    params.update(env_id="rlvr/Arithmetic-v0", model="m", output_dir="out",
                  env_kwargs='{"difficulty": 2}', max_grad_norm=0.5)
    settings = settings_from_options(PPOSettings, params)
    assert settings == PPOSettings(env_id="rlvr/Arithmetic-v0", model="m", output_dir="out",
                                   env_kwargs={"difficulty": 2}, max_grad_norm=0.5)
    params["env_kwargs"] = "[1]"
    with pytest.raises(typer.BadParameter, match="--env-kwargs must be a JSON object"):
        settings_from_options(PPOSettings, params)
