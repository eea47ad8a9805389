"""PPO for language models with verifiable rewards, in one readable file (CleanRL style).

TRL's PPO needs a reward *model*; here the reward is the env's verifier. One update:

1. rollout: sample `samples_per_prompt` completions for `prompts_per_update` tasks;
2. score each completion with the env's scorer (the terminal reward);
3. per-token reward = -kl_coef * (log pi(a_t) - log pi_ref(a_t)), plus the score on the last token;
4. GAE (gamma, lam) over the completion tokens with the value head's estimates;
5. whiten the advantages; then `ppo_epochs` passes of minibatches with the clipped policy loss
   and the clipped value loss.

The policy is a causal LM with a linear value head on its last hidden state; the reference is
a frozen copy of the starting model. Checkpoints (`checkpoint-<update>/`: policy, value head,
optimizer) let an interrupted run resume at the next update with the same data it would have
seen (each update's sampling is seeded by `seed + update`).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from rlvr_envs.agents.generation import sample_chats
from rlvr_envs.agents.settings import PPOSettings, prepare_env_run
from rlvr_envs.curriculum import drop_zero_variance_groups, split_groups


class PolicyWithValue(nn.Module):
    """A causal LM plus a scalar value head on its last hidden state."""

    def __init__(self, policy: nn.Module):
        super().__init__()
        self.policy = policy
        hidden = policy.config.get_text_config().hidden_size
        self.value_head = nn.Linear(hidden, 1)
        nn.init.zeros_(self.value_head.weight)
        nn.init.zeros_(self.value_head.bias)
        self.value_head.to(next(policy.parameters()).device)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        out = self.policy(input_ids=input_ids, attention_mask=attention_mask,
                          output_hidden_states=True)
        last = out.hidden_states[-1].to(self.value_head.weight.dtype)
        return out.logits, self.value_head(last).squeeze(-1)


def token_logprobs(logits: torch.Tensor, input_ids: torch.Tensor,
                   temperature: float = 1.0) -> torch.Tensor:
    """log p(token_t | tokens_<t) for t >= 1 under softmax(logits / temperature), the
    distribution the rollout sampled from; position t-1's logits predict token t."""
    if temperature <= 0:
        raise ValueError(f"PPO needs a sampling temperature > 0, got {temperature}")
    logps = F.log_softmax(logits[:, :-1].float() / temperature, dim=-1)
    return logps.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


