#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention timed on chapter 08's bench shapes (optional; needs a
CUDA GPU and PyTorch >= 2.3; nothing in the build or the tests runs it).

    python3 08_flash_attn/compare_sdpa.py --save results/08_sdpa
    python3 08_flash_attn/compare_sdpa.py --quick --d 128 --dtype fp16 --causal no

What it runs: F.scaled_dot_product_attention(q, k, v, is_causal=...) with q, k, v
[B, H, N, D] contiguous (the chapter's layout), fp16 or bf16, the default scale 1/sqrt(D), each
backend forced with torch.nn.attention.sdpa_kernel:
    flash      SDPBackend.FLASH_ATTENTION      (FlashAttention-2, built into PyTorch)
    cudnn      SDPBackend.CUDNN_ATTENTION      (cuDNN's fused attention)
    efficient  SDPBackend.EFFICIENT_ATTENTION  (the memory-efficient kernel, from xformers)
at (B, H, N) = (16,16,1024) (8,16,2048) (4,16,4096) (2,16,8192) (1,16,16384), D = 64 and 128,
causal and not: the chapter's --bench shapes (driver.c, BENCH_SHAPES), 16384 tokens per batch.
A backend that refuses a shape gets "skip: <PyTorch's reason>" in its row, never a number.

Timing, as the course's harness does it (docs/design.md, "Timing"): one CUDA event pair around
each launch, 3 warm-up launches, the L2 flushed before each timed launch by reading a buffer
twice the L2's size (reads leave clean lines, so the timed kernel pays no write-back for the
flush), the median of 20 timed launches. Two differences, both for PyTorch's sake:
  - one call before the warm-up is not timed: it tells whether the backend runs the shape, and
    cuDNN builds its plan for the shape then;
  - a short GPU sleep before each flush: a PyTorch call costs tens of microseconds of host time
    (dispatch, backend checks), and the sleep lets the host queue the launch before the GPU
    reaches the start event, so that the events time the kernel and not the host.
Slow rows: if the first warm-up launch takes more than 50 ms, the row gets about 1.5 s of timed
launches (at least 3) instead of --iters, and a note says so (as the harness does).

TFLOPS count the chapter's FLOPs: 4 B H N^2 D, and for causal rows 4 B H D N(N+1)/2 (the pairs
the mask keeps, the diagonal included). Our kernels also write the LSE (4 bytes a row); SDPA
without gradients need not: a difference of 1/(2D) of the output bytes.

Correctness spot check (before the timing): every selected backend, dtype, D and mask on one
small shape, (B, H, N) = (2, 4, 1000), against the math backend in fp32 (TF32 off) on the same
rounded inputs; Q, K uniform in [-2, 2), V in [-1, 1) as in the chapter. It prints the max
abs error and the count of elements outside the chapter's bound for O, 2u + 2u|ref| (u: 2^-11
fp16, 2^-8 bf16).

Output: a markdown table (shape, D, dtype, causal, backend, time (us), TFLOPS, status) on
stdout, row by row, then notes and the spot check; --save PATH also writes PATH.md and
PATH.csv with a header: GPU, driver, torch, CUDA, cuDNN.

