#!/usr/bin/env python3
"""Chapter 08 stages 3-4 on the CPU (no GPU): the fragment and address arithmetic of fa2.cuh and
the two kernels, with ldmatrix (x4, .trans) and mma.m16n8k16 emulated from the PTX ISA's
fragment layouts (9.7.14.5.8 and ldmatrix's), run warp by warp on small problems and compared
with numpy in float64 under the chapter's bounds (O: 2u + 2u|ref|; LSE: 2^-11 + 2^-20|ref|).
It recomputes the kernels' index formulas (tile loads, ldmatrix lane addresses, the mask, the
P packing, the stores) in Python: a change there must be made here too. Stage 3: 4 warps of
16 rows (one m16 tile), Q's fragments loaded once. Stage 4: 4 warps of 32 rows (two m16 tiles,
each K/V fragment feeding both), Q's fragments re-read from the swizzled Q tile at every
k-step, K/V in two buffers each (tile j in buffer j & 1), the warp's skip of causal tiles after
its last query, the mask per m-tile. It also counts the shared-memory wavefronts of every
ldmatrix matrix and cp.async phase (1 = no bank conflict). The cp.async pipeline (stage 4's
waits and barriers) is not emulated: tiles load in order, before they are read.

Then the negative controls: each breaks one index formula on purpose (a swapped P register,
V without .trans, K addressed as V, m-tile 1 reading m-tile 0's Q, a live causal tile skipped,
the mask or the store of m-tile 1 at m-tile 0's rows, the tile loads' pass offset dropped, no
mask, no swizzle: right values, bank conflicts) and must make some case fail.

    python3 -m pip install numpy;  python3 08_flash_attn/fragment_check.py
or  python3 08_flash_attn/fragment_check.py N:D:CAUSAL:STAGE:TYPE ...   (e.g. 130:128:1:4:bf16;
    the given cases only, no negative controls)
Exit status 1 if a case fails its bounds, an access has a bank conflict, or a negative control
goes uncaught.
"""
import math
import sys

import numpy as np

WAVES = {}  # access name -> worst wavefronts of one 8-address phase


