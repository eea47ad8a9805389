"""Math task family: procedural generators, GSM8K / MATH dataset sources, the math envs."""
