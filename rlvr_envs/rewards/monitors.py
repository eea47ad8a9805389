"""Reward-hacking monitors: per-episode flags, running counters for logging, and the
`HackingMonitor` wrapper that puts the flags in `info["hacking"]` on any single-turn env.

Flags (all booleans, in `info["hacking"]`):
- answer_in_reasoning_only: an answer appears inside the think block but none in the answer
  section (both read by `rlvr_envs.verify.math.extract`, the verifier's reader: boxes and
  `\\fbox`, `<answer>` tags, "the answer is", `####`; the answer section follows the last
  `</think>`);
- several_answers: more than one distinct final answer, or one that hedges ("3 or 4");
- degenerate_repetition: the text is a loop (zlib compresses it below `repetition_ratio` of its
  size, or one line repeats `repeated_lines` times in a row);
- length_at_cap: the completion reached the generation cap (its length >= `max_length`, or the
  policy said it stopped for length);
- language_switch: letters from two writing systems (e.g. Latin and CJK), each with at least
  `script_share` of the letters; Greek is ignored (it is maths notation).
"""

from __future__ import annotations

import threading
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from rlvr_envs.verify.math.extract import read_answers, split_reasoning
from rlvr_envs.verify.math.verdict import HEDGED

FLAGS = ("answer_in_reasoning_only", "several_answers", "degenerate_repetition", "length_at_cap",
         "language_switch")
_HEDGES = (" or ", "\\text{ or }", "\\text{or}", "\\lor", " and/or ")


@dataclass(frozen=True)
class MonitorConfig:
    max_length: int | None = None
    repetition_ratio: float = 0.12
    repetition_min_chars: int = 200
    repeated_lines: int = 6
    script_share: float = 0.15
    script_min_letters: int = 8


def _answers(section: str) -> tuple[tuple[str, ...], bool]:
    """The distinct final answers of a section as the verifier reads them, and whether the
    reader refused them as a hedge (box spam)."""
    found = read_answers(section)
    return found.answers, found.reason == HEDGED


def _degenerate(text: str, config: MonitorConfig) -> bool:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    run = best = 0
    for prev, cur in zip([None] + lines, lines):
        run = run + 1 if cur == prev else 1
        best = max(best, run)
    if best >= config.repeated_lines:
        return True
    raw = text.encode("utf-8")
    if len(raw) < config.repetition_min_chars:
        return False
    return len(zlib.compress(raw, 6)) / len(raw) < config.repetition_ratio


def _script(ch: str) -> str | None:
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    if not name:
        return None
    script = name.split()[0]
    if script in ("CJK", "HIRAGANA", "KATAKANA"):
        return "CJK"
    if script in ("GREEK", "MATHEMATICAL"):
        return None
    return script


def _language_switch(text: str, config: MonitorConfig) -> bool:
    scripts = Counter(s for s in map(_script, text) if s is not None)
    total = sum(scripts.values())
    if total == 0:
        return False
    big = [s for s, n in scripts.items()
           if n >= config.script_min_letters and n / total >= config.script_share]
    return len(big) >= 2


def hacking_flags(completion: str, *, max_length: int | None = None, length: int | None = None,
                  finish_reason: str | None = None, config: MonitorConfig | None = None
                  ) -> dict[str, bool]:
    """The monitor flags for one completion. `length` is its measured length (tokens or
    characters, same unit as `max_length`; characters when omitted)."""
    config = config or MonitorConfig(max_length=max_length)
    cap = max_length if max_length is not None else config.max_length
    sections = split_reasoning(completion)
    final, spammed = _answers(sections.answer)
    in_reasoning = _answers(sections.reasoning)[0] if sections.has_think_block else ()
    measured = len(completion) if length is None else length
    return {
        "answer_in_reasoning_only": bool(in_reasoning) and not final,
        "several_answers": spammed or len(final) > 1 or any(h in a for a in final for h in _HEDGES),
        "degenerate_repetition": _degenerate(completion, config),
        "length_at_cap": finish_reason == "length" or (cap is not None and measured >= cap),
        "language_switch": _language_switch(completion, config),
    }


class HackingCounters:
    """Running counts of each flag over the episodes seen (thread-safe). `as_dict()` gives
    `{"hacking/<flag>": count, "hacking/<flag>_rate": rate, "hacking/episodes": n}` for a logger."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.episodes = 0
        self.counts: Counter[str] = Counter({flag: 0 for flag in FLAGS})

    def __getstate__(self) -> dict[str, Any]:  # the lock stays behind; a copy gets its own
        return {k: v for k, v in vars(self).items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._lock = threading.Lock()

    def update(self, flags: Mapping[str, bool]) -> None:
        with self._lock:
            self.episodes += 1
            for flag, raised in flags.items():
                self.counts[flag] += bool(raised)

    def update_many(self, many: Iterable[Mapping[str, bool]]) -> None:
        for flags in many:
            self.update(flags)

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {"hacking/episodes": self.episodes}
            for flag, count in self.counts.items():
                out[f"hacking/{flag}"] = count
                out[f"hacking/{flag}_rate"] = count / self.episodes if self.episodes else 0.0
            return out

    def reset(self) -> None:
        with self._lock:
            self.episodes = 0
            self.counts = Counter({flag: 0 for flag in FLAGS})


class HackingMonitor(gym.Wrapper):
    """Per-episode hacking flags in `info["hacking"]` and `counters` for logging. When the env's
    scorer already computes the flags (a shaped env made with `monitors=True`) they are reused,
    not recomputed."""

    def __init__(self, env: gym.Env, *, max_length: int | None = None,
                 config: MonitorConfig | None = None):
        super().__init__(env)
        self.config = config or MonitorConfig(max_length=max_length)
        self.counters = HackingCounters()

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "hacking" not in info:
            info["hacking"] = hacking_flags(action, length=info.get("length"), config=self.config)
        self.counters.update(info["hacking"])
        return obs, reward, terminated, truncated, info
