"""AST mutations that inject a bug into Python source with a minimal textual edit.

Operators: flipped comparison (`<` → `<=`, `==` → `!=`, ...), off-by-one (an integer literal
±1), wrong operator (`+` ↔ `-`, `*` ↔ `//`..., `and` ↔ `or`, `+=` ↔ `-=`), dropped statement
(a one-line statement in a function body with other statements), swapped arguments (two
positional arguments of a call), wrong default (a parameter default changed), removed branch
(an `if` block without `else`, dropped whole), removed body (a short function's body replaced
by `raise NotImplementedError`: the task is to re-implement it).

The AST finds the sites; the edit replaces only the characters of the operator, literal or
argument involved (never re-formats the file), so the gold patch is the one line a human
would fix. Only code inside functions is mutated (module-level changes break imports).
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from typing import Iterator

OPERATORS = ("flipped_comparison", "off_by_one", "wrong_operator", "dropped_statement",
             "swapped_arguments", "wrong_default", "removed_branch", "removed_body")
#: bodies longer than this (lines) are not removed: re-implementing them is no longer a bug fix
MAX_REMOVED_BODY_LINES = 8
MAX_REMOVED_BRANCH_LINES = 6

_COMPARE_FLIP = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=",
                 ast.NotEq: "==", ast.Is: "is not", ast.IsNot: "is", ast.In: "not in",
                 ast.NotIn: "in"}
_COMPARE_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
                 ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
                 ast.NotIn: "not in"}
_BINOP_SWAP = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "//"),
               ast.FloorDiv: ("//", "*"), ast.Div: ("/", "*"), ast.Mod: ("%", "//"),
               ast.BitAnd: ("&", "|"), ast.BitOr: ("|", "&")}
_AUG_SWAP = {ast.Add: ("+=", "-="), ast.Sub: ("-=", "+="), ast.Mult: ("*=", "//=")}


@dataclass(frozen=True)
class Mutation:
    """One edit: replace source[start:end] (absolute offsets) with `replacement`."""

    operator: str
    file: str
    line: int
    start: int
    end: int
    original: str
    replacement: str

    def apply(self, source: str) -> str:
        return source[:self.start] + self.replacement + source[self.end:]


class _Offsets:
    def __init__(self, source: str):
        self.starts = [0]
        for line in source.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.source = source
        # ast columns are UTF-8 byte offsets; convert per line
        self.lines = source.splitlines(keepends=True)

    def at(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))

    def start(self, node: ast.AST) -> int:
        return self.at(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.at(node.end_lineno, node.end_col_offset)


def _in_functions(tree: ast.Module) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in node.body:
                yield from ast.walk(stmt)


def _gap_edit(off: _Offsets, left: ast.AST, right: ast.AST, old: str, new: str
              ) -> tuple[int, int, str, str] | None:
    """Replace the operator text `old` that sits between two operands."""
    a, b = off.end(left), off.start(right)
    gap = off.source[a:b]
    index = gap.find(f" {old} ") if f" {old} " in gap else gap.find(old)
    if index < 0 or gap.count(old) != 1 or "#" in gap:
        return None
    if f" {old} " in gap:
        index += 1
    return a + index, a + index + len(old), old, new


def find_mutations(source: str, file: str) -> list[Mutation]:
    """Every mutation site in `source` (deduplicated, in source order)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    off = _Offsets(source)
    found: list[Mutation] = []

    def add(op: str, node: ast.AST, edit: tuple[int, int, str, str] | None) -> None:
        if edit is not None and edit[2] != edit[3]:
            found.append(Mutation(op, file, node.lineno, *edit))

    for node in _in_functions(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = type(node.ops[0])
            if op in _COMPARE_FLIP:
                add("flipped_comparison", node, _gap_edit(off, node.left, node.comparators[0],
                                                          _COMPARE_TEXT[op], _COMPARE_FLIP[op]))
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP:
            old, new = _BINOP_SWAP[type(node.op)]
            if not (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
                add("wrong_operator", node, _gap_edit(off, node.left, node.right, old, new))
        elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            add("wrong_operator", node, _gap_edit(off, node.values[0], node.values[1], old, new))
        elif isinstance(node, ast.AugAssign) and type(node.op) in _AUG_SWAP:
            old, new = _AUG_SWAP[type(node.op)]
            add("wrong_operator", node, _gap_edit(off, node.target, node.value, old, new))
        elif (isinstance(node, ast.Constant) and type(node.value) is int
              and 0 <= node.value <= 10 and node.lineno == node.end_lineno):
            text = source[off.start(node):off.end(node)]
            if text.isdigit():
                new = str(node.value + 1 if node.value == 0 else node.value - 1)
                add("off_by_one", node, (off.start(node), off.end(node), text, new))
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and not node.keywords:
            a, b = node.args[0], node.args[1]
            if all(isinstance(x, (ast.Name, ast.Constant, ast.Attribute)) for x in (a, b)):
                ta = source[off.start(a):off.end(a)]
                tb = source[off.start(b):off.end(b)]
                between = source[off.end(a):off.start(b)]
                if ta != tb and between.strip() == ",":
                    add("swapped_arguments", node,
                        (off.start(a), off.end(b), ta + between + tb, tb + between + ta))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [s for s in node.body
                    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) >= 2:
                for stmt in body[:-1]:
                    if (isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr))
                            and stmt.lineno == stmt.end_lineno):
                        line_start = off.starts[stmt.lineno - 1]
                        line_end = off.starts[stmt.lineno]
                        text = source[line_start:line_end]
                        if text.strip() and ";" not in text:
                            add("dropped_statement", stmt, (line_start, line_end, text, ""))
            _removed_body(off, source, node, body, add)
            for block in _blocks(node):
                _removed_branches(off, source, block, add)
            args = node.args
            positional = args.posonlyargs + args.args
            for _arg, default in zip(positional[len(positional) - len(args.defaults):],
                                    args.defaults):
                _wrong_default(off, source, node, default, add)
            for default in args.kw_defaults:
                if default is not None:
                    _wrong_default(off, source, node, default, add)
    seen, unique = set(), []
    for m in sorted(found, key=lambda m: (m.start, m.operator)):
        if (m.start, m.end, m.replacement) not in seen:
            seen.add((m.start, m.end, m.replacement))
            unique.append(m)
    return unique


