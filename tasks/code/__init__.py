"""Code tasks: HumanEval, MBPP-schema, stdin/stdout (APPS / CodeContests) and procedural
functions, scored by running the completion in a sandbox (`rlvr_envs.sandbox`)."""
