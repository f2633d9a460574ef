#!/usr/bin/env python3
"""DeepGEMM's block-scaled FP8 GEMM timed on chapter 07's GEMM bench shapes, beside our
`final_block` and cuBLASLt's block-scaled product timed on the same GPU (optional: needs a
Hopper GPU, PyTorch, and a DeepGEMM you built yourself; nothing in the build or the tests runs
it).

    python3 07_fp8_gemm/compare_deepgemm.py --deepgemm ~/DeepGEMM --save results/h100_deepgemm
    python3 07_fp8_gemm/compare_deepgemm.py --deepgemm ~/DeepGEMM --shapes 4096x4096x4096

DeepGEMM (https://github.com/deepseek-ai/DeepGEMM) is built as its own README says; this
script does not build it. --deepgemm PATH puts a checkout built in place (its develop.sh) on
the import path; without it, an installed `deep_gemm` is imported. The header line of the
output names its version and where it came from.

What it runs: deep_gemm.fp8_gemm_nt((A, sfa), (B, sfb), D): A M x K e4m3 with one fp32 scale
per 1 x 128 slice of a row, B N x K e4m3 with one per 128 x 128 block, D M x N bf16: the
problem of our `final_block` (DeepSeek-V3's recipe; DeepGEMM's default on SM90). A's scales
are handed over in the layout DeepGEMM's SM90 kernel reads (M-major, M padded to 4: the
chapter's `scale_a[kb * M + i]`), so that no layout transform runs inside a timed call.
DeepGEMM picks its own configuration per shape, and compiles each kernel at its first use
(JIT): during the untimed first call.

Inputs: uniform in [-1, 1) from a seeded torch generator, each 1 x 128 slice times a power of
two 2^e with e drawn in -7..4 (the range of the chapter's inputs.cu, so that the scales differ
from slice to slice and block to block), rounded to bf16; then quantized with the chapter's convention
(gemm07.h): scale = amax / 448 (1 for an all-zero group), q = e4m3(x * (1 / scale)) rounded to
nearest, saturated at 448.

Check (before the timing): D against the exact product of the dequantized inputs (fp64 on the
GPU), entry by entry, with the chapter's bound for a kernel that promotes every 128 of K
(README, "Correctness"): |D - x| <= 2^-8 |x| + 8 * 2^-12 * sqrt(4) * spread, spread =
sqrt(sum of the squares of the entry's terms). Its row says FAIL if any entry is outside.

Timing, as the harness (common/torch_bench.py): 3 warm-up launches, the median of 20 timed
launches, one event pair around each, the L2 flushed before each.

Ours and cuBLASLt: first, the chapter binary (build/bin/07_fp8_gemm --bench --kernel
final_block, at the same shapes) runs in a subprocess on the same GPU; its `cublaslt_block` and
`final_block` rows are copied into the output, and DeepGEMM's ratio column divides by that
run's `cublaslt_block`. --no-chapter leaves them out (the ratio column is then "-").

Output: the chapter's table (mxnxk, kernel, dtype, time (us), TFLOPS, x cuBLASLt, rel err,
status) on stdout, row by row; --save PATH also writes PATH.md and PATH.csv with the chapter
run's header lines and one for DeepGEMM. Exit status, as the chapter binaries': 0 done, 1 a
product outside its bound, 2 bad usage, 3 no GPU, no PyTorch or no DeepGEMM.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from torch_bench import (EXIT_NO_GPU, EXIT_OK, EXIT_USAGE, EXIT_WRONG, Timer,  # noqa: E402
                         add_run_args, fmt_num, gpu_line, md_row, md_rule, one_line, write_outputs)

COLUMNS = ["mxnxk", "kernel", "dtype", "time (us)", "TFLOPS", "x cuBLASLt", "rel err", "status"]
RIGHT = {"mxnxk", "time (us)", "TFLOPS", "x cuBLASLt", "rel err"}
CHAPTER_ROWS = ("cublaslt_block", "final_block")
QUICK = "4096x4096x4096,64x2112x7168"
E4M3_MAX = 448.0
SIGMAS, FP8_UNIT, FP8_STEPS = 8.0, 2.0 ** -12, 4  # the chapter's bound (driver.c, bound_of)


def shape_list(text):
    shapes = []
    for word in text.split(","):
        try:
            m, n, k = (int(v) for v in word.lower().split("x"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{word!r}: expected MxNxK, e.g. 4096x4096x4096")
        if min(m, n, k) < 1 or k % 128:
            raise argparse.ArgumentTypeError(f"{word}: M, N >= 1 and K a multiple of 128")
        shapes.append((m, n, k))
    return shapes


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="compare_deepgemm.py",
        description="Time DeepGEMM's block-scaled FP8 GEMM (fp8_gemm_nt, 1x128 and 128x128 "
                    "scales) on chapter 07's bench shapes, checked against the exact product, "
                    "beside the chapter's final_block and cuBLASLt run on the same GPU. Exit "
                    "status: 0 done, 1 a product outside its bound, 2 bad usage, 3 no GPU, no "
                    "PyTorch or no DeepGEMM.",
        epilog="Example: python3 07_fp8_gemm/compare_deepgemm.py --deepgemm ~/DeepGEMM "
               "--save results/h100_deepgemm")
    p.add_argument("--deepgemm", metavar="PATH",
                   help="a DeepGEMM checkout built in place (default: the installed deep_gemm)")
    p.add_argument("--shapes", type=shape_list, metavar="MxNxK,...",
                   help="these shapes (default: the chapter's GEMM bench shapes)")
    p.add_argument("--quick", action="store_true", help=f"two shapes: {QUICK}")
    p.add_argument("--binary", default=os.path.join(HERE, "..", "build", "bin", "07_fp8_gemm"),
                   help="the chapter binary (default build/bin/07_fp8_gemm)")
    p.add_argument("--no-chapter", action="store_true",
                   help="do not run the chapter binary (no final_block or cuBLASLt rows)")
    add_run_args(p)
    a = p.parse_args(argv)
    if a.quick:
        a.shapes = shape_list(QUICK)
    if a.no_chapter and not a.shapes:
        p.error("--no-chapter needs --shapes or --quick (the bench shapes come from the binary)")
    return a


# ---- the chapter's rows --------------------------------------------------------------------------

def run_chapter(args, seed):
    """The chapter binary's bench at the shapes: (header lines, {(shape, kernel): row}, shapes)."""
    if not os.access(args.binary, os.X_OK):
        print(f"compare_deepgemm.py: {args.binary} is not built (make build/bin/07_fp8_gemm), "
              f"or pass --no-chapter", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "chapter")
        cmd = [args.binary, "--bench", "--kernel", "final_block", "--iters", str(args.iters),
               "--warmup", str(args.warmup), "--seed", str(seed), "--save", prefix]
        if args.shapes:
            for i, dim in enumerate(("--m", "--n", "--k")):
                cmd += [dim, ",".join(str(s[i]) for s in args.shapes)]
        print("chapter: " + " ".join(cmd[1:]), flush=True)
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode not in (0, 1):
            print(run.stdout + run.stderr, file=sys.stderr)
            sys.exit(run.returncode)
        header, rows, shapes = [], {}, []
        with open(prefix + "_gemm.csv") as f:
            lines = f.read().splitlines()
    for line in lines:
        if line.startswith("# "):
            header.append(line[2:])
    for r in csv.DictReader(line for line in lines if not line.startswith("#")):
        shape = tuple(int(v) for v in r["mxnxk"].split("x"))
        if shape not in shapes:
            shapes.append(shape)
        if r["kernel"] in CHAPTER_ROWS:
            rows[(shape, r["kernel"])] = [r[c] for c in COLUMNS]
    return header, rows, shapes