def _blocks(func: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list inside a function (its body, loop and branch bodies...)."""
    for node in ast.walk(func):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _line_span(off: _Offsets, first: ast.stmt, last: ast.stmt) -> tuple[int, int]:
    return off.starts[first.lineno - 1], off.starts[min(last.end_lineno, len(off.lines))]


def _removed_branches(off: _Offsets, source: str, block: list[ast.stmt], add) -> None:
    """An `if` without `else` that is not its block's only statement, dropped whole."""
    if len(block) < 2:
        return
    for stmt in block:
        if (isinstance(stmt, ast.If) and not stmt.orelse
                and stmt.end_lineno - stmt.lineno + 1 <= MAX_REMOVED_BRANCH_LINES):
            start, end = _line_span(off, stmt, stmt)
            text = source[start:end]
            if source[off.start(stmt) - stmt.col_offset:off.start(stmt)].strip() == "":
                add("removed_branch", stmt, (start, end, text, ""))


def _removed_body(off: _Offsets, source: str, func: ast.AST, body: list[ast.stmt], add) -> None:
    """A short function body (docstring kept) replaced by `raise NotImplementedError`."""
    if not body or body[0].lineno == func.lineno:  # one-line `def f(): ...`
        return
    lines = body[-1].end_lineno - body[0].lineno + 1
    if not 2 <= lines <= MAX_REMOVED_BODY_LINES or any(
            isinstance(n, (ast.Yield, ast.YieldFrom)) for s in body for n in ast.walk(s)):
        return  # a generator with its yields removed is no longer a generator
    start, end = _line_span(off, body[0], body[-1])
    indent = source[start:off.start(body[0])]
    if indent.strip():
        return
    add("removed_body", body[0], (start, end, source[start:end],
                                  f"{indent}raise NotImplementedError\n"))


def _wrong_default(off: _Offsets, source: str, func: ast.AST, default: ast.AST, add) -> None:
    if not isinstance(default, ast.Constant) or default.lineno != default.end_lineno:
        return
    text = source[off.start(default):off.end(default)]
    value = default.value
    if isinstance(value, bool):
        new = "False" if value else "True"
    elif type(value) is int:
        new = str(value + 1 if value <= 0 else value - 1)
    elif value is None:
        return
    else:
        return
    if text in ("True", "False") or text.lstrip("-").isdigit():
        add("wrong_default", default, (off.start(default), off.end(default), text, new))


def sample_mutations(mutations: list[Mutation], k: int, rng: random.Random) -> list[Mutation]:
    """Up to `k` mutations, spread over operators (round-robin over a shuffled order)."""
    by_op: dict[str, list[Mutation]] = {}
    for m in mutations:
        by_op.setdefault(m.operator, []).append(m)
    for group in by_op.values():
        rng.shuffle(group)
    order = sorted(by_op)
    rng.shuffle(order)
    picked: list[Mutation] = []
    while len(picked) < k and any(by_op.values()):
        for op in order:
            if by_op[op] and len(picked) < k:
                picked.append(by_op[op].pop())
    return picked
