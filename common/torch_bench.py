"""Shared pieces of the optional comparison scripts (08_flash_attn/compare_sdpa.py,
07_fp8_gemm/compare_deepgemm.py): timing a PyTorch-callable launch the way the harness times a
row (docs/design.md, "Timing"), and writing a table the way the chapter binaries' --save does.
Nothing in the build or the tests needs this file; it needs PyTorch only where it times.

Timing: one CUDA event pair around each launch, `warmup` untimed launches first, the L2 flushed
before each timed launch by reading a buffer twice the L2's size (reads leave clean lines, so
the timed kernel pays no write-back for the flush), the median of `iters` timed launches. A
short GPU sleep before each flush lets the host queue the launch (a Python call costs tens of
microseconds of host time) before the GPU reaches the start event, so that the events time the
kernel and not the host. Slow rows, as the harness: if the first warm-up launch takes more than
50 ms, the row gets about 1.5 s of timed launches (at least 3) instead of `iters`."""
import argparse
import csv
import os
import re
import statistics

EXIT_OK, EXIT_WRONG, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3
SLOW_MS, SLOW_BUDGET_MS = 50.0, 1500.0  # the harness's slow-kernel cap
SLEEP_CYCLES = 200_000  # ~100 us at 2 GHz: covers the host's time to queue one call


def count(lo, hi):
    """An argparse type: an integer in lo..hi."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: not an integer")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v}: expected {lo}..{hi}")
        return v
    return parse


def add_run_args(p):
    """The options every comparison script takes, as the chapter binaries name them."""
    p.add_argument("--iters", type=count(1, 100000), default=20,
                   help="timed launches per row, median reported (default 20)")
    p.add_argument("--warmup", type=count(0, 1000), default=3,
                   help="untimed launches first (default 3)")
    p.add_argument("--seed", type=count(0, 2 ** 63 - 1), default=None,
                   help="seed of the inputs (default: drawn, and printed)")
    p.add_argument("--save", metavar="PATH",
                   help="also write PATH.md and PATH.csv (directories are created)")


# ---- numbers and tables ------------------------------------------------------------------------

def fmt_num(v):
    """The harness's format (runner.c, fmt_num): four significant digits, no exponent."""
    if v >= 1000:
        return f"{v:.0f}"
    if v >= 100:
        return f"{v:.1f}"
    if v >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def md_row(cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def md_rule(columns, right):
    return "| " + " | ".join("---:" if c in right else "---" for c in columns) + " |"


def one_line(text, limit=200):
    text = re.sub(r"\s+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def write_outputs(path, header, columns, right, rows, notes):
    """PATH.md and PATH.csv: header lines, the table, the notes (as the chapter's --save)."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path + ".md", "w") as f:
        for line in header:
            f.write(line + "  \n")
        f.write("\n" + md_row(columns) + "\n" + md_rule(columns, right) + "\n")
        for r in rows:
            f.write(md_row(r) + "\n")
        if notes:
            f.write("\n" + "".join(line + "  \n" for line in notes))
    with open(path + ".csv", "w", newline="") as f:
        for line in header:
            f.write("# " + line + "\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)
        for line in notes:
            f.write("# " + line + "\n")


# ---- the machine ---------------------------------------------------------------------------------

def driver_version():
    try:
        with open("/proc/driver/nvidia/version") as f:
            # "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release ..."
            m = re.search(r"Kernel Module.*?\s(\d+\.\d+(?:\.\d+)?)\s", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.split()
        if out:
            return out[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def cuda_driver_api():
    try:
        import ctypes
        v = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v)) == 0:
            return f"{v.value // 1000}.{v.value % 1000 // 10}"
    except (OSError, AttributeError):
        pass
    return "unknown"


def gpu_line(torch):
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0)
    l2_text = f", L2 {l2 / 2 ** 20:.0f} MiB" if l2 else ""
    return (f"GPU: {props.name} (sm_{props.major}{props.minor}, {props.multi_processor_count} SMs, "
            f"{props.total_memory / 2 ** 30:.1f} GiB{l2_text})")


# ---- timing --------------------------------------------------------------------------------------

class Timer:
    def __init__(self, torch):
        self.torch = torch
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 0) or 128 * 2 ** 20  # unknown: assume 128 MiB
        # Twice the L2, written once here (zero_) and read before each timed launch.
        self.flush_buf = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda").zero_()
        self.sleep = getattr(torch.cuda, "_sleep", None)

    def flush_l2(self):
        self.flush_buf.sum()  # reads 2x the L2: clean lines, nothing to write back later

    def timed(self, launch, n_launch):
        """n_launch launches of launch(), each after a flush and between its own events: ms."""
        torch = self.torch
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                 for _ in range(n_launch)]
        for start, end in pairs:
            if self.sleep:
                self.sleep(SLEEP_CYCLES)
            self.flush_l2()
            start.record()
            launch()
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in pairs]

    def time(self, launch, iters, warmup):
        """(median us, number of timed launches); raises what the launch raises."""
        launches = iters
        if warmup:
            first = self.timed(launch, 1)[0]
            if warmup > 1:
                self.timed(launch, warmup - 1)
            if first > SLOW_MS:
                launches = max(3, int(SLOW_BUDGET_MS / first))
        return statistics.median(self.timed(launch, launches)) * 1e3, launches
