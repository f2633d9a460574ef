#!/usr/bin/env python3
"""Shared-memory bank check of chapter 05's address patterns, by enumeration (no GPU).

For every shared-memory access of stages 4-10 (ldmatrix reads, cp.async writes, the final
epilogue's stores and loads), this recomputes the byte address each lane uses, with the same
formulas as the kernels, and counts the wavefronts the access needs:
  - 16-byte accesses (ldmatrix rows, cp.async chunks, LDS.128) are served 8 lanes at a time
    (one 8x8 matrix of an ldmatrix, one quarter of the warp otherwise); a phase needs as many
    wavefronts as the most distinct 16-byte chunks that fall in one of the 8 bank groups
    (4 banks of 4 bytes each, 128 bytes per line): 1 = conflict-free.
  - 4-byte accesses (the epilogue's half2 stores) are served for the whole warp; a warp needs as
    many wavefronts as the most distinct 4-byte words in one of the 32 banks.
It prints, per kernel and access, the phases checked and the worst and total excess wavefronts.
Exit status 1 if any access of the shipped kernels has a conflict (stage 4's cp.async excepted:
its padded 80-byte rows are a known 2-way write conflict, shown for comparison), so it can run
in CI:  python3 05_hgemm_mma/bank_check.py
"""
import sys