Exit status, as the chapter binaries': 0 done (skips are not failures); 1 a spot check outside
its bound or not finite; 2 bad usage; 3 no CUDA GPU (or no PyTorch, or one without sdpa_kernel).
"""
import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from torch_bench import (EXIT_NO_GPU, EXIT_OK, EXIT_WRONG, Timer, add_run_args,  # noqa: E402
                         cuda_driver_api, driver_version, fmt_num, gpu_line, md_row, md_rule,
                         one_line, write_outputs)

# The chapter's --bench shapes (driver.c, BENCH_SHAPES): (B, H, N), each at D = 64 and 128.
BENCH_BHN = [(16, 16, 1024), (8, 16, 2048), (4, 16, 4096), (2, 16, 8192), (1, 16, 16384)]
QUICK_BHN = [(16, 16, 1024), (4, 16, 4096)]
HEAD_DIMS = [64, 128]
DTYPES = ["fp16", "bf16"]
BACKENDS = ["flash", "cudnn", "efficient"]  # labels; SDPBackend names in BACKEND_ENUM
BACKEND_ENUM = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION",
                "efficient": "EFFICIENT_ATTENTION"}
CHECK_BHN = (2, 4, 1000)  # the spot check's shape: N not a multiple of any tile
UNIT_ROUNDOFF = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8}

COLUMNS = ["bxhxn", "D", "dtype", "causal", "backend", "time (us)", "TFLOPS", "status"]
RIGHT = {"bxhxn", "D", "time (us)", "TFLOPS"}


# ---- command line (no torch needed, so --help works anywhere) --------------------------------

def choice_list(allowed, aliases=None):
    """An argparse type: a comma list of allowed values, in the order of `allowed` (aliases map
    other spellings; "all" and "both" stand for every value)."""
    aliases = aliases or {}

    def parse(text):
        out = []
        for word in text.split(","):
            w = aliases.get(word.strip().lower(), word.strip().lower())
            if w in ("all", "both"):
                return list(allowed)
            if w not in allowed:
                raise argparse.ArgumentTypeError(
                    f"{word!r}: expected a comma list of {', '.join(map(str, allowed))}")
            if w not in out:
                out.append(w)
        return [w for w in allowed if w in out]
    return parse


def int_list(allowed):
    def parse(text):
        try:
            values = [int(w) for w in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a comma list of integers")
        for v in values:
            if v not in allowed:
                raise argparse.ArgumentTypeError(
                    f"{v}: expected {' or '.join(map(str, allowed))} (the chapter's head dims)")
        return sorted(set(values))
    return parse


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="compare_sdpa.py",
        description="Time PyTorch's scaled_dot_product_attention backends (flash, cudnn, "
                    "efficient) on chapter 08's bench shapes, with the chapter's timing and "
                    "FLOP count, after a correctness spot check against the math backend in "
                    "fp32. Exit status: 0 done, 1 a spot check failed, 2 bad usage, 3 no CUDA "
                    "GPU.",
        epilog="Example: python3 08_flash_attn/compare_sdpa.py --save results/08_sdpa")
    p.add_argument("--quick", action="store_true",
                   help="two shapes only: (B, H, N) = (16,16,1024) and (4,16,4096)")
    p.add_argument("--d", type=int_list(HEAD_DIMS), default=HEAD_DIMS, metavar="64,128",
                   help="head dimensions (default both)")
    p.add_argument("--causal", type=choice_list(
        ["no", "yes"], {"0": "no", "1": "yes", "off": "no", "on": "yes", "false": "no",
                        "true": "yes"}), default=["no", "yes"], metavar="no,yes",
        help="without and/or with the causal mask: no, yes or both (default both)")
    p.add_argument("--dtype", type=choice_list(DTYPES, {"f16": "fp16", "half": "fp16",
                                                        "float16": "fp16",
                                                        "bfloat16": "bf16"}),
                   default=DTYPES, metavar="fp16,bf16", help="input types (default both)")
    p.add_argument("--backend", type=choice_list(BACKENDS), default=BACKENDS,
                   metavar="flash,cudnn,efficient", help="SDPA backends (default all three)")
    p.add_argument("--no-check", action="store_true", help="skip the correctness spot check")
    add_run_args(p)
    a = p.parse_args(argv)
    a.shapes = QUICK_BHN if a.quick else BENCH_BHN
    return a


# ---- numbers and tables ------------------------------------------------------------------------

def attn_flops(b, h, n, d, causal):
    """The chapter's count: 4 D per (query, key) pair kept."""
    pairs = n * (n + 1) // 2 if causal else n * n
    return 4 * b * h * d * pairs


# ---- the GPU part --------------------------------------------------------------------------------

