"""rlvr-envs: Gymnasium environments with verifiable rewards for language-model RL.

`import rlvr_envs` registers every env id with gymnasium, so `gym.make("rlvr/Math-v0")`
works (or `gym.make("rlvr_envs:rlvr/Math-v0")` without the import). A family's modules (and
sympy) load when one of its envs is made.
"""

from __future__ import annotations

from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.task import Difficulty, Task
from rlvr_envs.registry import list_envs, make, register_catalogue, scorer_for

__version__ = "0.1.0"
__all__ = ["Difficulty", "Score", "Scorer", "Task", "list_envs", "make", "scorer_for",
           "__version__"]

register_catalogue()
