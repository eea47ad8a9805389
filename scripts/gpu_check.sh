#!/usr/bin/env bash
# GPU check: a short GRPO run on the embedded SmolLM2-135M (bf16 on CUDA), printing generation
# and training tokens/s and peak GPU memory; then, unless EXPERIMENTS=0, the four experiments of
# docs/experiments.md at a larger scale than on CPU (SmolLM2-135M, 2 seeds; experiments 2-4
# start from experiment 1's expert-iteration checkpoint). Results land in experiments/results/.
# Usage: scripts/gpu_check.sh [STEPS]   (run from the repository root, with the `train` and
# `experiments` extras)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
STEPS=${1:-8}
OUT=$(mktemp -d)/gpu-check
export TRL_EXPERIMENTAL_SILENCE=1
"$PY" - "$STEPS" "$OUT" <<'PY'
import json, sys, time
import torch
if not torch.cuda.is_available():
    sys.exit("gpu_check: CUDA is not available (torch %s); nothing to check" % torch.__version__)
from transformers import TrainerCallback
import rlvr_envs
from rlvr_envs.agents.grpo import GRPOSettings, train_grpo
from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer
from rlvr_envs.agents.generation import sample_chats

steps, out = int(sys.argv[1]), sys.argv[2]
print("device:", torch.cuda.get_device_name(0))
model, tok = load_model_and_tokenizer("smollm2-135m", DeviceSettings("cuda", "bfloat16"))
env = rlvr_envs.make("rlvr/Arithmetic-v0", difficulty=1)
chats = [env.reset(seed=i)[1]["messages"] for i in range(32)]
sample_chats(model, tok, chats[:2], n=1, max_completion_length=8)  # warm-up
torch.cuda.synchronize(); t = time.time()
groups = sample_chats(model, tok, chats, n=8, max_completion_length=128, batch_size=32)
torch.cuda.synchronize(); gen_s = time.time() - t
gen_tokens = sum(len(s.completion_ids) for g in groups for s in g)
print(f"generation: {gen_tokens} tokens in {gen_s:.2f} s = {gen_tokens / gen_s:.0f} tokens/s "
      f"(32 prompts x 8 samples, up to 128 new tokens, bf16)")
del model
torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()

class Timer(TrainerCallback):
    def __init__(self): self.start = None; self.times = []
    def on_step_begin(self, args, state, control, **kw): self.start = time.time()
    def on_step_end(self, args, state, control, **kw): self.times.append(time.time() - self.start)

timer = Timer()
settings = GRPOSettings(env_id="rlvr/Arithmetic-v0", env_kwargs={"difficulty": 1},
                        model="smollm2-135m", output_dir=out, train_tasks=64, eval_tasks=0,
                        max_steps=steps, prompts_per_step=8, num_generations=8,
                        max_completion_length=128, learning_rate=1e-6, save_steps=steps,
                        device="cuda", dtype="bfloat16")
t = time.time()
train_grpo(settings, extra_callbacks=[timer])
wall = time.time() - t
log = [json.loads(l) for l in open(out + "/log.jsonl")]
tokens = log[-1]["num_tokens"] if "num_tokens" in log[-1] else float("nan")
steady = timer.times[1:] or timer.times
print(f"GRPO: {steps} steps in {wall:.1f} s; median step {sorted(steady)[len(steady)//2]:.2f} s; "
      f"{tokens / sum(timer.times):.0f} tokens/s (prompt + completion, generation + update)")
print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
PY

[ "${EXPERIMENTS:-1}" = "0" ] && exit 0
R=experiments/results/gpu
"$PY" experiments/exp1_sft_then_rl.py --model smollm2-135m --seeds 0 1 --device cuda \
    --train-tasks 128 --eval-tasks 64 --ei-rounds 2 --samples-per-task 8 --grpo-steps 40 \
    --out $R/exp1_sft_then_rl
START=$R/exp1_sft_then_rl/ei-s0/final
for EXP in exp2_length_normalisation exp3_kimi_length_penalty exp4_difficulty_filtering; do
    "$PY" experiments/$EXP.py --model "$START" --seeds 0 1 --device cuda --steps 60 \
        --max-completion-length 256 --out $R/$EXP
done
