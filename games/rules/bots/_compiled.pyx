# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False, infer_types=False
"""The ``hard`` bot's deals and playouts in C: ``sampling.Sampler.sample`` and ``playout.Sim``
step for step, with Python's own Mersenne Twister, so a search makes the same decisions here as
in pure Python for the same ``random.Random`` state (tests/rules/test_compiled_playouts.py).

Every table (runs, meld partners, points) is read from the Python modules at import, every
floating-point expression is evaluated in Python's order, and every random draw is the one
``random.Random`` would make (``getrandbits`` on the same generator state), so a deal and its
playouts match the pure-Python ones bit for bit; only the cost differs. The search loop itself
(pruning, time caps) stays in ``hard.py``, shared by both paths.
"""

from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from ..cards import _SUIT_POINTS as _PY_SUIT_POINTS
from ..cards import POINTS as _PY_POINTS
from ..melds import RANK_MASKS as _PY_RANK_MASKS
from ..melds import RUNS_HIGH as _PY_RUNS_HIGH
from ..melds import RUNS_LOW as _PY_RUNS_LOW
from .heuristics import _DW_BY_COUNT as _PY_DW_BY_COUNT
from .heuristics import pairs_for as _py_pairs_for

ctypedef uint64_t mask_t

cdef extern from *:
    """
    static inline int c_popcount(unsigned long long x) { return __builtin_popcountll(x); }
    static inline int c_ctz(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int c_popcount(unsigned long long x) nogil
    int c_ctz(unsigned long long x) nogil


cdef enum:
    MAX_CANDS = 512
    MAX_ARR = 8
    MAX_MELDS = 40
    MEMO_SIZE = 4096
    CACHE_BITS = 16
    START = 0
    PLAY = 1
    DRAW_CALL = 2
    OVER = 3
    R_TONGITS = 0
    R_DRAW = 1
    R_STOCK_OUT = 2
    R_TURN_CAP = 3
    A_DISCARD = 0
    A_DRAW = 1
    A_TAKE = 2
    A_TAKE_ONTO = 3
    A_HOLD = 4
    A_EXPOSE = 5
    A_CALL = 6
    A_ANSWER = 7


cdef mask_t FULL_DECK = (<mask_t>1 << 52) - 1
cdef mask_t SUIT_MASK = (1 << 13) - 1
cdef int POINTS[52]
cdef mask_t RM[13]
cdef int SUIT_POINTS[8192]
cdef int DW_BY_COUNT[14]
cdef int RUN_OFF[2][8193]
cdef uint16_t* RUN_DATA[2]
cdef int PAIR_OFF[2][53]
cdef mask_t* PAIR_DATA[2]


cdef void _load_tables() except *:
    cdef int i, r, n, a, total
    for i in range(52):
        POINTS[i] = _PY_POINTS[i]
    for r in range(13):
        RM[r] = _PY_RANK_MASKS[r]
    for i in range(8192):
        SUIT_POINTS[i] = _PY_SUIT_POINTS[i]
    for i in range(14):
        DW_BY_COUNT[i] = _PY_DW_BY_COUNT[i]
    for a in range(2):
        table = _PY_RUNS_HIGH if a else _PY_RUNS_LOW
        total = sum(len(t) for t in table)
        RUN_DATA[a] = <uint16_t*>malloc(max(1, total) * sizeof(uint16_t))
        n = 0
        for i in range(8192):
            RUN_OFF[a][i] = n
            for run in table[i]:
                RUN_DATA[a][n] = run
                n += 1
        RUN_OFF[a][8192] = n
        pairs = _py_pairs_for(bool(a))
        total = sum(len(p) for p in pairs)
        PAIR_DATA[a] = <mask_t*>malloc(max(1, total) * sizeof(mask_t))
        n = 0
        for i in range(52):
            PAIR_OFF[a][i] = n
            for p in pairs[i]:
                PAIR_DATA[a][n] = p
                n += 1
        PAIR_OFF[a][52] = n


_load_tables()


cdef inline int points_of(mask_t m) noexcept nogil:
    return (SUIT_POINTS[m & 8191] + SUIT_POINTS[(m >> 13) & 8191]
            + SUIT_POINTS[(m >> 26) & 8191] + SUIT_POINTS[(m >> 39) & 8191])


cdef inline mask_t low_bit(mask_t m) noexcept nogil:
    return m & (~m + 1)


# ---------------------------------------------------------------- melds (melds.py)

cdef int candidate_melds(mask_t hand, int ah, mask_t* out) noexcept nogil:
    """``melds.candidate_melds``, in its order; at most MAX_CANDS."""
    cdef int n = 0, r, suit, j, shift
    cdef mask_t rm, b, low, sm
    for r in range(13):
        rm = hand & RM[r]
        if rm and c_popcount(rm) >= 3:
            out[n] = rm
            n += 1
            if c_popcount(rm) == 4:
                b = rm
                while b:
                    low = low_bit(b)
                    out[n] = rm ^ low
                    n += 1
                    b ^= low
    for suit in range(4):
        shift = suit * 13
        sm = (hand >> shift) & SUIT_MASK
        if sm:
            for j in range(RUN_OFF[ah][sm], RUN_OFF[ah][sm + 1]):
                if n >= MAX_CANDS:
                    return n
                out[n] = (<mask_t>RUN_DATA[ah][j]) << shift
                n += 1
    return n


cdef struct MemoSlot:
    mask_t key
    uint32_t gen
    int points
    int choice

cdef MemoSlot MEMO[MEMO_SIZE]
cdef uint32_t MEMO_GEN = 0

cdef struct CoverWork:
    mask_t* melds
    int* points
    int* by_off
    int* by_idx


cdef int _cover_best(CoverWork* w, mask_t rem, int* choice_out) noexcept nogil:
    """``melds._best_cover``'s ``best``: the points covered from ``rem``, and the meld taken at
    its lowest card (-1: that card left out), memoised per call."""
    cdef mask_t low, m
    cdef int card, k, i, result, choice, sp, dummy, probe
    cdef uint32_t h
    if not rem:
        choice_out[0] = -1
        return 0
    h = <uint32_t>((rem * <mask_t>0x9E3779B97F4A7C15) >> 52) & (MEMO_SIZE - 1)
    for probe in range(16):
        k = (h + probe) & (MEMO_SIZE - 1)
        if MEMO[k].gen != MEMO_GEN:
            break
        if MEMO[k].key == rem:
            choice_out[0] = MEMO[k].choice
            return MEMO[k].points
    low = low_bit(rem)
    card = c_ctz(low)
    result = _cover_best(w, rem ^ low, &dummy)
    choice = -1
    for k in range(w.by_off[card], w.by_off[card + 1]):
        i = w.by_idx[k]
        m = w.melds[i]
        if m & rem == m:
            sp = _cover_best(w, rem & ~m, &dummy)
            if sp + w.points[i] > result:
                result = sp + w.points[i]
                choice = i
    for probe in range(16):
        k = (h + probe) & (MEMO_SIZE - 1)
        if MEMO[k].gen != MEMO_GEN:
            MEMO[k].gen = MEMO_GEN
            MEMO[k].key = rem
            MEMO[k].points = result
            MEMO[k].choice = choice
            break
    choice_out[0] = choice
    return result


cdef struct Arr:
    mask_t key
    int dw
    int n
    mask_t melds[MAX_ARR]

cdef Arr* ARR_CACHE[2]
ARR_CACHE[0] = <Arr*>malloc((1 << CACHE_BITS) * sizeof(Arr))
ARR_CACHE[1] = <Arr*>malloc((1 << CACHE_BITS) * sizeof(Arr))
cdef int _i
for _i in range(1 << CACHE_BITS):
    ARR_CACHE[0][_i].key = ~(<mask_t>0)
    ARR_CACHE[1][_i].key = ~(<mask_t>0)


cdef Arr* best_arrangement(mask_t hand, int ah) noexcept nogil:
    """``melds.best_arrangement``: least deadwood and the same melds in the same order."""
    global MEMO_GEN
    cdef uint32_t slot = <uint32_t>((hand * <mask_t>0x9E3779B97F4A7C15) >> (64 - CACHE_BITS))
    cdef Arr* a = &ARR_CACHE[ah][slot]
    if a.key == hand:
        return a
    cdef mask_t cands[MAX_CANDS]
    cdef int pts[MAX_CANDS]
    cdef int by_off[53]
    cdef int by_fill[52]
    cdef int by_idx[MAX_CANDS * 13]
    cdef int n = candidate_melds(hand, ah, cands)
    cdef int i, total, total_bits, card, choice, covered
    cdef mask_t cover, b, low, rem
    cdef CoverWork w
    a.key = hand
    a.n = 0
    if n == 0:
        a.dw = points_of(hand)
        return a
    cover = 0
    total_bits = 0
    total = 0
    for i in range(n):
        pts[i] = points_of(cands[i])
        total += pts[i]
        cover |= cands[i]
        total_bits += c_popcount(cands[i])
    if total_bits == c_popcount(cover):  # no overlaps: all of them
        a.dw = points_of(hand) - total
        if n > MAX_ARR:
            a.key = ~(<mask_t>0)  # cannot happen in a hand; never cached
            n = MAX_ARR
        for i in range(n):
            a.melds[i] = cands[i]
        a.n = n
        return a
    for i in range(53):
        by_off[i] = 0
    for i in range(n):
        b = cands[i]
        while b:
            low = low_bit(b)
            by_off[c_ctz(low) + 1] += 1
            b ^= low
    for i in range(52):
        by_off[i + 1] += by_off[i]
    for i in range(52):
        by_fill[i] = by_off[i]
    for i in range(n):
        b = cands[i]
        while b:
            low = low_bit(b)
            card = c_ctz(low)
            by_idx[by_fill[card]] = i
            by_fill[card] += 1
            b ^= low
    w.melds = cands
    w.points = pts
    w.by_off = by_off
    w.by_idx = by_idx
    MEMO_GEN += 1
    if MEMO_GEN == 0:
        for i in range(MEMO_SIZE):
            MEMO[i].gen = 0
        MEMO_GEN = 1
    covered = _cover_best(&w, cover, &choice)
    a.dw = points_of(hand) - covered
    rem = cover
    while rem:
        _cover_best(&w, rem, &choice)
        if choice < 0:
            rem ^= low_bit(rem)
        else:
            if a.n < MAX_ARR:
                a.melds[a.n] = cands[choice]
            a.n += 1
            rem &= ~cands[choice]
    if a.n > MAX_ARR:
        a.n = MAX_ARR
        a.key = ~(<mask_t>0)
    return a


cdef inline int deadwood(mask_t hand, int ah) noexcept nogil:
    return best_arrangement(hand, ah).dw


cdef inline int is_set_mask(mask_t m) noexcept nogil:
    cdef int first = c_ctz(m)
    return (m & ~RM[first % 13]) == 0


cdef int is_run(mask_t mask, int ah) noexcept nogil:
    """``melds.meld_kind(mask) == RUN``."""
    cdef int n = c_popcount(mask)
    cdef int first, shift, j
    cdef mask_t sm
    if n < 3:
        return 0
    first = c_ctz(mask)
    if n <= 4 and (mask & ~RM[first % 13]) == 0:
        return 0
    shift = first // 13 * 13
    sm = mask >> shift
    if sm > SUIT_MASK:
        return 0
    for j in range(RUN_OFF[ah][sm], RUN_OFF[ah][sm + 1]):
        if RUN_DATA[ah][j] == sm:
            return 1
    return 0


cdef mask_t targets(mask_t meld, int is_set, int ah) noexcept nogil:
    """``melds.lay_off_targets``: the cards that could be laid off on an exposed meld."""
    cdef int first, shift
    cdef mask_t sm, near, out, low
    if is_set:
        if c_popcount(meld) != 3:
            return 0
        first = c_ctz(meld)
        return RM[first % 13] & ~meld
    shift = c_ctz(meld) // 13 * 13
    sm = meld >> shift
    near = ((sm << 1) | (sm >> 1)) & SUIT_MASK
    if ah and sm & (1 << 12):
        near |= 1
    if ah and sm & 1:
        near |= 1 << 11
    out = 0
    near &= ~sm
    while near:
        low = low_bit(near)
        if is_run(meld | (low << shift), ah):
            out |= low << shift
        near ^= low
    return out


# ---------------------------------------------------------------- Python's Mersenne Twister

cdef struct MT:
    uint32_t mt[624]
    int index


cdef uint32_t genrand(MT* s) noexcept nogil:
    """CPython's ``genrand_uint32`` (Modules/_randommodule.c)."""
    cdef uint32_t y
    cdef int kk
    cdef uint32_t* mt = s.mt
    if s.index >= 624:
        for kk in range(624 - 397):
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU)
            mt[kk] = mt[kk + 397] ^ (y >> 1) ^ (0x9908b0dfU if y & 1 else 0U)
        for kk in range(624 - 397, 623):
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU)
            mt[kk] = mt[kk + (397 - 624)] ^ (y >> 1) ^ (0x9908b0dfU if y & 1 else 0U)
        y = (mt[623] & 0x80000000U) | (mt[0] & 0x7fffffffU)
        mt[623] = mt[396] ^ (y >> 1) ^ (0x9908b0dfU if y & 1 else 0U)
        s.index = 0
    y = mt[s.index]
    s.index += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9d2c5680U
    y ^= (y << 15) & 0xefc60000U
    y ^= y >> 18
    return y


