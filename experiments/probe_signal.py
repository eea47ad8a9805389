"""Does a model give a trainer signal on the experiments' env? Samples `--samples` completions
for each of `--prompts` tasks of rlvr/Arithmetic-v0 (its own prompts, batched generation) and
prints, per sampling setting, how often the model writes `\\boxed{}`, how often the env's scorer
marks it correct, how many prompts have at least one correct sample (groups with reward variance
for GRPO, kept samples for expert iteration) and the generation speed in tokens/s.

Run: .venv/bin/python experiments/probe_signal.py --model smollm2-135m --setting 1.0:96 0:48
(each setting is TEMPERATURE:MAX_COMPLETION_LENGTH; temperature 0: greedy, one sample a prompt)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


def main() -> None:
    p = common.parser(__doc__.splitlines()[0], "probe")
    p.add_argument("--prompts", type=int, default=16)
    p.add_argument("--samples", type=int, default=4, help="samples per prompt (sampled settings)")
    p.add_argument("--setting", nargs="+", default=["1.0:96", "0:48"],
                   help="TEMPERATURE:MAX_COMPLETION_LENGTH, one run each")
    p.add_argument("--task-seed", type=int, default=123, help="reset seed of the first task")
    args = p.parse_args()
    from rlvr_envs.agents.data import collect_tasks, env_scorer, task_rows
    from rlvr_envs.agents.generation import sample_chats
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer

    import rlvr_envs

    env_kwargs = json.loads(args.env_kwargs)
    env = rlvr_envs.make(common.ENV_ID, **env_kwargs)
    scorer = env_scorer(env, common.ENV_ID)
    rows = task_rows(env, collect_tasks(env, args.prompts, seed=args.task_seed,
                                        env_id=common.ENV_ID), env_id=common.ENV_ID)
    start = common.start_model(args.model, Path(args.out), env_kwargs, args.seeds[0],
                               train_tasks=args.prompts, eval_tasks=0,
                               warmup_epochs=args.tiny_warmup_epochs)
    model, tokenizer = load_model_and_tokenizer(start, DeviceSettings(args.device))
    for setting in args.setting:
        temperature, length = float(setting.split(":")[0]), int(setting.split(":")[1])
        n = 1 if temperature == 0 else args.samples
        started = time.time()
        groups = sample_chats(model, tokenizer, [r.messages for r in rows], n=n,
                              max_completion_length=length, temperature=temperature)
        seconds = time.time() - started
        texts = [[s.text for s in g] for g in groups]
        correct = [[bool(s.correct) for s in scorer.score_batch([r.task] * len(t), t)]
                   for r, t in zip(rows, texts)]
        samples = sum(len(t) for t in texts)
        tokens = sum(len(s.completion_ids) for g in groups for s in g)
        print(json.dumps({
            "model": args.model, "temperature": temperature, "max_completion_length": length,
            "prompts": len(rows), "samples": samples,
            "boxed": sum("\\boxed{" in x for t in texts for x in t),
            "correct": sum(map(sum, correct)),
            "prompts_with_a_correct_sample": sum(any(c) for c in correct),
            "stopped_before_cap": sum(s.finish_reason == "stop" for g in groups for s in g),
            "tokens": tokens, "seconds": round(seconds, 1),
            "tokens_per_s": round(tokens / seconds, 1)}), flush=True)


if __name__ == "__main__":
    main()
