# SPDX-License-Identifier: Apache-2.0
"""ropegrad's autograd Function inside a 2-process DistributedDataParallel job
(NCCL, one GPU per rank):

    python3 python/tests/test_ddp.py          # exit 0 passed (or skipped), 1 failed

Each rank builds the same tiny model: a Linear maps per-token features to a
position offset, positions = base + offset feed RotaryEmbeddingQwen3, and a
fixed random projection of cos/sin gives the loss; each rank has its own
slice of the batch. After one backward, on every rank:
  1. the position gradient (ropegrad's output) matches plain float64 torch
     autograd of the same forward, row by row within the derived bound;
  2. the Linear's gradient, all-reduced by DDP, matches the float64 chain rule
     summed over the ranks (reference all-reduced the same way);
  3. every rank holds the same gradient.
So the ropegrad gradient flows through autograd and DDP's bucketed
all-reduce, on every rank's own device and stream.

ROPEGRAD_DDP_FORWARD=011 runs the same job through RopeForward instead (forward:
ropegrad's L1/011 kernel, bf16 cos/sin; backward: L1/014): the positions are
then whole numbers (the Linear's offset rounded, its gradient passed straight
through), and the reference takes the bf16 gradients autograd hands to it.

Needs 2 GPUs: with fewer it prints "SKIP: needs 2 GPUs, found N" and exits 0.
NVLink multicast (NVLS) and symmetric-memory multicast are switched off
before the process group starts (they are not available on every machine).
"""

import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

WORLD = 2
B_PER_RANK, S, FEAT, HEAD_DIM = 2, 512, 16, 128
SCALE = 1.0
FORWARD = os.environ.get("ROPEGRAD_DDP_FORWARD", "qwen3")   # "qwen3" (RotaryEmbeddingQwen3) or "011" (RopeForward)