cdef inline int randbelow(MT* s, int n) noexcept nogil:
    """``Random._randbelow_with_getrandbits`` for 0 < n < 2**31."""
    cdef int k = 0
    cdef int x = n
    cdef uint32_t r
    while x:
        k += 1
        x >>= 1
    r = genrand(s) >> (32 - k)
    while r >= <uint32_t>n:
        r = genrand(s) >> (32 - k)
    return <int>r


cdef void shuffle(MT* s, int* x, int n) noexcept nogil:
    """``Random.shuffle``."""
    cdef int i, j, t
    i = n - 1
    while i >= 1:
        j = randbelow(s, i + 1)
        t = x[i]
        x[i] = x[j]
        x[j] = t
        i -= 1


# ---------------------------------------------------------------- the playout (playout.py)




cdef struct Meld:
    int owner
    int is_set
    int hidden
    int tgt_ok  # tgt is targets(mask): reset whenever the mask grows
    mask_t mask
    mask_t tgt

cdef inline mask_t meld_targets(Meld* m, int ah) noexcept nogil:
    """``targets`` of a meld on the table, kept until its mask grows."""
    if not m.tgt_ok:
        m.tgt = targets(m.mask, m.is_set, ah)
        m.tgt_ok = 1
    return m.tgt


cdef struct Params:
    double call_frac
    double challenge_frac
    double keep
    double danger

