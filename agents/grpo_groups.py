"""DAPO dynamic sampling inside TRL's GRPOTrainer: groups whose completions all got the same
reward have zero advantage, yet TRL still counts their tokens (or rows) in the loss's
normaliser, so they dilute the update. `skipping_grpo_trainer()` returns a GRPOTrainer subclass
that drops those rows from the batch after scoring and logs `zero_variance_frac` (groups with
no signal) and `skipped_frac` (groups left out) every step.

When every group of a batch is zero-variance the rows stay with zero advantages and an empty
loss mask (a step of zero gradient: TRL's loop steps the optimiser regardless, so only Adam's
momentum moves the weights).
"""

from __future__ import annotations

from typing import Any

from rlvr_envs.curriculum import drop_zero_variance_groups, split_groups


def kept_rows(total_rewards: list[float], group_size: int) -> tuple[list[int], float]:
    """Row indices of the informative groups (G consecutive rows per prompt) and the fraction
    of groups with zero reward variance."""
    groups = split_groups(total_rewards, group_size)
    kept = drop_zero_variance_groups(groups).kept
    rows = [g * group_size + j for g in kept for j in range(group_size)]
    return rows, 1 - len(kept) / len(groups)


def select_rows(batch: dict[str, Any], rows: list[int], size: int) -> dict[str, Any]:
    """The batch with only `rows` of every per-row entry (tensors and lists of length `size`)."""
    import torch

    index = None
    out = {}
    for key, value in batch.items():
        if isinstance(value, torch.Tensor) and value.dim() > 0 and value.shape[0] == size:
            if index is None:
                index = torch.tensor(rows, dtype=torch.long, device=value.device)
            out[key] = value.index_select(0, index.to(value.device))
        elif isinstance(value, list) and len(value) == size:
            out[key] = [value[i] for i in rows]
        else:
            out[key] = value
    return out


def skipping_grpo_trainer(mode: str) -> type:
    """GRPOTrainer that skips zero-variance groups (mode "skip") or only logs them ("keep")."""
    import torch
    from trl import GRPOTrainer

    class DynamicSamplingGRPOTrainer(GRPOTrainer):
        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            rewards_per_func = super()._calculate_rewards(inputs, prompts, completions,
                                                          completion_ids_list)
            self._rewards_per_func = rewards_per_func
            return rewards_per_func

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            if not self.model.training:
                return output
            weights = self.reward_weights.to(self._rewards_per_func.device)
            total = (self._rewards_per_func * weights.unsqueeze(0)).nansum(dim=1).tolist()
            rows, frac = kept_rows(total, self.num_generations)
            metrics = self._metrics["train"]
            metrics["zero_variance_frac"].append(frac)
            metrics["skipped_frac"].append(frac if mode == "skip" else 0.0)
            if mode != "skip" or frac == 0.0:
                return output
            size = output["completion_ids"].shape[0]
            offset = self.accelerator.process_index * size
            local = [r - offset for r in rows if offset <= r < offset + size]
            if local:
                output = select_rows(output, local, size)
            else:
                output["advantages"] = torch.zeros_like(output["advantages"])
                output["completion_mask"] = torch.zeros_like(output["completion_mask"])
            mask = output["completion_mask"]
            if output.get("tool_mask") is not None:
                mask = mask * output["tool_mask"]
            output["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()
            return output

    return DynamicSamplingGRPOTrainer
