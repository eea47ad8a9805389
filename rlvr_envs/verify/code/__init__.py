"""Code grading: candidate code in a sandboxed process, tests elsewhere, plain data between.

`wire` is the tagged-JSON codec, `candidate_server` / `test_driver` are the scripts that run
inside sandboxes, `grader` the host side, `extract` reads code out of a completion.
"""
