# SPDX-License-Identifier: Apache-2.0
"""Cold-L2 GPU timing the way SOL-ExecBench does it, on torch.profiler (CUPTI),
plus the protocol's tolerance rule. Used by python/tests/test_solution_export.py
and bench/vs_torch.py (needs torch and a CUDA device).

Timing: before every iteration, zero a buffer of twice the L2 size (torch's
zero_() of an int8 buffer: one fill kernel); then call the implementation.
Warmup iterations first, then the timed ones, all inside one profiler
run. Each iteration's time is the span from the start of its first GPU
activity (kernel, memset, memcpy) to the end of its last, the flush
excluded. Iterations are told apart by the flush: its activities (names
learnt by profiling one flush alone) come once per iteration, and everything
between two flushes belongs to the implementation's call.
"""

import statistics

import torch

_PROFILER_ANNOTATION_HINTS = ("Torch-Compiled Region", "CompiledFunction", "ProfilerStep")


def flush_buffer(device):
    size = torch.cuda.get_device_properties(device).L2_cache_size * 2
    return torch.empty(int(size), dtype=torch.int8, device=device)


def _gpu_activities(prof):
    """[(name, start_ns, end_ns)] of the profiled GPU activities, by start."""
    from torch.autograd import DeviceType
    out = []
    kr = getattr(getattr(prof, "profiler", None), "kineto_results", None)
    if kr is not None:
        for e in kr.events():
            if e.device_type() != DeviceType.CUDA:
                continue
            if hasattr(e, "is_user_annotation") and e.is_user_annotation():
                continue
            name = e.name()
            if any(h in name for h in _PROFILER_ANNOTATION_HINTS):
                continue
            out.append((name, int(e.start_ns()), int(e.end_ns())))
    else:  # older/newer API: FunctionEvents (times in us)
        for e in prof.events():
            if e.device_type != DeviceType.CUDA or getattr(e, "is_user_annotation", False):
                continue
            if any(h in e.name for h in _PROFILER_ANNOTATION_HINTS):
                continue
            out.append((e.name, int(e.time_range.start * 1000), int(e.time_range.end * 1000)))
    out.sort(key=lambda t: (t[1], t[2]))
    return out


def _profile(fn):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return _gpu_activities(prof)


def time_cold_l2(call, warmup=10, iters=50, device=None):
    """Times call() (which launches GPU work on the current stream) under the
    protocol. Returns dict(times_us=[...], median_us, mean_us, kernels=[names
    of one call's GPU activities]). Raises RuntimeError when the activities
    cannot be attributed to iterations (the message says why)."""
    device = device or torch.device("cuda", torch.cuda.current_device())
    buf = flush_buffer(device)

    # The flush's own activity names, and one call's, learnt in isolation.
    flush_names = {n for n, _, _ in _profile(lambda: buf.zero_())}
    if not flush_names:
        raise RuntimeError("timing: the L2 flush produced no GPU activity in the profiler (is CUPTI working?)")
    call()
    torch.cuda.synchronize()
    one_call = _profile(call)
    call_names = [n for n, _, _ in one_call]
    if not call_names:
        raise RuntimeError("timing: the implementation produced no GPU activity in the profiler")
    clash = flush_names.intersection(call_names)
    if clash:
        raise RuntimeError("timing: the implementation launches the flush's kernel (%s); cannot split iterations"
                           % sorted(clash)[0])

    def loop():
        for _ in range(warmup + iters):
            buf.zero_()
            call()

    acts = _profile(loop)
    groups, cur, in_flush = [], None, False
    for name, s, e in acts:
        if name in flush_names:
            if not in_flush:
                cur = []
                groups.append(cur)
            in_flush = True
            continue
        in_flush = False
        if cur is None:
            continue  # activity before the first flush: not ours
        cur.append((name, s, e))
    if len(groups) != warmup + iters:
        raise RuntimeError("timing: found %d flushes in the profile, expected %d" % (len(groups), warmup + iters))
    times = []
    for i, g in enumerate(groups[warmup:]):
        if len(g) != len(call_names):
            raise RuntimeError("timing: iteration %d has %d GPU activities, a lone call had %d (%s)"
                               % (i, len(g), len(call_names), ", ".join(call_names)))
        times.append((max(e for _, _, e in g) - min(s for _, s, _ in g)) / 1000.0)
    return dict(times_us=times, median_us=statistics.median(times), mean_us=statistics.mean(times),
                kernels=call_names)


def tolerance_check(out, ref, atol, rtol, min_matched=0.99):
    """The protocol's rule: element ok when |out-ref| <= atol + rtol*|ref|;
    pass when the matched ratio >= min_matched, no NaN/Inf in out, and out is
    not all zeros. Returns a dict with the verdict and the figures."""
    out64, ref64 = out.detach().double(), ref.detach().double().to(out.device)
    finite = bool(torch.isfinite(out64).all())
    err = (out64 - ref64).abs()
    ok = err <= atol + rtol * ref64.abs()
    matched = float(ok.double().mean()) if ok.numel() else 1.0
    all_zero = bool((out64 == 0).all()) if out64.numel() else False
    return dict(passed=bool(finite and not all_zero and matched >= min_matched), matched_ratio=matched,
                max_abs_err=float(err.max()) if err.numel() else 0.0, finite=finite, all_zero=all_zero)
