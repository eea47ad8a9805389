"""Where untrusted code runs: local processes (rlimits, bubblewrap) and Docker."""
