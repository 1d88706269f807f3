"""Seeds side by side: several copies of one model (one per seed) trained as one stacked computation.

A small model at a small batch (MiniLM at 12 instances) leaves a GPU mostly idle: the time goes to kernel launches
and Python. :class:`StackedSeeds` stacks the seeds' parameters (``torch.func.stack_module_state``) and computes every
seed's loss and gradients in one call, ``vmap(grad_and_value(loss over functional_call))`` (the PyTorch
model-ensembling recipe), so one step of S seeds launches the kernels of one step, each S times wider. Each seed
keeps its own batches (its own data order and negatives: the inputs carry a leading seed axis) and its own AdamW
state: AdamW is elementwise, so one AdamW over the stacked tensors is S independent ones. Trained this way, each
seed's parameters equal those of training it alone with the same batches to float tolerance (the stacked kernels
sum in another order), with dropout off; with dropout on, ``vmap(randomness="different")`` draws each seed's masks
from one shared generator stream, so the masks differ from those of a seed trained alone (same distribution, other
draws). ``tests/test_concurrent_seeds.py`` checks the equality on a tiny BERT ranker; ``benchmarks/concurrent_seeds.py``
measures the stacked step against one seed at a time.
"""

import copy


class StackedSeeds:
    """``models`` (same architecture, one per seed) as one stacked model with one AdamW over the stacked tensors.

    ``loss(call, batch)`` is the loss of one seed: ``call(**inputs)`` runs that seed's model on its inputs (a 0/1
    ``attention_mask`` is passed on as :func:`additive_mask`). ``attention``: the attention implementation of the
    stacked call (default eager; None keeps the models').
    """

    def __init__(self, models, loss, learning_rate: float, weight_decay: float = 0.0, dropout: bool = False,
                 attention: str | None = "eager"):
        import torch
        from torch.func import stack_module_state

        self.seeds = len(models)
        for model in models:
            model.train(dropout)  # the stacked call runs the modules in this mode
        self.keys = list(models[0].state_dict())  # the persistent names, as load_state_dict takes them
        self.params, self.buffers = stack_module_state(list(models))
        self.base = copy.deepcopy(models[0]).to("meta")
        self.base.train(dropout)
        if attention and hasattr(self.base, "set_attn_implementation"):
            # eager attention is plain matmuls, which vmap batches; the fused SDPA kernels have no batching rule
            # and would run seed by seed
            self.base.set_attn_implementation(attention)
        self.loss = loss
        self.dropout = dropout
        self.optimizer = torch.optim.AdamW(list(self.params.values()), lr=learning_rate, weight_decay=weight_decay)

    def _losses_and_grads(self, batches):
        from torch.func import functional_call, grad_and_value, vmap

        def one(params, buffers, batch):
            def call(**inputs):
                if "attention_mask" in inputs and inputs["attention_mask"].dim() == 2:
                    inputs = {**inputs, "attention_mask": additive_mask(inputs["attention_mask"])}
                return functional_call(self.base, (params, buffers), args=(), kwargs=inputs)

            return self.loss(call, batch)

        return vmap(grad_and_value(one), in_dims=(0, 0, 0), randomness="different" if self.dropout else "error")(
            self.params, self.buffers, batches)

    def step(self, batches):
        """One optimiser step of every seed; ``batches``: the seeds' batches, tensors with a leading seed axis.
        Returns the seeds' losses (a tensor of S)."""
        grads, losses = self._losses_and_grads(batches)
        for name, param in self.params.items():
            param.grad = grads[name]
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return losses.detach()

    def state_dict(self, seed: int) -> dict:
        """Seed ``seed``'s parameters and buffers, as ``model.load_state_dict`` takes them."""
        stacked = {**self.params, **self.buffers}
        return {name: stacked[name][seed].detach().clone() for name in self.keys if name in stacked}


def additive_mask(attention_mask, dtype=None):
    """A rows x tokens 0/1 padding mask as the 4-d additive mask (rows x 1 x 1 x tokens: 0 where attended, the
    dtype's minimum where padded) that transformers uses as it is: its own mask building branches on the mask's
    values (``padding_mask.all()``), which ``vmap`` cannot trace."""
    import torch

    dtype = dtype or torch.get_default_dtype()
    return (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def stack_batches(batches, pad_values: dict | None = None):
    """The seeds' batches (dicts of 2-d tensors: rows x tokens) as one dict of 3-d tensors, each padded on the right
    to the longest of the seeds (``pad_values``: the fill per key, default 0); other tensors are stacked as they
    are."""
    import torch

    pad_values = pad_values or {}
    out = {}
    for key in batches[0]:
        parts = [batch[key] for batch in batches]
        if parts[0].dim() == 2:
            width = max(part.shape[1] for part in parts)
            parts = [torch.nn.functional.pad(part, (0, width - part.shape[1]), value=pad_values.get(key, 0))
                     for part in parts]
        out[key] = torch.stack(parts)
    return out
