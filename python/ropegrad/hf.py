# SPDX-License-Identifier: Apache-2.0
"""One call to switch a Hugging Face transformers model (Llama, Qwen3, and
models built the same way) to ropegrad for all of its RoPE work, on one of two paths:

  * from positions (switch.path == "positions", the default where it applies):
    the rotary module returns a marker (RopePositions: its inv_freq, attention
    scaling and the dtype its table would have had) and the position ids
    instead of cos and sin, and apply_rotary_pos_emb applies the rotation from
    the positions (ropegrad.rope_apply_pos: each cos/sin computed in the kernel,
    forward and backward). The cos/sin tensors are never materialised. The
    results equal the table path's bit for bit where its values are exact
    (bf16 tables: 011's correctly rounded values);
  * with tables (switch.path == "tables"): cos/sin generation (rotary_tables:
    bf16 from integer positions, L1/012 on the stock module's float32
    frequencies, cos and sin written apart; else
    ropegrad.rope_forward.rotary_embedding, L1/011) and applying them to q and
    k (ropegrad.rope_apply.apply_rotary_pos_emb: L1/088 forward, L1/068
    backward).

    import ropegrad.hf
    switch = ropegrad.hf.use_ropegrad(model)   # model.forward now runs ropegrad's kernels
    ...
    switch.remove()                             # back to stock (or: with ropegrad.hf.use_ropegrad(model): ...)

use_ropegrad(model, positions=False) takes the table path. positions=None
(the default) takes the positions path unless the model's code uses cos or
sin anywhere but in `cos, sin = position_embeddings` and the
apply_rotary_pos_emb call (its forward methods are read), then the table path
(switch.reason says why); positions=True refuses such a model (ValueError).

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
import re
import sys
import threading

import torch

from .cos_sin import cos_sin_from_freqs
from .rope_apply import apply_rotary_pos_emb
from .rope_forward import rotary_embedding
from .torch import later

_rope_apply_pos = later("rope_apply_pos", "rope_apply_pos")   # an older library may lack it (use_ropegrad checks)

__all__ = ["use_ropegrad", "Switch", "RopePositions", "rotary_tables"]

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


class RopePositions:
    """What a rotary module switched to the positions path returns in place of
    cos: its inv_freq (float32), attention_scaling and the dtype of the cos/sin
    table it would have built (the activations'); the position ids take sin's
    place. The switched apply_rotary_pos_emb recognises it. torch.compile
    traces through it (attribute reads: the floats and the dtype are constants
    of the graph)."""

    __slots__ = ("inv_freq", "attention_scaling", "dtype")

    def __init__(self, inv_freq, attention_scaling, dtype):
        self.inv_freq, self.attention_scaling, self.dtype = inv_freq, attention_scaling, dtype

    def __repr__(self):
        return "RopePositions(inv_freq[%d], attention_scaling=%r, dtype=%s)" % (
            self.inv_freq.shape[0], self.attention_scaling, self.dtype)


_COS_SIN = re.compile(r"\b(cos|sin)\b")
_COS_SIN_OK = (re.compile(r"^\s*cos\s*,\s*sin\s*=\s*position_embeddings\s*$"),
               re.compile(r"\bapply_rotary_pos_emb\(.*\bcos\s*,\s*sin\b"))


def _tables_needed(model):
    """Why the model needs real cos/sin tensors (a forward method that uses them
    beyond unpacking position_embeddings and passing them to apply_rotary_pos_emb),
    or None."""
    for cls in sorted({type(m) for m in model.modules()}, key=lambda c: c.__qualname__):
        try:
            src = inspect.getsource(cls.forward)
        except (OSError, TypeError):
            continue
        if "position_embeddings" not in src:
            continue
        for line in src.splitlines():
            code = line.split("#")[0].rstrip()
            if _COS_SIN.search(code) and not any(p.search(code) for p in _COS_SIN_OK):
                return "%s.forward uses cos/sin beyond apply_rotary_pos_emb (%r)" % (cls.__name__, code.strip())
    return None


def _positions_unavailable():
    """Why the loaded library cannot take the positions path, or None."""
    from . import _lib
    lib = _lib.load()
    if not all(hasattr(lib, n) for n in ("ropegrad_rope_apply_pos_cpu", "ropegrad_rope_apply_pos_backward_cpu")):
        return "the loaded libropegrad (%s) has no rope_apply_pos" % _lib.library_path()
    return None


def _check_position_ids(position_ids):
    if not isinstance(position_ids, torch.Tensor) or position_ids.dim() != 2:
        raise ValueError("ropegrad.hf: position_ids must be a [B,S] tensor, got %s"
                         % (list(position_ids.shape) if isinstance(position_ids, torch.Tensor)
                            else type(position_ids).__name__))


def _positions_forward(mod):
    """The positions-path forward for one rotary module: (RopePositions, position_ids)."""

    def forward(x, position_ids):
        _check_position_ids(position_ids)
        return RopePositions(mod.inv_freq.float().contiguous(), float(mod.attention_scaling), x.dtype), position_ids

    return forward


def rotary_tables(x, position_ids, inv_freq, attention_scaling=1.0):
    """The table path's (cos, sin) for position ids [B,S]: [B,S,D] each in x.dtype, each contiguous
    (the apply kernels' layout), the stock rotary module's values. In bf16 from integer positions:
    the frequencies as the stock module forms them (the float32 position times inv_freq, one
    rounding) and L1/012 on them, which writes cos and sin apart, every value the correctly rounded
    one (011's values; no copy to separate them). Otherwise rotary_embedding's, made contiguous
    with one copy."""
    _check_position_ids(position_ids)
    if not isinstance(x, torch.Tensor):
        raise TypeError("ropegrad.hf: x must be a tensor (its dtype is the tables'), got %s" % type(x).__name__)
    if not isinstance(inv_freq, torch.Tensor) or inv_freq.dim() != 1 or inv_freq.device != position_ids.device:
        raise ValueError("ropegrad.hf: inv_freq must be a [head_dim/2] tensor on position_ids' device (%s), got %s"
                         % (position_ids.device, "%s on %s" % (list(inv_freq.shape), inv_freq.device)
                            if isinstance(inv_freq, torch.Tensor) else type(inv_freq).__name__))
    if (x.dtype == torch.bfloat16 and not position_ids.is_floating_point()
            and position_ids.device.type in ("cuda", "cpu")):
        freqs = position_ids.float()[:, :, None] * inv_freq.detach().float()
        return cos_sin_from_freqs(freqs, attention_scaling)
    cos, sin = rotary_embedding(x, position_ids, inv_freq, attention_scaling)
    if not (cos.is_contiguous() and sin.is_contiguous()):
        both = torch.stack((cos, sin))   # one copy for the model, not one per layer
        cos, sin = both.select(0, 0), both.select(0, 1)   # both[0], both[1]
    return cos, sin


def _rotary_forward(mod):
    """The ropegrad forward for one rotary module: rotary_tables on its current
    inv_freq and attention_scaling."""

    def forward(x, position_ids):
        return rotary_tables(x, position_ids, mod.inv_freq, mod.attention_scaling)

    return forward


def _apply(q, k, cos, sin, unsqueeze_dim):
    """The positions path when cos is a RopePositions (sin: the position ids),
    else the table path."""
    if isinstance(cos, RopePositions):
        R = 2 * cos.inv_freq.shape[0]
        return _rope_apply_pos(q, k, sin, cos.inv_freq, cos.attention_scaling, cos_sin_dtype=cos.dtype,
                              unsqueeze_dim=unsqueeze_dim, rotary_dim=0 if R == q.shape[-1] else R)
    return apply_rotary_pos_emb(q, k, cos, sin, None, unsqueeze_dim)


def _apply_like(stock):
    """ropegrad's apply_rotary_pos_emb with the stock function's parameters
    (transformers 5 dropped position_ids: a positional fifth argument is then unsqueeze_dim)."""
    if "position_ids" in inspect.signature(stock).parameters:
        def apply(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
            return _apply(q, k, cos, sin, unsqueeze_dim)
    else:
        def apply(q, k, cos, sin, unsqueeze_dim=1):
            return _apply(q, k, cos, sin, unsqueeze_dim)
    apply.__doc__ = apply_rotary_pos_emb.__doc__
    apply.ropegrad_stock = stock
    return apply


class Switch:
    """What use_ropegrad changed; remove() (or leaving a `with` block) undoes it.
    path: "positions" or "tables"; reason: why the table path was taken (None
    on the positions path or when asked for)."""

    def __init__(self, model, rotary, modeling, path, reason):
        self.model, self.rotary, self.modeling = model, rotary, modeling
        self.path, self.reason = path, reason
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


def use_ropegrad(model, positions=None):
    """Switch model's RoPE (cos/sin and apply, forward and backward) to ropegrad;
    returns a Switch whose remove() restores stock transformers. positions:
    None = from positions where the model allows it, else with tables; True =
    from positions or ValueError; False = with tables. Raises ValueError when
    the model has nothing ropegrad can take (see the module's docstring) or is
    switched already."""
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
    reason = None
    if positions is None or positions:
        reason = _tables_needed(model) or _positions_unavailable()
        if reason and positions:
            raise ValueError("ropegrad.hf: use_ropegrad(positions=True): %s" % reason)
    path = "tables" if positions is False or reason else "positions"
    make_forward = _positions_forward if path == "positions" else _rotary_forward
    with _lock:
        for mod in rotary:
            mod.forward = make_forward(mod)   # an instance attribute: nn.Module.__call__ finds it first
        for m in modeling:
            if m in _patched_modules:
                _patched_modules[m][1] += 1
            else:
                _patched_modules[m] = [m.apply_rotary_pos_emb, 1]
                m.apply_rotary_pos_emb = _apply_like(m.apply_rotary_pos_emb)
        switch = Switch(model, rotary, modeling, path, reason)
        model.__dict__["_ropegrad_switch"] = switch
    return switch