def import_torch():
    """torch, F, sdpa_kernel, SDPBackend; or exit 3 with the reason."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"compare_sdpa.py: needs PyTorch with CUDA (pip install torch): {e}",
              file=sys.stderr)
        sys.exit(EXIT_NO_GPU)
    if not torch.cuda.is_available():
        print(f"compare_sdpa.py: no CUDA GPU (torch {torch.__version__}, built with CUDA "
              f"{torch.version.cuda}): nothing to time", file=sys.stderr)
        sys.exit(EXIT_NO_GPU)
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        print(f"compare_sdpa.py: torch {torch.__version__} has no torch.nn.attention.sdpa_kernel "
              f"(PyTorch >= 2.3 needed)", file=sys.stderr)
        sys.exit(EXIT_NO_GPU)
    return torch, F, sdpa_kernel, SDPBackend


def cudnn_version(torch):
    v = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    if not v:
        return "none"
    if v >= 90000:  # cuDNN 9: major*10000 + minor*100 + patch
        return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
    return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"  # cuDNN 8: major*1000 + minor*100 + patch


def header_lines(torch, args, seed):
    return [
        gpu_line(torch),
        f"driver {driver_version()}, CUDA driver API {cuda_driver_api()}, torch {torch.__version__}"
        f" (built with CUDA {torch.version.cuda}), cuDNN {cudnn_version(torch)}",
        f"08_flash_attn vs torch SDPA: seed {seed}, median of {args.iters} timed launches after "
        f"{args.warmup} warm-up, L2 flushed before each",
    ]


class Bench:
    def __init__(self, torch, F, sdpa_kernel, SDPBackend):
        self.torch, self.F, self.sdpa_kernel = torch, F, sdpa_kernel
        self.math = SDPBackend.MATH
        self.backend_enum = {name: getattr(SDPBackend, enum, None)
                             for name, enum in BACKEND_ENUM.items()}
        self.timer = Timer(torch)
        self.dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}

    def inputs(self, b, h, n, d, seed):
        """Q, K uniform in [-2, 2), V in [-1, 1), fp32, [B, H, N, D] contiguous."""
        torch = self.torch
        g = torch.Generator(device="cuda")
        out = []
        for i, lim in enumerate((2.0, 2.0, 1.0)):
            g.manual_seed(seed + i)
            out.append(torch.rand((b, h, n, d), generator=g, device="cuda") * (2 * lim) - lim)
        return out

    def call(self, backend, q, k, v, causal):
        """One SDPA call forced onto one backend; (output, None) or (None, reason)."""
        enum = self.backend_enum[backend]
        if enum is None:
            return None, (f"SDPBackend.{BACKEND_ENUM[backend]} not in torch "
                          f"{self.torch.__version__}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with self.sdpa_kernel(enum):
                    return self.F.scaled_dot_product_attention(q, k, v, is_causal=causal), None
            except self.torch.cuda.OutOfMemoryError:
                return None, "out of GPU memory"
            except RuntimeError as e:
                # PyTorch says why in warnings ("Flash attention requires ..."); the error
                # itself is often just "No available kernel".
                why = [str(w.message) for w in caught
                       if "not used because" not in str(w.message)]
                return None, one_line("; ".join(why) if why else e)

    def time_row(self, backend, q, k, v, causal, iters, warmup):
        """(median us, number of timed launches); raises what PyTorch raises."""
        sdpa = self.F.scaled_dot_product_attention
        with self.sdpa_kernel(self.backend_enum[backend]):
            return self.timer.time(lambda: sdpa(q, k, v, is_causal=causal), iters, warmup)

    def row(self, backend, q, k, v, causal, iters, warmup):
        """One table row: (median us, timed launches, None) or (None, 0, why it was skipped)."""
        out, why = self.call(backend, q, k, v, causal)  # the probe: does it run this shape?
        del out
        if why is not None:
            return None, 0, why
        try:
            us, launches = self.time_row(backend, q, k, v, causal, iters, warmup)
        except RuntimeError as e:  # out of memory included
            return None, 0, f"failed while timing: {one_line(e)}"
        return us, launches, None

    def spot_check(self, backends, dtypes, dims, causals, seed):
        """Lines of the spot check table; and whether every backend that ran was in bounds."""
        torch = self.torch
        b, h, n = CHECK_BHN
        prev = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        lines = [f"Spot check at (B, H, N) = {CHECK_BHN} against the math backend in fp32 on the "
                 f"same rounded inputs; bound per element 2u + 2u|ref| (the chapter's for O):",
                 "",
                 md_row(["D", "dtype", "causal", "backend", "max abs err", "outside bound",
                         "status"]),
                 "| ---: | --- | --- | --- | ---: | ---: | --- |"]
        all_ok = True
        try:
            for d in dims:
                q32, k32, v32 = self.inputs(b, h, n, d, seed)
                for dt in dtypes:
                    q, k, v = (x.to(self.dtype[dt]) for x in (q32, k32, v32))
                    u = UNIT_ROUNDOFF[dt]
                    for c in causals:
                        with self.sdpa_kernel(self.math):
                            ref = self.F.scaled_dot_product_attention(
                                q.float(), k.float(), v.float(), is_causal=(c == "yes"))
                        for be in backends:
                            out, why = self.call(be, q, k, v, c == "yes")
                            if out is None:
                                lines.append(md_row([d, dt, c, be, "-", "-", f"skip: {why}"]))
                                continue
                            err = (out.float() - ref).abs()
                            finite = bool(torch.isfinite(out).all())
                            outside = int((err > 2 * u + 2 * u * ref.abs()).sum())
                            ok = finite and outside == 0
                            all_ok &= ok
                            lines.append(md_row([d, dt, c, be, f"{float(err.max()):.2e}",
                                                 outside, "ok" if ok else
                                                 ("FAIL: not finite" if not finite else
                                                  "FAIL: outside the bound")]))
        finally:
            torch.backends.cuda.matmul.allow_tf32 = prev
        return lines, all_ok


def main(argv):
    args = parse_args(argv)
    torch, F, sdpa_kernel, SDPBackend = import_torch()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(6), "little")
    bench = Bench(torch, F, sdpa_kernel, SDPBackend)
    header = header_lines(torch, args, seed)
    for line in header:
        print(line)
    sys.stdout.flush()

    status = EXIT_OK
    check_lines = []
    if not args.no_check:
        check_lines, ok = bench.spot_check(args.backend, args.dtype, args.d, args.causal, seed)
        print()
        print("\n".join(check_lines))
        if not ok:
            status = EXIT_WRONG

    print()
    print(md_row(COLUMNS))
    print(md_rule(COLUMNS, RIGHT))
    sys.stdout.flush()
    rows, notes = [], []
    for d in args.d:
        for (b, h, n) in args.shapes:
            shape = f"{b}x{h}x{n}"
            q32 = k32 = v32 = None
            try:
                q32, k32, v32 = bench.inputs(b, h, n, d, seed)
            except torch.cuda.OutOfMemoryError:
                pass
            for dt in args.dtype:
                qkv = None
                if q32 is not None:
                    try:
                        qkv = [x.to(bench.dtype[dt]) for x in (q32, k32, v32)]
                    except torch.cuda.OutOfMemoryError:
                        pass
                for c in args.causal:
                    for be in args.backend:
                        cells = [shape, d, dt, c, be, "-", "-"]
                        if qkv is None:
                            cells.append("skip: out of GPU memory for the inputs")
                        else:
                            us, launches, why = bench.row(be, *qkv, c == "yes", args.iters,
                                                          args.warmup)
                            if us is None:
                                cells.append(f"skip: {why}")
                            else:
                                tflops = attn_flops(b, h, n, d, c == "yes") / (us * 1e6)
                                cells[5:] = [fmt_num(us), fmt_num(tflops), "ok"]
                                if launches != args.iters:
                                    notes.append(f"{shape} D={d} {dt} causal={c} {be}: slow: "
                                                 f"median of {launches} launches")
                        rows.append(cells)
                        print(md_row(cells))
                        sys.stdout.flush()
                del qkv
            del q32, k32, v32
            torch.cuda.empty_cache()
    if notes:
        print()
        print("\n".join(notes))
    if args.save:
        write_outputs(args.save, header, COLUMNS, RIGHT, rows,
                      notes + ([""] + check_lines if check_lines else []))
        print(f"\nsaved {args.save}.md and {args.save}.csv")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
