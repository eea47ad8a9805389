"""Task families: generators and dataset loaders (installed as rlvr_envs.tasks)."""