def wave16(addrs):
    """Wavefronts for one phase of 16-byte accesses (<= 8 addresses)."""
    groups = {}
    for a in addrs:
        assert a % 16 == 0, a
        groups.setdefault((a // 16) % 8, set()).add(a // 16)
    return max(len(s) for s in groups.values())


def wave4(addrs):
    """Wavefronts for one warp of 4-byte accesses (32 addresses)."""
    banks = {}
    for a in addrs:
        assert a % 4 == 0, a
        banks.setdefault((a // 4) % 32, set()).add(a // 4)
    return max(len(s) for s in banks.values())


def swz(row, chunk, row_bytes=128):
    """Stages 5-10 and final: chunk ^ (row & 7) in rows of row_bytes (128 or 256)."""
    return row * row_bytes + ((chunk ^ (row & 7)) << 4)


results = []  # (kernel, access, phases, worst, excess, allowed)


def check(kernel, access, phases, kind, allowed=False):
    worst, excess, n = 1, 0, 0
    for ph in phases:
        w = wave16(ph) if kind == 16 else wave4(ph)
        worst, excess, n = max(worst, w), excess + w - 1, n + 1
    results.append((kernel, access, n, worst, excess, allowed))


def ldsm_phases(addr_of_lane):
    """The 4 phases of an ldmatrix.x4: lanes 8j..8j+7 give the rows of matrix j."""
    lanes = [addr_of_lane(l) for l in range(32)]
    return [lanes[8 * j:8 * j + 8] for j in range(4)]


def quarter_phases(addr_of_lane):
    lanes = [addr_of_lane(l) for l in range(32)]
    return [lanes[8 * q:8 * q + 8] for q in range(4)]


def gemm_tn(name, BM, BN, WARPS_M, WARPS_N, BK, addr, cp_addr, epilogue):
    """ldmatrix of A and B and cp.async of both tiles for a TN kernel with swizzle `addr`."""
    THREADS = WARPS_M * WARPS_N * 32
    WM, WN = BM // WARPS_M, BN // WARPS_N
    MT, NT = WM // 16, WN // 8
    a_ph, b_ph = [], []
    for warp in range(WARPS_M * WARPS_N):
        wm, wn = (warp // WARPS_N) * WM, (warp % WARPS_N) * WN
        for kk in range(BK // 16):
            for i in range(MT):
                a_ph += ldsm_phases(lambda l: addr(wm + i * 16 + l % 16, 2 * kk + l // 16))
            for j in range(0, NT, 2):
                b_ph += ldsm_phases(
                    lambda l: addr(wn + j * 8 + l % 8 + 8 * (l // 16), 2 * kk + (l // 8) % 2))
    check(name, "ldmatrix A", a_ph, 16)
    check(name, "ldmatrix B", b_ph, 16)
    cp = []
    for rows in (BM, BN):
        for warp in range(THREADS // 32):
            for it in range(rows * (BK // 8) // THREADS):
                cp += quarter_phases(lambda l: cp_addr(warp * 32 + l, it, THREADS))
    check(name, "cp.async writes", cp, 16, allowed=name.startswith("cp_async"))
    if epilogue:
        C_STRIDE = BN + 8  # halves
        st, ld = [], []
        for warp in range(WARPS_M * WARPS_N):
            wm, wn = (warp // WARPS_N) * WM, (warp % WARPS_N) * WN
            for i in range(MT):
                for j in range(NT):
                    for half in (0, 8):
                        st.append([((wm + i * 16 + l // 4 + half) * C_STRIDE + wn + j * 8 +
                                    2 * (l % 4)) * 2 for l in range(32)])
        for it in range(BM * BN // 8 // THREADS):
            for warp in range(THREADS // 32):
                def a(l):
                    idx = warp * 32 + l + it * THREADS
                    return ((idx // (BN // 8)) * C_STRIDE + (idx % (BN // 8)) * 8) * 2
                ld += quarter_phases(a)
        check(name, "epilogue STS (half2)", st, 4)
        check(name, "epilogue LDS.128", ld, 16)


# stage 4: BK = 32, rows padded to 80 bytes, 4 chunks per row
def s4_addr(row, chunk):
    return row * 80 + chunk * 16


def s4_cp(t, it, threads):
    return s4_addr(t // 4 + it * (threads // 4), t % 4)


gemm_tn("cp_async (stage 4)", 128, 128, 2, 4, 32, s4_addr, s4_cp, False)


# stage 5 and the unswizzled control
def s5_cp(t, it, threads):
    return swz(t // 8 + it * (threads // 8), t % 8)


gemm_tn("swizzle (stage 5)", 128, 128, 2, 4, 64, swz, s5_cp, False)
gemm_tn("stage 5 without the XOR (control)", 128, 128, 2, 4, 64, lambda r, c: r * 128 + c * 16,
        lambda t, it, th: (t // 8 + it * (th // 8)) * 128 + (t % 8) * 16, False)
# stages 6, 7, 9: 128x256, 8 warps of 64x64, the same swizzle (9's epilogue is stage 8's)
gemm_tn("warp_tile/raster/f16_accum (6, 7, 9)", 128, 256, 2, 4, 64, swz, s5_cp, True)

# stage 8, every HGEMM_CONFIG: (BM, BN, WARPS_M, WARPS_N, BK)
FINAL = {0: (128, 256, 2, 4, 64), 1: (256, 128, 4, 2, 64), 2: (128, 256, 2, 4, 64),
         3: (128, 128, 2, 2, 64), 4: (128, 256, 2, 4, 64), 5: (128, 256, 2, 4, 128),
         6: (128, 128, 2, 4, 64), 7: (256, 128, 4, 2, 64)}
for cfg, (BM, BN, WMs, WNs, BK) in FINAL.items():
    rb = BK * 2
    ch = BK // 8
    gemm_tn(f"final cfg{cfg} ({BM}x{BN}x{BK})", BM, BN, WMs, WNs, BK,
            lambda r, c, rb=rb: swz(r, c, rb),
            lambda t, it, th, rb=rb, ch=ch: swz(t // ch + it * (th // ch), t % ch, rb), True)
    # LEAN offsets (cfg 6): off(kk) = off(0) ^ (kk << 5) must equal the direct formula
    for row in range(0, BM):
        for h in (0, 1):
            for kk in range(BK // 16):
                assert swz(row, 2 * kk + h, rb) == swz(row, h, rb) ^ (kk << 5)

# stage 10 (NN): A as stage 5; B tile [k][n] in 256-byte k-rows, chunk ^ (k & 7), .trans reads
BN10, THREADS10 = 128, 256
B_CH = BN10 // 8
a_ph, b_ph, cp = [], [], []
for warp in range(8):
    wm, wn = (warp // 4) * 64, (warp % 4) * 32
    for kk in range(4):
        for i in range(4):
            a_ph += ldsm_phases(lambda l: swz(wm + i * 16 + l % 16, 2 * kk + l // 16))
        for j in range(0, 4, 2):
            b_ph += ldsm_phases(lambda l: swz(16 * kk + l % 8 + 8 * ((l // 8) % 2),
                                              (wn + j * 8) // 8 + l // 16, 256))
for warp in range(8):
    for it in range(64 * B_CH // THREADS10):
        cp += quarter_phases(lambda l: swz((warp * 32 + l) // B_CH + it * (THREADS10 // B_CH),
                                           (warp * 32 + l) % B_CH, 256))
check("nn (stage 10)", "ldmatrix A", a_ph, 16)
check("nn (stage 10)", "ldmatrix.trans B", b_ph, 16)
check("nn (stage 10)", "cp.async writes B", cp, 16)

bad = False
print(f"{'kernel':40} {'access':22} {'phases':>7} {'worst':>5} {'excess':>7}")
for k, a, n, w, e, allowed in results:
    control = "control" in k
    flag = "" if w == 1 else (" (expected)" if control or allowed else "  <-- CONFLICT")
    if w > 1 and not (control or allowed):
        bad = True
    print(f"{k:40} {a:22} {n:7} {w:5} {e:7}{flag}")
sys.exit(1 if bad else 0)
