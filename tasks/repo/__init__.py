"""Repository-editing task family (rlvr/RepoEdit-v0): tasks, history-safe workspaces,
grading by the project's own tests, bug synthesis from real packages, SWE-bench import."""