cdef struct Rules:
    int ah
    int in_turn  # draw_call and in_turn timing
    int draw_call
    int lay_off_take
    int secret_sets
    int burning
    int tie  # 0 last_drawer, 1 fewer_cards, 2 last_drawer_loses
    int64_t base
    int64_t tongits
    int64_t draw_won_challenged
    int64_t per_ace
    int64_t per_secret_set
    int64_t burned_penalty
    int64_t draw_folded  # -1: None
    int64_t stake

cdef struct Sim:
    mask_t hands[3]
    int stock[56]
    int nstock  # top last
    int discard[56]
    int ndiscard
    Meld melds[MAX_MELDS]
    int nmelds
    mask_t dead
    int opened[3]
    int blocked
    int turn
    int phase
    int last_drawer
    int dealer
    int caller
    int ans_seat[2]
    int ans_challenge[2]
    int nans
    int winner  # -1: none
    int reason
    int64_t payouts[3]
    int steps
    int hold
    Rules* rules
    Params* p
    Params* own


cdef inline int typical_deadwood(int n) noexcept nogil:
    return DW_BY_COUNT[n if n < 13 else 13]


cdef inline int meld_partners(int ah, int card, mask_t hand) noexcept nogil:
    cdef int n = 0, j
    cdef mask_t p
    for j in range(PAIR_OFF[ah][card], PAIR_OFF[ah][card + 1]):
        p = PAIR_DATA[ah][j]
        if hand & p == p:
            n += 1
    return n


cdef mask_t left_after_lay_offs(mask_t loose, Meld* melds, int nmelds, int ah) noexcept nogil:
    """``heuristics.left_after_lay_offs`` over the table's melds that take lay-offs."""
    cdef mask_t masks[MAX_MELDS]
    cdef mask_t tgts[MAX_MELDS]
    cdef int sets[MAX_MELDS]
    cdef int n = 0, i, moved = 1
    cdef mask_t fit, low
    for i in range(nmelds):
        if not melds[i].hidden:
            masks[n] = melds[i].mask
            sets[n] = melds[i].is_set
            tgts[n] = meld_targets(&melds[i], ah)
            n += 1
    while loose and moved:
        moved = 0
        for i in range(n):
            fit = tgts[i] & loose
            if fit:
                low = low_bit(fit)
                masks[i] |= low
                tgts[i] = targets(masks[i], sets[i], ah)
                loose &= ~low
                moved = 1
    return loose


cdef mask_t pick_opener(mask_t* melds, int n, mask_t unknown, int ah) noexcept nogil:
    """``heuristics.pick_opener``."""
    cdef mask_t best = melds[0], m
    cdef int k0 = 9, k1 = 9, k2 = 0, i, four, live, iss, c0, c2
    for i in range(n):
        m = melds[i]
        iss = is_set_mask(m)
        four = iss and c_popcount(m) == 4
        live = c_popcount(targets(m, iss, ah) & unknown)
        c0 = 0 if four else 1
        c2 = -c_popcount(m)
        if c0 < k0 or (c0 == k0 and (live < k1 or (live == k1 and c2 < k2))):
            best = m
            k0 = c0
            k1 = live
            k2 = c2
    return best


