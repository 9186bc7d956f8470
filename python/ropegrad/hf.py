# SPDX-License-Identifier: Apache-2.0
"""One call to switch a Hugging Face transformers model (Llama, Qwen3, and
models built the same way) to ropegrad for all of its RoPE work: cos/sin
generation (ropegrad.rope_forward.rotary_embedding: L1/011 forward, L1/014
backward) and applying them to q and k (ropegrad.rope_apply.apply_rotary_pos_emb:
L1/088 forward, L1/068 backward).

    import ropegrad.hf
    switch = ropegrad.hf.use_ropegrad(model)   # model.forward now runs ropegrad's kernels
    ...
    switch.remove()                             # back to stock (or: with ropegrad.hf.use_ropegrad(model): ...)

What it patches, and how it is undone:
  * every rotary-embedding module of the model (a submodule with an inv_freq
    buffer and attention_scaling, its class named ...RotaryEmbedding): its
    forward, on that instance only; remove() deletes the override;
  * the apply_rotary_pos_emb of each modeling module the model's classes come
    from (transformers.models.llama.modeling_llama, ...qwen3.modeling_qwen3):
    a module-level name, so every model of that family in the process uses
    ropegrad while at least one switch is on; the last remove() restores it.
Rotary types whose inv_freq changes with the input ("dynamic", "longrope")
are refused (ValueError), as is a model with no rotary module or no
apply_rotary_pos_emb to patch.
"""

import inspect
import sys
import threading

import torch

from .rope_apply import apply_rotary_pos_emb
from .rope_forward import rotary_embedding

__all__ = ["use_ropegrad", "Switch"]

_STATIC_ROPE_TYPES = ("default", "linear", "llama3", "yarn")
_lock = threading.Lock()
_patched_modules = {}   # modeling module -> [its stock apply_rotary_pos_emb, number of switches using it]


def _rotary_modules(model):
    found = []
    for name, mod in model.named_modules():
        if type(mod).__name__.endswith("RotaryEmbedding") and isinstance(getattr(mod, "inv_freq", None), torch.Tensor) \
                and hasattr(mod, "attention_scaling"):
            rope_type = getattr(mod, "rope_type", "default")
            if rope_type not in _STATIC_ROPE_TYPES:
                raise ValueError("ropegrad.hf: %s (%s) has rope_type %r, whose frequencies change with the input; "
                                 "ropegrad takes %s" % (name or "model", type(mod).__name__, rope_type,
                                                         ", ".join(_STATIC_ROPE_TYPES)))
            if mod.inv_freq.dim() != 1:
                raise ValueError("ropegrad.hf: %s.inv_freq has shape %s; ropegrad takes one vector [head_dim/2]"
                                 % (name, list(mod.inv_freq.shape)))
            found.append(mod)
    return found


def _modeling_modules(model):
    names = {type(m).__module__ for m in model.modules()}
    return [sys.modules[n] for n in sorted(names)
            if n in sys.modules and callable(getattr(sys.modules[n], "apply_rotary_pos_emb", None))]


def _rotary_forward(mod):
    """The ropegrad forward for one rotary module: its current inv_freq and
    attention_scaling, cos and sin each contiguous (the apply kernels' layout)."""

    def forward(x, position_ids):
        if not isinstance(position_ids, torch.Tensor) or position_ids.dim() != 2:
            raise ValueError("ropegrad.hf: position_ids must be a [B,S] tensor, got %s"
                             % (list(position_ids.shape) if isinstance(position_ids, torch.Tensor)
                                else type(position_ids).__name__))
        cos, sin = rotary_embedding(x, position_ids, mod.inv_freq, mod.attention_scaling)
        if not (cos.is_contiguous() and sin.is_contiguous()):
            both = torch.stack((cos, sin))   # one copy for the model, not one per layer
            cos, sin = both[0], both[1]
        return cos, sin

    return forward


def _apply_like(stock):
    """ropegrad's apply_rotary_pos_emb with the stock function's parameters
    (transformers 5 dropped position_ids: a positional fifth argument is then unsqueeze_dim)."""
    if "position_ids" in inspect.signature(stock).parameters:
        def apply(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
            return apply_rotary_pos_emb(q, k, cos, sin, position_ids, unsqueeze_dim)
    else:
        def apply(q, k, cos, sin, unsqueeze_dim=1):
            return apply_rotary_pos_emb(q, k, cos, sin, None, unsqueeze_dim)
    apply.__doc__ = apply_rotary_pos_emb.__doc__
    apply.ropegrad_stock = stock
    return apply


class Switch:
    """What use_ropegrad changed; remove() (or leaving a `with` block) undoes it."""

    def __init__(self, model, rotary, modeling):
        self.model, self.rotary, self.modeling = model, rotary, modeling
        self.active = True

    def remove(self):
        with _lock:
            if not self.active:
                return
            for mod in self.rotary:
                mod.__dict__.pop("forward", None)
            for m in self.modeling:
                entry = _patched_modules[m]
                entry[1] -= 1
                if entry[1] == 0:
                    m.apply_rotary_pos_emb = entry[0]
                    del _patched_modules[m]
            self.model.__dict__.pop("_ropegrad_switch", None)
            self.active = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def use_ropegrad(model):
    """Switch model's RoPE (cos/sin and apply, forward and backward) to ropegrad;
    returns a Switch whose remove() restores stock transformers. Raises
    ValueError when the model has nothing ropegrad can take (see the module's
    docstring) or is switched already."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError("ropegrad.hf: use_ropegrad takes a torch.nn.Module, got %s" % type(model).__name__)
    if getattr(model, "_ropegrad_switch", None) is not None:
        raise ValueError("ropegrad.hf: this model is switched to ropegrad already (its switch's remove() undoes it)")
    rotary = _rotary_modules(model)
    modeling = _modeling_modules(model)
    if not rotary or not modeling:
        raise ValueError("ropegrad.hf: %s has %s; ropegrad switches models with both (Llama, Qwen3, ...)"
                         % (type(model).__name__, "no rotary-embedding module" if not rotary
                            else "no modeling module defining apply_rotary_pos_emb"))
    with _lock:
        for mod in rotary:
            mod.forward = _rotary_forward(mod)   # an instance attribute: nn.Module.__call__ finds it first
        for m in modeling:
            if m in _patched_modules:
                _patched_modules[m][1] += 1
            else:
                _patched_modules[m] = [m.apply_rotary_pos_emb, 1]
                m.apply_rotary_pos_emb = _apply_like(m.apply_rotary_pos_emb)
        switch = Switch(model, rotary, modeling)
        model.__dict__["_ropegrad_switch"] = switch
    return switch