# ---- DeepGEMM ------------------------------------------------------------------------------------

def import_libraries(path):
    try:
        import torch
    except ImportError as e:
        print(f"compare_deepgemm.py: needs PyTorch with CUDA: {e}", file=sys.stderr)
        sys.exit(EXIT_NO_GPU)
    if not torch.cuda.is_available():
        print("compare_deepgemm.py: no CUDA GPU: nothing to time", file=sys.stderr)
        sys.exit(EXIT_NO_GPU)
    if path:
        sys.path.insert(0, os.path.abspath(path))
    try:
        import deep_gemm
    except ImportError as e:
        print(f"compare_deepgemm.py: cannot import deep_gemm ({e}): build DeepGEMM as its README "
              f"says and pass --deepgemm PATH, or install it", file=sys.stderr)
        sys.exit(EXIT_NO_GPU)
    return torch, deep_gemm


def deepgemm_line(deep_gemm, path):
    version = getattr(deep_gemm, "__version__", "(no version string)")
    rev = ""
    if path:
        try:
            rev = subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    where = f"{path}{' at ' + rev if rev else ''}" if path else "installed"
    return f"DeepGEMM {version} ({where}), fp8_gemm_nt with its default SM90 recipe (1, 128, 128)"


def make_input(torch, rows, k, seed):
    """bf16 rows x k: uniform [-1, 1), each 1 x 128 slice times 2^e, e in -7..4."""
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    x = torch.rand((rows, k), generator=g, device="cuda") * 2 - 1
    e = torch.randint(-7, 5, (rows, k // 128), generator=g, device="cuda").float()
    return (x * torch.exp2(e).repeat_interleave(128, dim=1)).to(torch.bfloat16)


def quantize(torch, x, group_rows):
    """e4m3 and fp32 scales per group_rows x 128 group (the chapter's convention, gemm07.h)."""
    rows, k = x.shape
    pad = (-rows) % group_rows
    xf = torch.nn.functional.pad(x.float(), (0, 0, 0, pad))
    g = xf.view(-1, group_rows, k // 128, 128)
    amax = g.abs().amax(dim=(1, 3))
    scale = torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))
    inv = 1.0 / scale
    q = (g * inv[:, None, :, None]).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q.view(-1, k)[:rows].contiguous(), scale  # scale: [groups of rows, K / 128]


def dequantize(torch, q, scale, group_rows):
    s = scale.double().repeat_interleave(group_rows, dim=0)[: q.shape[0]]
    return q.double() * s.repeat_interleave(128, dim=1)


def check(torch, d, a_deq, b_deq):
    """(rel L2, entries outside the chapter's bound, worst fraction of the bound)."""
    exact = a_deq @ b_deq.T
    spread = ((a_deq * a_deq) @ (b_deq * b_deq).T).sqrt()
    err = (d.double() - exact).abs()
    bound = 2.0 ** -8 * exact.abs() + SIGMAS * FP8_UNIT * FP8_STEPS ** 0.5 * spread
    finite = bool(torch.isfinite(d).all())
    rel = float(err.norm() / exact.norm()) if finite else float("nan")
    outside = int((~(err <= bound)).sum())
    return rel, outside, float((err / bound).max()) if finite else float("nan")


def deepgemm_row(torch, deep_gemm, timer, shape, seed, args):
    """The cells of DeepGEMM's row at one shape, and whether its product was in bounds."""
    m, n, k = shape
    a_q, sa = quantize(torch, make_input(torch, m, k, seed), 1)
    b_q, sb = quantize(torch, make_input(torch, n, k, seed + 1), 128)
    # A's scales M-major with M padded to 4 (16 bytes): the layout DeepGEMM's SM90 kernel reads
    m_pad = (m + 3) // 4 * 4
    sa_store = torch.zeros((k // 128, m_pad), dtype=torch.float32, device="cuda")
    sa_store[:, :m] = sa.T
    sfa = sa_store.T[:m]
    d = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")

    def launch():
        deep_gemm.fp8_gemm_nt((a_q, sfa), (b_q, sb), d)

    launch()  # compiles the kernel for this shape (JIT) and gives the product to check
    torch.cuda.synchronize()
    rel, outside, worst = check(torch, d, dequantize(torch, a_q, sa, 1),
                                dequantize(torch, b_q, sb, 128))
    us, launches = timer.time(launch, args.iters, args.warmup)
    status = "ok" if outside == 0 else f"FAIL: {outside} entries outside the bound"
    note = f"slow: median of {launches} launches" if launches != args.iters else ""
    cells = ["x".join(map(str, shape)), "deepgemm", "e4m3/block", fmt_num(us),
             fmt_num(2.0 * m * n * k / (us * 1e6)), "-", f"{rel:.1e}", status]
    return cells, outside == 0, worst, note


def main(argv):
    args = parse_args(argv)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(6), "little")
    chapter_header, chapter_rows, shapes = [], {}, args.shapes or []
    if not args.no_chapter:
        chapter_header, chapter_rows, shapes = run_chapter(args, seed)
    torch, deep_gemm = import_libraries(args.deepgemm)
    timer = Timer(torch)
    header = (chapter_header or [gpu_line(torch)]) + [
        deepgemm_line(deep_gemm, args.deepgemm) +
        f", torch {torch.__version__}; seed {seed}, median of {args.iters} timed launches after "
        f"{args.warmup} warm-up, L2 flushed before each"]
    print("\n".join(header))
    print()
    print(md_row(COLUMNS))
    print(md_rule(COLUMNS, RIGHT), flush=True)
    status, rows, notes = EXIT_OK, [], []
    for shape in shapes:
        label = "x".join(map(str, shape))
        for kernel in CHAPTER_ROWS:
            if (shape, kernel) in chapter_rows:
                rows.append(chapter_rows[(shape, kernel)])
                print(md_row(rows[-1]), flush=True)
        try:
            cells, ok, worst, note = deepgemm_row(torch, deep_gemm, timer, shape, seed, args)
        except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
            cells, ok, worst, note = [label, "deepgemm", "e4m3/block", "-", "-", "-", "-",
                                      f"skip: {one_line(e)}"], True, 0.0, ""
        lib = chapter_rows.get((shape, "cublaslt_block"))
        if lib and cells[4] != "-" and lib[4] not in ("-", ""):
            cells[5] = f"{float(cells[4]) / float(lib[4]):.3f}"
        if not ok:
            status = EXIT_WRONG
        if note:
            notes.append(f"{label} deepgemm: {note}")
        if cells[3] != "-":
            notes.append(f"{label} deepgemm: worst entry at {worst:.2f} of its bound")
        rows.append(cells)
        print(md_row(cells), flush=True)
        torch.cuda.empty_cache()
    print()
    print("\n".join(notes))
    if args.save:
        write_outputs(args.save, header, COLUMNS, RIGHT, rows, notes)
        print(f"\nsaved {args.save}.md and {args.save}.csv")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