cdef void sim_end(Sim* s, int reason, int tongits_seat) noexcept nogil:
    """``Sim._end`` with ``scoring.round_winner`` and ``scoring.round_payouts``."""
    cdef Rules* r = s.rules
    cdef int dw[3]
    cdef int counts[3]
    cdef int burned[3]
    cdef int i, k, tied, winner = -1, challenged = 0, low, any_ch, cand, fewest, start, seat
    cdef int aces, secret
    cdef int64_t each, extra, pay
    s.phase = OVER
    s.reason = reason
    for i in range(3):
        counts[i] = c_popcount(s.hands[i])
        dw[i] = 0
        burned[i] = 0
    if reason != R_TONGITS:
        for i in range(3):
            dw[i] = deadwood(s.hands[i], r.ah)
    if reason == R_TONGITS:
        winner = tongits_seat
    elif reason == R_DRAW:
        any_ch = 0
        low = dw[s.caller]
        for i in range(s.nans):
            if s.ans_challenge[i]:
                any_ch = 1
                if dw[s.ans_seat[i]] < low:
                    low = dw[s.ans_seat[i]]
        if not any_ch:
            winner = s.caller
        else:
            challenged = 1
            winner = s.caller
            for i in range(s.nans):
                if s.ans_challenge[i] and dw[s.ans_seat[i]] == low:
                    winner = s.ans_seat[i]
                    break
    if r.burning:
        for i in range(3):
            burned[i] = (not s.opened[i]) and i != winner
    if reason == R_STOCK_OUT or reason == R_TURN_CAP:
        winner = -1
        low = 1 << 30
        cand = 0
        for i in range(3):
            if not burned[i]:
                cand += 1
                if dw[i] < low:
                    low = dw[i]
        if cand:
            # the tied seats: lowest deadwood among those not burned
            tied = 0
            for i in range(3):
                if not burned[i] and dw[i] == low:
                    tied |= 1 << i
            if tied == 1 or tied == 2 or tied == 4:
                winner = 0 if tied == 1 else (1 if tied == 2 else 2)
            else:
                if r.tie == 1:
                    fewest = 1 << 30
                    for i in range(3):
                        if tied >> i & 1 and counts[i] < fewest:
                            fewest = counts[i]
                    for i in range(3):
                        if tied >> i & 1 and counts[i] != fewest:
                            tied &= ~(1 << i)
                    start = s.dealer
                else:
                    start = s.last_drawer if s.last_drawer >= 0 else s.dealer
                    if r.tie == 2:
                        start = (start + 1) % 3
                for i in range(3):
                    seat = (start + i) % 3
                    if tied >> seat & 1:
                        winner = seat
                        break
    s.winner = winner
    if winner < 0:
        return
    aces = c_popcount(s.hands[winner] & RM[0])
    secret = 0
    for i in range(s.nmelds):
        if s.melds[i].owner == winner:
            aces += c_popcount(s.melds[i].mask & RM[0])
            if s.melds[i].hidden:
                secret += 1
    if reason == R_TONGITS:
        each = r.tongits
    elif reason == R_DRAW and challenged:
        each = r.draw_won_challenged
    else:
        each = r.base
    extra = r.per_ace * aces + r.per_secret_set * secret
    for i in range(3):
        if i == winner:
            continue
        pay = each
        if reason == R_DRAW and challenged and r.draw_folded >= 0:
            for k in range(s.nans):
                if s.ans_seat[k] == i and not s.ans_challenge[k]:
                    pay = r.draw_folded
        pay += extra
        if burned[i]:
            pay += r.burned_penalty
        pay *= r.stake
        s.payouts[i] -= pay
        s.payouts[winner] += pay


cdef inline int wants_call(Sim* s, int seat, int dw) noexcept nogil:
    cdef int est = 99, e, o, i
    cdef Params* p
    for i in range(1, 3):
        o = (seat + i) % 3
        if s.opened[o]:
            e = typical_deadwood(c_popcount(s.hands[o]))
            if e < est:
                est = e
    p = s.own if s.hold >> seat & 1 else s.p
    return est == 99 or dw <= p.call_frac * est


cdef inline int wants_challenge(Sim* s, int seat) noexcept nogil:
    cdef int dw, est
    cdef Params* p
    if not s.opened[seat]:
        return 0
    dw = deadwood(s.hands[seat], s.rules.ah)
    est = typical_deadwood(c_popcount(s.hands[s.caller]))
    p = s.own if s.hold >> seat & 1 else s.p
    return dw <= p.challenge_frac * est or dw <= 3


cdef void auto_answers(Sim* s) noexcept nogil:
    while s.nans < 2:
        if s.opened[s.turn]:
            return
        s.ans_seat[s.nans] = s.turn
        s.ans_challenge[s.nans] = 0
        s.nans += 1
        s.turn = (s.turn + 1) % 3
    sim_end(s, R_DRAW, -1)


cdef void call_draw(Sim* s, int seat) noexcept nogil:
    s.caller = seat
    s.nans = 0
    s.phase = DRAW_CALL
    s.turn = (seat + 1) % 3
    auto_answers(s)


cdef void answer(Sim* s, int seat, int challenge) noexcept nogil:
    s.ans_seat[s.nans] = seat
    s.ans_challenge[s.nans] = 1 if (challenge and s.opened[seat]) else 0
    s.nans += 1
    s.turn = (seat + 1) % 3
    auto_answers(s)


cdef mask_t best_take(Sim* s, mask_t hand, int top) noexcept nogil:
    cdef mask_t top_bit = (<mask_t>1) << top
    cdef mask_t best = 0, used, m
    cdef int ah = s.rules.ah
    cdef int best_dw = deadwood(hand, ah), after, n, i
    cdef mask_t cands[MAX_CANDS]
    n = candidate_melds(hand | top_bit, ah, cands)
    for i in range(n):
        m = cands[i]
        if m & top_bit:
            used = m & ~top_bit
            if c_popcount(used) < 2:
                continue
            after = deadwood(hand & ~used, ah)
            if after <= best_dw:
                best = used
                best_dw = after
    return best


cdef void draw(Sim* s, int seat) noexcept nogil:
    cdef int c
    if s.nstock == 0:  # a playout never starts a turn on an empty stock
        sim_end(s, R_STOCK_OUT, -1)
        return
    s.nstock -= 1
    c = s.stock[s.nstock]
    s.hands[seat] |= (<mask_t>1) << c
    s.last_drawer = seat
    if not s.rules.in_turn:
        s.blocked &= ~(1 << seat)
    s.phase = PLAY


