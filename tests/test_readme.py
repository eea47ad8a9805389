"""The README opens with the set-up commands, and .ci/run runs exactly its test command."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text().splitlines()
    block = readme[readme.index("```bash") + 1 : readme.index("```", readme.index("```bash") + 1)]
    commands = [line for line in block if line and not line.startswith("#")]
    assert len(commands) == 2, commands
    main_job, test_command = commands
    assert test_command.endswith("pytest -q")
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()
