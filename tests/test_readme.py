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


def test_every_relative_link_in_the_readme_and_docs_resolves():
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
