"""The env ids this package registers, as data: which family serves each id, through which
factory, with which description. `import rlvr_envs` registers them all with gymnasium from this
table without importing any family; a family's module loads when one of its envs is made.

To add an id: write the factory in the family's `envs` module (decorated with
`rlvr_envs.registry.env_factory`) and add a row here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: family name -> the module holding its env factories
FAMILIES: dict[str, str] = {
    "math": "rlvr_envs.tasks.math.envs",
    "code": "rlvr_envs.tasks.code.envs",
    "repo": "rlvr_envs.tasks.repo.envs",
    "reasoning": "rlvr_envs.tasks.reasoning.envs",
}

#: reasoning-gym generator -> id suffix of its curated id (each passes the audit)
REASONING_GYM_CURATED: dict[str, str] = {
    "base_conversion": "BaseConversion", "basic_arithmetic": "BasicArithmetic",
    "bitwise_arithmetic": "BitwiseArithmetic", "calendar_arithmetic": "CalendarArithmetic",
    "chain_sum": "ChainSum", "complex_arithmetic": "ComplexArithmetic",
    "count_primes": "CountPrimes", "countdown": "Countdown",
    "family_relationships": "FamilyRelationships", "gcd": "GCD", "lcm": "LCM",
    "letter_counting": "LetterCounting", "maze": "Maze", "mini_sudoku": "MiniSudoku",
    "n_queens": "NQueens", "number_sorting": "NumberSorting", "puzzle24": "Puzzle24",
    "shortest_path": "ShortestPath", "simple_equations": "SimpleEquations",
    "spell_backward": "SpellBackward", "tower_of_hanoi": "TowerOfHanoi",
    "word_sorting": "WordSorting", "zebra_puzzles": "ZebraPuzzles",
}


@dataclass(frozen=True)
class Listing:
    """One id of the catalogue: `factory` is a function name in the family's module; `kwargs`
    are fixed keyword arguments of the id (gymnasium's spec kwargs)."""

    id: str
    family: str
    factory: str
    description: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def entry_point(self) -> str:
        return f"{FAMILIES[self.family]}:{self.factory}"


ENVS: tuple[Listing, ...] = (
    Listing("rlvr/Math-v0", "math", "make_math_env",
            "Procedural math (arithmetic, fractions, equations, algebra, calculus, modular, "
            "word problems), levels 1-10"),
    Listing("rlvr/Arithmetic-v0", "math", "make_arithmetic_env",
            "Multi-step integer arithmetic with digits and steps growing by level"),
    Listing("rlvr/GSM8K-v0", "math", "make_gsm8k_env",
            "GSM8K grade-school word problems (hub openai/gsm8k or local json/jsonl/parquet)"),
    Listing("rlvr/MATH-v0", "math", "make_math_dataset_env",
            "MATH competition problems, levels 1-5 (hub MATH-500 or local json/jsonl/parquet)"),
    Listing("rlvr/CHAMP-v0", "math", "make_champ_env",
            "CHAMP competition math (270 problems, offline via champ-dataset; the 229 with "
            "value answers), levels 1-3"),
    Listing("rlvr/Code-v0", "code", "make_code_env",
            "Python code tasks (HumanEval, MBPP, stdin/stdout, procedural) graded in a sandbox"),
    Listing("rlvr/HumanEval-v0", "code", "make_humaneval_env",
            "HumanEval's 164 problems; check(candidate) runs apart from the candidate's code"),
    Listing("rlvr/RepoEdit-v0", "repo", "make_repo_edit_env",
            "Multi-turn tool use: fix a bug in a real Python repository (graded by its tests)"),
    Listing("rlvr/ReasoningGym-v0", "reasoning", "make_reasoning_gym_env",
            "Any reasoning-gym generator (dataset=NAME, config=, difficulty= its curriculum "
            "levels), strictly scored"),
    *(Listing(f"rlvr/RG-{suffix}-v0", "reasoning", "make_reasoning_gym_env",
              f"reasoning-gym's {name} generator, strictly scored", {"dataset": name})
      for name, suffix in REASONING_GYM_CURATED.items()),
)
