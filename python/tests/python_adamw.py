"""AdamW in plain torch ops, in the built-in adamw's (unfused) operation order, as a kforge.register_optimizer
factory: the tests' and benchmarks/python_optimizer_step.py's Python optimizer."""
import math

import torch


def decays(name, tensor):
    """The built-in's grouping (sdk::split_weight_decay): no decay for 1-D tensors, biases and embeddings."""
    return tensor.dim() >= 2 and "bias" not in name and "embedding" not in name


class AdamW:
    def __init__(self, params, hyper):
        self.beta1, self.beta2 = hyper["betas"]
        self.eps = hyper["eps"]
        self.slots = {
            name: {"param": p, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p), "step": 0,
                   "weight_decay": hyper["weight_decay"] if decays(name, p) else 0.0}
            for name, p in params.items() if p.requires_grad
        }

    def step(self, lr):
        for slot in self.slots.values():
            param, grad = slot["param"], slot["param"].grad
            if grad is None:
                continue
            slot["step"] += 1
            decay = 1.0 - lr * slot["weight_decay"]
            if decay != 1.0:
                param.mul_(decay)
            slot["exp_avg"].mul_(self.beta1).add_(grad, alpha=1.0 - self.beta1)
            slot["exp_avg_sq"].mul_(self.beta2).addcmul_(grad, grad, value=1.0 - self.beta2)
            bias_correction1 = 1.0 - self.beta1 ** slot["step"]
            bias_correction2 = 1.0 - self.beta2 ** slot["step"]
            denom = slot["exp_avg_sq"].sqrt().div_(math.sqrt(bias_correction2)).add_(self.eps)
            param.addcdiv_(slot["exp_avg"], denom, value=-lr / bias_correction1)

    def state_dict(self):
        state = {}
        for name, slot in self.slots.items():
            state[f"{name}.exp_avg"] = slot["exp_avg"]
            state[f"{name}.exp_avg_sq"] = slot["exp_avg_sq"]
            state[f"{name}.step"] = torch.tensor(slot["step"], dtype=torch.long)
        return state

    def load_state_dict(self, state):
        for name, slot in self.slots.items():
            slot["exp_avg"].copy_(state[f"{name}.exp_avg"])
            slot["exp_avg_sq"].copy_(state[f"{name}.exp_avg_sq"])
            slot["step"] = int(state[f"{name}.step"])
