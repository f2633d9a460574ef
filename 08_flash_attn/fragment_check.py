#!/usr/bin/env python3
"""Chapter 08 stages 3-4 on the CPU (no GPU): the fragment and address arithmetic of fa2.cuh and
the two kernels, with ldmatrix (x4, .trans) and mma.m16n8k16 emulated from the PTX ISA's
fragment layouts (9.7.14.5.8 and ldmatrix's), run warp by warp on small problems and compared
with numpy in float64 under the chapter's bounds (O: 2u + 2u|ref|; LSE: 2^-11 + 2^-20|ref|).
It recomputes the kernels' index formulas (tile loads, ldmatrix lane addresses, the mask, the
P packing, the stores) in Python: a change there must be made here too. It also counts the
shared-memory wavefronts of every ldmatrix matrix and cp.async phase (1 = no bank conflict).
The cp.async pipeline (stage 4's double buffers and waits) is not emulated: tiles load in order.

    python3 -m pip install numpy;  python3 08_flash_attn/fragment_check.py
or  python3 08_flash_attn/fragment_check.py N:D:CAUSAL:STAGE:TYPE ...   (e.g. 130:128:1:4:bf16)
Exit status 1 if a case fails its bounds or an access has a bank conflict.
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

def chunk_off(D, swz, row, chunk):
    if swz: return row*D*2 + ((chunk ^ (row & 7)) << 4)
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
    CH = D//8
    for i in range(ROWS*CH//THREADS):
        for q in range(0, THREADS, 8):  # cp.async 16-byte copies: 8 lanes a phase
            c0 = q + i*THREADS
            wave16(f"cp.async stage{'4' if swz else '3'} D={D}",
                   [base + chunk_off(D, swz, (c0+u)//CH, (c0+u) % CH) for u in range(8)])
        for tid in range(THREADS):
            c = tid + i*THREADS; row, chunk = c//CH, c%CH
            vals = mat[r0+row, chunk*8: chunk*8+8] if r0+row < n else np.zeros(8)
            sm.put16(base + chunk_off(D, swz, row, chunk), vals)

def run(Q, K, V, causal, D, stage, dt):
    n = Q.shape[0]; scale = 1/math.sqrt(D)
    if stage == 3: BQ, BK, WARPS, swz, EXP2 = 64, 64, 4, False, False
    else: BQ, BK, WARPS, swz, EXP2 = 128, (128 if D == 64 else 64), 8, True, True
    THREADS = WARPS*32
    rowb = (D+8)*2 if not swz else D*2
    O = np.full((n, D), np.nan); LSE = np.full(n, np.nan)
    q_tiles = (n + BQ - 1)//BQ
    c = scale*1.4426950408889634
    for bx in range(q_tiles):
        tile = bx
        if stage == 4 and causal: tile = q_tiles - 1 - bx
        q0 = tile*BQ
        sm = Smem(rowb*(BQ + BK*2) + 64)
        qs, ks, vs = 0, rowb*BQ, rowb*BQ + rowb*BK
        load_tile(sm, qs, D, swz, BQ, THREADS, Q, q0, n)
        kv_end = min(n, q0+BQ) if (stage == 4 and causal) else n
        k_tiles = (kv_end + BK - 1)//BK
        for w in range(WARPS):
            wq0 = q0 + 16*w
            qf = [ldmatrix_x4(sm, [qs + chunk_off(D, swz, 16*w + l%16, 2*kk + l//16) for l in range(32)], f'ldmatrix Q stage{stage} D={D}') for kk in range(D//16)]
            acc = [[[0.0]*4 for _ in range(D//8)] for t in range(32)]
            m = [[-math.inf]*2 for t in range(32)]; L = [[0.0]*2 for t in range(32)]
            for j in range(k_tiles):
                k0 = j*BK
                load_tile(sm, ks, D, swz, BK, THREADS, K, k0, n)
                load_tile(sm, vs, D, swz, BK, THREADS, V, k0, n)
                NT = BK//8
                s = [[[0.0]*4 for t in range(32)] for jj in range(NT)]
                for kk in range(D//16):
                    for jj in range(0, NT, 2):
                        b = ldmatrix_x4(sm, [ks + chunk_off(D, swz, 8*jj + l%8 + 8*(l//16), 2*kk + (l//8)%2) for l in range(32)], f'ldmatrix K stage{stage} D={D}')
                        a = [qf[kk][t] for t in range(32)]
                        mma(s[jj], a, [[b[t][0], b[t][1]] for t in range(32)])
                        mma(s[jj+1], a, [[b[t][2], b[t][3]] for t in range(32)])
                if stage == 3:
                    for jj in range(NT):
                        for t in range(32): s[jj][t] = [x*scale for x in s[jj][t]]
                domask = True if stage == 3 else (k0 + BK > n or (causal and k0 + BK - 1 > wq0))
                if domask:
                    for jj in range(NT):
                        for t in range(32):
                            query = wq0 + t//4
                            for e in range(4):
                                key = k0 + 8*jj + 2*(t%4) + (e&1)
                                if key >= n or (causal and key > query + 8*(e>>1)): s[jj][t][e] = -math.inf
                p = [None]*32
                for t in range(32):
                    mx = list(m[t])
                    for jj in range(NT):
                        mx[0] = max(mx[0], s[jj][t][0], s[jj][t][1]); mx[1] = max(mx[1], s[jj][t][2], s[jj][t][3])
                    p[t] = mx
                mxq = [[max(p[4*(t//4)+u][i] for u in range(4)) for i in range(2)] for t in range(32)]
                pf = [[None]*4 for _ in range(NT//2)]
                for t in range(32):
                    use = [0.0 if mxq[t][i] == -math.inf else mxq[t][i] for i in range(2)]
                    alpha = [0,0]; sm_ = [0.0, 0.0]
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
                for kk in range(NT//2):
                    pf[kk] = [[(rnd(s[2*kk][t][0],dt), rnd(s[2*kk][t][1],dt)), (rnd(s[2*kk][t][2],dt), rnd(s[2*kk][t][3],dt)),
                               (rnd(s[2*kk+1][t][0],dt), rnd(s[2*kk+1][t][1],dt)), (rnd(s[2*kk+1][t][2],dt), rnd(s[2*kk+1][t][3],dt))] for t in range(32)]
                for kk in range(NT//2):
                    for dtile in range(0, D//8, 2):
                        b = ldmatrix_x4(sm, [vs + chunk_off(D, swz, 16*kk + l%8 + 8*((l//8)%2), dtile + l//16) for l in range(32)], f'ldmatrix.trans V stage{stage} D={D}', trans=True)
                        da = [acc[t][dtile] for t in range(32)]; db = [acc[t][dtile+1] for t in range(32)]
                        mma(da, pf[kk], [[b[t][0], b[t][1]] for t in range(32)])
                        mma(db, pf[kk], [[b[t][2], b[t][3]] for t in range(32)])
                        for t in range(32): acc[t][dtile] = da[t]; acc[t][dtile+1] = db[t]
            for t in range(32):
                query = wq0 + t//4
                for i in range(2):
                    ssum = sum(L[4*(t//4)+u][i] for u in range(4))
                    r = query + 8*i
                    if r < n:
                        for d in range(D//8):
                            col = 8*d + 2*(t%4)
                            O[r, col] = acc[t][d][2*i]/ssum; O[r, col+1] = acc[t][d][2*i+1]/ssum
                        if t % 4 == 0: LSE[r] = m[t][i]*(scale if EXP2 else 1.0) + math.log(ssum)
    return O, LSE

def ref(Q, K, V, causal, D):
    S = Q @ K.T / math.sqrt(D)
    if causal: S = np.where(np.tril(np.ones_like(S)) > 0, S, -np.inf)
    mx = S.max(1, keepdims=True); P = np.exp(S - mx); l = P.sum(1, keepdims=True)
    return P @ V / l, (mx + np.log(l))[:, 0]

DEFAULT = ["1:64:0:3:f16", "17:128:1:3:f16", "130:64:1:3:bf16", "200:128:0:3:f16",
           "1:128:1:4:f16", "17:64:0:4:f16", "130:128:1:4:bf16", "200:64:1:4:f16",
           "257:64:0:4:bf16", "300:128:1:4:f16"]


def main(cases):
    rng = np.random.default_rng(1)
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
        err = np.abs(O - Or)
        ok = not np.isnan(O).any() and bool(np.all(err <= 2*u + 2*u*np.abs(Or)))
        lok = not np.isnan(L).any() and bool(np.all(np.abs(L - Lr) <= 2**-11 + 2**-20*np.abs(Lr)))
        bad += (not ok) + (not lok)
        print(f"{'PASS' if ok and lok else 'FAIL'} n={n} D={D} causal={int(causal)} stage={stage} "
              f"{dt}: O max err {np.nanmax(err):.2e}, LSE max err {np.nanmax(np.abs(L - Lr)):.2e}")
    for name in sorted(WAVES):
        print(f"{'PASS' if WAVES[name] == 1 else 'FAIL'} banks: {name}: worst phase "
              f"{WAVES[name]} wavefront(s)")
        bad += WAVES[name] != 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or DEFAULT))
