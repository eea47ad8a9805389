"""Reading code out of a model's completion.

Only the answer section counts (after the last `</think>`, `rlvr_envs.verify.sections`: code
left in the reasoning is a draft, not an answer), and inside it the last `<answer>` tags when
they hold code. There: the ```python fenced blocks (else the unlabelled ones); the last one
that defines the function under test when the task names it (models often follow their
solution with a block of example calls or asserts), with the definitions it uses from the
completion's other blocks (a helper or an import given in a block of its own); else (a stdin
program) the last block that reads as code rather than sample input or output; without
fences, the whole text when it is Python. Prose without code → None.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
import types
import warnings
from typing import Iterable

from rlvr_envs.verify.sections import ANSWER_CLOSE, ANSWER_OPEN, split_reasoning

#: a fenced block: ``` or ~~~ (indented in a list too), its info string (a language, maybe a
#: file name after it), its body up to the same fence at the start of a line (a fence inside
#: a string literal of the code does not close it) or the end of the text
_FENCE = re.compile(r"(```|~~~)[ \t]*([^\n`]*)\n(.*?)(?:^[ \t]*\1|\Z)", re.S | re.M)
_PY_LABEL = re.compile(r"(python|py)[0-9.]*")
_CODE_HINTS = re.compile(r"^[ \t]*(def |class |import |from \S+ import |return\b|print\(|for |while |if )",
                         re.M)


_ANSWER_TAG = re.compile(re.escape(ANSWER_OPEN) + r"(.*?)(?:" + re.escape(ANSWER_CLOSE) + r"|\Z)", re.S)
#: statements another block may lend the chosen one: what they define, nothing they run
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def extract_code(completion: str, entry: Iterable[str] = ()) -> str | None:
    """The code in `completion`, or None when it holds none. `entry`: the names of the
    function(s) the tests call, when the task has them (the block defining one is chosen)."""
    if not completion or not completion.strip():
        return None
    text = split_reasoning(completion.replace("\r\n", "\n")).answer
    tagged = [body for body in _ANSWER_TAG.findall(text) if body.strip()]
    code = _code_in(tagged[-1], set(entry)) if tagged else None
    return code if code is not None else _code_in(text, set(entry))


def _code_in(text: str, entry: set[str]) -> str | None:
    if not text.strip():
        return None
    blocks = [(_label(info), textwrap.dedent(body)) for _, info, body in _FENCE.findall(text)]
    labelled = [body for label, body in blocks if _PY_LABEL.fullmatch(label) and body.strip()]
    bare = [body for label, body in blocks if not label and body.strip()]
    for bodies in (labelled, bare):
        if bodies:
            return _choose_block(bodies, entry)
    if blocks:
        return None  # only fences of other languages
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text if _CODE_HINTS.search(text) else None
    return text if _CODE_HINTS.search(text) or "=" in text else None


def _label(info: str) -> str:
    """A fence's language: the first word of its info string (```python main.py)."""
    words = info.split()
    return words[0].lower().strip("{}.") if words else ""


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defines(node: ast.stmt) -> set[str]:
    """The top-level names a definition or import binds."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names
                if alias.name != "*"}
    return {node.name}


def _defined(tree: ast.Module, imports: bool = True) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not imports:
            continue
        if isinstance(node, _DEFINITIONS):
            names |= _defines(node)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _used(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _segment(code: str, node: ast.stmt) -> str:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(code.splitlines()[first - 1:node.end_lineno])


def _choose_block(bodies: list[str], entry: set[str]) -> str:
    """The last block defining one of `entry`, preceded by the definitions it uses that only
    other blocks give (the last of each name); when none defines one, the last block that
    reads as code (else the last block)."""
    if len(bodies) == 1:  # nothing to choose between (most completions): no parse
        return bodies[0]
    trees = [_parse(body) for body in bodies]
    # a block that defines the function itself before one that only imports it (a block of
    # tests after the solution starts `from solution import f`)
    chosen = next((i for imports in (False, True) for i in reversed(range(len(bodies)))
                   if entry and trees[i] is not None and entry & _defined(trees[i], imports)),
                  None)
    if chosen is None:  # a program (stdio) or no block defines the function: the last block
        # that reads as code, not a block of sample input or output after it
        return next((body for body in reversed(bodies) if _CODE_HINTS.search(body)), bodies[-1])
    lenders: dict[str, tuple[int, ast.stmt]] = {}
    for index, tree in enumerate(trees):
        if index == chosen or tree is None:
            continue
        for node in tree.body:
            if isinstance(node, _DEFINITIONS):
                for name in _defines(node):
                    lenders[name] = (index, node)
    have = _defined(trees[chosen])
    wanted, taken = _used(trees[chosen]) - have, []
    while wanted:
        name = wanted.pop()
        lender = lenders.get(name)
        if lender is None or lender in taken:
            continue
        taken.append(lender)
        have |= _defines(lender[1])
        wanted |= _used(lender[1]) - have
    if not taken:
        return bodies[chosen]
    taken.sort(key=lambda item: (item[0], item[1].lineno))
    borrowed = "\n".join(_segment(bodies[index], node) for index, node in taken)
    return borrowed + "\n\n" + bodies[chosen]


def future_imports_first(program: str) -> str:
    """`program` with its `from __future__` imports moved to the top, where Python requires
    them (a solution that starts with one, put after a task's prompt or a lent helper)."""
    if "__future__" not in program:
        return program
    tree = _parse(program)
    if tree is None:
        return program
    futures = [node for node in tree.body
               if isinstance(node, ast.ImportFrom) and node.module == "__future__"]
    if not futures:
        return program
    lines = program.splitlines()
    moved = {i for node in futures for i in range(node.lineno - 1, node.end_lineno)}
    return "\n".join([lines[i] for i in sorted(moved)] +
                     [line for i, line in enumerate(lines) if i not in moved]) + "\n"


#: the file name of a candidate's code compiled here (`compile_solution`)
SOLUTION_FILENAME = "<solution>"
# what the compiler says about a candidate's code ("is" with a literal, ...) is no business
# of the grading process's stderr
warnings.filterwarnings("ignore", module=re.escape(SOLUTION_FILENAME))


#: longer code is compiled again each time instead of being kept (64 entries at most)
CACHED_CODE_CHARS = 1 << 18


def compile_solution(code: str) -> tuple[types.CodeType | None, str | None]:
    """`code` compiled in the grader's process, where nothing of it runs: (the code object,
    None), or (None, the error message). A fork-server candidate receives this code object
    (marshal) instead of compiling the same source again."""
    return (_compile_cached if len(code) <= CACHED_CODE_CHARS else _compile)(code)


def _compile(code: str) -> tuple[types.CodeType | None, str | None]:
    try:
        return compile(code, SOLUTION_FILENAME, "exec", dont_inherit=True), None
    except SyntaxError as err:
        return None, f"SyntaxError: {err.msg} (line {err.lineno})"
    except (ValueError, RecursionError, MemoryError, OverflowError) as err:
        return None, f"{type(err).__name__}: {err}"


_compile_cached = functools.lru_cache(maxsize=64)(_compile)


def syntax_error(code: str) -> str | None:
    """None when `code` compiles, else the error message (compiled in the grader's process,
    before anything runs)."""
    return compile_solution(code)[1]
