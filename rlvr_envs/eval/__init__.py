"""Evaluation runs, pass@k, the result store and leaderboards."""
