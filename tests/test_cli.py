"""The `rlvr` command line: list, show, check."""

from typer.testing import CliRunner

from rlvr_envs.cli import app

runner = CliRunner()


def test_list_shows_ids():
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0 and "rlvr/Math-v0" in result.output


def test_show_prints_task_and_gold():
    result = runner.invoke(app, ["show", "rlvr/Arithmetic-v0", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "Compute" in result.output and "gold" in result.output


def test_check_passes_and_refuses_unknown_ids(rlvr_cli):
    ok = runner.invoke(app, ["check", "rlvr/Arithmetic-v0", "--samples", "3"])
    assert ok.exit_code == 0, ok.output
    assert "all checks passed" in ok.output
    bad = rlvr_cli("check", "rlvr/NoSuch-v0")
    assert bad.exit_code == 1 and "no rlvr env 'rlvr/NoSuch-v0'" in bad.stderr
