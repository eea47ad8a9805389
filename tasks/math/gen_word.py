"""Procedural templated word problems: a story of `level` events changing a count.

Events add, remove, multiply (boxes of n), or split evenly; from level 3 the story may end by
selling everything at a price. Counts never go below one and divisions are always exact, so
the gold is a positive integer (computed with sympy along the story).
"""

from __future__ import annotations

import random

import sympy as sp

from rlvr_envs.core.sources import Generated
from rlvr_envs.tasks.math.formatting import digits
from rlvr_envs.tasks.math.levels import check_level

NAMES = ("Maya", "Omar", "Lena", "Ravi", "Sofia", "Kenji", "Amara", "Tomas", "Ines", "Yusuf")
ITEMS = (("marble", "marbles"), ("sticker", "stickers"), ("apple", "apples"),
         ("book", "books"), ("stamp", "stamps"), ("pencil", "pencils"), ("coin", "coins"),
         ("shell", "shells"), ("card", "cards"), ("bead", "beads"))
CONTAINERS = ("boxes", "bags", "packs", "jars", "crates")


def _number(rng: random.Random, n_digits: int, low: int = 2) -> int:
    return rng.randint(max(low, 10 ** (n_digits - 1)), 10**n_digits - 1)


def word_problem(rng: random.Random, level: int) -> Generated:
    """A count story with `level` events (plus a final sale from level 3, 50% of the time);
    numbers have 1 + level//3 digits."""
    check_level(level, "word_problem")
    n_digits = 1 + level // 3
    name, friend = rng.sample(NAMES, 2)
    item, items = rng.choice(ITEMS)
    count = sp.Integer(_number(rng, n_digits + 1))
    sentences = [f"{name} has {count} {items}."]
    numbers = [int(count)]
    steps = 0
    for _ in range(level):
        divisors = [k for k in range(2, 10) if count % k == 0]
        kinds = ["buy", "give", "boxes"] + (["split"] if divisors and level >= 2 else [])
        kind = rng.choice(kinds if count > 1 else ["buy", "boxes"])
        if kind == "buy":
            k = _number(rng, n_digits, low=1)
            count += k
            sentences.append(f"{name} buys {k} more {item if k == 1 else items}.")
        elif kind == "give":
            k = rng.randint(1, int(count) - 1)
            count -= k
            sentences.append(f"{name} gives {k} {item if k == 1 else items} to {friend}.")
        elif kind == "boxes":
            n_boxes, per_box = rng.randint(2, 1 + 2 * n_digits), _number(rng, n_digits)
            count += n_boxes * per_box
            sentences.append(f"{name} then gets {n_boxes} {rng.choice(CONTAINERS)} with "
                             f"{per_box} {items} in each.")
            numbers.append(per_box)
            steps += 1  # the multiplication, on top of the addition counted below
            k = n_boxes
        else:
            k = rng.choice(divisors)
            count /= k
            sentences.append(f"{name} shares the {items} equally among {k} people, "
                             f"{name} included, and keeps one share.")
        numbers.append(k)
        steps += 1
    if level >= 3 and rng.random() < 0.5:
        price = _number(rng, max(1, n_digits - 1))
        count *= price
        numbers.append(price)
        steps += 1
        question = (f"{name} sells every {item} for {price} dollars each. How many dollars "
                    f"does {name} get?")
    else:
        question = f"How many {items} does {name} have now?"
    prompt = " ".join(sentences) + " " + question
    return Generated(prompt=prompt, answer=str(int(count)),
                     metadata={"steps": steps, "max_digits": max(digits(n) for n in numbers)})