def masked_whiten(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mean = masked_mean(x, mask)
    var = masked_mean((x - mean) ** 2, mask)
    return (x - mean) * torch.rsqrt(var + 1e-8) * mask


def pack(samples: list[Any], pad_id: int, device: str):
    """Right-padded prompt+completion ids, attention mask, and the mask of completion tokens
    aligned with `token_logprobs` (index t-1 = token t)."""
    width = max(len(s.prompt_ids) + len(s.completion_ids) for s in samples)
    ids = torch.full((len(samples), width), pad_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    response = torch.zeros((len(samples), width - 1))
    for i, s in enumerate(samples):
        seq = s.prompt_ids + s.completion_ids
        ids[i, : len(seq)] = torch.tensor(seq)
        attention[i, : len(seq)] = 1
        response[i, len(s.prompt_ids) - 1 : len(seq) - 1] = 1
    return ids.to(device), attention.to(device), response.to(device)


def gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float,
        lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation over the masked (completion) positions of each row."""
    advantages = torch.zeros_like(rewards)
    last = torch.zeros(rewards.shape[0], device=rewards.device)
    next_value = torch.zeros_like(last)
    for t in reversed(range(rewards.shape[1])):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        last = torch.where(m > 0, delta + gamma * lam * last, last)
        advantages[:, t] = last * m
        next_value = torch.where(m > 0, values[:, t], next_value)
    return advantages, advantages + values


def save_checkpoint(path: Any, agent: PolicyWithValue, tokenizer: Any, optimizer: Any,
                    update: int) -> None:
    path.mkdir(parents=True, exist_ok=True)
    agent.policy.save_pretrained(path)
    tokenizer.save_pretrained(path)
    torch.save({"value_head": agent.value_head.state_dict(), "optimizer": optimizer.state_dict(),
                "update": update}, path / "ppo_state.pt")


def train_ppo(settings: PPOSettings) -> dict[str, Any]:
    from transformers import AutoModelForCausalLM

    from rlvr_envs.agents.data import task_rows
    from rlvr_envs.agents.evaluate import score_model
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer

    run, env, scorer, train, held_out = prepare_env_run(settings)
    train_rows = task_rows(env, train, env_id=settings.env_id)
    eval_rows = task_rows(env, held_out, env_id=settings.env_id)

    device_settings = DeviceSettings(settings.device, settings.dtype,
                                     settings.gradient_checkpointing)
    device = device_settings.resolved_device()
    reference, tokenizer = load_model_and_tokenizer(settings.model, device_settings)
    reference.eval().requires_grad_(False)
    last = run.last_checkpoint()
    start = 0
    if last is not None:  # resume: policy from the checkpoint, reference stays the start model
        policy = AutoModelForCausalLM.from_pretrained(
            last[1], dtype=device_settings.resolved_dtype()).to(device)
    else:
        policy = copy.deepcopy(reference).requires_grad_(True)
    if settings.gradient_checkpointing:
        policy.gradient_checkpointing_enable()
    agent = PolicyWithValue(policy)
    optimizer = torch.optim.AdamW(agent.parameters(), lr=settings.learning_rate)
    if last is not None:
        state = torch.load(last[1] / "ppo_state.pt", map_location=device)
        agent.value_head.load_state_dict(state["value_head"])
        optimizer.load_state_dict(state["optimizer"])
        start = int(state["update"])
    run.truncate_log(start)
    if eval_rows and "before" not in run.read_eval():
        run.write_eval({"before": score_model(
            reference, tokenizer, eval_rows, scorer,
            max_completion_length=settings.max_completion_length)})

    def checkpoint_if_due(update: int) -> None:
        if update % settings.save_steps == 0 or update == settings.total_updates:
            save_checkpoint(run.path / f"checkpoint-{update}", agent, tokenizer, optimizer, update)

    for update in range(start + 1, settings.total_updates + 1):
        # 1. rollout (seeded per update, so a resumed run sees the same prompts and samples)
        rng = random.Random(settings.seed * 1_000_003 + update)
        rows = [rng.choice(train_rows) for _ in range(settings.prompts_per_update)]
        torch.manual_seed(settings.seed * 1_000_003 + update)
        groups = sample_chats(agent.policy, tokenizer, [r.messages for r in rows],
                              n=settings.samples_per_prompt,
                              max_completion_length=settings.max_completion_length,
                              temperature=settings.temperature)
        samples = [s for g in groups for s in g]
        tasks = [r.task for r in rows for _ in range(settings.samples_per_prompt)]
        # 2. verifiable rewards
        rewards_all = [s.reward for s in scorer.score_batch(tasks, [s.text for s in samples])]
        # groups whose samples all scored the same carry no signal (DAPO dynamic sampling)
        kept = drop_zero_variance_groups(split_groups(rewards_all,
                                                      settings.samples_per_prompt)).kept
        zero_variance_frac = 1 - len(kept) / len(rows)
        record = {"step": update, "reward": sum(rewards_all) / len(rewards_all),
                  "completion_tokens": sum(len(s.completion_ids) for s in samples) / len(samples),
                  "zero_variance_frac": zero_variance_frac,
                  "skipped_frac": zero_variance_frac if settings.zero_variance_groups == "skip"
                  else 0.0}
        if settings.zero_variance_groups == "skip":
            rows_kept = [g * settings.samples_per_prompt + j for g in kept
                         for j in range(settings.samples_per_prompt)]
            samples = [samples[i] for i in rows_kept]
            rewards_all = [rewards_all[i] for i in rows_kept]
        if not samples:  # nothing to learn from: no optimiser step (Adam's momentum included)
            run.log(record)
            checkpoint_if_due(update)
            continue
        scores = torch.tensor(rewards_all, device=device)
        ids, attention, mask = pack(samples, tokenizer.pad_token_id, device)
        with torch.no_grad():
            logits, values = agent(ids, attention)
            # ratios and KL at the sampling temperature: the rollout policy is softmax(logits/T)
            old_logps = token_logprobs(logits, ids, settings.temperature)
            old_values = values[:, :-1].float()
            ref_logps = token_logprobs(reference(input_ids=ids, attention_mask=attention).logits,
                                       ids, settings.temperature)
            # 3. per-token rewards: KL penalty everywhere, the score on the last completion token
            kl = (old_logps - ref_logps) * mask
            rewards = -settings.kl_coef * kl
            last_index = mask.cumsum(1).argmax(1)
            rewards[torch.arange(len(samples)), last_index] += scores
            # 4. GAE, 5. whitening
            advantages, returns = gae(rewards, old_values * mask, mask, settings.gamma,
                                      settings.lam)
            if settings.whiten_advantages:
                advantages = masked_whiten(advantages, mask)

        stats: dict[str, list[float]] = {"pg_loss": [], "vf_loss": [], "clipfrac": [],
                                         "approx_kl": []}
        for _ in range(settings.ppo_epochs):
            order = torch.randperm(len(samples), device=device)
            for begin in range(0, len(samples), settings.minibatch_size):
                mb = order[begin:begin + settings.minibatch_size]
                logits, values = agent(ids[mb], attention[mb])
                new_logps = token_logprobs(logits, ids[mb], settings.temperature)
                new_values = values[:, :-1].float()
                m = mask[mb]
                log_ratio = new_logps - old_logps[mb]
                ratio = log_ratio.exp()
                adv = advantages[mb]
                pg_loss = masked_mean(torch.max(-adv * ratio, -adv * ratio.clamp(
                    1 - settings.clip_range, 1 + settings.clip_range)), m)
                v_clipped = old_values[mb] + (new_values - old_values[mb]).clamp(
                    -settings.clip_range_value, settings.clip_range_value)
                vf_loss = 0.5 * masked_mean(torch.max((new_values - returns[mb]) ** 2,
                                                      (v_clipped - returns[mb]) ** 2), m)
                loss = pg_loss + settings.vf_coef * vf_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), settings.max_grad_norm)
                optimizer.step()
                with torch.no_grad():
                    stats["pg_loss"].append(pg_loss.item())
                    stats["vf_loss"].append(vf_loss.item())
                    stats["clipfrac"].append(masked_mean(
                        ((ratio - 1).abs() > settings.clip_range).float(), m).item())
                    stats["approx_kl"].append(masked_mean((ratio - 1) - log_ratio, m).item())
        run.log({**record, "kl": (kl.sum(1)).mean().item(),
                 **{k: sum(v) / len(v) for k, v in stats.items()}})
        checkpoint_if_due(update)

    save_checkpoint(run.final_path, agent, tokenizer, optimizer, settings.total_updates)
    if eval_rows:
        run.write_eval({"after": score_model(
            agent.policy, tokenizer, eval_rows, scorer,
            max_completion_length=settings.max_completion_length)})
    return {"run_dir": str(run.path), "steps": settings.total_updates, "resumed": start > 0,
            "eval": run.read_eval()}
