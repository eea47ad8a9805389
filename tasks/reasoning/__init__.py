"""reasoning-gym's procedural generators under this project's contract (rlvr/ReasoningGym-v0)."""