cdef void take(Sim* s, int seat, mask_t used) noexcept nogil:
    cdef int top
    cdef mask_t mask
    s.ndiscard -= 1
    top = s.discard[s.ndiscard]
    mask = used | ((<mask_t>1) << top)
    s.melds[s.nmelds].owner = seat
    s.melds[s.nmelds].is_set = is_set_mask(mask)
    s.melds[s.nmelds].mask = mask
    s.melds[s.nmelds].hidden = 0
    s.melds[s.nmelds].tgt_ok = 0
    s.nmelds += 1
    s.opened[seat] = 1
    s.hands[seat] &= ~used
    s.dead |= mask
    if not s.rules.in_turn:
        s.blocked &= ~(1 << seat)
    s.phase = PLAY
    if not s.hands[seat]:
        sim_end(s, R_TONGITS, seat)


cdef void take_onto(Sim* s, int seat, int idx) noexcept nogil:
    cdef int top
    s.ndiscard -= 1
    top = s.discard[s.ndiscard]
    s.melds[idx].mask |= (<mask_t>1) << top
    s.melds[idx].tgt_ok = 0
    if not s.rules.in_turn:
        s.blocked &= ~(1 << seat)
    s.phase = PLAY


cdef void start_turn(Sim* s, int seat) noexcept nogil:
    cdef mask_t hand = s.hands[seat], used
    cdef int top, i, ah = s.rules.ah
    cdef Meld* m
    if s.rules.draw_call and s.opened[seat] and not (s.blocked >> seat & 1):
        if wants_call(s, seat, deadwood(hand, ah)):
            call_draw(s, seat)
            return
    top = s.discard[s.ndiscard - 1] if s.ndiscard else -1
    if top >= 0:
        if meld_partners(ah, top, hand):
            used = best_take(s, hand, top)
            if used:
                take(s, seat, used)
                return
        if s.rules.lay_off_take:
            for i in range(s.nmelds):
                m = &s.melds[i]
                if m.owner == seat and not m.hidden and meld_targets(m, ah) >> top & 1:
                    take_onto(s, seat, i)
                    return
    draw(s, seat)


cdef void put_down(Sim* s, int seat, mask_t m) noexcept nogil:
    cdef int iss = is_set_mask(m)
    s.melds[s.nmelds].owner = seat
    s.melds[s.nmelds].is_set = iss
    s.melds[s.nmelds].mask = m
    s.melds[s.nmelds].hidden = 1 if (s.rules.secret_sets and iss and c_popcount(m) == 4) else 0
    s.melds[s.nmelds].tgt_ok = 0
    s.nmelds += 1
    s.opened[seat] = 1
    s.dead |= m


cdef mask_t meld_and_lay_off(Sim* s, int seat) noexcept nogil:
    cdef mask_t hand = s.hands[seat], held = 0, cover, free, fit, low, opener
    cdef int ah = s.rules.ah
    cdef Arr* arr = best_arrangement(hand, ah)
    cdef mask_t ms[MAX_ARR]
    cdef int nms = arr.n, i, j, moved, norder
    cdef int order[MAX_MELDS]
    cdef Meld* m
    for i in range(nms):
        ms[i] = arr.melds[i]
    if nms and s.hold >> seat & 1:
        cover = 0
        for i in range(nms):
            cover |= ms[i]
        if c_popcount(left_after_lay_offs(hand & ~cover, s.melds, s.nmelds, ah)) > 1:
            if not s.opened[seat]:
                opener = pick_opener(ms, nms, FULL_DECK & ~(hand | s.dead), ah)
                for i in range(nms):
                    if ms[i] != opener:
                        held |= ms[i]
                ms[0] = opener
                nms = 1
            else:
                for i in range(nms):
                    held |= ms[i]
                nms = 0
    for i in range(nms):
        put_down(s, seat, ms[i])
        hand &= ~ms[i]
    free = hand & ~held
    norder = 0
    for i in range(s.nmelds):
        if s.melds[i].owner != seat and not s.melds[i].hidden:
            order[norder] = i
            norder += 1
    for i in range(s.nmelds):
        if s.melds[i].owner == seat and not s.melds[i].hidden:
            order[norder] = i
            norder += 1
    moved = 1
    while free and moved:
        moved = 0
        for j in range(norder):
            m = &s.melds[order[j]]
            fit = meld_targets(m, ah) & free
            if fit:
                low = low_bit(fit)
                m.mask |= low
                m.tgt_ok = 0
                free &= ~low
                s.dead |= low
                if m.owner != seat:
                    s.blocked |= 1 << m.owner
                moved = 1
    hand = free | held
    s.hands[seat] = hand
    if not hand:
        sim_end(s, R_TONGITS, seat)
    return free


cdef void expose(Sim* s, int seat, mask_t m) noexcept nogil:
    put_down(s, seat, m)
    s.hands[seat] &= ~m
    if not s.hands[seat]:
        sim_end(s, R_TONGITS, seat)


cdef int pick_discard(Sim* s, int seat, mask_t pool) noexcept nogil:
    cdef mask_t hand = s.hands[seat]
    cdef mask_t unknown = FULL_DECK & ~(hand | s.dead)
    cdef int nxt = (seat + 1) % 3
    cdef int ah = s.rules.ah
    cdef int nu = c_popcount(unknown)
    cdef double q = <double>c_popcount(s.hands[nxt]) / <double>(nu if nu else 1)
    cdef double danger = s.p.danger * q * q
    cdef double keep = s.p.keep
    cdef double cap = s.p.danger
    cdef double best_score = -1e9, x, score
    cdef mask_t own = 0, b, low, pm, h
    cdef int best = -1, r, c, pot, risk, i, j
    if s.rules.lay_off_take:
        for i in range(s.nmelds):
            if s.melds[i].owner == nxt and not s.melds[i].hidden:
                own |= meld_targets(&s.melds[i], ah)
    r = 12
    while r >= 0:
        b = pool & RM[r]
        if not b:
            r -= 1
            continue
        if POINTS[r] + 0.13 < best_score:
            break
        while b:
            low = low_bit(b)
            c = c_ctz(low)
            b ^= low
            pot = 0
            risk = 0
            for j in range(PAIR_OFF[ah][c], PAIR_OFF[ah][c + 1]):
                pm = PAIR_DATA[ah][j]
                h = hand & pm
                if not h:
                    if unknown & pm == pm:
                        risk += 1
                elif h != pm and unknown & (pm ^ h):
                    pot += 1
            x = danger * risk + (cap if own & low else 0.0)
            score = POINTS[c] + r * 0.01 - keep * pot - (x if x < cap else cap)
            if score > best_score:
                best = c
                best_score = score
        r -= 1
    return best


