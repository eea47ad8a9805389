"""Small rows in the GSM8K and MATH schemas, written for these tests (not copies of the real
datasets), and writers for jsonl / parquet files of them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

GSM8K_ROWS = [
    {"question": "Ada has 3 bags with 14 apples each. She eats 5 apples. How many are left?",
     "answer": "She has 3*14=<<3*14=42>>42 apples.\nAfter eating, 42-5=<<42-5=37>>37 are left.\n"
               "#### 37"},
    {"question": "A club sells 1,200 tickets at $3 each. What is the revenue in dollars?",
     "answer": "Revenue is 1200*3=<<1200*3=3600>>3600 dollars.\n#### 3,600"},
    {"question": "Ben runs 4 km on Monday, twice as far on Tuesday and 3 km less on Wednesday "
                 "than on Tuesday. How many km does he run in total?",
     "answer": "Tuesday: 4*2=<<4*2=8>>8 km.\nWednesday: 8-3=<<8-3=5>>5 km.\n"
               "Total: 4+8+5=<<4+8+5=17>>17 km.\n#### 17"},
    {"question": "A rope of 10 m is cut into 4 equal pieces. How long is each piece in m?",
     "answer": "Each piece is ten divided by four.\nThat is two and a half metres.\n#### 2.5"},
]

MATH_ROWS = [
    {"problem": "Compute $\\frac{1}{2} + \\frac{1}{3}$.",
     "solution": "The sum is $\\frac{3}{6} + \\frac{2}{6} = \\boxed{\\frac{5}{6}}$.",
     "level": "Level 1", "type": "Prealgebra", "unique_id": "test/prealgebra/1.json"},
    {"problem": "Solve $x^2 = 9$ for the positive root.",
     "solution": "Maybe $\\boxed{-3}$? No: the positive root is $\\boxed{3}$.",
     "level": "Level 2", "type": "Algebra", "unique_id": "test/algebra/2.json"},
    {"problem": "What is the area of a circle of radius $3$?",
     "solution": "The area is $\\pi r^2 = \\fbox{9\\pi}$.",
     "level": "Level ?", "type": "Geometry", "unique_id": "test/geometry/3.json"},
    {"problem": "Find the ordered pair $(x, y)$ with $x + y = 3$ and $x - y = 1$.",
     "solution": "Adding gives $x = 2$, so $y = 1$: $\\boxed{(2, 1)}$.",
     "level": 4, "subject": "Algebra", "unique_id": "test/algebra/4.json"},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_parquet(path: Path, rows: list[dict]) -> Path:
    columns = sorted({k for r in rows for k in r})
    # a column must have one type: MATH's `level` mixes "Level 1" and 4 in the fixtures
    table = pa.table({c: [None if r.get(c) is None else str(r[c]) if c == "level" else r[c]
                          for r in rows] for c in columns})
    pq.write_table(table, path)
    return path
