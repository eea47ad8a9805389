"""Task records, task sources, the text envs and their spaces."""
