"""Prompts of the code envs: the system prompt and how each task is put to the model."""

from __future__ import annotations

CODE_SYSTEM_PROMPT = ("You are an expert Python programmer. Solve the task. Put your complete "
                      "solution in a single ```python fenced code block.")


def function_prompt(description: str, signature: str) -> str:
    return (f"{description.strip()}\n\nWrite the Python function `{signature}`. "
            f"Give the whole function (with any imports it needs) in a ```python fenced block.")


def completion_prompt(code_prefix: str) -> str:
    return ("Complete the following Python function. Give the whole function (with any imports "
            f"it needs) in a ```python fenced block.\n\n```python\n{code_prefix.rstrip()}\n```")


def stdio_prompt(statement: str) -> str:
    return (f"{statement.strip()}\n\nWrite a complete Python 3 program that reads the input "
            f"from standard input and prints the answer to standard output. Give it in a "
            f"```python fenced block.")