cdef void discard_card(Sim* s, int seat, int card) noexcept nogil:
    cdef mask_t bit = (<mask_t>1) << card
    s.hands[seat] &= ~bit
    s.discard[s.ndiscard] = card
    s.ndiscard += 1
    s.dead |= bit
    if s.rules.in_turn:
        s.blocked &= ~(1 << seat)
    if not s.hands[seat]:
        sim_end(s, R_TONGITS, seat)
    elif not s.nstock:
        sim_end(s, R_STOCK_OUT, -1)
    else:
        s.turn = (seat + 1) % 3
        s.phase = START


cdef void play(Sim* s, int seat) noexcept nogil:
    cdef mask_t free = meld_and_lay_off(s, seat)
    if s.phase == OVER:
        return
    if (s.rules.in_turn and s.opened[seat] and not (s.blocked >> seat & 1)
            and wants_call(s, seat, deadwood(s.hands[seat], s.rules.ah))):
        call_draw(s, seat)
        return
    discard_card(s, seat, pick_discard(s, seat, free if free else s.hands[seat]))


cdef void run(Sim* s) noexcept nogil:
    while s.phase != OVER:
        s.steps += 1
        if s.steps > 200:
            sim_end(s, R_TURN_CAP, -1)
            return
        if s.phase == START:
            start_turn(s, s.turn)
        elif s.phase == PLAY:
            play(s, s.turn)
        else:
            answer(s, s.turn, wants_challenge(s, s.turn))


cdef void apply_action(Sim* s, int me, int kind, int64_t arg) noexcept nogil:
    """``hard._apply``: this seat's candidate, then the rest of its turn by the policy."""
    if kind == A_DISCARD:
        discard_card(s, me, <int>arg)
    elif kind == A_DRAW:
        draw(s, me)
        play(s, me)
    elif kind == A_TAKE:
        take(s, me, <mask_t>arg)
        if s.phase != OVER:
            play(s, me)
    elif kind == A_TAKE_ONTO:
        take_onto(s, me, <int>arg)
        play(s, me)
    elif kind == A_HOLD:
        play(s, me)
    elif kind == A_EXPOSE:
        expose(s, me, <mask_t>arg)
        play(s, me)
    elif kind == A_CALL:
        call_draw(s, me)
    elif kind == A_ANSWER:
        answer(s, me, <int>arg)


# ---------------------------------------------------------------- the sampler (sampling.py)

cdef struct Deal:
    mask_t hands[3]
    int stock[56]
    int nstock
    mask_t hidden_masks[MAX_MELDS]


cdef struct Know:
    int seat
    int opp[2]
    mask_t hand
    mask_t unknown
    mask_t dead
    int hand_counts[3]
    mask_t discarded[3]
    int last_discard[3]
    int no_call_limit[3]
    mask_t fits[3]
    mask_t partner[3][52]
    int draw_caller
    int caller_limit
    int hidden[MAX_MELDS]
    int nhidden
    int extra
    int tries
    int caller_tries
    double slack
    double keep
    int call_slack
    int call_weight
    int ah


cdef mask_t deal_once(Know* k, MT* rng, int o, int* pool, int npool, int* rest,
                      int* nrest) noexcept nogil:
    """``Sampler._deal_once``: a hand for ``o`` from the front of ``pool``; the rest in ``rest``."""
    cdef int n = k.hand_counts[o], i, c, got = 0, want, ok, j, nr = 0, worst, worst_pts, pts
    cdef int ah = k.ah
    cdef mask_t hand = 0, bit, p, b, low, fits, forbid_any
    if not k.discarded[o]:
        j = n if n < npool else npool
        for i in range(j):
            hand |= (<mask_t>1) << pool[i]
        for i in range(j, npool):
            rest[nr] = pool[i]
            nr += 1
        nrest[0] = nr
        return hand
    want = c_popcount(k.discarded[o])
    want = n + (k.extra if k.extra < want else want)
    fits = k.fits[o]
    for i in range(npool):
        c = pool[i]
        if got == want:
            for j in range(i, npool):
                rest[nr] = pool[j]
                nr += 1
            break
        bit = (<mask_t>1) << c
        ok = not ((fits & bit) or (hand & k.partner[o][c]))
        if ok:
            for j in range(PAIR_OFF[ah][c], PAIR_OFF[ah][c + 1]):
                p = PAIR_DATA[ah][j]
                if hand & p == p:
                    ok = 0
                    break
        if ok:
            hand |= bit
            got += 1
        else:
            rest[nr] = c
            nr += 1
    while got > n:
        worst = -1
        worst_pts = -1
        b = hand
        while b:
            low = low_bit(b)
            c = c_ctz(low)
            b ^= low
            pts = POINTS[c] * 4 + randbelow(rng, 4)
            if pts > worst_pts:
                worst = c
                worst_pts = pts
        hand &= ~((<mask_t>1) << worst)
        rest[nr] = worst
        nr += 1
        got -= 1
    if got < n:
        j = n - got
        if j > nr:
            j = nr
        for i in range(j):
            hand |= (<mask_t>1) << rest[i]
        for i in range(j, nr):
            rest[i - j] = rest[i]
        nr -= j
    nrest[0] = nr
    return hand


cdef double misfits(Know* k, int o, mask_t hand, int d) noexcept nogil:
    """``Sampler._misfits`` (the default, not ``exact``)."""
    cdef mask_t live = ~(hand | k.dead), b, low
    cdef double bad = 0, bar
    cdef int limit = k.no_call_limit[o], c
    if limit >= 0 and deadwood(hand | ((<mask_t>1) << d), k.ah) <= limit - k.call_slack:
        bad += k.call_weight
    bar = worth(k, d, hand, live) + k.slack
    b = hand
    while b:
        low = low_bit(b)
        c = c_ctz(low)
        b ^= low
        if POINTS[c] > bar and worth(k, c, hand, live) > bar:
            bad += 1
    return bad


cdef inline double worth(Know* k, int c, mask_t h, mask_t live) noexcept nogil:
    cdef int pot = 0, j, ah = k.ah
    cdef mask_t p, x
    for j in range(PAIR_OFF[ah][c], PAIR_OFF[ah][c + 1]):
        p = PAIR_DATA[ah][j]
        x = h & p
        if x and x != p and live & (p ^ x):
            pot += 1
    return POINTS[c] - k.keep * pot