def make_data(seed):
    """Everything every rank needs, identical on all of them (CPU tensors)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    H = HEAD_DIM // 2
    B = B_PER_RANK * WORLD
    feats = torch.randn(B, S, FEAT, generator=g)
    base = torch.randint(0, 200000, (B, 1), generator=g).float() + torch.arange(S).float()[None, :]
    weight = torch.randn(1, FEAT, generator=g) * 3.0
    bias = torch.randn(1, generator=g)
    proj_c = torch.randn(B, S, HEAD_DIM, generator=g)
    proj_s = torch.randn(B, S, HEAD_DIM, generator=g)
    inv = 1.0 / (1e6 ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.int64).float() / HEAD_DIM))
    assert inv.shape == (H,)
    return dict(feats=feats, base=base, weight=weight, bias=bias, proj_c=proj_c, proj_s=proj_s, inv=inv)


def local_reference(pos32, d, sl):
    """float64 position gradient of this rank's local loss, at the float32
    positions the model actually produced, with the float32 rounding of
    emb = position * inv_freq reproduced straight-through (as in
    test_torch_binding.py), and each row's derived error bound
    (H+12) u M (tests/test_cpu.c)."""
    import torch
    H = HEAD_DIM // 2
    n = B_PER_RANK * S
    inv32 = d["inv"]
    p64 = pos32.double().clone().requires_grad_(True)
    exact = p64[..., None] * inv32.double()[None, None, :]
    rounded = (pos32[..., None] * inv32[None, None, :]).double()
    freqs = exact + (rounded - exact).detach()
    emb = torch.cat((freqs, freqs), -1)
    pc, ps = d["proj_c"][sl].double(), d["proj_s"][sl].double()
    if FORWARD == "011":
        # RopeForward's outputs are bf16: autograd casts their gradients
        # (proj / n, n a power of two) to bf16 before ropegrad sees them.
        pc = d["proj_c"][sl].to(torch.bfloat16).double()
        ps = d["proj_s"][sl].to(torch.bfloat16).double()
    loss = ((emb.cos() * SCALE * pc).sum() + (emb.sin() * SCALE * ps).sum()) / n
    loss.backward()
    GS = (ps[..., :H] + ps[..., H:]) / n
    GC = (pc[..., :H] + pc[..., H:]) / n
    M = (inv32.double().abs()[None, None, :] * (GS.abs() + GC.abs())).sum(-1)
    bound = abs(SCALE) * (H + 12) * U * M * 1.01
    return p64.grad.detach(), bound


U = 2.0 ** -24


def worker(rank, port, result_dir):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    status = "FAIL rank %d: did not finish" % rank
    try:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        torch.cuda.set_device(rank)
        dev = torch.device("cuda", rank)
        dist.init_process_group("nccl", rank=rank, world_size=WORLD, device_id=dev)
        from ropegrad.rope_backward import rotary_cos_sin
        from ropegrad.rope_forward import RopeForward

        d = make_data(1234)
        sl = slice(rank * B_PER_RANK, (rank + 1) * B_PER_RANK)
        n = B_PER_RANK * S

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.offset = torch.nn.Linear(FEAT, 1)
                self.register_buffer("inv_freq", d["inv"].clone(), persistent=False)
                self.last_pos = None

            def forward(self, feats, base):
                off = self.offset(feats)[..., 0]
                if FORWARD == "011":
                    # whole-number positions (RopeForward's contract), gradient straight through
                    pos = base + off.detach().round() + (off - off.detach())
                else:
                    pos = base + off   # [B,S] float32, differentiable
                pos.retain_grad()
                self.last_pos = pos
                if FORWARD == "011":
                    cos, sin = RopeForward.apply(pos, self.inv_freq, SCALE)   # forward 011, backward 014
                    return cos.float(), sin.float()
                return rotary_cos_sin(pos, self.inv_freq, SCALE)  # backward: ropegrad

        model = Model().to(dev)
        with torch.no_grad():
            model.offset.weight.copy_(d["weight"])
            model.offset.bias.copy_(d["bias"])
        ddp = DDP(model, device_ids=[rank])
        feats = d["feats"][sl]
        cos, sin = ddp(feats.to(dev), d["base"][sl].to(dev))
        loss = ((cos * d["proj_c"][sl].to(dev)).sum() + (sin * d["proj_s"][sl].to(dev)).sum()) / n
        loss.backward()
        torch.cuda.synchronize(dev)

        # 1. The position gradient ropegrad produced on this rank.
        pos32 = model.last_pos.detach().cpu()
        gpos = model.last_pos.grad.detach().double().cpu()
        ref_pos, bound_pos = local_reference(pos32, d, sl)
        err_pos = (gpos - ref_pos).abs()
        pos_ok = bool((err_pos <= bound_pos).all()) and bool(torch.isfinite(gpos).all())

        # 2. The Linear's gradient after DDP's all-reduce: the float64 chain
        #    rule on each rank, summed over ranks, averaged like DDP does.
        #    Bound: the position errors carried through, plus float32 GEMM
        #    accumulation over the rank's n rows and the all-reduce.
        f64 = feats.double().reshape(n, FEAT)
        gp, bp = ref_pos.reshape(n), bound_pos.reshape(n)
        local = torch.cat([(gp[:, None] * f64).sum(0), gp.sum().reshape(1)])
        mag = torch.cat([(gp.abs()[:, None] * f64.abs()).sum(0), gp.abs().sum().reshape(1)])
        carried = torch.cat([(bp[:, None] * f64.abs()).sum(0), bp.sum().reshape(1)])
        bound_lin = carried + (n + WORLD) * U * mag * 1.01
        packed = torch.stack([local, bound_lin]).to(dev)
        dist.all_reduce(packed)
        packed = (packed / WORLD).cpu()
        ref_lin, bound_lin = packed[0], packed[1]
        got_lin = torch.cat([model.offset.weight.grad.detach().double().cpu().flatten(),
                             model.offset.bias.grad.detach().double().cpu().flatten()])
        err_lin = (got_lin - ref_lin).abs()
        lin_ok = bool((err_lin <= bound_lin).all())

        # 3. Every rank holds the same all-reduced gradient.
        both = got_lin.to(dev)
        gathered = [torch.zeros_like(both) for _ in range(WORLD)]
        dist.all_gather(gathered, both)
        same = all(torch.equal(gathered[0], g) for g in gathered)

        ok = pos_ok and lin_ok and same
        status = ("%s rank %d: position grad max abs err %.3g (x%.3g of bound); Linear grad max abs err %.3g "
                  "(x%.3g of bound); ranks agree: %s" % (
                      "PASS" if ok else "FAIL", rank, err_pos.max().item(), (err_pos / bound_pos).max().item(),
                      err_lin.max().item(), (err_lin / bound_lin).max().item(), same))
        dist.barrier()
        dist.destroy_process_group()
    except Exception:
        status = "FAIL rank %d: %s" % (rank, traceback.format_exc())
    with open(os.path.join(result_dir, "rank%d.txt" % rank), "w") as f:
        f.write(status + "\n")


def main():
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < WORLD:
        print("SKIP: needs %d GPUs, found %d" % (WORLD, n))
        return 0
    import socket
    import tempfile
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(worker, args=(port, tmp), nprocs=WORLD, join=True)
        lines = []
        for r in range(WORLD):
            p = os.path.join(tmp, "rank%d.txt" % r)
            lines.append(open(p).read().strip() if os.path.exists(p) else "FAIL rank %d: no result" % r)
    for line in lines:
        print(line)
    return 0 if all(line.startswith("PASS") for line in lines) else 1


def test_ddp_two_gpus():
    """pytest entry: skips with the same reason when fewer than 2 GPUs."""
    import pytest
    torch = pytest.importorskip("torch")
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < WORLD:
        pytest.skip("needs %d GPUs, found %d" % (WORLD, n))
    assert main() == 0


if __name__ == "__main__":
    sys.exit(main())