def wave16(name, addrs):
    groups = {}
    for a in addrs:
        groups.setdefault((a // 16) % 8, set()).add(a // 16)
    WAVES[name] = max(WAVES.get(name, 1), max(len(g) for g in groups.values()))

MUT = set()  # the negative control under way (empty: the kernels as written)


def chunk_off(D, swz, row, chunk):
    if swz:
        r = 0 if 'swz_none' in MUT else row & 7  # swz_none: unswizzled, bank conflicts
        return row*D*2 + ((chunk ^ r) << 4)
    return row*(D+8)*2 + (chunk << 4)

class Smem:
    def __init__(s, nbytes): s.b = np.full(nbytes//2, np.nan)  # 16-bit element slots
    def row8(s, addr):
        assert addr % 16 == 0
        return s.b[addr//2: addr//2 + 8]
    def put16(s, addr, vals8):
        assert addr % 16 == 0
        s.b[addr//2: addr//2+8] = vals8

def ldmatrix_x4(sm, addrs, name, trans=False):
    # addrs[32]: lane 8i + r gives row r of matrix i; returns regs[32][4], each a (lo, hi) pair
    regs = [[None]*4 for _ in range(32)]
    for i in range(4):
        wave16(name, addrs[8*i: 8*i + 8])
        M = np.array([sm.row8(addrs[8*i + r]) for r in range(8)])  # 8x8
        if trans: M = M.T
        for t in range(32):
            regs[t][i] = (M[t//4, 2*(t%4)], M[t//4, 2*(t%4)+1])
    return regs

def mma(d, a, b):
    # d[32][4] floats, a[32][4] pairs, b[32][2] pairs
    A = np.zeros((16,16)); B = np.zeros((16,8)); C = np.zeros((16,8))
    for t in range(32):
        g, p = t//4, 2*(t%4)
        for j,(r,cc) in enumerate([(g,p),(g+8,p),(g,p+8),(g+8,p+8)]):
            A[r,cc], A[r,cc+1] = a[t][j]
        for j,k in enumerate([p, p+8]):
            B[k,g], B[k+1,g] = b[t][j]
        C[g,p], C[g,p+1], C[g+8,p], C[g+8,p+1] = d[t]
    assert not np.isnan(A).any() and not np.isnan(B).any()
    R = A @ B + C
    for t in range(32):
        g, p = t//4, 2*(t%4)
        d[t] = [R[g,p], R[g,p+1], R[g+8,p], R[g+8,p+1]]

def rnd(x, dt):
    return float(np.float16(x)) if dt == 'f16' else bf16(x)
def bf16(x):
    f = np.array([x], dtype=np.float32).view(np.uint32)[0]
    f = (int(f) + 0x7fff + ((int(f) >> 16) & 1)) & 0xffff0000
    return float(np.array([f], dtype=np.uint32).view(np.float32)[0])

def load_tile(sm, base, D, swz, ROWS, THREADS, mat, r0, n):
    # fa2.cuh attn_load_tile: thread t copies chunk t % CH of rows t / CH + i STEP
    CH = D//8; STEP = THREADS//CH; rowb = D*2 if swz else (D+8)*2
    assert THREADS % CH == 0 and STEP % 8 == 0 and ROWS % STEP == 0
    name = f"cp.async stage{'4' if swz else '3'} D={D}"
    def dst(tid, i):
        row, chunk = tid//CH, tid % CH
        off = chunk_off(D, swz, row, chunk) + i*STEP*rowb
        if not MUT:  # the kernel's claim: that is chunk c = t + i THREADS of the tile, swizzled
            c = tid + i*THREADS
            assert off == chunk_off(D, swz, c//CH, c % CH)
        return base + off
    for i in range(ROWS//STEP):
        for q in range(0, THREADS, 8):  # cp.async 16-byte copies: 8 lanes a phase
            wave16(name, [dst(q + u, i) for u in range(8)])
        for tid in range(THREADS):
            row, chunk = tid//CH, tid % CH
            src = r0 + row + (0 if 'load_step' in MUT else i*STEP)
            vals = mat[src, chunk*8: chunk*8+8] if r0 + row + i*STEP < n else np.zeros(8)
            sm.put16(dst(tid, i), vals)

def a_addrs(base, D, swz, row0, kk):
    # fa2.cuh attn_load_a: lane l addresses row row0 + l % 16 at chunk 2 kk + l / 16
    return [base + chunk_off(D, swz, row0 + l % 16, 2*kk + l//16) for l in range(32)]

def run(Q, K, V, causal, D, stage, dt):
    n = Q.shape[0]; scale = 1/math.sqrt(D)
    if stage == 3: BQ, BK, ROWS, swz, EXP2 = 64, 64, 16, False, False
    else: BQ, BK, ROWS, swz, EXP2 = 128, (128 if D == 64 else 64), 32, True, True
    MT, WARPS = ROWS//16, BQ//ROWS
    THREADS = WARPS*32
    NT = BK//8
    rowb = (D+8)*2 if not swz else D*2
    NBUF = 1 if stage == 3 else 2
    O = np.full((n, D), np.nan); LSE = np.full(n, np.nan)
    q_tiles = (n + BQ - 1)//BQ
    c = scale*1.4426950408889634
    for bx in range(q_tiles):
        tile = bx
        if stage == 4 and causal: tile = q_tiles - 1 - bx
        q0 = tile*BQ
        sm = Smem(rowb*(BQ + 2*NBUF*BK))
        qs = 0; ks = rowb*BQ; vs = ks + NBUF*rowb*BK  # ks, vs: NBUF buffers each
        load_tile(sm, qs, D, swz, BQ, THREADS, Q, q0, n)
        kv_end = min(n, q0+BQ) if (stage == 4 and causal) else n
        k_tiles = (kv_end + BK - 1)//BK
        for w in range(WARPS):
            wr0 = ROWS*w; wq0 = q0 + wr0  # the warp's first tile row and query
            if stage == 3:  # Q's fragments once, in registers
                qf = [[ldmatrix_x4(sm, a_addrs(qs, D, swz, wr0 + 16*mt, kk), f'ldmatrix Q stage{stage} D={D}')
                       for kk in range(D//16)] for mt in range(MT)]
            acc = [[[[0.0]*4 for _ in range(D//8)] for t in range(32)] for mt in range(MT)]
            m = [[[-math.inf]*2 for t in range(32)] for mt in range(MT)]
            L = [[[0.0]*2 for t in range(32)] for mt in range(MT)]
            for j in range(k_tiles):
                k0 = j*BK
                cur = (j % NBUF)*rowb*BK
                load_tile(sm, ks + cur, D, swz, BK, THREADS, K, k0, n)
                load_tile(sm, vs + cur, D, swz, BK, THREADS, V, k0, n)
                if stage == 4:  # the warp skips a tile whose first key is after its last query
                    live = not causal or (k0 < wq0 if 'live_off' in MUT else k0 <= wq0 + ROWS - 1)
                    if not live: continue
                s = [[[[0.0]*4 for t in range(32)] for jj in range(NT)] for mt in range(MT)]
                for kk in range(D//16):
                    if stage == 3: a = [qf[mt][kk] for mt in range(MT)]
                    else:  # re-read from the Q tile at each k-step (attn_qk_smem)
                        a = [ldmatrix_x4(sm, a_addrs(qs, D, swz, wr0 + (0 if 'q_mtile' in MUT else 16*mt), kk),
                                         f'ldmatrix Q stage{stage} D={D}') for mt in range(MT)]
                    for jj in range(0, NT, 2):  # attn_qk_step
                        if 'k_addr' in MUT:
                            ka = [ks + cur + chunk_off(D, swz, 8*jj + l%8 + 8*((l//8)%2), 2*kk + l//16) for l in range(32)]
                        else:
                            ka = [ks + cur + chunk_off(D, swz, 8*jj + l%8 + 8*(l//16), 2*kk + (l//8)%2) for l in range(32)]
                        b = ldmatrix_x4(sm, ka, f'ldmatrix K stage{stage} D={D}')
                        for mt in range(MT):
                            mma(s[mt][jj], a[mt], [[b[t][0], b[t][1]] for t in range(32)])
                            mma(s[mt][jj+1], a[mt], [[b[t][2], b[t][3]] for t in range(32)])
                pf = [None]*MT
                for mt in range(MT):
                    if stage == 3:
                        for jj in range(NT):
                            for t in range(32): s[mt][jj][t] = [x*scale for x in s[mt][jj][t]]
                    if stage == 3: domask = True
                    elif 'no_mask' in MUT: domask = False
                    else: domask = k0 + BK > n or (causal and k0 + BK - 1 > wq0 + 16*mt)
                    if domask:  # attn_mask(s[mt], k0, query + 16 mt, ...)
                        mq = wq0 + (0 if 'mask_query' in MUT else 16*mt)
                        for jj in range(NT):
                            for t in range(32):
                                query = mq + t//4
                                for e in range(4):
                                    key = k0 + 8*jj + 2*(t%4) + (e&1)
                                    if key >= n or (causal and key > query + 8*(e>>1)): s[mt][jj][t][e] = -math.inf
                    pf[mt] = softmax(s[mt], acc[mt], m[mt], L[mt], NT, D, EXP2, c, dt)
                for kk in range(NT//2):  # attn_pv
                    for dtile in range(0, D//8, 2):
                        va = [vs + cur + chunk_off(D, swz, 16*kk + l%8 + 8*((l//8)%2), dtile + l//16) for l in range(32)]
                        b = ldmatrix_x4(sm, va, f'ldmatrix.trans V stage{stage} D={D}', trans='v_notrans' not in MUT)
                        for mt in range(MT):
                            da = [acc[mt][t][dtile] for t in range(32)]; db = [acc[mt][t][dtile+1] for t in range(32)]
                            mma(da, pf[mt][kk], [[b[t][0], b[t][1]] for t in range(32)])
                            mma(db, pf[mt][kk], [[b[t][2], b[t][3]] for t in range(32)])
                            for t in range(32): acc[mt][t][dtile] = da[t]; acc[mt][t][dtile+1] = db[t]
            for mt in range(MT):  # attn_store(acc[mt], ..., query + 16 mt, ...)
                mq = wq0 + (0 if 'store_mt' in MUT else 16*mt)
                for t in range(32):
                    query = mq + t//4
                    for i in range(2):
                        ssum = sum(L[mt][4*(t//4)+u][i] for u in range(4))
                        r = query + 8*i
                        if r < n:
                            for d in range(D//8):
                                col = 8*d + 2*(t%4)
                                O[r, col] = acc[mt][t][d][2*i]/ssum; O[r, col+1] = acc[mt][t][d][2*i+1]/ssum
                            if t % 4 == 0: LSE[r] = m[mt][t][i]*(scale if EXP2 else 1.0) + math.log(ssum)
    return O, LSE

def softmax(s, acc, m, L, NT, D, EXP2, c, dt):
    # fa2.cuh attn_softmax on one m-tile: s[NT][32][4], acc[32][D/8][4], m, L [32][2]; returns P
    # as A fragments pf[NT/2][32][4]
    p = [None]*32
    for t in range(32):
        mx = list(m[t])
        for jj in range(NT):
            mx[0] = max(mx[0], s[jj][t][0], s[jj][t][1]); mx[1] = max(mx[1], s[jj][t][2], s[jj][t][3])
        p[t] = mx
    mxq = [[max(p[4*(t//4)+u][i] for u in range(4)) for i in range(2)] for t in range(32)]
    for t in range(32):
        use = [0.0 if mxq[t][i] == -math.inf else mxq[t][i] for i in range(2)]
        alpha = [0, 0]; sm_ = [0.0, 0.0]
        for i in range(2):
            if EXP2:
                use[i] *= c; alpha[i] = 2**(m[t][i]*c - use[i]) if m[t][i] != -math.inf else 0.0
            else:
                alpha[i] = math.exp(m[t][i] - use[i]) if m[t][i] != -math.inf else 0.0
            m[t][i] = mxq[t][i]
        for jj in range(NT):
            for e in range(4):
                i = e >> 1; x = s[jj][t][e]
                if x == -math.inf: v = 0.0
                else: v = 2**(x*c - use[i]) if EXP2 else math.exp(x - use[i])
                s[jj][t][e] = v; sm_[i] += v
        for i in range(2): L[t][i] = alpha[i]*L[t][i] + sm_[i]
        for d in range(D//8):
            acc[t][d][0] *= alpha[0]; acc[t][d][1] *= alpha[0]; acc[t][d][2] *= alpha[1]; acc[t][d][3] *= alpha[1]
    r = lambda x: rnd(x, dt)
    a1, a2 = (2, 1) if 'p_swap' in MUT else (1, 2)  # the negative control swaps P's a1 and a2
    pf = []
    for kk in range(NT//2):
        f = [None]*32
        for t in range(32):
            regs = [(r(s[2*kk][t][0]), r(s[2*kk][t][1])), (r(s[2*kk][t][2]), r(s[2*kk][t][3])),
                    (r(s[2*kk+1][t][0]), r(s[2*kk+1][t][1])), (r(s[2*kk+1][t][2]), r(s[2*kk+1][t][3]))]
            f[t] = [regs[0], regs[a1], regs[a2], regs[3]]
        pf.append(f)
    return pf

def ref(Q, K, V, causal, D):
    S = Q @ K.T / math.sqrt(D)
    if causal: S = np.where(np.tril(np.ones_like(S)) > 0, S, -np.inf)
    mx = S.max(1, keepdims=True); P = np.exp(S - mx); l = P.sum(1, keepdims=True)
    return P @ V / l, (mx + np.log(l))[:, 0]

DEFAULT = ["1:64:0:3:f16", "17:128:1:3:f16", "130:64:1:3:bf16", "200:128:0:3:f16",
           "1:128:1:4:f16", "17:64:0:4:f16", "130:128:1:4:bf16", "200:64:1:4:f16",
           "257:64:0:4:bf16", "300:128:1:4:f16", "256:128:0:4:f16", "129:64:1:4:bf16"]

# Each negative control, and the cases of which at least one must fail under it.
NEG_CASES = ["130:128:1:4:f16", "200:64:1:4:bf16"]
NEGATIVE = ["p_swap", "v_notrans", "k_addr", "q_mtile", "live_off", "mask_query", "store_mt",
            "load_step", "no_mask", "swz_none"]


def check(cases, rng, quiet=False):
    """Runs the cases; returns the number of failures (bounds and bank conflicts)."""
    global WAVES
    WAVES = {}
    bad = 0
    for case in cases:
        a, b, cz, st, dt = case.split(":")
        n, D, causal, stage = int(a), int(b), cz == "1", int(st)
        Q = np.vectorize(lambda x: rnd(x, dt))(rng.uniform(-2, 2, (n, D)))
        K = np.vectorize(lambda x: rnd(x, dt))(rng.uniform(-2, 2, (n, D)))
        V = np.vectorize(lambda x: rnd(x, dt))(rng.uniform(-1, 1, (n, D)))
        O, L = run(Q, K, V, causal, D, stage, dt)
        Or, Lr = ref(Q, K, V, causal, D)
        u = 2**-11 if dt == "f16" else 2**-8
        with np.errstate(invalid="ignore"):
            err = np.abs(O - Or)
            ok = not np.isnan(O).any() and bool(np.all(err <= 2*u + 2*u*np.abs(Or)))
            lok = not np.isnan(L).any() and bool(np.all(np.abs(L - Lr) <= 2**-11 + 2**-20*np.abs(Lr)))
        bad += (not ok) + (not lok)
        if not quiet:
            print(f"{'PASS' if ok and lok else 'FAIL'} n={n} D={D} causal={int(causal)} stage={stage} "
                  f"{dt}: O max err {np.nanmax(err):.2e}, LSE max err {np.nanmax(np.abs(L - Lr)):.2e}")
    for name in sorted(WAVES):
        if not quiet:
            print(f"{'PASS' if WAVES[name] == 1 else 'FAIL'} banks: {name}: worst phase "
                  f"{WAVES[name]} wavefront(s)")
        bad += WAVES[name] != 1
    return bad


def main(cases):
    rng = np.random.default_rng(1)
    bad = check(cases or DEFAULT, rng)
    if not cases:
        for mut in NEGATIVE:
            MUT.clear(); MUT.add(mut)
            try:
                caught = check(NEG_CASES, rng, quiet=True)
            except (AssertionError, ZeroDivisionError, IndexError, ValueError):
                caught = 1  # an access outside the tile, a NaN operand, a row with no key
            MUT.clear()
            print(f"{'PASS' if caught else 'FAIL'} negative control {mut}: "
                  f"{'caught' if caught else 'NOT caught'} ({caught} failure(s) in {len(NEG_CASES)} cases)")
            bad += not caught
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