cdef mask_t deal_for(Know* k, MT* rng, int o, int* pool, int npool, int* rest,
                     int* nrest) noexcept nogil:
    """``Sampler._deal``: the likeliest of ``tries`` hands for ``o``."""
    cdef int d = k.last_discard[o], t, nr = 0
    cdef mask_t hand, best = 0
    cdef double bad, best_bad = <double>(1 << 30)
    cdef int tmp[56]
    if k.tries <= 1 or d < 0:
        return deal_once(k, rng, o, pool, npool, rest, nrest)
    for t in range(k.tries):
        hand = deal_once(k, rng, o, pool, npool, tmp, &nr)
        bad = misfits(k, o, hand, d)
        if bad < best_bad:
            best = hand
            best_bad = bad
            memcpy(rest, tmp, nr * sizeof(int))
            nrest[0] = nr
            if bad == 0:
                break
        shuffle(rng, pool, npool)
    return best


cdef void sample(Know* k, MT* rng, Deal* out) noexcept nogil:
    """``Sampler.sample``: one full deal of the cards the seat cannot see."""
    cdef mask_t unknown = k.unknown, hand, best_hand
    cdef int ranks[13]
    cdef int nr, r, i, j, o, npool = 0, nrest, best_n, dw, best_dw, t
    cdef int pool[56]
    cdef int rest[56]
    cdef int best_pool[56]
    cdef mask_t b, low
    for i in range(MAX_MELDS):
        out.hidden_masks[i] = 0
    for i in range(k.nhidden):
        nr = 0
        for r in range(13):
            if unknown & RM[r] == RM[r]:
                ranks[nr] = r
                nr += 1
        r = ranks[randbelow(rng, nr)] if nr else 0
        out.hidden_masks[k.hidden[i]] = RM[r]
        unknown &= ~RM[r]
    b = unknown
    while b:
        low = low_bit(b)
        pool[npool] = c_ctz(low)
        npool += 1
        b ^= low
    shuffle(rng, pool, npool)
    out.hands[0] = 0
    out.hands[1] = 0
    out.hands[2] = 0
    out.hands[k.seat] = k.hand
    for j in range(2):
        o = k.opp[j]
        if o == k.draw_caller and k.caller_limit >= 0:
            continue
        out.hands[o] = deal_for(k, rng, o, pool, npool, rest, &nrest)
        memcpy(pool, rest, nrest * sizeof(int))
        npool = nrest
    if k.caller_limit >= 0:
        o = k.draw_caller
        best_hand = 0
        best_dw = 1 << 30
        memcpy(best_pool, pool, npool * sizeof(int))
        best_n = npool
        for t in range(k.caller_tries):
            hand = deal_for(k, rng, o, pool, npool, rest, &nrest)
            dw = deadwood(hand, k.ah)
            if dw < best_dw:
                best_hand = hand
                best_dw = dw
                memcpy(best_pool, rest, nrest * sizeof(int))
                best_n = nrest
            if dw <= k.caller_limit:
                break
            shuffle(rng, pool, npool)
        out.hands[o] = best_hand
        memcpy(pool, best_pool, best_n * sizeof(int))
        npool = best_n
    shuffle(rng, pool, npool)
    memcpy(out.stock, pool, npool * sizeof(int))
    out.nstock = npool


# ---------------------------------------------------------------- the Python face

_PHASES = {"start": START, "play": PLAY, "draw_call": DRAW_CALL}
_TIES = {"last_drawer": 0, "fewer_cards": 1, "last_drawer_loses": 2}
_KINDS = {
    "discard": A_DISCARD, "draw": A_DRAW, "take": A_TAKE, "take_onto": A_TAKE_ONTO,
    "hold": A_HOLD, "expose": A_EXPOSE, "call": A_CALL, "answer": A_ANSWER,
}


cdef void _params(Params* out, p):
    out.call_frac = p.call_frac
    out.challenge_frac = p.challenge_frac
    out.keep = p.keep
    out.danger = p.danger


