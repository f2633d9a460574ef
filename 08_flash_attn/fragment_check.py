#!/usr/bin/env python3
"""Chapter 08 stages 3-6 on the CPU (no GPU): the fragment and address arithmetic of fa2.cuh and
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

Stage 5 (sm_90a) is emulated from hardware models written down from the PTX ISA (run5): the
128-byte swizzle on byte addresses, TMA boxes of the 3D maps (clipped at n: the next head, all
NaN, must never be read), the wgmma descriptors of K-major and MN-major operands, the m64nN
accumulator layout and the rs A-fragment layout (both asserted bijective); the two consumers of
64 rows, the 2-slot rings, the mask, the softmax and the store on the registers. ring5 plays the
mbarrier protocol (parities, counts, expect_tx) under random interleavings of the producer, the
copies landing and the two consumers. Not emulated: the asynchrony of wgmma itself (each batch
is waited for before use in the kernel), setmaxnreg, the hardware's rounding inside the MMA.

Stage 6 (run5 with six): stage 5's models in stage 6's order (P_{j-1} V_{j-1} added in the turn
of S_j, before tile j's rescale; P packed after it), its 3-slot rings at D = 64, its mask (tile 0
by stage 5's test, later tiles only at the last one). ring6 plays its protocol warp by warp: the
two named barriers of the turns (bar.sync / bar.arrive counted by warps, 256 threads a phase)
with stage 5's mbarrier rings, the wgmma groups' reads of the slots held until the wait_group
that retires them, under random interleavings (see its docstring for what it asserts), over a
persistent block's 1-4 items: the rings' positions and parities running on across items, Q in
1 or 2 buffers with full and empty barriers, the turns' first arrival and last sync once a
block, and the boundary turn between items (the next item's S_0 and the current item's last
P V in one turn; the block's first item keeps a standalone tile 0, its last the final P V
outside the turns). items6 checks the persistent work list (every (pair, q tile) once at any grid). The
kernel's finish order (FlashAttention-3's, at both D since the persistent change) is the program
order modelled; the placement behind the loop's branch it replaced at D = 64 was the same
program order too.

Then the negative controls: each breaks one index formula on purpose (a swapped P register,
V without .trans, K addressed as V, m-tile 1 reading m-tile 0's Q, a live causal tile skipped,
the mask or the store of m-tile 1 at m-tile 0's rows, the tile loads' pass offset dropped, no
mask, no swizzle: right values, bank conflicts; stage 5: P's registers 1 and 2 swapped, V read
K-major, V's LBO and SBO swapped, V's k-step 1024 instead of 2048, consumer 1 reading consumer
0's Q rows, Q's k-step without the panel, no mask, boxes not clipped at n; the ring: the
consumers' parity flipped, the producer's parity without the flip, an empty count of 4;
stage 6: the mask on the last tile but one, O rescaled before the previous P V is added; its
ring: no first turn for consumer 0, a consumer arriving on its own id, the turn handed over
before P V is issued, no final sync of consumer 0, consumers with different tile counts, K or V
handed back before its wgmma retired, P V reading tile j's slot, the parity flipped, an empty
count of 4, the rings reset at every item, Q handed back before the item's last S retired,
consumer 1's first arrival repeated at every item) and must make some case fail.

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
    if stage == 5: return run5(Q, K, V, causal, D, dt)
    if stage == 6: return run5(Q, K, V, causal, D, dt, six=True)
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

# ---- stage 5 (kernels/05_wgmma_sm90a.cu): TMA, wgmma descriptors, the wgmma fragments ----------
# Hardware models, from the PTX ISA (not from the kernel):
#  - the 128-byte swizzle acts on shared-memory byte addresses: bits 4-6 ^= bits 7-9 (TMA writes
#    so, and wgmma reads so: the model of common/ptx/wgmma.cuh, checked on a GPU in chapter 06);
#  - a descriptor (start, LBO, SBO) with the 128-byte swizzle addresses, for a K-major operand of
#    R rows x k16, element (r, k) at start + 128 (r % 8) + SBO (r / 8) + 2 k ("canonical layouts":
#    ((8,m),(T,2k)):((8T,SBO),(1,T))), and for an MN-major one (k16 x N), element (k, j) at
#    start + 2 (j % 64) + LBO (j / 64) + 128 (k % 8) + SBO (k / 8) (((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)),
#    T = 8 16-bit elements), then swizzled;
#  - the m64nN fp32 accumulator: thread t (warp w = t / 32, lane l) register i holds row
#    16 w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2;
#  - the rs A fragment (16-bit, k16): register r, half e of thread t holds row 16 w + l / 4 +
#    8 (r % 2), column 2 (l % 4) + 8 (r / 2) + e (figure "WGMMA .m64nNk16 register fragment
#    layout for matrix A": mma.m16n8k16's A layout per warp).
# The kernel's side (recomputed here: change both together): the tile layout in panels, the
# descriptors it builds, the mask condition, fa2.cuh's softmax and store on the n8-tile view, the
# P packing p[kk][r] = registers 8 kk + 2 r, + 1, the 3D maps' clipping at n.
def SW(a): return a ^ (((a >> 7) & 7) << 4)

T128 = np.arange(128)
def acc_rc(N):
    t, i = T128[:, None], np.arange(N//2)[None, :]
    w, l = t//32, t % 32
    return 16*w + l//4 + 8*((i//2) % 2), 8*(i//4) + 2*(l % 4) + i % 2
def a_rc():
    t, r, e = T128[:, None, None], np.arange(4)[None, :, None], np.arange(2)[None, None, :]
    w, l = t//32, t % 32
    return (16*w + l//4 + 8*(r % 2)) + 0*e, 2*(l % 4) + 8*(r//2) + e
def bijective(rows, cols, R, C):
    seen = np.zeros((R, C), int); np.add.at(seen, (rows, cols), 1)
    assert (seen == 1).all(), "a fragment layout that is not a bijection"

def read_kmajor(sm, start, sbo, R):
    r, k = np.arange(R)[:, None], np.arange(16)[None, :]
    return sm.b[SW(start + 128*(r % 8) + sbo*(r//8) + 2*k)//2]
def read_mnmajor(sm, start, lbo, sbo, N):
    k, j = np.arange(16)[:, None], np.arange(N)[None, :]
    return sm.b[SW(start + 2*(j % 64) + lbo*(j//64) + 128*(k % 8) + sbo*(k//8))//2]

def tma_box(sm, dst, G, c0, row0, pair, rows):
    # a {64, rows, 1} box of the 3D map {D, n, pairs} at (c0, row0, pair): zeros past row n
    # ('no_clip': the next pair's rows, what a 2D map over [pairs n, D] would read)
    pairs, n, D = G.shape
    flat = G.reshape(pairs*n, D)
    for r in range(rows):
        rr = row0 + r
        if rr < n: vals = G[pair, rr, c0:c0+64]
        elif 'no_clip' in MUT and pair*n + rr < pairs*n: vals = flat[pair*n + rr, c0:c0+64]
        else: vals = np.zeros(64)
        for ch in range(8): sm.put16(SW(dst + 128*r + 16*ch), vals[8*ch:8*ch+8])

def run5(Q, K, V, causal, D, dt, six=False):
    """Stage 5, or with six stage 6: its ring of 3 slots at D = 64, its order (P_{j-1} V_{j-1}
    added before tile j's rescale, P packed after it), its mask on tile 0 by stage 5's test and
    on tiles j >= 1 only at the last one."""
    n = Q.shape[0]; scale = 1/math.sqrt(D); c = scale*1.4426950408889634
    BQ = BK = 128; STAGES = 3 if six and D == 64 else 2; PANELS = D//64
    QP, KVP = BQ*128, BK*128; QB, KVB = PANELS*QP, PANELS*KVP
    q_s = 1024; k_s = q_s + QB; v_s = k_s + STAGES*KVB  # 1024-aligned, as the kernel's
    sm = Smem(v_s + STAGES*KVB)
    # pair 0 is the problem; pair 1 a next head of NaNs that the 3D maps must never read
    nan = np.full((n, D), np.nan)
    GQ, GK, GV = (np.stack([M, nan]) for M in (Q, K, V))
    ar, ac = acc_rc(BK); bijective(ar, ac, 64, BK)
    orr, occ = acc_rc(D); bijective(orr, occ, 64, D)
    pr, pc = a_rc(); bijective(pr, pc, 64, 16)
    if 'p5_swap' in MUT: pr, pc = pr[:, [0, 2, 1, 3]], pc[:, [0, 2, 1, 3]]
    h_of = (np.arange(BK//2)//2) % 2; ho_of = (np.arange(D//2)//2) % 2
    O = np.full((n, D), np.nan); LSE = np.full(n, np.nan)
    q_tiles = (n + BQ - 1)//BQ
    for bx in range(q_tiles):
        tile = q_tiles - 1 - bx if causal else bx
        q0 = tile*BQ
        kv_end = min(n, q0 + BQ) if causal else n
        k_tiles = (kv_end + BK - 1)//BK
        for p in range(PANELS): tma_box(sm, q_s + p*QP, GQ, 64*p, q0, 0, BQ)
        state = []
        for cons in range(2):
            first = q0 + 64*cons
            query = first + 16*(T128//32) + (T128 % 32)//4
            state.append(dict(acc=np.zeros((128, D//2)), m=np.full((128, 2), -math.inf),
                              L=np.zeros((128, 2)), first=first, query=query))
        def pv(S_, P, st):  # O += P V from slot st: BK / 16 k-steps of the rs form
            Om = np.zeros((64, D)); Om[orr, occ] = S_['acc']
            for kk in range(BK//16):  # P's k-step kk: registers 8 kk + 2 r, + 1 (r = 0..3)
                regs = P[:, 8*kk:8*kk+8].reshape(128, 4, 2)
                A = np.full((64, 16), np.nan); A[pr, pc] = regs
                if 'v_kmajor' in MUT:
                    B = read_kmajor(sm, v_s + st*KVB + 2048*kk, 1024, D).T
                else:
                    lbo, sbo = (1024, KVP) if 'v_lbo_sbo' in MUT else (KVP, 1024)
                    step = 1024 if 'v_kstep' in MUT else 2048
                    B = read_mnmajor(sm, v_s + st*KVB + step*kk, lbo, sbo, D)
                Om += A @ B
            S_['acc'] = Om[orr, occ]
        for j in range(k_tiles):
            st = j % STAGES; k0 = j*BK
            for p in range(PANELS):  # the producer: K_j and V_j into slot j % STAGES
                tma_box(sm, k_s + st*KVB + p*KVP, GK, 64*p, k0, 0, BK)
                tma_box(sm, v_s + st*KVB + p*KVP, GV, 64*p, k0, 0, BK)
            for cons in range(2):
                S_ = state[cons]
                qc = q_s + 64*(0 if 'q_consumer' in MUT else cons)*128
                S = np.zeros((64, BK))
                for kk in range(D//16):
                    koff = 32*kk if 'q_panel' in MUT else (kk//4)*QP + 32*(kk % 4)
                    A = read_kmajor(sm, qc + koff, 1024, 64)
                    B = read_kmajor(sm, k_s + st*KVB + (kk//4)*KVP + 32*(kk % 4), 1024, BK)
                    S += A @ B.T
                s = S[ar, ac]  # the registers
                early = 'rescale6_early' in MUT and six and j >= 1  # O rescaled before P V lands
                if six and j >= 1 and not early:  # P_{j-1} V_{j-1}, in the same turn as S_j
                    pv(S_, S_['P'], (j - 1) % STAGES)
                first, query = S_['first'], S_['query']
                domask = k0 + BK > n or (causal and k0 + BK - 1 > first)
                if six and j >= 1:  # the loop's masked instantiation: the last tile only
                    domask = j == (k_tiles - 2 if 'mask6_tile' in MUT else k_tiles - 1)
                if domask and 'no_mask5' not in MUT:  # attn_mask on the n8-tile view
                    key = k0 + 8*(np.arange(BK//2)//4)[None, :] + 2*(T128 % 4)[:, None] + (np.arange(BK//2) % 2)[None, :]
                    qq = query[:, None] + 8*h_of[None, :]
                    s = np.where((key >= n) | (causal & (key > qq)), -np.inf, s)
                # attn_softmax: the row max over the quad, alpha, p = 2^(s c - use), l, rescale
                m, L, acc = S_['m'], S_['L'], S_['acc']
                mx = np.stack([np.maximum(m[:, h], s[:, h_of == h].max(1)) for h in range(2)], 1)
                mx = mx.reshape(32, 4, 2).max(1).repeat(4, 0)  # lanes_max<4>: quads of lanes 4g..4g+3
                use = np.where(mx == -np.inf, 0.0, mx)*c
                with np.errstate(invalid="ignore"):
                    alpha = np.where(m == -np.inf, 0.0, np.exp2(m*c - use))
                    e = np.where(s == -np.inf, 0.0, np.exp2(s*c - use[:, h_of]))
                S_['m'] = mx
                S_['L'] = alpha*L + np.stack([e[:, h_of == h].sum(1) for h in range(2)], 1)
                acc *= alpha[:, ho_of]
                if early: pv(S_, S_['P'], (j - 1) % STAGES)
                P = np.vectorize(lambda x: rnd(x, dt))(e)
                if six: S_['P'] = P  # (its P V: next turn, or after the loop)
                else: pv(S_, P, st)
        if six:  # the last tile's P V, outside the turns
            for cons in range(2): pv(state[cons], state[cons]['P'], (k_tiles - 1) % STAGES)
        for cons in range(2):  # attn_store on the n8-tile view
            S_ = state[cons]
            ssum = S_['L'].reshape(32, 4, 2).sum(1).repeat(4, 0)
            for h in range(2):
                r = S_['query'] + 8*h
                for t in range(128):
                    if r[t] < n:
                        cols = occ[t, ho_of == h]
                        O[r[t], cols] = S_['acc'][t, ho_of == h]/ssum[t, h]
                        if t % 4 == 0: LSE[r[t]] = S_['m'][t, h]*scale + math.log(ssum[t, h])
    return O, LSE

class MBar:
    """An mbarrier (PTX ISA, mbarrier): a phase completes when its arrivals reach the count and
    its tx-count is 0; try_wait.parity(P) passes once the phase of parity P has completed, i.e.
    while the current phase's parity is not P."""
    def __init__(b, count): b.count, b.arr, b.tx, b.phase = count, 0, 0, 0
    def arrive(b, tx=0): b.arr += 1; b.tx += tx; b.flip()
    def complete(b, nbytes): b.tx -= nbytes; b.flip()
    def flip(b):
        if b.arr == b.count and b.tx == 0: b.phase += 1; b.arr = 0
    def passed(b, parity): return (b.phase & 1) != parity

def interleave(rng, actors, flying, readers, tag, full):
    """Run the actors (generators yielding "may I go on?" conditions) and the copies in flight
    (kind, slot, tile) in a random order until all are done: each step picks one ready actor,
    or lands one copy on its full barrier (asserting nobody still reads the slot)."""
    conds = [lambda: True]*len(actors)
    done = [False]*len(actors)
    while not all(done) or flying:
        ready = [i for i in range(len(actors)) if not done[i] and conds[i]()]
        choices = ready + (["tma"] if flying else [])
        assert choices, "deadlock"
        pick = choices[rng.integers(len(choices))]
        if pick == "tma":
            x, st, j = flying.pop(rng.integers(len(flying)))
            assert not readers[x][st], f"{x} {j} landed in slot {st} being read"
            tag[x][st] = j
            full[x][st].complete(1)
            continue
        try: conds[pick] = next(actors[pick])
        except StopIteration: done[pick] = True

def ring5(k_tiles, rng):
    """Stage 5's mbarrier protocol under random interleavings: a producer (K_j, V_j into slot
    j % 2 after waiting on the slot's empty barrier, parity ((j / 2) & 1) ^ 1, then
    arrive.expect_tx), copies that land at random later times (complete_tx), and two consumers
    (wait on full with parity (j / 2) & 1, read, one arrival per warp on empty, count 8).
    Asserts that a consumer reads exactly tile j, that no copy is issued into or lands in a slot
    being read, and that nothing deadlocks. Barrier model (PTX ISA, mbarrier): a phase completes
    when its arrivals reach the count and its tx-count is 0; try_wait.parity(P) passes once the
    phase of parity P has completed, i.e. while the current phase's parity is not P."""
    STAGES, CONS = 2, 2
    empty_count = 4 if 'empty_count' in MUT else CONS*4
    full = {x: [MBar(1) for _ in range(STAGES)] for x in "KV"}
    empty = {x: [MBar(empty_count) for _ in range(STAGES)] for x in "KV"}
    tag = {x: [None]*STAGES for x in "KV"}
    readers = {x: [set() for _ in range(STAGES)] for x in "KV"}
    flying = []  # copies issued, not landed: (kind, slot, tile)
    def producer():
        for j in range(k_tiles):
            st = j % STAGES
            par = (j//STAGES) & 1 if 'producer_parity' in MUT else ((j//STAGES) & 1) ^ 1
            for x in "KV":
                yield lambda x=x, st=st, par=par: empty[x][st].passed(par)
                assert not readers[x][st], f"{x} tile {j} issued into a slot being read"
                full[x][st].arrive(tx=1)
                flying.append((x, st, j))
    def consumer(cons):
        for j in range(k_tiles):
            st = j % STAGES
            par = ((j//STAGES) & 1) ^ (1 if 'parity_flip' in MUT else 0)
            for x in "KV":
                yield lambda x=x, st=st, par=par: full[x][st].passed(par)
                assert tag[x][st] == j, f"consumer {cons} read {x} tile {tag[x][st]} for tile {j}"
                readers[x][st].add(cons)
                yield lambda: True  # the wgmmas read the slot
                readers[x][st].discard(cons)
                for _ in range(4): empty[x][st].arrive()  # lane 0 of each of the 4 warps
    interleave(rng, [producer(), consumer(0), consumer(1)], flying, readers, tag, full)

def check_ring5(rng, runs=300):
    bad = 0
    for r in range(runs):
        try: ring5(int(rng.integers(1, 7)), rng)
        except AssertionError as e:
            bad += 1
            if not MUT: print(f"FAIL ring (stage 5 mbarriers): {e}")
    return bad

def ring6(k_tiles, stages, rng, tiles1=None, qbufs=2, storer=False):
    stages = stages if isinstance(stages, dict) else {"K": stages, "V": stages}
    """Stage 6's protocol under random interleavings, warp by warp, over a persistent block's
    items (k_tiles: the key tile count of each item, in order): the producer (per item: wait on
    Q buffer it % qbufs's empty barrier, parity ((it / qbufs) & 1) ^ 1, load Q, then the item's
    K/V tiles on ring positions that run on across items) and stage 5's mbarrier rings (STAGES
    slots: 2 at D = 128, 3 at D = 64), copies landing at random later times, and 8 consumer
    warps (2 warpgroups of 4) each running the kernel's program order: consumer 1 arrives once
    on TURN 0 (once per kernel); per item, wait on Q's full barrier (parity (it / qbufs) & 1),
    then every turn is bar.sync TURN c, the waits on full barriers and the issues of the turn,
    bar.arrive TURN 1 - c; the item's last S landed, each warp arrives on Q's empty barrier;
    between items the boundary turn (Q and K_0 of the next item waited for before bar.sync,
    then S_0 of the next item and P_{T-1} V_{T-1} of the current one in the turn), only the
    block's first item having a standalone tile 0 and only its last a P V outside the turns;
    wgmma groups commit in order, and wait_group N retires the oldest until N are left (a group
    only once all four warps of its consumer have issued it: wgmma is warpgroup-collective); after
    the last item's store consumer 0 syncs once more on TURN 0. A wgmma's reads of its slot (and
    S's of Q) are taken to last from its issue to the wait_group that retires it (the latest the
    hardware may read). Named barrier model (PTX ISA, bar.sync / bar.arrive with a count): each
    warp counts 32 threads; a phase of 256 completes when 8 warps have arrived (sync or
    arrive), and releases the syncing warps.
    Asserts: every wgmma reads a slot whose full phase has passed and that holds its tile (and
    S the item's Q); no copy is issued into or lands in a slot or Q buffer with a read in
    flight; a warp hands a slot or Q back only after its own reads of it have retired, and an
    empty phase completes only with no read in flight (both consumers' last reads done); every
    phase of TURN c is 4 syncs of consumer c and 4 arrivals of consumer 1 - c; no warp of one
    consumer is inside its turn while one of the other is; both named barriers end with no
    arrival pending; nothing deadlocks.
    tiles1: consumer 1's tile count of the first item where it differs from consumer 0's (a
    negative control).
    storer (D = 128, 6g): no warp hands Q back at the item's last S; instead each warp of
    consumer c, after the item's last P V has retired, writes its rows of O into its consumer's
    rows of the item's Q buffer (asserting no S of that consumer still reads the buffer) and
    arrives on staged[buffer][c] (count 4); a storer actor waits on staged[b][0] and
    staged[b][1] at parity (it / qbufs) & 1, its TMA stores read the rows, then it arrives on Q's
    empty barrier (count 1). The producer's Q load into a buffer whose O is unread fails the
    "being read" assertions."""
    class Named:
        def __init__(nb, ident): nb.id, nb.gen, nb.syncs, nb.arrivals = ident, 0, [], []
        def count(nb): return len(nb.syncs) + len(nb.arrivals)
        def flip(nb):
            if nb.count() < 8: return
            owner = nb.id - TURN
            assert all(c == owner for c, _ in nb.syncs) and len(nb.syncs) == 4, \
                f"TURN {nb.id} phase completed by syncs {nb.syncs}, arrivals {nb.arrivals}"
            assert all(c == 1 - owner for c, _ in nb.arrivals), \
                f"TURN {nb.id}: arrivals {nb.arrivals} from its own consumer"
            nb.gen += 1; nb.syncs, nb.arrivals = [], []
    if isinstance(k_tiles, int): k_tiles = [k_tiles]
    TURN, CONS, WARPS = 1, 2, 4
    empty_count = 4 if 'empty_count6' in MUT else CONS*WARPS
    full = {x: [MBar(1) for _ in range(stages[x])] for x in "KV"}
    empty = {x: [MBar(empty_count) for _ in range(stages[x])] for x in "KV"}
    full["Q"] = [MBar(1) for _ in range(qbufs)]
    empty["Q"] = [MBar(1 if storer else CONS*WARPS) for _ in range(qbufs)]
    staged = [[MBar(WARPS) for _ in range(CONS)] for _ in range(qbufs)]
    def staged_bar(b, c, it):  # the barrier and parity of item it's rows of consumer c
        if 'storer_one_barrier' in MUT: return staged[0][c], it & 1
        return staged[b][c], (it//qbufs) & 1
    tag = {x: [None]*len(full[x]) for x in "KVQ"}
    readers = {x: [set() for _ in range(len(full[x]))] for x in "KVQ"}
    flying = []  # copies issued, not landed: (kind, slot, tile or item)
    named = {TURN + c: Named(TURN + c) for c in range(CONS)}
    issued = {(c, w): 0 for c in range(CONS) for w in range(WARPS)}  # wgmma groups issued
    in_turn = set()
    def producer():
        ring = 0
        for it, tiles in enumerate(k_tiles):
            if it == 0 and tiles1 is not None: tiles = max(tiles, tiles1)
            b = it % qbufs
            yield lambda b=b, it=it: empty["Q"][b].passed(((it//qbufs) & 1) ^ 1)
            assert not readers["Q"][b], f"Q of item {it} issued into buffer {b} being read"
            full["Q"][b].arrive(tx=1); flying.append(("Q", b, it))
            for j in range(tiles):
                r = 0 if 'ring_reset' in MUT else ring
                for x in "KV":
                    st, ns = (r + j) % stages[x], stages[x]
                    yield lambda x=x, st=st, r=r, j=j, ns=ns: empty[x][st].passed((((r + j)//ns) & 1) ^ 1)
                    assert not readers[x][st], f"{x} tile {j} issued into slot {st} being read"
                    full[x][st].arrive(tx=1)
                    flying.append((x, st, (it, j)))
            ring += tiles
    def consumer(c, w):
        me = (c, w)
        groups = []  # committed groups, oldest first: lists of (kind, slot)
        last_item = len(k_tiles) - 1
        class Item:  # one work item as the consumer sees it: ring positions ring + j, Q buffer b
            def __init__(x, it, tiles, ring):
                x.it, x.tiles, x.ring, x.b = it, tiles, ring, it % qbufs
        def wait_full(x, kind, j):
            st = (x.ring + j) % stages[kind]
            par = (((x.ring + j)//stages[kind]) & 1) ^ (1 if 'parity_flip6' in MUT else 0)
            return lambda: full[kind][st].passed(par)
        def wait_q(x):
            return lambda: full["Q"][x.b].passed((x.it//qbufs) & 1)
        def issue(x, kind, j, st=None):
            st = (x.ring + j) % stages[kind] if st is None else st
            assert me in in_turn or kind == "V" and j == x.tiles - 1 and x.it == last_item, \
                f"consumer {c} warp {w} issued {kind} tile {j} of item {x.it} outside its turn"
            assert tag[kind][st] == (x.it, j), \
                f"consumer {c} warp {w}: wgmma read {kind} tile {tag[kind][st]} for {(x.it, j)}"
            readers[kind][st].add(me)
            if kind == "K":  # S = Q K^T reads Q too
                assert tag["Q"][x.b] == x.it, \
                    f"consumer {c} warp {w}: S read Q of item {tag['Q'][x.b]} for {x.it}"
                readers["Q"][x.b].add(me)
                groups.append((issued[me], [(kind, st), ("Q", x.b)]))
            else:
                groups.append((issued[me], [(kind, st)]))
            issued[me] += 1
        def wait_group(n):
            """wgmma is a warpgroup-collective instruction: a group runs, and retires, only once
            all four warps of the consumer have issued it."""
            while len(groups) > n:
                g, reads = groups[0]
                yield lambda g=g: all(issued[(c, ww)] > g for ww in range(WARPS))
                groups.pop(0)
                for kind, st in reads: readers[kind][st].discard(me)
        def release(x, kind, j=None):
            if kind == "Q" and storer: return  # the storer hands Q back
            st = x.b if kind == "Q" else (x.ring + j) % stages[kind]
            assert me not in readers[kind][st], f"consumer {c} warp {w} freed {kind} slot {st} while reading it"
            phase = empty[kind][st].phase
            empty[kind][st].arrive()  # lane 0 of the warp
            assert empty[kind][st].phase == phase or not readers[kind][st], \
                f"{kind} slot {st} freed with reads in flight: {readers[kind][st]}"
        def store(x):
            """x's O (storer): this warp's rows into its consumer's rows of x's Q buffer."""
            if not storer: return
            assert not any(r == (c, ww) for r in readers["Q"][x.b] for ww in range(WARPS)), \
                f"consumer {c} warp {w} staged O of item {x.it} over Q still read: {readers['Q'][x.b]}"
            readers["Q"][x.b].add(("O", c, w))
            bar, _ = staged_bar(x.b, c, x.it)
            bar.arrive()
        def sync(ident):
            nb = named[ident]; gen = nb.gen
            nb.syncs.append(me); nb.flip()
            return lambda: nb.gen > gen
        def enter():
            assert not any(o == 1 - c for o, _ in in_turn), f"consumer {c} warp {w} in its turn with {in_turn}"
            in_turn.add(me)
        def arrive(ident):
            in_turn.discard(me)
            nb = named[ident]; nb.arrivals.append(me); nb.flip()
        mine = TURN + c
        other = mine if 'turn_same_id' in MUT else TURN + 1 - c
        def tile0(x):
            """The block's first item (or every item under no_xitem): S_0 alone in the turn."""
            yield wait_q(x)
            yield sync(mine); enter()
            yield wait_full(x, "K", 0); issue(x, "K", 0)
            arrive(other)
            if 'release_q_early' in MUT and x.tiles == 1: release(x, "Q")
            yield from wait_group(0); release(x, "K", 0)
            if x.tiles == 1 and 'release_q_early' not in MUT: release(x, "Q")
            yield from wait_group(0)  # finish(1): nothing in flight, no V to hand back
        def turns(x):
            """Tiles 1 .. T - 1: S_j and P_{j-1} V_{j-1} in one turn."""
            for j in range(1, x.tiles):
                yield wait_full(x, "K", j)
                yield sync(mine); enter()
                issue(x, "K", j)
                if 'arrive_before_pv' in MUT: arrive(other)
                yield wait_full(x, "V", j - 1)
                issue(x, "V", j - 1, (x.ring + j) % stages["V"] if 'v_slot_skew' in MUT else None)
                if 'arrive_before_pv' not in MUT: arrive(other)
                if 'release_k_early' in MUT: release(x, "K", j)
                if 'release_q_early' in MUT and j == x.tiles - 1: release(x, "Q")
                yield from wait_group(1)
                if 'release_k_early' not in MUT: release(x, "K", j)
                if 'release_q_early' not in MUT and j == x.tiles - 1: release(x, "Q")
                yield lambda: True  # the exponentials of S_j, P V in flight
                if 'release_v_early' in MUT: release(x, "V", j - 1)
                yield from wait_group(0)
                if 'release_v_early' not in MUT: release(x, "V", j - 1)
        def boundary(x, y):
            """y's tile 0 and x's last P V in one turn (S_0(y) first); Q(y) and K_0(y) waited
            for before the turn."""
            last = x.tiles - 1
            if 'boundary_no_qwait' not in MUT: yield wait_q(y)
            yield wait_full(y, "K", 0)
            yield sync(mine); enter()
            issue(y, "K", 0)
            yield wait_full(x, "V", last)
            issue(x, "V", last, (y.ring + last) % stages["V"] if 'boundary_v_ring' in MUT else None)
            arrive(other)
            yield from wait_group(1)  # S_0(y) landed
            release(y, "K", 0)
            if y.tiles == 1: release(y, "Q")
            yield lambda: True  # S_0(y)'s exponentials (fresh m, l), x's P V in flight
            yield from wait_group(0)
            release(x, "V", last)  # then x's store; y takes over (O = 0, P_0 packed)
            store(x)
        def tail(x):
            """The block's last item: its last P V outside the turns."""
            yield wait_full(x, "V", x.tiles - 1); issue(x, "V", x.tiles - 1)
            yield from wait_group(0); release(x, "V", x.tiles - 1)
            store(x)
            in_turn.discard(me)
        if c == 1 and 'no_first_turn' not in MUT: in_turn.discard(me); named[TURN + 0].arrivals.append(me); named[TURN + 0].flip()
        items, ring = [], 0
        for it, tiles in enumerate(k_tiles):
            if it == 0 and c == 1 and tiles1 is not None: tiles = tiles1
            items.append(Item(it, tiles, 0 if 'ring_reset' in MUT else ring))
            ring += tiles
        for it, x in enumerate(items):
            if c == 1 and 'first_turn_per_item' in MUT and it > 0: arrive(TURN + 0)
            if it == 0: yield from tile0(x)
            yield from turns(x)
            if it < last_item: yield from boundary(x, items[it + 1])
            else: yield from tail(x)
        if c == 0 and 'no_drain' not in MUT:
            nb = named[TURN + 0]; gen = nb.gen
            nb.syncs.append(me); nb.flip()
            yield lambda: nb.gen > gen
    def storer_actor():
        for it in range(len(k_tiles)):
            b = it % qbufs
            for c in range(CONS):
                bar, par = staged_bar(b, c, it)
                yield lambda bar=bar, par=par: bar.passed(par)
            if 'storer_release_early' in MUT: empty["Q"][b].arrive()
            yield lambda: True  # the TMA stores read the staged rows
            readers["Q"][b] -= {r for r in readers["Q"][b] if r[0] == "O"}
            if 'storer_release_early' not in MUT: empty["Q"][b].arrive()
    interleave(rng, [producer()] + [consumer(c, w) for c in range(CONS) for w in range(WARPS)]
               + ([storer_actor()] if storer else []), flying, readers, tag, full)
    for nb in named.values():
        assert nb.count() == 0, f"TURN {nb.id} ends with {nb.count()} warp arrival(s) pending"

def check_ring6(rng, runs=300):
    """Half the runs one item (a block of the non-persistent kernel), half a persistent block's
    2-4 items of 1-7 key tiles each; K and V rings of 2 and 2, 3 and 3 (D = 64) and 2 and 3
    slots (D = 128), 1 and 2 Q buffers; with 2, every other run with O stored by the storer
    through the Q buffer (6g; one buffer would deadlock: Q of item it + 1 would wait for the
    store of item it, made in the turn that waits for that Q)."""
    bad = 0
    for r in range(runs):
        ks, vs = [(2, 2), (3, 3), (2, 3)][r % 3]
        stages, qbufs = {"K": ks, "V": vs}, 1 + (r // 3) % 2
        items = 1 if r % 4 < 2 else int(rng.integers(2, 5))
        k_tiles = [int(rng.integers(1, 8)) for _ in range(items)]
        tiles1 = k_tiles[0] + 1 if 'unequal_tiles' in MUT else None
        try: ring6(k_tiles, stages, rng, tiles1, qbufs, storer=qbufs == 2 and r % 2 == 1)
        except AssertionError as e:
            bad += 1
            if not MUT: print(f"FAIL ring (stage 6 turns and mbarriers): {e}")
    return bad

def items6(block, grid, units, q_tiles, causal):
    """kernels/06_fa3_sm90a.cu's for_each_item (recomputed here: change both together): block
    b's units b, b + grid, ...; a unit is q tiles q_tiles - 1 - k and k (causal; k alone in
    the middle of an odd q_tiles) or q tile k, of pair u / per_pair."""
    per_pair = (q_tiles + 1)//2 if causal else q_tiles
    for u in range(block, units, grid):
        pair, k = divmod(u, per_pair)
        items = 2 if causal and 2*k + 1 < q_tiles else 1
        for i in range(items):
            yield pair, (q_tiles - 1 - k if causal and i == 0 else k)

def check_items6():
    """Every (pair, q tile) once, whatever the grid; causal, every unit of a block the same
    number of key tiles (q_tiles + 1, the middle unit of an odd q_tiles aside)."""
    bad = 0
    for causal in (0, 1):
        for q_tiles in range(1, 10):
            for pairs in range(1, 4):
                per_pair = (q_tiles + 1)//2 if causal else q_tiles
                units = pairs*per_pair
                for grid in range(1, units + 1):
                    seen = [x for b in range(grid) for x in items6(b, grid, units, q_tiles, causal)]
                    want = [(p, t) for p in range(pairs) for t in range(q_tiles)]
                    if sorted(seen) != want:
                        bad += 1
                        if not MUT: print(f"FAIL items: q_tiles {q_tiles} pairs {pairs} grid {grid} causal {causal}")
                if causal:
                    for u in range(units):
                        tiles = sum(t + 1 for _, t in items6(u, units, units, q_tiles, causal))
                        if tiles != q_tiles + 1 and not (q_tiles % 2 and u % per_pair == per_pair - 1):
                            bad += 1
    return bad

def ref(Q, K, V, causal, D):
    S = Q @ K.T / math.sqrt(D)
    if causal: S = np.where(np.tril(np.ones_like(S)) > 0, S, -np.inf)
    mx = S.max(1, keepdims=True); P = np.exp(S - mx); l = P.sum(1, keepdims=True)
    return P @ V / l, (mx + np.log(l))[:, 0]

DEFAULT = ["1:64:0:3:f16", "17:128:1:3:f16", "130:64:1:3:bf16", "200:128:0:3:f16",
           "1:128:1:4:f16", "17:64:0:4:f16", "130:128:1:4:bf16", "200:64:1:4:f16",
           "257:64:0:4:bf16", "300:128:1:4:f16", "256:128:0:4:f16", "129:64:1:4:bf16",
           "1:64:0:5:f16", "17:128:1:5:bf16", "130:64:1:5:f16", "200:128:0:5:bf16",
           "256:64:1:5:bf16", "300:128:1:5:f16", "129:128:0:5:f16", "384:64:0:5:f16",
           "1:128:1:6:f16", "17:64:0:6:bf16", "130:128:1:6:bf16", "200:64:1:6:f16",
           "300:128:1:6:f16", "384:64:0:6:f16", "513:64:1:6:bf16", "256:128:0:6:f16"]

# Each negative control, and the cases of which at least one must fail under it.
NEG_CASES = ["130:128:1:4:f16", "200:64:1:4:bf16"]
NEGATIVE = ["p_swap", "v_notrans", "k_addr", "q_mtile", "live_off", "mask_query", "store_mt",
            "load_step", "no_mask", "swz_none"]
NEG_CASES5 = ["300:128:1:5:f16", "200:64:0:5:bf16"]
NEGATIVE_RING = ["parity_flip", "producer_parity", "empty_count"]
NEGATIVE_RING6 = ["no_first_turn", "turn_same_id", "arrive_before_pv", "no_drain",
                  "unequal_tiles", "release_k_early", "release_v_early", "v_slot_skew",
                  "parity_flip6", "empty_count6", "ring_reset", "release_q_early",
                  "first_turn_per_item", "boundary_no_qwait", "boundary_v_ring",
                  "storer_one_barrier", "storer_release_early"]
NEG_CASES6 = ["300:128:1:6:f16", "513:64:1:6:bf16"]
NEGATIVE6 = ["mask6_tile", "rescale6_early"]
NEGATIVE5 = ["p5_swap", "v_kmajor", "v_lbo_sbo", "v_kstep", "q_consumer", "q_panel", "no_mask5",
             "no_clip"]


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
        ib = check_items6()
        print(f"{'PASS' if ib == 0 else 'FAIL'} items (stage 6's persistent work list: every "
              f"(pair, q tile) once at every grid, causal units of equal length), {ib} failure(s)")
        bad += ib
        for ring, what, negatives in [
                (check_ring5, "stage 5 mbarriers): 300 random interleavings of 1-6 key tiles",
                 NEGATIVE_RING),
                (check_ring6, "stage 6 turns and mbarriers): 300 random interleavings of 8 "
                 "consumer warps, 1-4 items of 1-7 key tiles, K and V rings of 2+2, 3+3 and 2+3 slots, 1 and 2 Q buffers, "
                 "O stored through Q or not", NEGATIVE_RING6)]:
            rb = ring(rng)
            print(f"{'PASS' if rb == 0 else 'FAIL'} ring ({what}, {rb} failure(s)")
            bad += rb
            for mut in negatives:
                MUT.clear(); MUT.add(mut)
                caught = ring(rng)
                MUT.clear()
                print(f"{'PASS' if caught else 'FAIL'} negative control {mut}: "
                      f"{'caught' if caught else 'NOT caught'} ({caught} of 300 interleavings)")
                bad += not caught
        for mut, neg_cases in ([(m_, NEG_CASES) for m_ in NEGATIVE]
                               + [(m_, NEG_CASES5) for m_ in NEGATIVE5]
                               + [(m_, NEG_CASES6) for m_ in NEGATIVE6]):
            MUT.clear(); MUT.add(mut)
            try:
                caught = check(neg_cases, rng, quiet=True)
            except (AssertionError, ZeroDivisionError, IndexError, ValueError):
                caught = 1  # an access outside the tile, a NaN operand, a row with no key
            MUT.clear()
            print(f"{'PASS' if caught else 'FAIL'} negative control {mut}: "
                  f"{'caught' if caught else 'NOT caught'} ({caught} failure(s) in {len(neg_cases)} cases)")
            bad += not caught
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