cdef class Search:
    """One decision's deals and playouts: built from the same inputs as ``Sampler`` and ``Sim``.

    ``deal(alive)`` samples one deal (as ``Sampler.sample``) and plays each live candidate out on
    it (as ``Sim`` after ``hard._apply``), returning each one's value; the generator is
    ``random.Random``'s, taken with ``load`` and handed back with ``store``.
    """

    cdef Know k
    cdef Sim base
    cdef Rules rules
    cdef Params p
    cdef Params own
    cdef MT rng
    cdef int me
    cdef int ncands
    cdef int* kinds
    cdef int64_t* args
    cdef double equity[3]
    cdef int match_aware
    cdef double bonus
    cdef Deal deal_buf

    def __cinit__(self):
        self.kinds = NULL
        self.args = NULL

    def __dealloc__(self):
        free(self.kinds)
        free(self.args)

    def __init__(self, k, sampler, actions, params, own, int hold, equity, double bonus,
                 bint match_aware):
        cdef int i, o, c
        cdef Rules* r
        cdef Sim* s
        cdef Know* kk
        rules = k.rules
        if len(k.melds) > MAX_MELDS - 18:
            raise ValueError("too many melds on the table for the compiled playouts")
        r = &self.rules
        r.ah = 1 if rules.ace_high_runs else 0
        r.draw_call = 1 if rules.draw_call else 0
        r.in_turn = 1 if (rules.draw_call and rules.in_turn) else 0
        r.lay_off_take = 1 if rules.take_discard_to_lay_off else 0
        r.secret_sets = 1 if rules.secret_sets else 0
        r.burning = 1 if rules.burning else 0
        r.tie = _TIES[rules.stock_out_tie]
        r.base = rules.base
        r.tongits = rules.tongits
        r.draw_won_challenged = rules.draw_won_challenged
        r.per_ace = rules.per_ace
        r.per_secret_set = rules.per_secret_set
        r.burned_penalty = rules.burned_penalty
        r.draw_folded = -1 if rules.draw_folded is None else rules.draw_folded
        r.stake = rules.stake
        _params(&self.p, params)
        _params(&self.own, own)
        self.me = k.seat
        # the position every playout starts from (Sim.__init__ without the deal)
        s = &self.base
        s.nstock = 0
        s.ndiscard = 0
        s.dead = 0
        for c in k.discard:
            s.discard[s.ndiscard] = c
            s.ndiscard += 1
            s.dead |= (<mask_t>1) << c
        s.nmelds = 0
        for m in k.melds:
            s.melds[s.nmelds].owner = m.owner
            s.melds[s.nmelds].is_set = 1 if m.is_set else 0
            s.melds[s.nmelds].mask = m.mask
            s.melds[s.nmelds].hidden = 1 if m.hidden else 0
            s.melds[s.nmelds].tgt_ok = 0
            s.dead |= <mask_t>m.mask
            s.nmelds += 1
        for i in range(3):
            s.opened[i] = 1 if k.opened[i] else 0
            s.payouts[i] = 0
        s.blocked = 0
        for i in k.blocked:
            s.blocked |= 1 << i
        s.turn = k.turn
        s.phase = _PHASES.get(k.phase, OVER)
        s.last_drawer = k.last_drawer
        s.dealer = k.dealer
        s.caller = k.draw_caller
        s.nans = 0
        for seat, ans in k.answers:
            s.ans_seat[s.nans] = seat
            s.ans_challenge[s.nans] = 1 if ans == "challenge" else 0
            s.nans += 1
        s.winner = -1
        s.reason = -1
        s.steps = 0
        s.hold = hold
        # the sampler's tables
        kk = &self.k
        kk.seat = k.seat
        kk.opp[0] = k.opponents[0]
        kk.opp[1] = k.opponents[1]
        kk.hand = k.hand
        kk.unknown = k.unknown
        kk.dead = k.dead
        kk.ah = r.ah
        for i in range(3):
            kk.hand_counts[i] = k.hand_counts[i]
            kk.discarded[i] = k.discarded[i]
            kk.last_discard[i] = k.last_discard[i]
            kk.no_call_limit[i] = k.no_call_limit[i]
            kk.fits[i] = 0
            for c in range(52):
                kk.partner[i][c] = 0
        for o in k.opponents:
            kk.fits[o] = sampler.fits[o]
            for c, m in sampler.partner[o].items():
                kk.partner[o][c] = m
        kk.draw_caller = k.draw_caller
        kk.caller_limit = sampler.caller_limit
        kk.nhidden = 0
        for i in sampler.hidden:
            kk.hidden[kk.nhidden] = i
            kk.nhidden += 1
        kk.extra = sampler.extra
        kk.tries = sampler.tries
        kk.caller_tries = sampler.caller_tries
        kk.slack = sampler.slack
        kk.keep = sampler.keep
        kk.call_slack = sampler.call_slack
        kk.call_weight = sampler.call_weight
        # the candidates
        self.ncands = len(actions)
        self.kinds = <int*>malloc(max(1, self.ncands) * sizeof(int))
        self.args = <int64_t*>malloc(max(1, self.ncands) * sizeof(int64_t))
        for i, action in enumerate(actions):
            self.kinds[i] = _KINDS[action[0]]
            arg = action[1] if len(action) > 1 else 0
            self.args[i] = int(arg)
        for i in range(3):
            self.equity[i] = equity[i] if equity is not None else 0.0
        self.bonus = bonus
        self.match_aware = 1 if match_aware else 0

    def load(self, rng):
        """Take ``rng``'s generator state (a ``random.Random``)."""
        state = rng.getstate()[1]
        cdef int i
        for i in range(624):
            self.rng.mt[i] = state[i]
        self.rng.index = state[624]

    def store(self, rng):
        """Hand the generator state back to ``rng``, as if it had made every draw itself."""
        version, _, gauss = rng.getstate()
        cdef int i
        words = [self.rng.mt[i] for i in range(624)]
        words.append(self.rng.index)
        rng.setstate((version, tuple(words), gauss))

    def deal(self, alive):
        """One deal, and the value of playing out each candidate in ``alive`` on it."""
        cdef int idx, j, w
        cdef Deal* d = &self.deal_buf
        cdef Sim s
        cdef double v
        sample(&self.k, &self.rng, d)
        out = []
        for idx in alive:
            memcpy(&s, &self.base, sizeof(Sim))
            s.rules = &self.rules
            s.p = &self.p
            s.own = &self.own
            s.hands[0] = d.hands[0]
            s.hands[1] = d.hands[1]
            s.hands[2] = d.hands[2]
            s.nstock = d.nstock
            for j in range(d.nstock):  # top last, so drawing takes from the end
                s.stock[j] = d.stock[d.nstock - 1 - j]
            for j in range(s.nmelds):
                if s.melds[j].mask == 0:
                    s.melds[j].mask = d.hidden_masks[j]
                    s.dead |= d.hidden_masks[j]
            apply_action(&s, self.me, self.kinds[idx], self.args[idx])
            run(&s)
            w = s.winner
            if self.match_aware:
                v = s.payouts[self.me] + (self.equity[w] if w >= 0 else 0.0)
            else:
                v = s.payouts[self.me] + (
                    0.0 if w < 0 else (self.bonus if w == self.me else -self.bonus / 2)
                )
            out.append(v)
        return out

    def world(self):
        """One deal alone, as ``Sampler.sample`` returns it: (hands, stock top first, hidden)."""
        cdef Deal* d = &self.deal_buf
        cdef int j
        sample(&self.k, &self.rng, d)
        hidden = {self.k.hidden[j]: d.hidden_masks[self.k.hidden[j]] for j in range(self.k.nhidden)}
        return [d.hands[0], d.hands[1], d.hands[2]], [d.stock[j] for j in range(d.nstock)], hidden


def arrangement(mask_t hand, bint ace_high):
    """``melds.best_arrangement`` computed here: for the tests that hold the two equal."""
    cdef Arr* a = best_arrangement(hand, 1 if ace_high else 0)
    return a.dw, tuple(a.melds[i] for i in range(a.n))


def lay_off_targets(mask_t meld, bint is_set, bint ace_high):
    """``heuristics.targets`` computed here: for the tests that hold the two equal."""
    return targets(meld, 1 if is_set else 0, 1 if ace_high else 0)
