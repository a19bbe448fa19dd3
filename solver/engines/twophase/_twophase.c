/*
 * The hot loop of the two-phase engine (solver/engines/twophase/engine.py): IDA* phase 1 with
 * phase-2 continuation over the coordinate tables built by solver/engines/twophase/tables/.
 *
 * Everything here reads tables handed in by Python through the buffer protocol; no table is
 * loaded or owned in C (bfs_level only fills, level by level, a depth array Python owns while
 * tables/bfs.py builds a table), and there is no global state, so calls from several threads
 * at once are fine. The GIL is released for the whole search.
 *
 * search(tables, starts, max_length, budget_s, timeout_s, phase2_max, cost[, phase2_slack,
 *        axial, shared_found])
 *   tables     tuple of the 22 arrays of TwoPhaseTables.search_arrays(), in that order
 *   starts     list of (twist, flip, slice_sorted, u_edges, d_edges, corners, allowed_moves)
 *              one per search direction (a conjugated and/or inverted copy of the cube);
 *              allowed_moves is an 18-bit mask of the face turns this direction may use
 *   max_length longest acceptable solution (face turns)
 *   budget_s   0: return the first solution found; > 0: keep improving until this many seconds
 *   timeout_s  give up when no solution at all has been found after this many seconds
 *   phase2_max longest phase-2 part tried
 *   phase2_slack with a cost: phase-2 lengths tried beyond the shortest one (default all)
 *   axial      None, or with a cost the 15 robot-metric arrays of AxialTables.search_arrays():
 *              the search then counts groups (one face, or both faces of an axis turned at
 *              once) instead of face turns, and bounds the robot time by the groups still
 *              needed; phase2_max then limits phase-2 groups
 *   cost       None: shortest solution wins; (quarter_s, half_s, pair_extra_s, settle_s,
 *              simultaneous): the solution with the smallest estimated robot time wins
 *   shared_found None, or a writable buffer shared by the searches of one solve (one per worker
 *              thread): byte 0 is set when any of them finds a solution, after which the
 *              budget stops all of them (a worker without a solution of its own does not run
 *              on alone). With two bytes or more, byte 1 (0: none yet; start it at 0) is the
 *              length of the shortest solution any of them has found: the face-turn search
 *              for the shortest solution then looks only for shorter ones than that, so the
 *              workers never search again for what another one already holds. With
 *              16 bytes or more (8-byte aligned), bytes 8..15 (a double, 0 at the start: none)
 *              are the least robot time any robot search (with a cost) holds: each prunes
 *              with it as with its own best, and keeps only solutions faster than it. With
 *              SHARED_PEEK_END bytes or more and a cost, bytes 16.. hold the best solution
 *              any of them has found so far (see publish_best()): peek(shared) reads it
 *              while they run
 *   collector  None, or (without a cost) a Collector shared by the workers of one solve: the
 *              search then keeps every solution of at most min(max_length, shortest found by
 *              any worker + the collector's slack) moves (all phase-2 completions up to
 *              phase2_slack beyond their shortest) and pushes each into the collector under
 *              its mutex, never taking the GIL; the caller drains it meanwhile
 *   chunk      with a collector: this worker's number, stored with its candidates; with a
 *              cost, stored with the solution it publishes for peek()
 *
 *   With descent_s > 0 a collecting search first runs as the plain one (shortest solution
 *   wins, each improvement still pushed) for descent_s seconds once it holds a solution, then
 *   goes on collecting from where it is (length dominates most scores: the alternatives are
 *   wanted at the length the plain search would have reached); if the plain search ends
 *   sooner, it starts over collecting at the shortest length reached.
 *
 * Collector(max_length, slack[, descent_s, capacity]) a bounded queue of candidates:
 *   drain(timeout_s)
 *   returns [(chunk, direction, [moves]), ...] (waiting, GIL released, up to timeout_s for
 *   one), stop() ends every search pushing to it, stats() -> {received, dropped, shortest}.
 * returns (direction or -1, [move indices in that direction's frame], stats dict)
 *
 * peek(shared) the best solution the robot searches sharing the buffer have found so far
 *   (they may still run): None (none yet, or one being written past a few thousand tries),
 *   or (chunk, direction, [moves in its frame], robot time).
 *
 * stop(shared) makes the robot searches sharing the buffer end soon (their bound becomes the
 *   least positive time: nothing more is found).
 *
 * bfs_level(...) one level of a pruning table's breadth-first build (tables/bfs.py; see the
 *   function below): the only table code here, it fills an array Python owns.
 *
 * Move index m = 3 * face + k (faces U R F D L B; k = 0 quarter clockwise, 1 half, 2 anticlockwise).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <errno.h>
#include <stdlib.h>
#include <sched.h>

#define N_MOVE 18
#define N_TWIST 2187
#define N_FLIP 2048
#define N_SLICE 495
#define N_SLICE_SORTED 11880
#define N_CORNERS 40320
#define N_UD 40320
#define N_FS_CLASS 64430
#define N_CORNER_CLASS 2768
#define N_SYM 16
#define MAX_DEPTH 31
#define MAX_DIRS 6
#define N_TABLES 27
#define COLLECTOR_CAPACITY 16384
#define ROW (MAX_DEPTH + 1)

/* the candidates of one solve, shared by its worker threads and the caller (see above) */
typedef struct {
    PyObject_HEAD
    pthread_mutex_t lock;
    pthread_cond_t ready;
    int capacity, count, ok;
    signed char *moves; /* capacity rows of ROW */
    int *len, *dir, *chunk;
    volatile int shortest, slack, max_length, stop;
    double descent_s;
    uint64_t received, dropped;
} Collector;

typedef struct {
    const uint16_t *twist_move, *flip_move, *slice_sorted_move, *u_edges_move, *d_edges_move;
    const uint16_t *corners_move, *ud_edges_move, *ud_from_u_d, *twist_conj, *ud_edges_conj;
    /* per slice * 2048 + flip: its flipslice class << 4 | the symmetry to the class's
       representative (one lookup gives both; TwoPhaseTables.flipslice_classsym) */
    const uint32_t *flipslice_classsym;
    const uint16_t *corner_classidx;
    const uint8_t *corner_sym, *phase1_axes, *phase2_prun, *cornslice_depth, *edgeslice_depth;
    const uint8_t *slice_twist_depth, *slice_flip_depth;
    /* the same depths with the turns that change them (tables/bfs.py move_masks): bits
       24..31 the depth, a nibble per face (see pair_moves()) */
    const uint32_t *slice_twist_mask, *slice_flip_mask;
    /* exact depth (18 face turns, 4 bits each) of the corners alone, corner class * 2187 +
       twist conjugated by the class's symmetry: a lower bound on the rest of any solution */
    const uint8_t *corner_twist_depth;
    /* row p - 1 (p = 1..GOAL_ROWS), indexed as corner_twist_depth: the exact distance (18
       face turns, 4 bits each) from the corners to the nearest corner state that phase 2
       solves within p moves (twist 0, corners alone at most p phase-2 moves): a phase-1
       node whose phase 2 may take at most p moves needs at least that many phase-1 moves
       still (see goal_table()); corner_goal_max[p] is the largest entry of row p
       (corner_goal_max[0]: of corner_twist_depth, which is row 0) */
    const uint8_t *corner_goal_depth, *corner_goal_max;
    /* a child's flipslice class and symmetry from its parent's (tables/sets.py class_rows()):
       class_move[class * 18 + m] is class << 4 | sym of the class's representative after
       turn m, move_conj[m * 16 + s] the turn S m S^-1, sym_mult[a * 16 + b] the symmetry
       S_a S_b */
    const uint32_t *class_move;
    const uint8_t *move_conj, *sym_mult;
} Tables;

typedef struct {
    int twist, flip, slice_sorted, u_edges, d_edges, corners;
    uint32_t allowed;
    int dist;
} Start;

/* pruning tables in the robot's metric (a group of one axis = one move) */
typedef struct {
    const uint8_t *phase1_axes, *cornslice_depth, *edgeslice_depth;
    /* phase 2: exact depth, 4 bits per entry (15 = 15 or more), corner class * 40320 +
       ud_edges: one lookup gives a phase-2 start its distance (no walk down a mod-3 table) */
    const uint8_t *phase2_depth;
    const uint8_t *slice_twist_depth, *slice_flip_depth;
    /* phase-1 coordinates moved by a whole group: [x * 45 + k] */
    const uint16_t *twist_g, *flip_g, *slice_g;
    /* the corners and the slice order moved by a whole group, [x * 45 + k]: carried along
       the phase-1 path, so that a phase-1 end has them at once */
    const uint16_t *corners_g, *slice_sorted_g;
    /* the slice x twist and slice x flip depths with the groups that change them
       (tables/bfs.py group_masks): bits 56..63 the depth, 16 bits per axis (see
       group_moves()) */
    const uint64_t *slice_twist_mask, *slice_flip_mask;
    /* the corner goal in groups (tables/builders.py _build_axialgoal), corner class x twist
       as corner_twist_depth, a byte an entry: for p = AX_GOAL_FIRST..AX_GOAL_LAST, the group
       distance to the nearest corner state (twist 0) whose permutation phase 2 solves within p
       groups is (e & 7) + (the bits set in e >> p) (see ax_goal_fails()); goal_max[p]: the
       largest entry for p (a test against as much or more never prunes) */
    const uint8_t *corner_goal, *goal_max;
    /* a child's flipslice class and symmetry from its parent's (tables/sets.py class_rows(),
       as Tables' class_move): class_g[class * 45 + k] is class << 4 | sym of the class's
       representative moved by group k, group_conj[k * 16 + s] the group S k S^-1 */
    const uint32_t *class_g;
    const uint8_t *group_conj;
} Axial;

#define N_AXIAL 45
#define N_AX_TABLES 17
#define N_AXIAL2 21
static int AX_M1[N_AXIAL], AX_M2[N_AXIAL], AX_P2[N_AXIAL2], AX_IS_P2[N_AXIAL];
/* the phase-2 group counts the robot corner goal has rows for (fewer use the first row: its
   goal holds theirs, so its distance is a weaker bound) */
#define AX_GOAL_FIRST 3
#define AX_GOAL_LAST 8
/* bits set in a byte */
static uint8_t POP8[256];
/* the groups that leave phase 2's group (the last group of a phase 1 is one of them) */
static uint64_t AX_LEAVE_H;

/* mechanism-cost mode: most machine states a face turn can end in (see mech_search) */
#define MECH_MAX_K 96
struct Mech;

struct MechState {
    /* per depth the least planned time into each of the k states the last move can end in */
    /* [0, k): the end states of a turn of face mface (the last move's), [k, 2k): of face
       mface2 when the last two moves turn opposite faces (they commute: the order that ends
       with the earlier one; else -1 and infinite) */
    double mvec[MAX_DEPTH + 2][2 * MECH_MAX_K];
    int mface[MAX_DEPTH + 2], mface2[MAX_DEPTH + 2];
    /* the move (cube's own frame) the vector's first half is of; an inverse direction's
       mface2 is the move (not the face) of its second half */
    int mmove[MAX_DEPTH + 2];
    /* the children's vectors mech_order computed at a depth, valid while the vector they
       came from (its version mver) and the direction are the same */
    double cvec[MAX_DEPTH + 1][N_MOVE][2 * MECH_MAX_K], cmin[MAX_DEPTH + 1][N_MOVE];
    int cface2[MAX_DEPTH + 1][N_MOVE];
    uint64_t mver[MAX_DEPTH + 2], cver[MAX_DEPTH + 1], mcount;
    int cdir[MAX_DEPTH + 1];
    uint32_t cmask[MAX_DEPTH + 1];
};

typedef struct {
    const Tables *T;
    const Axial *A;
    const Start *st;
    /* robot-metric search: per group depth g, the moves so far, the axis of group g, whether
       group g is made of phase-2 turns only, and the robot time so far */
    int gmoves[MAX_DEPTH + 2], gaxis[MAX_DEPTH + 1], gp2[MAX_DEPTH + 1];
    double gtime[MAX_DEPTH + 2];
    double ax_t[N_AXIAL];
    int ax_order[N_AXIAL]; /* the groups, cheapest first: phase 1 tries them in this order */
    int ax_rank[N_AXIAL];  /* each group's place in ax_order */
    /* a mask of groups (bit k: group k) as a mask of their places in ax_order: the OR of
       rank_of_byte[b][byte b of the mask] (see to_ranks()) */
    uint64_t rank_of_byte[6][256];
    uint64_t rank_double; /* the places of the groups of two turns (one on each face) */
    int root_group;        /* >= 0: the only group tried first (see ax_run) */
    /* least robot time of n phase-2 groups (each with its settle): [0] when the group before
       was on the U/D axis (the next one is not), [1] when it was not */
    double p2_rest[2][MAX_DEPTH + 2];
    uint64_t ax_allowed;
    int dir, n1, max_length, phase2_max, phase2_slack;
    int path[MAX_DEPTH + 1];
    /* path[0..valid_ud) has its U and D edges in u_at, d_at (computed only for the phase-1
       ends whose corners pass; both searches carry the corners down their phase-1 path) */
    int u_at[MAX_DEPTH + 2], d_at[MAX_DEPTH + 2];
    int valid_ud;
    /* robot cost along the path: total of the groups so far, and the time of the last group
       if it is a single turn that the next move may still join (else -1) */
    double total_at[MAX_DEPTH + 2], open_at[MAX_DEPTH + 2];
    /* result */
    int found, best_len, best_dir;
    int best_path[MAX_DEPTH + 1];
    double best_time;
    /* best_time holds a bound: this search's best robot time, or a better one another search
       sharing the buffer found (the robot searches prune with it either way) */
    int bounded;
    /* settings */
    int robot, simultaneous, stop_at_first;
    /* set when any search sharing this flag holds a solution (worker threads of one solve):
       then the budget ends every one of them, found or not */
    volatile unsigned char *shared_found;
    /* byte 1 of the shared buffer (see the header), or NULL */
    unsigned char *shared_best;
    /* bytes 8..15 of the shared buffer (see the header), or NULL */
    uint64_t *shared_time;
    /* bytes 16..SHARED_PEEK_END of the shared buffer (publish_best()), or NULL */
    unsigned char *shared_peek;
    double quarter_s, half_s, pair_s, settle_s, min_group_s;
    /* candidate collection: the collector, this worker's chunk number */
    Collector *collector;
    int collect, chunk, descending;
    double collect_from;
    /* time */
    double t0, deadline, hard_deadline;
    int stop, timed_out;
    /* statistics */
    uint64_t nodes1, nodes2, phase2_starts, improvements, solutions;
    double first_s;
    int first_len, max_n1;
    /* mechanism-cost mode (mech_search, see its block below): the cost tables and the
       search's state (allocated by mech_search only) */
    const struct Mech *mech;
    struct MechState *ms;
    int length_slack; /* solutions may be this much longer than the shortest found */
} Ctx;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int get2(const uint8_t *t, uint64_t i) {
    return (t[i >> 2] >> ((i & 3) << 1)) & 3;
}

/* the child's exact depth from the parent's and the child's depth mod 3 */
static inline int next_depth(int d, int r) {
    return d + ((r - d % 3 + 4) % 3) - 1;
}

/* The phase-1 table (phase1_axes, 4 bits an entry, tables/bfs.py pack_axes): bits 0-1 the
   depth mod 3, bits 2-3 the axis of every turn one move nearer H (0 U/D, 1 R/L, 2 F/B; 3:
   more than one axis), in the frame of the class's representative. A symmetry whose quarter
   turn about U is odd (bit 1 of its index, tables/moves.py) swaps the R/L and F/B axes. */
static inline int p1_entry(const uint8_t *t, uint64_t i) {
    return (t[i >> 1] >> ((i & 1u) << 2)) & 15;
}

/* the moves of each axis (turn m is of face m / 3, axis m / 3 % 3), and every move (code 3) */
static const uint32_t AXIS_MOVES[4] = {0x7u | 0x7u << 9, 0x7u << 3 | 0x7u << 12,
                                       0x7u << 6 | 0x7u << 15, (1u << N_MOVE) - 1};

/* the moves a node whose entry is v, read with symmetry sym, may take when its distance is
   the moves it has left (each must bring it one nearer) */
static inline uint32_t tight_moves(int v, int sym) {
    int code = v >> 2;
    if (code == 1 || code == 2) code ^= (sym >> 1) & 1 ? 3 : 0;
    return AXIS_MOVES[code];
}

static inline int p1_mod3(const Tables *T, int twist, int flip, int slice) {
    uint32_t fs = (uint32_t)slice * N_FLIP + (uint32_t)flip;
    uint32_t e = T->flipslice_classsym[fs];
    uint64_t cls = e >> 4;
    int sym = (int)(e & 15u);
    return p1_entry(T->phase1_axes, cls * N_TWIST + T->twist_conj[twist * N_SYM + sym]) & 3;
}

/* the entry of (corners, ud_edges) in the phase-2 tables over corner class x ud_edges */
static inline uint64_t p2_index(const Tables *T, int corners, int ud) {
    return (uint64_t)T->corner_classidx[corners] * N_UD +
           T->ud_edges_conj[ud * N_SYM + T->corner_sym[corners]];
}

static inline int p2_mod3(const Tables *T, int corners, int ud) {
    return get2(T->phase2_prun, p2_index(T, corners, ud));
}

/* the corners' entry in corner_twist_depth, and its depth (the most moves any corner state
   needs is 11: a test against a bound of 11 or more never prunes) */
#define CORNER_MAX_DEPTH 11
static inline uint32_t ct_index(const Tables *T, int corners, int twist) {
    return (uint32_t)T->corner_classidx[corners] * N_TWIST +
           T->twist_conj[twist * N_SYM + T->corner_sym[corners]];
}

static inline int ct_depth(const Tables *T, uint32_t i) {
    return (T->corner_twist_depth[i >> 1] >> ((i & 1u) << 2)) & 15;
}

/* rows of corner_goal_depth (phase-2 lengths 1..GOAL_ROWS; 0 is corner_twist_depth) and the
   bytes of one row */
#define GOAL_ROWS 8
/* the lanes read the children's corner entries only this much (or more) below the row's
   largest entry: just below it the test rarely prunes */
#ifndef GOAL_MARGIN
#define GOAL_MARGIN 1
#endif
#define GOAL_ROW_BYTES (((uint64_t)N_CORNER_CLASS * N_TWIST + 1) / 2)

static inline int nibble(const uint8_t *t, uint32_t i) {
    return (t[i >> 1] >> ((i & 1u) << 2)) & 15;
}

/* The corner bound of a phase-1 length n1: a phase-1 end after n1 moves takes at most p =
   end_limit()'s phase-2 moves, so its corners are within p phase-2 moves of solved, and a
   node togo moves before the end has corners within togo moves of such a state: its entry
   in the returned row must be at most togo + *slack (p beyond the rows: the last row, with
   the difference as slack, since a state within p - GOAL_ROWS phase-2 moves of the last
   row's goal set is in p's). *most: the row's largest entry (a test against as much or more
   never prunes). */
static inline const uint8_t *goal_table(const Ctx *c, int n1, int *slack, int *most);

#define N_PHASE2_MOVES 10
static const int PHASE2_MOVES[N_PHASE2_MOVES] = {0, 1, 2, 4, 7, 9, 10, 11, 13, 16};
static const uint32_t PHASE2_MASK = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 4) | (1u << 7) |
                                    (1u << 9) | (1u << 10) | (1u << 11) | (1u << 13) | (1u << 16);

/* exact phase-1 distance, walking down the mod-3 table */
static int p1_depth(const Tables *T, int twist, int flip, int slice_sorted) {
    int slice = slice_sorted / 24;
    int r = p1_mod3(T, twist, flip, slice);
    int depth = 0;
    while (twist != 0 || flip != 0 || slice != 0) {
        int target = (r + 2) % 3, m;
        for (m = 0; m < N_MOVE; m++) {
            int t1 = T->twist_move[twist * N_MOVE + m];
            int f1 = T->flip_move[flip * N_MOVE + m];
            int s1 = T->slice_sorted_move[slice * 24 * N_MOVE + m] / 24;
            int r1 = p1_mod3(T, t1, f1, s1);
            if (r1 == target) {
                twist = t1; flip = f1; slice = s1; r = r1; depth++;
                break;
            }
        }
        if (m == N_MOVE || depth > 20) return -1; /* inconsistent tables */
    }
    return depth;
}

static inline int mv(const uint16_t *table, int x, int m) {
    return m < 0 ? x : table[x * N_MOVE + m];
}

#define WALK_BATCH 7
#define WALK_DEEP 99

/* Exact phase-2 distance (face turns) from the mod-3 table over corner class x ud_edges, known
   to be at least lo, by walking down the table with the ten phase-2 moves. Returns
   WALK_DEEP as soon as the distance is known to exceed limit (at once when the least value at
   least lo with the entry's residue does), -1 if the table is inconsistent. Each step fetches
   WALK_BATCH neighbours' entries at a time (they miss the cache; enough misses in flight, few
   fetched in vain) before comparing them. */
static int walk2(const Tables *T, int corners, int ud, int lo, int limit) {
    const uint8_t *prun = T->phase2_prun;
    const int n = N_PHASE2_MOVES;
    int depth = 0, r = p2_mod3(T, corners, ud), k;
    int c1[N_PHASE2_MOVES], u1[N_PHASE2_MOVES];
    uint64_t idx[N_PHASE2_MOVES];
    if (lo + (r - lo % 3 + 3) % 3 > limit) return WALK_DEEP;
    while (corners != 0 || ud != 0) {
        int target = (r + 2) % 3, b, hi, found = -1;
        if (depth >= limit) return WALK_DEEP;
        for (b = 0; b < n && found < 0; b = hi) {
            hi = b + WALK_BATCH < n ? b + WALK_BATCH : n;
            for (k = b; k < hi; k++) {
                c1[k] = T->corners_move[corners * N_MOVE + PHASE2_MOVES[k]];
                u1[k] = T->ud_edges_move[ud * N_MOVE + PHASE2_MOVES[k]];
                idx[k] = p2_index(T, c1[k], u1[k]);
                __builtin_prefetch(&prun[idx[k] >> 2]);
            }
            for (k = b; k < hi; k++)
                if (get2(prun, idx[k]) == target) {
                    found = k;
                    break;
                }
        }
        if (found < 0) return -1;
        corners = c1[found];
        ud = u1[found];
        r = target;
        depth++;
    }
    return depth;
}

static int p2_depth(const Tables *T, int corners, int ud) {
    return walk2(T, corners, ud, 0, 30);
}

static inline double move_time(const Ctx *c, int m) {
    return (m % 3 == 1) ? c->half_s : c->quarter_s;
}

static void mech_push(Ctx *c, int depth, int m);
static double mech_bound(const Ctx *c, int depth, int rest);
static int mech_phase2(Ctx *c, int corners, int ud, int ss, int dist, int depth, int togo);
static int mech_cap(const Ctx *c);

/* extend the robot cost of path[0..depth) by move m (at index depth) */
static inline void cost_push(Ctx *c, int depth, int m) {
    double tm;
    if (c->mech != NULL) {
        mech_push(c, depth, m);
        return;
    }
    tm = move_time(c, m);
    double total = c->total_at[depth], open = c->open_at[depth];
    if (depth > 0 && open >= 0.0 && c->simultaneous && (c->path[depth - 1] / 3) % 3 == (m / 3) % 3) {
        /* the last single turn and this one, on opposite faces, run together */
        double longer = open > tm ? open : tm;
        c->total_at[depth + 1] = total - open + longer + c->pair_s;
        c->open_at[depth + 1] = -1.0;
    } else {
        c->total_at[depth + 1] = total + (depth > 0 ? c->settle_s : 0.0) + tm;
        c->open_at[depth + 1] = tm;
    }
}

/* a lower bound of the robot time of any solution that continues path[0..depth) with
   exactly `rest` more moves */
static inline double cost_bound(const Ctx *c, int depth, int rest) {
    if (c->mech != NULL) return mech_bound(c, depth, rest);
    return c->total_at[depth] + (double)(rest / 2) * c->min_group_s;
}

static inline int any_found(const Ctx *c) {
    return c->found || (c->shared_found != NULL && *c->shared_found);
}

/* the face-turn search for the shortest solution: the length a new solution must beat, the
   shortest held by this search or by any search sharing its bound (MAX_DEPTH + 1: none) */
static inline int beat_len(const Ctx *c) {
    int best = c->found ? c->best_len : MAX_DEPTH + 1;
    if (c->shared_best != NULL) {
        int shared = __atomic_load_n(c->shared_best, __ATOMIC_RELAXED);
        if (shared > 0 && shared < best) best = shared;
    }
    return best;
}

/* The robot searches: publish a robot time to the searches sharing the buffer. A positive
   double's bits order as the number does, so the least time is an atomic minimum of them. */
static inline void share_time(const Ctx *c, double t) {
    uint64_t bits, old;
    if (c->shared_time == NULL || !(t > 0.0)) return;
    memcpy(&bits, &t, sizeof bits);
    old = __atomic_load_n(c->shared_time, __ATOMIC_RELAXED);
    while ((old == 0 || bits < old) &&
           !__atomic_compare_exchange_n(c->shared_time, &old, bits, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
}

/* take a better robot time another search found as this one's bound */
static inline void adopt_time(Ctx *c) {
    uint64_t bits;
    double t;
    if (c->shared_time == NULL) return;
    bits = __atomic_load_n(c->shared_time, __ATOMIC_RELAXED);
    if (bits == 0) return;
    memcpy(&t, &bits, sizeof t);
    if (!c->bounded || t < c->best_time) {
        c->best_time = t;
        c->bounded = 1;
    }
}

/* The best solution so far, for peek() while the searches run: at byte 16 of the shared
   buffer a sequence number (odd while a search writes; 0: nothing yet), then the chunk, the
   direction and the length (int32 each), the robot time (a double) and the moves (a byte
   each). A writer takes the even number to the next odd one, writes, and stores the next
   even one; a reader copies between two equal even readings (a sequence lock: the searches
   never wait on a reader, and improvements are rare enough that writers seldom meet). A
   writer the system preempts between the two numbers must not be waited for on a busy core:
   the others yield theirs while they wait, and a reader gives up after PEEK_TRIES. */
#define PEEK_SEQ 0
#define PEEK_CHUNK 4
#define PEEK_DIR 8
#define PEEK_LEN 12
#define PEEK_TIME 16
#define PEEK_MOVES 24
#define SHARED_PEEK_END (16 + PEEK_MOVES + MAX_DEPTH + 1)
#define PEEK_SPIN 64
#define PEEK_TRIES 4096

static void publish_best(const Ctx *c, double t, const int *path, int len) {
    unsigned char *p = c->shared_peek;
    uint32_t *seq, s;
    int32_t fields[3];
    double held;
    if (p == NULL) return;
    seq = (uint32_t *)(p + PEEK_SEQ);
    for (int tries = 1;; tries++) {
        s = __atomic_load_n(seq, __ATOMIC_RELAXED);
        if (!(s & 1u) && __atomic_compare_exchange_n(seq, &s, s + 1u, 0, __ATOMIC_ACQUIRE,
                                                     __ATOMIC_RELAXED))
            break;
        if (tries % PEEK_SPIN == 0) sched_yield();
    }
    /* the odd number visible before any of the stores below (a reader seeing one of them
       then sees the number change) */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(&held, p + PEEK_TIME, sizeof held);
    if (s == 0 || t < held) {
        fields[0] = c->chunk;
        fields[1] = c->dir;
        fields[2] = len;
        memcpy(p + PEEK_CHUNK, fields, sizeof fields);
        memcpy(p + PEEK_TIME, &t, sizeof t);
        for (int i = 0; i < len; i++) p[PEEK_MOVES + i] = (unsigned char)path[i];
    }
    __atomic_store_n(seq, s + 2u, __ATOMIC_RELEASE);
}

/* publish a solution of len moves to the searches sharing the bound */
static inline void share_len(const Ctx *c, int len) {
    unsigned char old;
    if (c->shared_best == NULL) return;
    old = __atomic_load_n(c->shared_best, __ATOMIC_RELAXED);
    while ((old == 0 || len < old) &&
           !__atomic_compare_exchange_n(c->shared_best, &old, (unsigned char)len, 1,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* the longest solution a collecting search keeps now */
/* collecting candidates now (not in the plain descent that may come first) */
static inline int collecting(const Ctx *c) {
    return c->collect && !c->descending;
}

static inline int collect_bound(const Ctx *c) {
    const Collector *k = c->collector;
    int bound = k->max_length;
    if (k->shortest + k->slack < bound) bound = k->shortest + k->slack;
    return bound;
}

static void check_time(Ctx *c) {
    double t = now_s();
    adopt_time(c);
    if (c->collect && c->collector->stop) c->stop = 1;
    if (c->descending && any_found(c) && t >= c->collect_from) c->descending = 0;
    if (any_found(c) && t >= c->deadline) c->stop = 1;
    if (!c->found && t >= c->hard_deadline) {
        c->stop = 1;
        c->timed_out = 1;
    }
}

/* a collecting search: every solution goes to the buffer */
static void collect(Ctx *c, int len) {
    Collector *k = c->collector;
    int i;
    if (!c->found) {
        c->first_s = now_s() - c->t0;
        c->first_len = len;
    }
    if (!c->found || len < c->best_len) {
        c->best_len = len;
        c->best_dir = c->dir;
        memcpy(c->best_path, c->path, sizeof(int) * (size_t)len);
        c->improvements++;
    }
    c->found = 1;
    if (c->shared_found != NULL) *c->shared_found = 1;
    pthread_mutex_lock(&k->lock);
    k->received++;
    if (k->count < k->capacity) {
        signed char *row = k->moves + (size_t)k->count * ROW;
        for (i = 0; i < len; i++) row[i] = (signed char)c->path[i];
        k->len[k->count] = len;
        k->dir[k->count] = c->dir;
        k->chunk[k->count] = c->chunk;
        k->count++;
    } else {
        k->dropped++;
    }
    if (len < k->shortest) k->shortest = len;
    if (k->stop) c->stop = 1;
    pthread_cond_signal(&k->ready);
    pthread_mutex_unlock(&k->lock);
    if (c->stop_at_first) c->stop = 1;
}

static void record(Ctx *c, int len) {
    int better;
    c->solutions++;
    if (c->collect) {
        collect(c, len);
        return;
    }
    if (c->robot) {
        double t = c->total_at[len];
        better = !c->bounded || t < c->best_time - 1e-12;
        if (better) {
            c->best_time = t;
            c->bounded = 1;
            share_time(c, t);
            publish_best(c, t, c->path, len);
        }
    } else {
        better = !c->found || len < c->best_len;
        share_len(c, len);
    }
    if (!better) return;
    if (!c->found) {
        c->first_s = now_s() - c->t0;
        c->first_len = len;
    }
    c->found = 1;
    if (c->shared_found != NULL) *c->shared_found = 1;
    c->best_len = len;
    c->best_dir = c->dir;
    memcpy(c->best_path, c->path, sizeof(int) * (size_t)len);
    c->improvements++;
    if (c->stop_at_first) c->stop = 1;
}

static inline int successor_ok(int prev, int m) {
    int pf, f;
    if (prev < 0) return 1;
    pf = prev / 3;
    f = m / 3;
    /* not the same face twice; of two opposite faces, the first-listed face goes first */
    return pf != f && pf != f + 3;
}

#define ALL_MOVES ((1u << N_MOVE) - 1)
/* SUCC[prev + 1]: the moves successor_ok() allows after prev (-1: none before) */
static uint32_t SUCC[N_MOVE + 1];
/* three faces' nibbles of a move-mask entry (12 bits) -> the 9 turns that decrease its depth
   (MASK_DOWN) and that do not increase it (MASK_KEEP) */
static uint16_t MASK_DOWN[1 << 12], MASK_KEEP[1 << 12];

static void init_masks(void) {
    for (int x = 0; x < (1 << 12); x++) {
        unsigned down = 0, keep = 0;
        for (int f = 0; f < 3; f++) {
            unsigned nibble = (unsigned)(x >> (4 * f)) & 15u, bits = nibble & 7u;
            if (nibble & 8u) {
                keep |= (~bits & 7u) << (3 * f); /* bits: the turns that increase it */
            } else {
                down |= bits << (3 * f);
                keep |= 7u << (3 * f);
            }
        }
        MASK_DOWN[x] = (uint16_t)down;
        MASK_KEEP[x] = (uint16_t)keep;
    }
    for (int prev = -1; prev < N_MOVE; prev++) {
        uint32_t mask = 0;
        for (int m = 0; m < N_MOVE; m++)
            if (successor_ok(prev, m)) mask |= 1u << m;
        SUCC[prev + 1] = mask;
    }
}

/* The moves after which a child can still be within togo - 1 moves of H by one of the exact
   slice x twist / slice x flip tables, from the node's move-mask entry e: every move when the
   node's depth there is at most togo - 2, those that do not increase it at togo - 1, those
   that decrease it at togo, none beyond. Exactly the children the depth tables would pass. */
static inline uint32_t pair_moves(uint32_t e, int togo) {
    int d = (int)(e >> 24);
    uint32_t lo = e & 0xFFFu, hi = (e >> 12) & 0xFFFu;
    if (d <= togo - 2) return ALL_MOVES;
    if (d == togo - 1) return MASK_KEEP[lo] | (uint32_t)MASK_KEEP[hi] << 9;
    if (d == togo) return MASK_DOWN[lo] | (uint32_t)MASK_DOWN[hi] << 9;
    return 0;
}

static int phase2(Ctx *c, int corners, int ud, int ss, int dist, int depth, int togo) {
    const Tables *T = c->T;
    int prev, k, found = 0;
    if (c->mech != NULL) return mech_phase2(c, corners, ud, ss, dist, depth, togo);
    if (togo == 0) {
        if (ss != 0 || corners != 0 || ud != 0) return 0;
        record(c, depth);
        return 1;
    }
    c->nodes2++;
    if ((c->nodes2 & 0x3FFF) == 0) {
        check_time(c);
        if (c->stop) return 0;
    }
    prev = depth > 0 ? c->path[depth - 1] : -1;
    for (k = 0; k < N_PHASE2_MOVES; k++) {
        int m = PHASE2_MOVES[k], c1, u1, s1, nd;
        if (!((c->st->allowed >> m) & 1u) || !successor_ok(prev, m)) continue;
        c1 = T->corners_move[corners * N_MOVE + m];
        s1 = T->slice_sorted_move[ss * N_MOVE + m];
        if (T->cornslice_depth[c1 * 24 + s1] >= togo) continue;
        u1 = T->ud_edges_move[ud * N_MOVE + m];
        if (T->edgeslice_depth[u1 * 24 + s1] >= togo) continue;
        nd = next_depth(dist, p2_mod3(T, c1, u1));
        if (nd >= togo) continue;
        if (c->robot) {
            cost_push(c, depth, m);
            if (c->bounded && cost_bound(c, depth + 1, togo - 1) >= c->best_time - 1e-12) continue;
        }
        c->path[depth] = m;
        if (phase2(c, c1, u1, s1, nd, depth + 1, togo - 1)) {
            found = 1;
            if (!c->robot && !collecting(c)) return 1;
        }
        if (c->stop) return found;
    }
    return found;
}

/* the longest solution (face turns) the search still wants: the mechanism's cap, the
   collector's bound, max_length for the robot time, else one less than the shortest held
   by this search or one sharing its bound */
static inline int wanted_len(const Ctx *c) {
    int beat;
    if (c->mech != NULL) return mech_cap(c);
    if (c->robot) return c->max_length;
    if (collecting(c)) return collect_bound(c);
    beat = beat_len(c);
    return beat <= c->max_length ? beat - 1 : c->max_length;
}

static inline const uint8_t *goal_table(const Ctx *c, int n1, int *slack, int *most) {
    int p = wanted_len(c) - n1;
    const Tables *T = c->T;
    if (p > c->phase2_max) p = c->phase2_max;
    if (p < 0) p = 0; /* no end passes end_limit(): the corners alone as a (weaker) bound */
    *slack = 0;
    if (p > GOAL_ROWS) {
        *slack = p - GOAL_ROWS;
        p = GOAL_ROWS;
    }
    *most = T->corner_goal_max[p];
    return p == 0 ? T->corner_twist_depth : T->corner_goal_depth + (uint64_t)(p - 1) * GOAL_ROW_BYTES;
}

/* The first test of a phase-1 end after n1 moves with slice order ss and corners (the
   phase-1 search carries the corners along its path, see phase1()): counts it (checking the
   time every 16), and returns the most phase-2 moves it may take when its corners x slice
   depth (in *cs) is within them, else -1. Both the recursive search (phase2_start()) and the
   lanes (lane_step()) end a phase-1 path here. */
static int end_limit(Ctx *c, int ss, int corners, int n1, int *cs) {
    int bound, limit;
    c->phase2_starts++;
    if ((c->phase2_starts & 0xF) == 0) {
        check_time(c);
        if (c->stop) return -1;
    }
    bound = wanted_len(c) - n1;
    limit = bound < c->phase2_max ? bound : c->phase2_max;
    if (limit < 0) return -1;
    *cs = c->T->cornslice_depth[corners * 24 + ss];
    return *cs > limit ? -1 : limit;
}

/* the phase-1 ends of a node one move before its end: the moves (a mask) and, for each,
   the end's slice order and corners; their corners x slice entries (end_limit()'s test, a
   cache miss each) are fetched together before any is read. Returns how many. */
static int list_ends(const Tables *T, int ss, int corners, uint32_t moves, int *end_m,
                     int *end_s, int *end_c) {
    int n = 0, m;
    moves &= ~PHASE2_MASK; /* the last phase-1 move leaves H (see phase1()) */
    while (moves) {
        m = __builtin_ctz(moves);
        moves &= moves - 1;
        end_m[n] = m;
        end_s[n] = T->slice_sorted_move[ss * N_MOVE + m];
        end_c[n] = T->corners_move[corners * N_MOVE + m];
        __builtin_prefetch(&T->cornslice_depth[end_c[n] * 24 + end_s[n]]);
        n++;
    }
    return n;
}

static void phase2_continue(Ctx *c, int ss, int corners, int cs, int limit, int n1);

static void phase2_start(Ctx *c, int ss, int corners, int n1) {
    int cs, limit = end_limit(c, ss, corners, n1, &cs);
    if (limit >= 0) phase2_continue(c, ss, corners, cs, limit, n1);
}

/* a phase-1 end whose corners x slice depth cs passed: its edges, then phase 2 up to limit */
static void phase2_continue(Ctx *c, int ss, int corners, int cs, int limit, int n1) {
    const Tables *T = c->T;
    int i, es, ud, d2, lo, togo2;
    /* most phase-1 ends fail on their corners: only the others pay for their edges */
    for (i = c->valid_ud > 0 ? c->valid_ud : 0; i < n1; i++) {
        int m = c->path[i];
        c->u_at[i + 1] = T->u_edges_move[c->u_at[i] * N_MOVE + m];
        c->d_at[i + 1] = T->d_edges_move[c->d_at[i] * N_MOVE + m];
    }
    c->valid_ud = n1;
    ud = T->ud_from_u_d[c->u_at[n1] * 24 + c->d_at[n1] % 24];
    es = T->edgeslice_depth[ud * 24 + ss];
    if (es > limit) return;
    if (es > cs) cs = es;
    d2 = walk2(T, corners, ud, cs, limit);
    if (d2 < 0 || d2 > limit) return;
    lo = d2 > cs ? d2 : cs;
    if ((c->robot || collecting(c)) && lo + c->phase2_slack < limit) limit = lo + c->phase2_slack;
    for (togo2 = lo; togo2 <= limit; togo2++) {
        if (c->robot && c->bounded && cost_bound(c, n1, togo2) >= c->best_time - 1e-12) break;
        if (collecting(c)) {
            if (n1 + togo2 > collect_bound(c)) break;
            phase2(c, corners, ud, ss, d2, n1, togo2);
            if (c->stop) break;
            continue;
        }
        if (phase2(c, corners, ud, ss, d2, n1, togo2) && !c->robot) break;
        if (c->stop) break;
        if (!c->robot && n1 + togo2 + 1 >= beat_len(c)) break;
    }
}

/* a phase-1 child: move (or group) m, its coordinates (s1 as the parent keeps it, slice its
   position 0..494), and for the robot search its time so far */
typedef struct {
    int m, t1, f1, s1, slice, nd, c1, sym;
    uint32_t fs, ct; /* ct: the corners' entry (lanes_search, when ct_on; the robot search) */
    int glim;        /* the robot search's corner bound (ax_goal_prepare()) */
    uint32_t tight;  /* its moves when it has none to spare (tight_moves()) */
    uint64_t gtight; /* the same for a group (tight_groups()) */
    uint64_t idx;
    uint32_t cls; /* its flipslice class (child_class(); sym is the symmetry to its
                     representative) */
    double total;
} Child;

static void mech_order(Ctx *c, int depth, Child *ch, int n, int togo);

/* Child k's flipslice class, symmetry and phase-1 table index (its twist t1 set) from e, its
   parent's class row at the turn or group conjugated by the parent's symmetry sym: e holds
   the class and a symmetry S2 of the representative so moved, and the child's symmetry is
   S2 * sym (tables/sets.py class_rows()) */
static inline void child_class(const Tables *T, uint32_t e, int sym, Child *k) {
    k->sym = (int)T->sym_mult[(e & 15u) * 16 + (uint32_t)sym];
    k->cls = e >> 4;
    k->idx = (uint64_t)k->cls * N_TWIST + T->twist_conj[k->t1 * N_SYM + k->sym];
}

/* Phase-1 nodes at most this close to their end screen their children with the small exact
   slice x twist and slice x flip tables only, not the big table, and do not know their exact
   distance (measured on random states: at 4 moves from the end the big table rejects 0.1 %
   more children than the small ones, at 5 3 %, at 7 half; every read of it misses the
   cache). The last move's test (phase1_last()) is exact whatever the distance. */
#ifndef SMALL_ONLY_TOGO
#define SMALL_ONLY_TOGO 4
#endif

/* fetch what a phase-1 node reads first: its two move-mask entries and its move-table rows
   (each row is 36 bytes, so it may straddle two cache lines); its parent asks for them
   before it visits the node */
static inline void prefetch_row(const uint16_t *r) {
    __builtin_prefetch(r);
    if ((((uintptr_t)r) & 63u) > 64u - 2u * N_MOVE) __builtin_prefetch(r + N_MOVE - 1);
}

static inline void prefetch_node(const Tables *T, int twist, int flip, int ss, int corners) {
    int slice = ss / 24;
    __builtin_prefetch(&T->slice_twist_mask[slice * N_TWIST + twist]);
    __builtin_prefetch(&T->slice_flip_mask[slice * N_FLIP + flip]);
    prefetch_row(&T->twist_move[twist * N_MOVE]);
    prefetch_row(&T->flip_move[flip * N_MOVE]);
    prefetch_row(&T->slice_sorted_move[ss * N_MOVE]);
    prefetch_row(&T->corners_move[corners * N_MOVE]);
}

/* A phase-1 node one move before its end (togo 1): its moves (see phase1()) are those into H
   (the exact slice x twist and slice x flip depths both 0: twist, flip and slice solved);
   the last move must leave H (see phase1()), so it is not a phase-2 move, and a node already
   in H has no such child (see list_ends()). */
static void phase1_last(Ctx *c, int ss, int corners, uint32_t moves, int depth) {
    int m, n, i;
    int end_m[N_MOVE], end_s[N_MOVE], end_c[N_MOVE];
    c->nodes1++;
    if ((c->nodes1 & 0x3FFF) == 0) {
        check_time(c);
        if (c->stop) return;
    }
    n = list_ends(c->T, ss, corners, moves, end_m, end_s, end_c);
    for (i = 0; i < n; i++) {
        m = end_m[i];
        if (c->robot) {
            cost_push(c, depth, m);
            if (c->bounded && cost_bound(c, depth + 1, 0) >= c->best_time - 1e-12) continue;
        }
        c->path[depth] = m;
        if (c->valid_ud > depth) c->valid_ud = depth;
        phase2_start(c, end_s[i], end_c[i], depth + 1);
        if (c->stop) return;
    }
}

/* whether the corners of a node at depth (path[0..depth) pushed) can still reach a phase-1
   end that phase 2 may take on (see goal_table()), and with a cost model be solved within the
   robot time that a solution may have (see corner_twist_depth) */
static int corners_may_finish(Ctx *c, int corners, int twist, int depth) {
    int bound = wanted_len(c), rest, slack, most, togo = c->n1 - depth;
    uint32_t i = ct_index(c->T, corners, twist);
    const uint8_t *goal = goal_table(c, c->n1, &slack, &most);
    if (togo + slack < most && nibble(goal, i) > togo + slack) return 0;
    if (bound - depth >= CORNER_MAX_DEPTH) return 1;
    rest = ct_depth(c->T, i);
    if (depth + rest > bound) return 0;
    /* the plain robot cost (its bound grows with the moves; the mechanism's is left alone) */
    return !(c->robot && c->mech == NULL && c->bounded &&
             cost_bound(c, depth, rest) >= c->best_time - 1e-12);
}

/* The children's entries of the big phase-1 table prun (the small tables' test is the group
   masks'): their symmetry class, then the entry, each fetched for all of them before any is
   read. */
static void fetch_prun(const Tables *T, const uint8_t *prun, int shift, Child *ch, int n) {
    int i;
    for (i = 0; i < n; i++) {
        ch[i].fs = (uint32_t)ch[i].slice * N_FLIP + (uint32_t)ch[i].f1;
        __builtin_prefetch(&T->flipslice_classsym[ch[i].fs]);
    }
    for (i = 0; i < n; i++) {
        uint32_t e = T->flipslice_classsym[ch[i].fs];
        uint64_t cls = e >> 4;
        int sym = (int)(e & 15u);
        ch[i].sym = sym;
        ch[i].idx = cls * N_TWIST + T->twist_conj[ch[i].t1 * N_SYM + sym];
        __builtin_prefetch(&prun[ch[i].idx >> shift]);
    }
}

/* A phase-1 node: twist, flip, slice order ss and corners (carried along the path for the
   phase-1 ends), its exact distance dist to H when togo >= SMALL_ONLY_TOGO (else togo), and
   tight, the moves that bring it nearer H when that is known (tight_moves(), from the entry its
   parent read; else every move): a node with no move to spare (dist == togo) takes only those.
   Its two move-mask entries (slice x twist, slice x flip) give the moves whose children the
   small exact tables pass, so only those children are computed. */
static void phase1(Ctx *c, int twist, int flip, int ss, int corners, int dist, uint32_t tight,
                   int depth) {
    const Tables *T = c->T;
    int togo = c->n1 - depth, prev, m, n, i, slice;
    const uint16_t *crow;
    uint32_t moves;
    Child ch[N_MOVE];
    if (togo == 0) {
        if (depth > 0) {
            /* the last phase-1 move must leave phase 2's group: otherwise the shorter phase 1
               already ended in it, and phase 2 tries this move there */
            if ((PHASE2_MASK >> c->path[depth - 1]) & 1u) return;
        }
        phase2_start(c, ss, corners, depth);
        return;
    }
    prev = depth > 0 ? c->path[depth - 1] : -1;
    slice = ss / 24;
    moves = c->st->allowed & SUCC[prev + 1] & (dist == togo ? tight : ALL_MOVES) &
            pair_moves(T->slice_twist_mask[slice * N_TWIST + twist], togo) &
            pair_moves(T->slice_flip_mask[slice * N_FLIP + flip], togo);
    if (togo == 1) {
        phase1_last(c, ss, corners, moves, depth);
        return;
    }
    c->nodes1++;
    if ((c->nodes1 & 0x3FFF) == 0) {
        check_time(c);
        if (c->stop) return;
    }
    if (depth > 0 && !corners_may_finish(c, corners, twist, depth)) return;
    /* a node in H close to its end takes no phase-2 move (its children would stay in H, and
       phase 1 must end with a move that leaves it); below SMALL_ONLY_TOGO the distance is
       not known (see below), the coordinates tell */
    if (togo < 5 && (togo <= SMALL_ONLY_TOGO ? twist == 0 && flip == 0 && ss < 24 : dist == 0))
        moves &= ~PHASE2_MASK;
    crow = &T->corners_move[corners * N_MOVE];
    /* The lookups of the children miss the cache (tables of tens of MB): they are made in
       passes, each fetching what the next one reads, so that the misses overlap. */
    n = 0;
    while (moves) {
        m = __builtin_ctz(moves);
        moves &= moves - 1;
        ch[n].m = m;
        ch[n].t1 = T->twist_move[twist * N_MOVE + m];
        ch[n].f1 = T->flip_move[flip * N_MOVE + m];
        ch[n].s1 = T->slice_sorted_move[ss * N_MOVE + m];
        ch[n].slice = ch[n].s1 / 24;
        n++;
    }
    if (togo <= SMALL_ONLY_TOGO) {
        /* close to the end (see SMALL_ONLY_TOGO): only the small tables screen the children,
           which are passed on at the greatest distance they may have; phase1_last() tests
           the last move exactly (a node further from H has no child in H, one in H none that
           leaves it) */
        for (i = 0; i < n; i++) {
            ch[i].nd = togo - 1;
            ch[i].tight = ALL_MOVES;
        }
    } else {
        /* what the children read first is fetched while the big table is read */
        for (i = 0; i < n; i++) {
            ch[i].c1 = crow[ch[i].m];
            prefetch_node(T, ch[i].t1, ch[i].f1, ch[i].s1, ch[i].c1);
        }
        fetch_prun(T, T->phase1_axes, 1, ch, n);
        for (i = 0; i < n; i++) {
            int v = p1_entry(T->phase1_axes, ch[i].idx);
            ch[i].nd = next_depth(dist, v & 3);
            ch[i].tight = tight_moves(v, ch[i].sym);
        }
    }
    /* the children that are visited (close to the end: what they read first is fetched
       now, so that only the first one's misses are waited for) */
    for (i = m = 0; i < n; i++) {
        if (ch[i].nd >= togo) continue;
        if (togo <= SMALL_ONLY_TOGO) {
            ch[i].c1 = crow[ch[i].m];
            prefetch_node(T, ch[i].t1, ch[i].f1, ch[i].s1, ch[i].c1);
        }
        ch[m++] = ch[i];
    }
    n = m;
    if (c->mech != NULL) mech_order(c, depth, ch, n, togo);
    for (i = 0; i < n; i++) {
        m = ch[i].m;
        if (c->robot) {
            cost_push(c, depth, m);
            if (c->bounded && cost_bound(c, depth + 1, togo - 1) >= c->best_time - 1e-12) continue;
        }
        c->path[depth] = m;
        if (c->valid_ud > depth) c->valid_ud = depth;
        phase1(c, ch[i].t1, ch[i].f1, ch[i].s1, ch[i].c1, ch[i].nd, ch[i].tight, depth + 1);
        if (c->stop) return;
    }
}

static double group_bound(const Ctx *c, int n) {
    /* robot time of n moves at best: ceil(n/2) groups of the fastest kind */
    int groups = (n + 1) / 2;
    if (c->mech != NULL) return mech_bound(c, 0, n);
    if (groups == 0) return 0.0;
    return (double)groups * c->min_group_s - c->settle_s;
}

/* ---- robot metric: search over groups (one face, or both faces of an axis at once) ---- */

static void init_axial(void) {
    int k = 0, j = 0;
    for (int b = 0; b < 256; b++) POP8[b] = (uint8_t)((b & 1) + POP8[b >> 1]);
    for (int axis = 0; axis < 3; axis++)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                if (!a && !b) continue;
                AX_M1[k] = a ? 3 * axis + a - 1 : -1;
                AX_M2[k] = b ? 3 * (axis + 3) + b - 1 : -1;
                AX_IS_P2[k] = (AX_M1[k] < 0 || ((PHASE2_MASK >> AX_M1[k]) & 1u)) &&
                              (AX_M2[k] < 0 || ((PHASE2_MASK >> AX_M2[k]) & 1u));
                if (AX_IS_P2[k])
                    AX_P2[j++] = k;
                else
                    AX_LEAVE_H |= (uint64_t)1 << k;
                k++;
            }
}

static inline int ax1_mod3(const Ctx *c, int twist, int flip, int slice) {
    const Tables *T = c->T;
    uint32_t fs = (uint32_t)slice * N_FLIP + (uint32_t)flip;
    uint32_t e = T->flipslice_classsym[fs];
    uint64_t cls = e >> 4;
    int sym = (int)(e & 15u);
    return p1_entry(c->A->phase1_axes, cls * N_TWIST + T->twist_conj[twist * N_SYM + sym]) & 3;
}

static inline int ax2_depth(const Ctx *c, int corners, int ud) {
    uint64_t i = p2_index(c->T, corners, ud);
    return (c->A->phase2_depth[i >> 1] >> ((i & 1) << 2)) & 15;
}

static int ax1_depth(const Ctx *c, int twist, int flip, int slice_sorted) {
    const Axial *A = c->A;
    int slice = slice_sorted / 24, r = ax1_mod3(c, twist, flip, slice), depth = 0;
    while (twist != 0 || flip != 0 || slice != 0) {
        int target = (r + 2) % 3, k;
        for (k = 0; k < N_AXIAL; k++) {
            int t1 = A->twist_g[twist * N_AXIAL + k], f1 = A->flip_g[flip * N_AXIAL + k];
            int s1 = A->slice_g[slice * N_AXIAL + k];
            int r1 = ax1_mod3(c, t1, f1, s1);
            if (r1 == target) {
                twist = t1; flip = f1; slice = s1; r = r1; depth++;
                break;
            }
        }
        if (k == N_AXIAL || depth > 20) return -1;
    }
    return depth;
}

/* push group k at group depth g: write its moves into path, bookkeeping for g + 1 */
static inline void ax_push(Ctx *c, int g, int k, double total) {
    int nm = c->gmoves[g];
    if (AX_M1[k] >= 0) c->path[nm++] = AX_M1[k];
    if (AX_M2[k] >= 0) c->path[nm++] = AX_M2[k];
    if (c->valid_ud > c->gmoves[g]) c->valid_ud = c->gmoves[g];
    c->gaxis[g] = k / 15;
    c->gp2[g] = AX_IS_P2[k];
    c->gmoves[g + 1] = nm;
    c->gtime[g + 1] = total;
}

/* a lower bound of the robot time of n more phase-2 groups after group depth g: in phase 2
   only U/D turns are quarter turns, and no two groups in a row share an axis */
static inline double ax_p2_rest(const Ctx *c, int g, int n) {
    if (n <= 0) return 0.0;
    if (g == 0) return c->p2_rest[1][n] - c->settle_s;
    return c->p2_rest[c->gaxis[g - 1] != 0][n];
}

static inline double ax_total(const Ctx *c, int g, int k) {
    return c->gtime[g] + (g > 0 ? c->settle_s : 0.0) + c->ax_t[k];
}

static void ax_record(Ctx *c, int g) {
    double t = c->gtime[g];
    int len = c->gmoves[g];
    c->solutions++;
    if (c->bounded && t >= c->best_time - 1e-12) return;
    if (!c->found) {
        c->first_s = now_s() - c->t0;
        c->first_len = len;
    }
    c->found = c->bounded = 1;
    if (c->shared_found != NULL) *c->shared_found = 1;
    c->best_time = t;
    share_time(c, t);
    publish_best(c, t, c->path, len);
    c->best_len = len;
    c->best_dir = c->dir;
    memcpy(c->best_path, c->path, sizeof(int) * (size_t)len);
    c->improvements++;
    if (c->stop_at_first) c->stop = 1;
}

static void ax_phase2(Ctx *c, int corners, int ud, int ss, int g, int togo) {
    const Tables *T = c->T;
    const Axial *A = c->A;
    int pa, j;
    if (togo == 0) {
        if (ss == 0 && corners == 0 && ud == 0) ax_record(c, g);
        return;
    }
    c->nodes2++;
    if ((c->nodes2 & 0x3FFF) == 0) {
        check_time(c);
        if (c->stop) return;
    }
    pa = g > 0 ? c->gaxis[g - 1] : -1;
    for (j = 0; j < N_AXIAL2; j++) {
        int k = AX_P2[j], m1 = AX_M1[k], m2 = AX_M2[k], c1, u1, s1, nd;
        double total;
        if (k / 15 == pa || !((c->ax_allowed >> k) & 1u)) continue;
        c1 = mv(T->corners_move, mv(T->corners_move, corners, m1), m2);
        s1 = mv(T->slice_sorted_move, mv(T->slice_sorted_move, ss, m1), m2);
        if (A->cornslice_depth[c1 * 24 + s1] >= togo) continue;
        u1 = mv(T->ud_edges_move, mv(T->ud_edges_move, ud, m1), m2);
        if (A->edgeslice_depth[u1 * 24 + s1] >= togo) continue;
        nd = ax2_depth(c, c1, u1);
        if (nd >= togo) continue;
        if (c->gmoves[g] + (m1 >= 0) + (m2 >= 0) + togo - 1 > c->max_length) continue;
        total = ax_total(c, g, k);
        if (c->bounded && total + c->p2_rest[k / 15 != 0][togo - 1] >= c->best_time - 1e-12)
            continue;
        ax_push(c, g, k, total);
        ax_phase2(c, c1, u1, s1, g + 1, togo - 1);
        if (c->stop) return;
    }
}

/* the most phase-2 groups a phase-1 end at group depth g (path[0..gmoves[g]) pushed) may
   take: phase2_max, the length left and, once a solution is held, the robot time left;
   -1: none */
static int ax_p2_limit(const Ctx *c, int g) {
    int limit = c->phase2_max;
    if (limit > c->max_length - c->gmoves[g]) limit = c->max_length - c->gmoves[g];
    if (c->bounded)
        while (limit >= 0 && c->gtime[g] + ax_p2_rest(c, g, limit) >= c->best_time - 1e-12)
            limit--;
    return limit;
}

/* a phase-1 end at group depth g whose corners x slice depth lo is within limit: its U/D
   edges (computed along the path only now: most ends fail on their corners), then phase 2 */
static void ax_phase2_continue(Ctx *c, int g, int corners, int ss, int lo, int limit) {
    const Tables *T = c->T;
    const Axial *A = c->A;
    int i, nm = c->gmoves[g], ud, d2, togo2;
    for (i = c->valid_ud > 0 ? c->valid_ud : 0; i < nm; i++) {
        int m = c->path[i];
        c->u_at[i + 1] = T->u_edges_move[c->u_at[i] * N_MOVE + m];
        c->d_at[i + 1] = T->d_edges_move[c->d_at[i] * N_MOVE + m];
    }
    c->valid_ud = nm;
    ud = T->ud_from_u_d[c->u_at[nm] * 24 + c->d_at[nm] % 24];
    if (A->edgeslice_depth[ud * 24 + ss] > lo) lo = A->edgeslice_depth[ud * 24 + ss];
    if (lo > limit) return;
    d2 = ax2_depth(c, corners, ud);
    if (d2 > limit) return;
    if (d2 > lo) lo = d2;
    for (togo2 = lo; togo2 <= limit; togo2++) {
        if (c->bounded && c->gtime[g] + ax_p2_rest(c, g, togo2) >= c->best_time - 1e-12) break;
        ax_phase2(c, corners, ud, ss, g, togo2);
        if (c->stop) break;
    }
}

/* count a phase-2 start, checking the time every 16 (1: stop) */
static inline int ax_count_start(Ctx *c) {
    c->phase2_starts++;
    if ((c->phase2_starts & 0xF) == 0) check_time(c);
    return c->stop;
}

/* a start already in H (no phase-1 group): phase 2 alone */
static void ax_phase2_start(Ctx *c, int g, int corners, int ss) {
    int limit, lo;
    if (ax_count_start(c)) return;
    limit = ax_p2_limit(c, g);
    if (limit < 0) return;
    lo = c->A->cornslice_depth[corners * 24 + ss];
    if (lo > limit) return;
    ax_phase2_continue(c, g, corners, ss, lo, limit);
}

/* The phase-1 ends below a node at group depth g (one group before its end): the n groups in
   ch that reach H and leave phase 2's group, with their corners and slice order; their
   corners x slice entries were fetched together when they were made. */
static void ax_phase1_ends(Ctx *c, Child *ch, int n, int g) {
    const Axial *A = c->A;
    int i, limit, lo;
    for (i = 0; i < n; i++) {
        if (c->bounded && ch[i].total >= c->best_time - 1e-12) continue;
        if (ax_count_start(c)) return;
        ax_push(c, g, ch[i].m, ch[i].total);
        limit = ax_p2_limit(c, g + 1);
        if (limit < 0) continue;
        lo = A->cornslice_depth[ch[i].c1 * 24 + ch[i].s1];
        if (lo > limit) continue;
        ax_phase2_continue(c, g + 1, ch[i].c1, ch[i].s1, lo, limit);
        if (c->stop) return;
    }
}

#define ALL_GROUPS ((UINT64_C(1) << N_AXIAL) - 1)

/* tight_moves() for the robot metric's table (axial1_axes, the same layout): the groups of
   one axis are 15a..15a+14 (init_axial()) */
static const uint64_t TIGHT_GROUPS[2][4] = {
    {UINT64_C(0x7FFF), UINT64_C(0x7FFF) << 15, UINT64_C(0x7FFF) << 30, ALL_GROUPS},
    {UINT64_C(0x7FFF), UINT64_C(0x7FFF) << 30, UINT64_C(0x7FFF) << 15, ALL_GROUPS}};

static inline uint64_t tight_groups(int v, int sym) {
    return TIGHT_GROUPS[(sym >> 1) & 1][(v >> 2) & 3];
}

/* The groups after which a child can still be within togo - 1 groups of H by one of the
   exact slice x twist / slice x flip tables in the robot metric, from the node's group-mask
   entry e (as pair_moves() for face turns): every group when the node's depth there is at
   most togo - 2, those that do not increase it at togo - 1, those that decrease it at togo,
   none beyond. An axis's 16 bits: bit 15 set, bits j the groups 15a + j that increase the
   depth; clear, those that decrease it. */
static inline uint64_t group_moves(uint64_t e, int togo) {
    const uint64_t low15 = UINT64_C(0x00007FFF7FFF7FFF);
    int d = (int)(e >> 56);
    uint64_t inc, bits, sel;
    if (d <= togo - 2) return ALL_GROUPS;
    if (d > togo) return 0;
    /* the three axes side by side, no branch on their flags: inc has an axis's 15 bits set
       when its bits are the groups that increase the depth */
    inc = ((e >> 15) & UINT64_C(0x0000000100010001)) * 0x7FFFu;
    bits = e & low15;
    sel = d == togo - 1 ? ~(bits & inc) & low15 : bits & ~inc;
    /* the axes' 15 bits packed together: axis a's at 15a */
    return (sel & 0x7FFFu) | ((sel >> 1) & (UINT64_C(0x7FFF) << 15)) |
           ((sel >> 2) & (UINT64_C(0x7FFF) << 30));
}

/* The robot search's corner bound on child ch (group ch->m after group depth g, togo groups
   before its phase-1 end), as the face-turn search's corner goal rows (goal_table()): its
   phase-1 end may take at most P phase-2 groups (the robot time left once the togo groups
   are paid at their least, the length left, phase2_max), so its corners must be within P
   phase-2 groups of solved, and the child's corners within togo groups of such a state.
   Sets ch->glim to the most the child's entry may be (-1: no test, the entry could not be
   larger) and ch->ct to its index, and fetches the entry. */
static void ax_goal_prepare(const Ctx *c, int g, int togo, Child *ch, int *time_p) {
    int moves = c->gmoves[g] + (AX_M1[ch->m] >= 0) + (AX_M2[ch->m] >= 0);
    int P = c->max_length - moves - togo, slack = 0;
    ch->glim = -1;
    if (c->bounded) {
        /* the most phase-2 groups the time left allows, searched down from the previous
           child's (*time_p; phase2_max for a node's first): the children come cheapest
           first, so this one may take no more than the one before */
        double base = ch->total + togo * c->min_group_s;
        int t = *time_p;
        while (t >= 0 && base + c->p2_rest[1][t] >= c->best_time - 1e-12) t--;
        *time_p = t;
        if (P > t) P = t;
    } else if (P > c->phase2_max) {
        P = c->phase2_max;
    }
    if (P < AX_GOAL_FIRST) P = AX_GOAL_FIRST; /* a weaker bound (none passes below 0) */
    if (P > AX_GOAL_LAST) {
        slack = P - AX_GOAL_LAST;
        P = AX_GOAL_LAST;
    }
    if (togo + slack >= c->A->goal_max[P]) return;
    ch->glim = (togo + slack) << 4 | P;
    ch->ct = ct_index(c->T, ch->c1, ch->t1);
    __builtin_prefetch(&c->A->corner_goal[ch->ct]);
}

/* whether child ch fails its corner bound (ax_goal_prepare()) */
static inline int ax_goal_fails(const Ctx *c, const Child *ch) {
    int e, p;
    if (ch->glim < 0) return 0;
    e = c->A->corner_goal[ch->ct];
    p = ch->glim & 15;
    return (e & 7) + POP8[e >> p] > (ch->glim >> 4);
}

/* fetch_prun() for the robot search: the children's flipslice class and symmetry from the
   row of the node's class cls in class_g (fetched when the node was made) at the group
   conjugated by the node's symmetry sym, instead of from flipslice_classsym (a miss a
   child); then each child's phase-1 entry is asked for. The class is the one
   flipslice_classsym gives; the symmetry may be another of the class representative's
   stabiliser, whose entry is the same (tables/sets.py class_rows()). */
static void ax_fetch_prun(const Ctx *c, uint32_t cls, int sym, Child *ch, int n) {
    const Axial *A = c->A;
    const uint32_t *row = &A->class_g[cls * N_AXIAL];
    int i;
    for (i = 0; i < n; i++) {
        child_class(c->T, row[A->group_conj[ch[i].m * 16 + sym]], sym, &ch[i]);
        __builtin_prefetch(&A->phase1_axes[ch[i].idx >> 1]);
    }
}

/* mask m of groups as the mask of their places in ax_order (bit r: group ax_order[r]) */
static inline uint64_t to_ranks(const Ctx *c, uint64_t m) {
    return c->rank_of_byte[0][m & 255u] | c->rank_of_byte[1][(m >> 8) & 255u] |
           c->rank_of_byte[2][(m >> 16) & 255u] | c->rank_of_byte[3][(m >> 24) & 255u] |
           c->rank_of_byte[4][(m >> 32) & 255u] | c->rank_of_byte[5][(m >> 40) & 255u];
}

/* prefetch a row of a 45-column group move table (90 bytes: two or three cache lines; the
   third prefetch asks again for the second line when the row ends in it, cheaper than a
   test) */
static inline void prefetch_group_row(const uint16_t *r) {
    __builtin_prefetch(r);
    __builtin_prefetch(r + 32);
    __builtin_prefetch(r + N_AXIAL - 1);
}

/* A phase-1 node of the robot search at group depth g: twist, flip, slice order ss and
   corners (carried along the path, so that a phase-1 end has them at once), its exact
   distance dist to H in groups when togo >= SMALL_ONLY_TOGO, and tight, the groups that bring
   it nearer H (tight_groups(); taken alone when dist == togo, as in phase1()). Its two
   group-mask entries give the groups whose children the small exact tables pass (at togo 1:
   those that reach H), so only those children are computed. */
static void ax_phase1(Ctx *c, int twist, int flip, int ss, int corners, int dist, uint64_t tight,
                      int g, uint32_t cls, int sym) {
    const Axial *A = c->A;
    int togo = c->n1 - g, pa, k, n = 0, i, slice = ss / 24, time_p;
    int nd_of[4]; /* a child's exact distance by its phase-1 entry's value mod 3 */
    const uint16_t *trow, *frow, *srow, *crow;
    uint64_t moves;
    Child ch[N_AXIAL];
    if (togo == 0) { /* a start in H */
        ax_phase2_start(c, g, corners, ss);
        return;
    }
    c->nodes1++;
    if ((c->nodes1 & 0x3FFF) == 0) {
        check_time(c);
        if (c->stop) return;
    }
    pa = g > 0 ? c->gaxis[g - 1] : -1;
    moves = c->ax_allowed & (dist == togo ? tight : ALL_GROUPS) &
            group_moves(A->slice_twist_mask[slice * N_TWIST + twist], togo) &
            group_moves(A->slice_flip_mask[slice * N_FLIP + flip], togo);
    trow = &A->twist_g[twist * N_AXIAL];
    frow = &A->flip_g[flip * N_AXIAL];
    srow = &A->slice_sorted_g[ss * N_AXIAL];
    crow = &A->corners_g[corners * N_AXIAL];
    if (pa >= 0) moves &= ~((uint64_t)0x7FFF << (15 * pa)); /* not the same axis twice */
    if (g == 0 && c->root_group >= 0) moves &= (uint64_t)1 << c->root_group;
    /* the last group must leave phase 2's group (else a shorter phase 1 covers it) */
    if (togo == 1) moves &= AX_LEAVE_H;
    /* The children in ax_order's order, cheapest group first: the groups' places in it, so
       that the time bound ends the loop at the first child that fails it. A child may not
       take the moves beyond max_length. */
    moves = to_ranks(c, moves);
    if (c->gmoves[g] + togo > c->max_length)
        moves = 0;
    else if (c->gmoves[g] + togo + 1 > c->max_length)
        moves &= ~c->rank_double;
    /* As in phase1(): the children's lookups in passes, each pass prefetching what the next
       one reads, so that their cache misses overlap. */
    while (moves) {
        double total;
        k = c->ax_order[__builtin_ctzll(moves)];
        moves &= moves - 1;
        total = ax_total(c, g, k);
        if (c->bounded && total + (togo - 1) * c->min_group_s >= c->best_time - 1e-12) break;
        ch[n].m = k;
        ch[n].s1 = srow[k];
        ch[n].slice = ch[n].s1 / 24;
        ch[n].t1 = trow[k];
        ch[n].f1 = frow[k];
        if (togo == 1) {
            /* the group reaches H (the masks at togo 1: both depths 0); the end's corners x
               slice entry is fetched with the others' */
            ch[n].c1 = crow[k];
            __builtin_prefetch(&A->cornslice_depth[ch[n].c1 * 24 + ch[n].s1]);
        }
        ch[n].total = total;
        n++;
    }
    if (togo == 1) {
        ax_phase1_ends(c, ch, n, g);
        return;
    }
    /* as in phase1(): close to the end the small tables (here their masks) alone, and the
       distance unknown */
    if (togo > SMALL_ONLY_TOGO) {
        ax_fetch_prun(c, cls, sym, ch, n);
        for (i = 0; i < 4; i++) nd_of[i] = next_depth(dist, i);
    }
    time_p = c->phase2_max;
    for (i = k = 0; i < n; i++) {
        if (togo <= SMALL_ONLY_TOGO) {
            ch[i].nd = togo - 1;
            ch[i].gtight = ALL_GROUPS;
            ch[i].cls = 0;
            ch[i].sym = 0;
        } else {
            int v = p1_entry(A->phase1_axes, ch[i].idx);
            ch[i].nd = nd_of[v & 3];
            ch[i].gtight = tight_groups(v, ch[i].sym);
        }
        if (ch[i].nd >= togo) continue;
        /* what the child reads first: its rows of the group move tables, and its corner
           bound's entry */
        ch[i].c1 = crow[ch[i].m];
        ax_goal_prepare(c, g, togo - 1, &ch[i], &time_p);
        __builtin_prefetch(&A->slice_twist_mask[ch[i].slice * N_TWIST + ch[i].t1]);
        __builtin_prefetch(&A->slice_flip_mask[ch[i].slice * N_FLIP + ch[i].f1]);
        prefetch_group_row(&A->corners_g[ch[i].c1 * N_AXIAL]);
        prefetch_group_row(&A->slice_sorted_g[ch[i].s1 * N_AXIAL]);
        prefetch_group_row(&A->twist_g[ch[i].t1 * N_AXIAL]);
        prefetch_group_row(&A->flip_g[ch[i].f1 * N_AXIAL]);
        if (togo - 1 > SMALL_ONLY_TOGO) { /* its row of class_g (180 bytes), for its children */
            const uint32_t *r = &A->class_g[ch[i].cls * N_AXIAL];
            __builtin_prefetch(r);
            __builtin_prefetch(r + 16);
            __builtin_prefetch(r + 32);
            __builtin_prefetch(r + N_AXIAL - 1);
        }
        ch[k++] = ch[i];
    }
    n = k;
    for (i = 0; i < n; i++) {
        /* a better solution found below may have tightened the bound */
        if (c->bounded && ch[i].total + (togo - 1) * c->min_group_s >= c->best_time - 1e-12)
            continue;
        if (ax_goal_fails(c, &ch[i])) continue;
        ax_push(c, g, ch[i].m, ch[i].total);
        ax_phase1(c, ch[i].t1, ch[i].f1, ch[i].s1, ch[i].c1, ch[i].nd, ch[i].gtight, g + 1,
                  ch[i].cls, ch[i].sym);
        if (c->stop) return;
    }
}

/* reset the path bookkeeping of both searches for a search from direction i */
static void begin_direction(Ctx *c, const Start *s, int i) {
    c->st = s;
    c->dir = i;
    c->valid_ud = 0;
    c->u_at[0] = s->u_edges;
    c->d_at[0] = s->d_edges;
    c->total_at[0] = 0.0;
    c->open_at[0] = -1.0;
    c->gmoves[0] = 0;
    c->gtime[0] = 0.0;
}

static int ax_run(Ctx *c, Start *starts, int n_dirs) {
    int i, min_dist = 99;
    uint64_t allowed[MAX_DIRS];
    /* group times and the groups this robot can do (both faces must have motors) */
    c->ax_allowed = 0;
    c->min_group_s = 1e30;
    for (int k = 0; k < N_AXIAL; k++) {
        int m1 = AX_M1[k], m2 = AX_M2[k];
        double t1 = m1 >= 0 ? move_time(c, m1) : 0.0, t2 = m2 >= 0 ? move_time(c, m2) : 0.0;
        if (m1 >= 0 && m2 >= 0)
            c->ax_t[k] = c->simultaneous ? (t1 > t2 ? t1 : t2) + c->pair_s : t1 + c->settle_s + t2;
        else
            c->ax_t[k] = t1 + t2;
        if (c->ax_t[k] + c->settle_s < c->min_group_s) c->min_group_s = c->ax_t[k] + c->settle_s;
    }
    for (int k = 0; k < N_AXIAL; k++) { /* a stable insertion sort by time */
        int j = k;
        while (j > 0 && c->ax_t[c->ax_order[j - 1]] > c->ax_t[k]) {
            c->ax_order[j] = c->ax_order[j - 1];
            j--;
        }
        c->ax_order[j] = k;
    }
    for (int k = 0; k < N_AXIAL; k++) c->ax_rank[c->ax_order[k]] = k;
    c->rank_double = 0;
    for (int b = 0; b < 6; b++)
        for (int v = 0; v < 256; v++) {
            uint64_t r = 0;
            for (int j = 0; j < 8 && 8 * b + j < N_AXIAL; j++)
                if ((v >> j) & 1) r |= (uint64_t)1 << c->ax_rank[8 * b + j];
            c->rank_of_byte[b][v] = r;
        }
    for (int k = 0; k < N_AXIAL; k++)
        if (AX_M1[k] >= 0 && AX_M2[k] >= 0) c->rank_double |= (uint64_t)1 << c->ax_rank[k];
    {
        /* phase 2: the cheapest group on the U/D axis and on the others; after a U/D group
           comes another axis, after any other group either */
        double ud = 1e30, other = 1e30;
        for (int j = 0; j < N_AXIAL2; j++) {
            int k = AX_P2[j];
            double t = c->ax_t[k] + c->settle_s;
            if (k / 15 == 0) {
                if (t < ud) ud = t;
            } else if (t < other) {
                other = t;
            }
        }
        c->p2_rest[0][0] = c->p2_rest[1][0] = 0.0;
        for (int n = 1; n <= MAX_DEPTH + 1; n++) {
            double via_ud = ud + c->p2_rest[0][n - 1], via_other = other + c->p2_rest[1][n - 1];
            c->p2_rest[0][n] = via_other;
            c->p2_rest[1][n] = via_ud < via_other ? via_ud : via_other;
        }
    }
    for (i = 0; i < n_dirs; i++) {
        starts[i].dist = ax1_depth(c, starts[i].twist, starts[i].flip, starts[i].slice_sorted);
        if (starts[i].dist >= 0 && starts[i].dist < min_dist) min_dist = starts[i].dist;
    }
    for (i = 0; i < n_dirs; i++) {
        allowed[i] = 0;
        for (int k = 0; k < N_AXIAL; k++) {
            int m1 = AX_M1[k], m2 = AX_M2[k];
            if ((m1 < 0 || ((starts[i].allowed >> m1) & 1u)) &&
                (m2 < 0 || ((starts[i].allowed >> m2) & 1u)))
                allowed[i] |= (uint64_t)1 << k;
        }
    }
    /* Phase-1 depths grow one at a time; within a depth the directions take turns by first
       group (cheapest first), so that a budget ending inside the depth has tried the
       promising beginnings of every direction rather than all of the first ones. */
    for (c->n1 = min_dist; c->n1 <= c->max_length && !c->stop; c->n1++) {
        int r, n_roots = c->n1 > 0 ? N_AXIAL : 1;
        if (c->bounded && c->n1 * c->min_group_s - c->settle_s >= c->best_time - 1e-12) break;
        if (c->n1 > c->max_n1) c->max_n1 = c->n1;
        for (r = 0; r < n_roots && !c->stop; r++) {
            c->root_group = c->n1 > 0 ? c->ax_order[r] : -1;
            for (i = 0; i < n_dirs && !c->stop; i++) {
                Start *s = &starts[i];
                if (s->dist < 0 || s->dist > c->n1) continue;
                c->ax_allowed = allowed[i];
                begin_direction(c, s, i);
                uint32_t e = c->T->flipslice_classsym[(uint32_t)(s->slice_sorted / 24) * N_FLIP +
                                                      (uint32_t)s->flip];
                ax_phase1(c, s->twist, s->flip, s->slice_sorted, s->corners, s->dist, ALL_GROUPS,
                          0, e >> 4, (int)(e & 15u));
            }
        }
    }
    return min_dist;
}

/* ---- the shortest-solution search in lanes ----

   The phase-1 tree is nearly a chain (a node has about 1.1 children that pass the tables
   below ten moves from its end), so a depth-first search waits for one cache miss after the
   other: each node's table entries depend on its parent's. The plain face-turn search (no
   cost, no collector) therefore runs N_LANES depth-first searches side by side in one
   thread, one step of each in turn: a step does what it can with the entries fetched for it,
   asks for the ones its next step needs, and the other lanes run while they arrive.

   A lane runs one job: a search direction, a phase-1 length n1 and the first move. Jobs are
   handed out by growing n1, then direction, then first move, the order of the recursive
   search; the tree below a job is the one phase1() walks, in the same order. */

#ifndef N_LANES
#define N_LANES 6
#endif

enum { ST_EXPAND, ST_PRUN, ST_ENDS };

typedef struct {
    int twist, flip, ss, corners, dist;
    uint32_t tight; /* as phase1()'s */
    int ct_on;   /* ct holds the node's entry in the corner bound's row (see goal_table(),
                    fetched by its parent) */
    int kids_ct; /* its children's ct are computed (see ST_EXPAND) */
    uint32_t ct;
    uint32_t cls; /* its flipslice class and the symmetry to its representative (the */
    int sym;      /* children's come from its row of class_move; further than
                     SMALL_ONLY_TOGO from its end only) */
    int n, next; /* its children that are visited, and the next one */
    Child ch[N_MOVE];
} Frame;

typedef struct {
    int busy, stage, dir, n1, first, depth; /* depth: of the node the next step works on */
    const Start *st;
    int path[MAX_DEPTH + 1];
    int u_at[MAX_DEPTH + 2], d_at[MAX_DEPTH + 2], valid_ud; /* as in Ctx */
    int n_end, end_m[N_MOVE], end_s[N_MOVE], end_c[N_MOVE];
    Frame fr[MAX_DEPTH + 2];
} Lane;

typedef struct {
    int n1, first, dir; /* the next job */
} Jobs;

/* the next job (0: none left, or none can give a shorter solution) */
static int next_job(Ctx *c, Jobs *j, const Start *starts, int n_dirs, int *n1, int *first,
                    int *dir) {
    for (;;) {
        if (j->n1 > c->max_length || j->n1 >= beat_len(c)) return 0;
        *n1 = j->n1;
        *first = j->first;
        *dir = j->dir;
        if (++j->first == N_MOVE) {
            j->first = 0;
            if (++j->dir == n_dirs) {
                j->dir = 0;
                j->n1++;
            }
        }
        if (starts[*dir].dist >= 0 && starts[*dir].dist <= *n1 &&
            ((starts[*dir].allowed >> *first) & 1u))
            return 1;
    }
}

/* pick the lane's next child to visit (its entries were asked for when it was made), or end
   the job when its tree is done */
static void lane_next(Lane *L) {
    for (;;) {
        Frame *f = &L->fr[L->depth];
        if (f->next < f->n) {
            const Child *k = &f->ch[f->next++];
            Frame *g = &L->fr[L->depth + 1];
            L->path[L->depth] = k->m;
            if (L->valid_ud > L->depth) L->valid_ud = L->depth;
            g->twist = k->t1;
            g->flip = k->f1;
            g->ss = k->s1;
            g->corners = k->c1;
            g->dist = k->nd;
            g->tight = k->tight;
            g->ct_on = f->kids_ct;
            g->ct = k->ct;
            g->cls = k->cls;
            g->sym = k->sym;
            L->depth++;
            L->stage = ST_EXPAND;
            return;
        }
        if (L->depth == 0) {
            L->busy = 0;
            return;
        }
        L->depth--;
    }
}

/* a lane's phase-1 end i that passed its corners test: the rest of phase2_start() on the
   lane's path */
static void lane_end(Ctx *c, Lane *L, int i, int cs, int limit) {
    int n1 = L->depth + 1, v;
    memcpy(c->path, L->path, sizeof(int) * (size_t)L->depth);
    c->path[L->depth] = L->end_m[i];
    v = L->valid_ud < L->depth ? L->valid_ud : L->depth;
    memcpy(c->u_at, L->u_at, sizeof(int) * (size_t)(v + 1));
    memcpy(c->d_at, L->d_at, sizeof(int) * (size_t)(v + 1));
    c->valid_ud = v;
    c->st = L->st;
    c->dir = L->dir;
    phase2_continue(c, L->end_s[i], L->end_c[i], cs, limit, n1);
    /* the edges it computed along the path (the last move is the end's own) */
    v = c->valid_ud < L->depth ? c->valid_ud : L->depth;
    memcpy(L->u_at, c->u_at, sizeof(int) * (size_t)(v + 1));
    memcpy(L->d_at, c->d_at, sizeof(int) * (size_t)(v + 1));
    L->valid_ud = v;
}

/* one step of a lane (see above) */
static void lane_step(Ctx *c, Lane *L) {
    const Tables *T = c->T;
    Frame *f = &L->fr[L->depth];
    int togo = L->n1 - L->depth, i, m, n;
    switch (L->stage) {
    case ST_EXPAND: {
        int prev = L->depth > 0 ? L->path[L->depth - 1] : -1, slice = f->ss / 24;
        const uint16_t *crow = &T->corners_move[f->corners * N_MOVE];
        uint32_t moves;
        int slack, most;
        const uint8_t *goal;
        if (L->n1 >= beat_len(c)) { /* another lane found a solution this one cannot beat */
            L->busy = 0;
            return;
        }
        c->nodes1++;
        if ((c->nodes1 & 0x3FFF) == 0) {
            check_time(c);
            if (c->stop) return;
        }
        /* the node's corners may be too far from any phase-1 end that phase 2 may take on */
        goal = goal_table(c, L->n1, &slack, &most);
        f->n = f->next = 0;
        if (f->ct_on && nibble(goal, f->ct) > togo + slack) {
            lane_next(L);
            return;
        }
        moves = L->st->allowed & SUCC[prev + 1] & (f->dist == togo ? f->tight : ALL_MOVES) &
                pair_moves(T->slice_twist_mask[slice * N_TWIST + f->twist], togo) &
                pair_moves(T->slice_flip_mask[slice * N_FLIP + f->flip], togo);
        if (L->depth == 0) moves &= 1u << L->first;
        f->kids_ct = 0;
        if (togo == 1) { /* as phase1_last() */
            L->n_end = list_ends(T, f->ss, f->corners, moves, L->end_m, L->end_s, L->end_c);
            L->stage = ST_ENDS;
            return;
        }
        /* as phase1() */
        if (togo < 5 && (togo <= SMALL_ONLY_TOGO ? f->twist == 0 && f->flip == 0 && f->ss < 24
                                                 : f->dist == 0))
            moves &= ~PHASE2_MASK;
        n = 0;
        while (moves) {
            Child *k = &f->ch[n++];
            m = __builtin_ctz(moves);
            moves &= moves - 1;
            k->m = m;
            k->t1 = T->twist_move[f->twist * N_MOVE + m];
            k->f1 = T->flip_move[f->flip * N_MOVE + m];
            k->s1 = T->slice_sorted_move[f->ss * N_MOVE + m];
            k->slice = k->s1 / 24;
            k->c1 = crow[m];
        }
        f->n = n;
        /* the children's corner entries, when they may prune (checked in ST_PRUN, or close
           to the end by each child itself) */
        if (togo - 1 + slack + GOAL_MARGIN < most) {
            f->kids_ct = 1;
            for (i = 0; i < n; i++) {
                Child *k = &f->ch[i];
                k->ct = ct_index(T, k->c1, k->t1);
                __builtin_prefetch(&goal[k->ct >> 1]);
            }
        }
        if (togo <= SMALL_ONLY_TOGO) { /* every child is visited */
            for (i = 0; i < n; i++) {
                f->ch[i].nd = togo - 1;
                f->ch[i].tight = ALL_MOVES;
                f->ch[i].cls = 0; /* (not read: its children are screened by the small */
                f->ch[i].sym = 0; /* tables alone) */
                prefetch_node(T, f->ch[i].t1, f->ch[i].f1, f->ch[i].s1, f->ch[i].c1);
            }
            lane_next(L);
            return;
        }
        /* The children's classes from the node's row of class_move (asked for when the node
           was made, so that no lane step waits for a class a child; their phase-1 entries are
           read in ST_PRUN, a round of the lanes from now), and with those entries every
           child's two move-mask entries (what it reads first if it is visited, two rounds
           from now: fetched only once it passed, in ST_PRUN, they were still missing when it
           was visited; its move-table rows, mostly cached, still wait for ST_PRUN). */
        {
            const uint32_t *row = &T->class_move[f->cls * N_MOVE];
            for (i = 0; i < n; i++) {
                Child *k = &f->ch[i];
                child_class(T, row[T->move_conj[k->m * 16 + f->sym]], f->sym, k);
                __builtin_prefetch(&T->phase1_axes[k->idx >> 1]);
                __builtin_prefetch(&T->slice_twist_mask[k->slice * N_TWIST + k->t1]);
                __builtin_prefetch(&T->slice_flip_mask[k->slice * N_FLIP + k->f1]);
            }
        }
        L->stage = ST_PRUN;
        return;
    }
    case ST_PRUN: {
        /* the moves a child may still take in phase 1 (its corners may need more) */
        int slack, most, left;
        const uint8_t *goal = goal_table(c, L->n1, &slack, &most);
        left = togo - 1 + slack;
        for (i = m = 0; i < f->n; i++) {
            Child *k = &f->ch[i];
            int v = p1_entry(T->phase1_axes, k->idx);
            k->nd = next_depth(f->dist, v & 3);
            if (k->nd >= togo) continue;
            k->tight = tight_moves(v, k->sym);
            if (f->kids_ct && nibble(goal, k->ct) > left) continue;
            prefetch_node(T, k->t1, k->f1, k->s1, k->c1);
            if (togo - 1 > SMALL_ONLY_TOGO) { /* its row of class_move (72 bytes) */
                __builtin_prefetch(&T->class_move[k->cls * N_MOVE]);
                __builtin_prefetch(&T->class_move[k->cls * N_MOVE + N_MOVE - 1]);
            }
            f->ch[m++] = *k;
        }
        f->n = m;
        lane_next(L);
        return;
    }
    case ST_ENDS:
        for (i = 0; i < L->n_end && !c->stop; i++) {
            int cs, limit = end_limit(c, L->end_s[i], L->end_c[i], L->depth + 1, &cs);
            if (limit >= 0) lane_end(c, L, i, cs, limit);
        }
        if (c->stop) return;
        lane_next(L);
        return;
    }
}

/* returns 0 (having searched nothing) when there is no memory for the lanes */
static int lanes_search(Ctx *c, Start *starts, int n_dirs, int min_dist) {
    Lane *lanes = calloc(N_LANES, sizeof(Lane));
    Jobs jobs = {min_dist > 1 ? min_dist : 1, 0, 0};
    int more = 1, i, k;
    if (lanes == NULL) return 0;
    if (min_dist == 0) { /* a direction already in H: phase 2 alone */
        c->n1 = 0;
        for (i = 0; i < n_dirs && !c->stop; i++) {
            if (starts[i].dist != 0) continue;
            begin_direction(c, &starts[i], i);
            phase1(c, starts[i].twist, starts[i].flip, starts[i].slice_sorted,
                   starts[i].corners, 0, ALL_MOVES, 0);
        }
    }
    while (!c->stop) {
        int busy = 0;
        for (k = 0; k < N_LANES && !c->stop; k++) {
            Lane *L = &lanes[k];
            if (!L->busy && more) {
                int n1, first, dir;
                more = next_job(c, &jobs, starts, n_dirs, &n1, &first, &dir);
                if (more) {
                    const Start *s = &starts[dir];
                    L->busy = 1;
                    L->stage = ST_EXPAND;
                    L->n1 = n1;
                    L->first = first;
                    L->dir = dir;
                    L->depth = 0;
                    L->st = s;
                    L->valid_ud = 0;
                    L->u_at[0] = s->u_edges;
                    L->d_at[0] = s->d_edges;
                    L->fr[0].twist = s->twist;
                    L->fr[0].flip = s->flip;
                    L->fr[0].ss = s->slice_sorted;
                    L->fr[0].corners = s->corners;
                    L->fr[0].dist = s->dist;
                    L->fr[0].tight = ALL_MOVES;
                    L->fr[0].ct_on = 0;
                    {
                        uint32_t fs =
                            (uint32_t)(s->slice_sorted / 24) * N_FLIP + (uint32_t)s->flip;
                        uint32_t e = c->T->flipslice_classsym[fs];
                        L->fr[0].cls = e >> 4;
                        L->fr[0].sym = (int)(e & 15u);
                    }
                    if (n1 > c->max_n1) c->max_n1 = n1;
                    c->n1 = n1;
                }
            }
            if (!L->busy) continue;
            busy = 1;
            lane_step(c, L);
        }
        if (!busy) break;
    }
    free(lanes);
    return 1;
}

/* the face-turn search: phase-1 depths growing one at a time, the directions in turn */
static void face_search(Ctx *c, Start *starts, int n_dirs, int min_dist) {
    int i;
    if (!c->robot && !c->collect && lanes_search(c, starts, n_dirs, min_dist)) return;
    for (c->n1 = min_dist; c->n1 <= c->max_length && !c->stop; c->n1++) {
        if (!c->robot && !collecting(c) && c->n1 >= beat_len(c)) break;
        if (c->mech != NULL && c->n1 > mech_cap(c)) break;
        if (collecting(c) && c->n1 > collect_bound(c)) break;
        if (c->bounded && c->robot && group_bound(c, c->n1) >= c->best_time - 1e-12) break;
        if (c->n1 > c->max_n1) c->max_n1 = c->n1;
        for (i = 0; i < n_dirs && !c->stop; i++) {
            Start *s = &starts[i];
            if (s->dist < 0 || s->dist > c->n1) continue;
            begin_direction(c, s, i);
            phase1(c, s->twist, s->flip, s->slice_sorted, s->corners, s->dist, ALL_MOVES, 0);
        }
    }
}

/* Borrow the C-contiguous buffers of a tuple of n arrays, checking each size; on success every
   slot points into its buffer (release the views when done), on failure nothing is held. */
static int get_buffers(PyObject *seq, Py_buffer *views, const Py_ssize_t *sizes,
                       const void ***slots, int n, const char *what) {
    int i;
    if (!PyTuple_Check(seq) || PyTuple_GET_SIZE(seq) != n) {
        PyErr_Format(PyExc_ValueError, "%ss must be a tuple of %d arrays", what, n);
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(seq, i), &views[i], PyBUF_C_CONTIGUOUS) < 0) {
            while (--i >= 0) PyBuffer_Release(&views[i]);
            return -1;
        }
        if (views[i].len != sizes[i]) {
            PyErr_Format(PyExc_ValueError, "%s %d has %zd bytes, expected %zd", what, i,
                         views[i].len, sizes[i]);
            for (; i >= 0; i--) PyBuffer_Release(&views[i]);
            return -1;
        }
        *slots[i] = views[i].buf;
    }
    return 0;
}

static int get_axial(PyObject *seq, Py_buffer *views, Axial *A) {
    static const Py_ssize_t sizes[N_AX_TABLES] = {
        ((Py_ssize_t)N_FS_CLASS * N_TWIST + 1) / 2, ((Py_ssize_t)N_CORNER_CLASS * N_UD + 1) / 2,
        (Py_ssize_t)N_CORNERS * 24, (Py_ssize_t)N_UD * 24, (Py_ssize_t)N_SLICE * N_TWIST,
        (Py_ssize_t)N_SLICE * N_FLIP, (Py_ssize_t)N_TWIST * N_AXIAL * 2,
        (Py_ssize_t)N_FLIP * N_AXIAL * 2, (Py_ssize_t)N_SLICE * N_AXIAL * 2,
        (Py_ssize_t)N_CORNERS * N_AXIAL * 2, (Py_ssize_t)N_SLICE_SORTED * N_AXIAL * 2,
        (Py_ssize_t)N_SLICE * N_TWIST * 8, (Py_ssize_t)N_SLICE * N_FLIP * 8,
        (Py_ssize_t)N_CORNER_CLASS * N_TWIST, AX_GOAL_LAST + 1,
        (Py_ssize_t)N_FS_CLASS * N_AXIAL * 4, N_AXIAL * 16,
    };
    const void **slots[N_AX_TABLES] = {
        (const void **)&A->phase1_axes,       (const void **)&A->phase2_depth,
        (const void **)&A->cornslice_depth,   (const void **)&A->edgeslice_depth,
        (const void **)&A->slice_twist_depth, (const void **)&A->slice_flip_depth,
        (const void **)&A->twist_g,           (const void **)&A->flip_g,
        (const void **)&A->slice_g,           (const void **)&A->corners_g,
        (const void **)&A->slice_sorted_g,    (const void **)&A->slice_twist_mask,
        (const void **)&A->slice_flip_mask,   (const void **)&A->corner_goal,
        (const void **)&A->goal_max,          (const void **)&A->class_g,
        (const void **)&A->group_conj,
    };
    return get_buffers(seq, views, sizes, slots, N_AX_TABLES, "axial table");
}

static int get_tables(PyObject *seq, Py_buffer *views, Tables *T) {
    static const Py_ssize_t sizes[N_TABLES] = {
        (Py_ssize_t)N_TWIST * N_MOVE * 2, (Py_ssize_t)N_FLIP * N_MOVE * 2,
        (Py_ssize_t)N_SLICE_SORTED * N_MOVE * 2, (Py_ssize_t)N_SLICE_SORTED * N_MOVE * 2,
        (Py_ssize_t)N_SLICE_SORTED * N_MOVE * 2, (Py_ssize_t)N_CORNERS * N_MOVE * 2,
        (Py_ssize_t)N_UD * N_MOVE * 2, (Py_ssize_t)N_SLICE_SORTED * 24 * 2,
        (Py_ssize_t)N_TWIST * N_SYM * 2, (Py_ssize_t)N_UD * N_SYM * 2,
        (Py_ssize_t)N_SLICE * N_FLIP * 4,
        (Py_ssize_t)N_CORNERS * 2, (Py_ssize_t)N_CORNERS,
        ((Py_ssize_t)N_FS_CLASS * N_TWIST + 1) / 2, ((Py_ssize_t)N_CORNER_CLASS * N_UD + 3) / 4,
        (Py_ssize_t)N_CORNERS * 24, (Py_ssize_t)N_UD * 24,
        (Py_ssize_t)N_SLICE * N_TWIST, (Py_ssize_t)N_SLICE * N_FLIP,
        (Py_ssize_t)N_SLICE * N_TWIST * 4, (Py_ssize_t)N_SLICE * N_FLIP * 4,
        ((Py_ssize_t)N_CORNER_CLASS * N_TWIST + 1) / 2,
        (Py_ssize_t)(GOAL_ROWS * GOAL_ROW_BYTES), GOAL_ROWS + 1,
        (Py_ssize_t)N_FS_CLASS * N_MOVE * 4, N_MOVE * 16, 16 * 16,
    };
    const void **slots[N_TABLES] = {
        (const void **)&T->twist_move, (const void **)&T->flip_move,
        (const void **)&T->slice_sorted_move, (const void **)&T->u_edges_move,
        (const void **)&T->d_edges_move, (const void **)&T->corners_move,
        (const void **)&T->ud_edges_move, (const void **)&T->ud_from_u_d,
        (const void **)&T->twist_conj, (const void **)&T->ud_edges_conj,
        (const void **)&T->flipslice_classsym,
        (const void **)&T->corner_classidx, (const void **)&T->corner_sym,
        (const void **)&T->phase1_axes, (const void **)&T->phase2_prun,
        (const void **)&T->cornslice_depth, (const void **)&T->edgeslice_depth,
        (const void **)&T->slice_twist_depth, (const void **)&T->slice_flip_depth,
        (const void **)&T->slice_twist_mask, (const void **)&T->slice_flip_mask,
        (const void **)&T->corner_twist_depth,
        (const void **)&T->corner_goal_depth, (const void **)&T->corner_goal_max,
        (const void **)&T->class_move, (const void **)&T->move_conj,
        (const void **)&T->sym_mult,
    };
    return get_buffers(seq, views, sizes, slots, N_TABLES, "table");
}

/* ---- Collector ---- */

static PyTypeObject CollectorType;

static PyObject *collector_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    int max_length, slack, capacity = COLLECTOR_CAPACITY;
    double descent_s = 0.0;
    Collector *k;
    (void)kwds;
    if (!PyArg_ParseTuple(args, "ii|di", &max_length, &slack, &descent_s, &capacity)) return NULL;
    if (max_length < 0 || max_length > MAX_DEPTH - 1 || slack < 0 || capacity < 1 ||
        !(descent_s >= 0.0)) {
        PyErr_SetString(PyExc_ValueError,
                        "Collector(max_length 0..30, slack >= 0, descent_s >= 0, capacity >= 1)");
        return NULL;
    }
    k = (Collector *)type->tp_alloc(type, 0);
    if (k == NULL) return NULL;
    k->moves = PyMem_RawCalloc((size_t)capacity, ROW);
    k->len = PyMem_RawCalloc((size_t)capacity, sizeof(int));
    k->dir = PyMem_RawCalloc((size_t)capacity, sizeof(int));
    k->chunk = PyMem_RawCalloc((size_t)capacity, sizeof(int));
    if (!k->moves || !k->len || !k->dir || !k->chunk) {
        Py_DECREF(k);
        return PyErr_NoMemory();
    }
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->ready, NULL);
    k->ok = 1;
    k->capacity = capacity;
    k->max_length = max_length;
    k->slack = slack;
    k->descent_s = descent_s;
    k->shortest = MAX_DEPTH;
    return (PyObject *)k;
}

static void collector_dealloc(Collector *k) {
    if (k->ok) {
        pthread_mutex_destroy(&k->lock);
        pthread_cond_destroy(&k->ready);
    }
    PyMem_RawFree(k->moves);
    PyMem_RawFree(k->len);
    PyMem_RawFree(k->dir);
    PyMem_RawFree(k->chunk);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

/* take every queued candidate, waiting up to timeout_s for one (GIL released) */
static PyObject *collector_drain(Collector *k, PyObject *args) {
    double timeout_s = 0.0;
    int n = 0, i, j;
    signed char *moves = NULL;
    int *len = NULL, *dir = NULL, *chunk = NULL;
    PyObject *out;
    if (!PyArg_ParseTuple(args, "|d", &timeout_s)) return NULL;
    moves = PyMem_RawMalloc((size_t)k->capacity * ROW);
    len = PyMem_RawMalloc((size_t)k->capacity * sizeof(int) * 3);
    if (moves == NULL || len == NULL) {
        PyMem_RawFree(moves);
        PyMem_RawFree(len);
        return PyErr_NoMemory();
    }
    dir = len + k->capacity;
    chunk = dir + k->capacity;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&k->lock);
    if (k->count == 0 && timeout_s > 0.0) {
        struct timespec until;
        double t = timeout_s;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)t;
        until.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (k->count == 0)
            if (pthread_cond_timedwait(&k->ready, &k->lock, &until) == ETIMEDOUT) break;
    }
    n = k->count;
    memcpy(moves, k->moves, (size_t)n * ROW);
    memcpy(len, k->len, (size_t)n * sizeof(int));
    memcpy(dir, k->dir, (size_t)n * sizeof(int));
    memcpy(chunk, k->chunk, (size_t)n * sizeof(int));
    k->count = 0;
    pthread_mutex_unlock(&k->lock);
    Py_END_ALLOW_THREADS
    out = PyList_New(n);
    for (i = 0; out != NULL && i < n; i++) {
        PyObject *row = PyList_New(len[i]), *item;
        if (row == NULL) {
            Py_CLEAR(out);
            break;
        }
        for (j = 0; j < len[i]; j++)
            PyList_SET_ITEM(row, j, PyLong_FromLong(moves[(size_t)i * ROW + j]));
        item = Py_BuildValue("(iiN)", chunk[i], dir[i], row);
        if (item == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, item);
    }
    PyMem_RawFree(moves);
    PyMem_RawFree(len);
    return out;
}

static PyObject *collector_stop(Collector *k, PyObject *unused) {
    (void)unused;
    pthread_mutex_lock(&k->lock);
    k->stop = 1;
    pthread_mutex_unlock(&k->lock);
    Py_RETURN_NONE;
}

static PyObject *collector_stats(Collector *k, PyObject *unused) {
    unsigned long long received, dropped;
    int shortest;
    (void)unused;
    pthread_mutex_lock(&k->lock);
    received = k->received;
    dropped = k->dropped;
    shortest = k->shortest;
    pthread_mutex_unlock(&k->lock);
    return Py_BuildValue("{s:K,s:K,s:i}", "received", received, "dropped", dropped, "shortest",
                         received ? shortest : -1);
}

static PyMethodDef collector_methods[] = {
    {"drain", (PyCFunction)collector_drain, METH_VARARGS,
     "drain([timeout_s]) -> [(chunk, direction, [moves]), ...]"},
    {"stop", (PyCFunction)collector_stop, METH_NOARGS, "end every search pushing here"},
    {"stats", (PyCFunction)collector_stats, METH_NOARGS, "{received, dropped, shortest}"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CollectorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_twophase.Collector",
    .tp_basicsize = sizeof(Collector),
    .tp_dealloc = (destructor)collector_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Candidates of a collecting search (see the module source header).",
    .tp_methods = collector_methods,
    .tp_new = collector_new,
};

/* ---- what search() and mech_search() share ---- */

/* check max_length and read the list of start tuples (see the header) into starts: how many
   (-1 with an exception set) */
static int parse_starts(PyObject *starts_obj, int max_length, Start *starts) {
    int n_dirs, i;
    if (max_length < 0 || max_length > MAX_DEPTH - 1) {
        PyErr_Format(PyExc_ValueError, "max_length must be 0..%d", MAX_DEPTH - 1);
        return -1;
    }
    if (!PyList_Check(starts_obj) || PyList_GET_SIZE(starts_obj) < 1 ||
        PyList_GET_SIZE(starts_obj) > MAX_DIRS) {
        PyErr_SetString(PyExc_ValueError, "starts must be a list of 1..6 tuples");
        return -1;
    }
    n_dirs = (int)PyList_GET_SIZE(starts_obj);
    for (i = 0; i < n_dirs; i++) {
        unsigned int allowed;
        Start *s = &starts[i];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(starts_obj, i), "iiiiiiI", &s->twist, &s->flip,
                              &s->slice_sorted, &s->u_edges, &s->d_edges, &s->corners, &allowed))
            return -1;
        if (s->twist < 0 || s->twist >= N_TWIST || s->flip < 0 || s->flip >= N_FLIP ||
            s->slice_sorted < 0 || s->slice_sorted >= N_SLICE_SORTED || s->u_edges < 0 ||
            s->u_edges >= N_SLICE_SORTED || s->d_edges < 0 || s->d_edges >= N_SLICE_SORTED ||
            s->corners < 0 || s->corners >= N_CORNERS) {
            PyErr_SetString(PyExc_ValueError, "a start coordinate is out of range");
            return -1;
        }
        s->allowed = allowed & ((1u << N_MOVE) - 1);
    }
    return n_dirs;
}

/* the starts' exact phase-1 distances (-1: the table has no way down); the least of them
   (99 when none has one). No Python calls: runs without the GIL. */
static int start_distances(const Tables *T, Start *starts, int n_dirs) {
    int i, min_dist = 99;
    for (i = 0; i < n_dirs; i++) {
        starts[i].dist = p1_depth(T, starts[i].twist, starts[i].flip, starts[i].slice_sorted);
        if (starts[i].dist >= 0 && starts[i].dist < min_dist) min_dist = starts[i].dist;
    }
    return min_dist;
}

/* 0 with an exception set when a start had no way down the pruning table */
static int starts_consistent(const Start *starts, int n_dirs) {
    int i;
    for (i = 0; i < n_dirs; i++) {
        if (starts[i].dist < 0) {
            PyErr_SetString(PyExc_RuntimeError,
                            "two-phase tables are inconsistent (no way down the pruning table); "
                            "delete the table cache to rebuild it");
            return 0;
        }
    }
    return 1;
}

/* (direction or -1, [moves], stats) of a finished search; with_time: the stats hold the
   robot time of the solution (mech_search) */
static PyObject *search_result(const Ctx *c, int min_dist, int with_time) {
    PyObject *moves, *stats, *t;
    int i;
    moves = PyList_New(c->found ? c->best_len : 0);
    if (moves == NULL) return NULL;
    if (c->found)
        for (i = 0; i < c->best_len; i++) PyList_SET_ITEM(moves, i, PyLong_FromLong(c->best_path[i]));
    stats = Py_BuildValue(
        "{s:K,s:K,s:K,s:K,s:K,s:d,s:i,s:d,s:i,s:O,s:O,s:i}", "solutions_seen",
        (unsigned long long)c->solutions, "nodes_phase1", (unsigned long long)c->nodes1,
        "nodes_phase2", (unsigned long long)c->nodes2, "phase1_solutions",
        (unsigned long long)c->phase2_starts, "improvements", (unsigned long long)c->improvements,
        "first_solution_s", c->found ? c->first_s : -1.0, "first_length",
        c->found ? c->first_len : -1, "search_s", now_s() - c->t0, "phase1_depth", c->max_n1,
        "timed_out", c->timed_out ? Py_True : Py_False, "exhausted",
        (!c->stop && !c->timed_out) ? Py_True : Py_False, "min_phase1_depth", min_dist);
    if (stats != NULL && with_time) {
        t = PyFloat_FromDouble(c->found ? c->best_time : -1.0);
        if (t == NULL || PyDict_SetItemString(stats, "robot_time_s", t) < 0) Py_CLEAR(stats);
        Py_XDECREF(t);
    }
    if (stats == NULL) {
        Py_DECREF(moves);
        return NULL;
    }
    return Py_BuildValue("(iNN)", c->found ? c->best_dir : -1, moves, stats);
}

static PyObject *py_search(PyObject *self, PyObject *args) {
    PyObject *tables_obj, *starts_obj, *cost_obj, *result, *axial_obj = Py_None;
    PyObject *shared_obj = Py_None, *collector_obj = Py_None;
    int chunk = 0;
    Py_buffer ax_views[N_AX_TABLES], shared_view;
    Axial A;
    int use_axial = 0;
    int max_length, phase2_max, phase2_slack = 99, n_dirs, i, min_dist = 99;
    double budget_s, timeout_s;
    Py_buffer views[N_TABLES];
    Tables T;
    Start starts[MAX_DIRS];
    Ctx *c;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOiddiO|iOOOi", &tables_obj, &starts_obj, &max_length, &budget_s,
                          &timeout_s, &phase2_max, &cost_obj, &phase2_slack, &axial_obj,
                          &shared_obj, &collector_obj, &chunk))
        return NULL;
    if (collector_obj != Py_None &&
        (!PyObject_TypeCheck(collector_obj, &CollectorType) || cost_obj != Py_None)) {
        PyErr_SetString(PyExc_ValueError, "collector must be a Collector, and takes no cost");
        return NULL;
    }
    n_dirs = parse_starts(starts_obj, max_length, starts);
    if (n_dirs < 0) return NULL;
    c = (Ctx *)PyMem_Calloc(1, sizeof(Ctx));
    if (c == NULL) return PyErr_NoMemory();
    if (cost_obj != Py_None) {
        int simultaneous;
        double g1, g2;
        if (!PyArg_ParseTuple(cost_obj, "ddddp", &c->quarter_s, &c->half_s, &c->pair_s,
                              &c->settle_s, &simultaneous)) {
            PyMem_Free(c);
            return NULL;
        }
        c->robot = 1;
        c->simultaneous = simultaneous;
        /* the cheapest group per move pair: one quarter/half turn, or two together */
        g1 = (c->quarter_s < c->half_s ? c->quarter_s : c->half_s) + c->settle_s;
        g2 = simultaneous ? g1 + c->pair_s : g1;
        c->min_group_s = g1 < g2 ? g1 : g2;
    }
    if (get_tables(tables_obj, views, &T) < 0) {
        PyMem_Free(c);
        return NULL;
    }
    if (axial_obj != Py_None) {
        if (!c->robot) {
            for (i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
            PyMem_Free(c);
            PyErr_SetString(PyExc_ValueError, "the robot-metric search needs a cost model");
            return NULL;
        }
        if (get_axial(axial_obj, ax_views, &A) < 0) {
            for (i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
            PyMem_Free(c);
            return NULL;
        }
        use_axial = 1;
        c->A = &A;
    }
    if (shared_obj != Py_None) {
        int ok = PyObject_GetBuffer(shared_obj, &shared_view, PyBUF_WRITABLE) == 0;
        if (ok && shared_view.len < 1) {
            PyBuffer_Release(&shared_view);
            ok = 0;
        }
        if (!ok) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "shared_found must be a writable buffer of at least one byte");
            for (i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
            if (use_axial)
                for (i = 0; i < N_AX_TABLES; i++) PyBuffer_Release(&ax_views[i]);
            PyMem_Free(c);
            return NULL;
        }
        c->shared_found = (volatile unsigned char *)shared_view.buf;
        if (shared_view.len >= 2 && cost_obj == Py_None && collector_obj == Py_None)
            c->shared_best = (unsigned char *)shared_view.buf + 1;
        if (shared_view.len >= 16 && cost_obj != Py_None &&
            (uintptr_t)((char *)shared_view.buf + 8) % sizeof(uint64_t) == 0)
            c->shared_time = (uint64_t *)((char *)shared_view.buf + 8);
        if (c->shared_time != NULL && shared_view.len >= SHARED_PEEK_END)
            c->shared_peek = (unsigned char *)shared_view.buf + 16;
        adopt_time(c);
    }
    c->T = &T;
    c->max_length = max_length;
    c->phase2_max = phase2_max;
    c->phase2_slack = phase2_slack < 0 ? 0 : phase2_slack;
    c->stop_at_first = budget_s <= 0.0;
    c->chunk = chunk;
    if (collector_obj != Py_None) {
        c->collect = 1;
        c->collector = (Collector *)collector_obj;
        c->descending = c->collector->descent_s > 0.0;
    }

    Py_BEGIN_ALLOW_THREADS
    c->t0 = now_s();
    c->deadline = c->t0 + budget_s;
    if (c->collect) c->collect_from = c->t0 + c->collector->descent_s;
    c->hard_deadline = c->t0 + (timeout_s > budget_s ? timeout_s : budget_s);
    if (use_axial) {
        min_dist = ax_run(c, starts, n_dirs);
    } else {
        min_dist = start_distances(&T, starts, n_dirs);
        face_search(c, starts, n_dirs, min_dist);
        if (c->descending) {
            /* the plain search ended during the descent: collect from the start at the length
               it reached */
            c->descending = 0;
            if (c->found && !c->timed_out && !c->stop_at_first && !c->collector->stop &&
                now_s() < c->deadline) {
                c->stop = 0;
                face_search(c, starts, n_dirs, min_dist);
            }
        }
    }
    Py_END_ALLOW_THREADS

    for (i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
    if (use_axial)
        for (i = 0; i < N_AX_TABLES; i++) PyBuffer_Release(&ax_views[i]);
    if (c->shared_found != NULL) PyBuffer_Release(&shared_view);
    result = starts_consistent(starts, n_dirs) ? search_result(c, min_dist, 0) : NULL;
    PyMem_Free(c);
    return result;
}

static PyObject *py_peek(PyObject *self, PyObject *args) {
    PyObject *shared_obj, *moves;
    Py_buffer view;
    const unsigned char *p;
    unsigned char copy[SHARED_PEEK_END - 16];
    uint32_t s1 = 0, s2;
    int32_t fields[3];
    double t;
    int read;
    (void)self;
    if (!PyArg_ParseTuple(args, "O", &shared_obj)) return NULL;
    if (PyObject_GetBuffer(shared_obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len < SHARED_PEEK_END || (uintptr_t)((const char *)view.buf + 16) % 8 != 0) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "peek needs the 8-byte aligned shared buffer of %d bytes",
                     SHARED_PEEK_END);
        return NULL;
    }
    p = (const unsigned char *)view.buf + 16;
    read = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int tries = 1; tries <= PEEK_TRIES; tries++) {
        s1 = __atomic_load_n((const uint32_t *)(p + PEEK_SEQ), __ATOMIC_ACQUIRE);
        if (!(s1 & 1u)) { /* (odd: a search is writing, a few stores) */
            memcpy(copy, p, sizeof copy);
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            s2 = __atomic_load_n((const uint32_t *)(p + PEEK_SEQ), __ATOMIC_RELAXED);
            if (s1 == s2) {
                read = 1;
                break;
            }
        }
        if (tries % PEEK_SPIN == 0) sched_yield();
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    /* nothing yet, or a writer held up past PEEK_TRIES (none read: the caller's plan stays) */
    if (!read || s1 == 0) Py_RETURN_NONE;
    memcpy(fields, copy + PEEK_CHUNK, sizeof fields);
    memcpy(&t, copy + PEEK_TIME, sizeof t);
    if (fields[2] < 0 || fields[2] > MAX_DEPTH + 1) {
        PyErr_SetString(PyExc_ValueError, "peek: the shared buffer holds no solution");
        return NULL;
    }
    moves = PyList_New(fields[2]);
    if (moves == NULL) return NULL;
    for (int i = 0; i < fields[2]; i++)
        PyList_SET_ITEM(moves, i, PyLong_FromLong(copy[PEEK_MOVES + i]));
    return Py_BuildValue("(iiNd)", (int)fields[0], (int)fields[1], moves, t);
}

static PyObject *py_stop(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *shared_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "O", &shared_obj)) return NULL;
    if (PyObject_GetBuffer(shared_obj, &view, PyBUF_WRITABLE) < 0) return NULL;
    if (view.len < 16 || (uintptr_t)((char *)view.buf + 8) % 8 != 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "stop needs the 8-byte aligned shared buffer");
        return NULL;
    }
    /* the least positive double as the bound: nothing is faster, and the searches' next
       look at the shared time (every few thousand nodes) ends them */
    __atomic_store_n((uint64_t *)((char *)view.buf + 8), (uint64_t)1, __ATOMIC_RELAXED);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyObject *py_phase1_depth(PyObject *self, PyObject *args) {
    PyObject *tables_obj;
    int twist, flip, ss, d;
    Py_buffer views[N_TABLES];
    Tables T;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oiii", &tables_obj, &twist, &flip, &ss)) return NULL;
    if (twist < 0 || twist >= N_TWIST || flip < 0 || flip >= N_FLIP || ss < 0 ||
        ss >= N_SLICE_SORTED) {
        PyErr_SetString(PyExc_ValueError, "coordinate out of range");
        return NULL;
    }
    if (get_tables(tables_obj, views, &T) < 0) return NULL;
    d = p1_depth(&T, twist, flip, ss);
    for (int i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
    return PyLong_FromLong(d);
}

static PyObject *py_phase2_depth(PyObject *self, PyObject *args) {
    PyObject *tables_obj;
    int corners, ud, d;
    Py_buffer views[N_TABLES];
    Tables T;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oii", &tables_obj, &corners, &ud)) return NULL;
    if (corners < 0 || corners >= N_CORNERS || ud < 0 || ud >= N_UD) {
        PyErr_SetString(PyExc_ValueError, "coordinate out of range");
        return NULL;
    }
    if (get_tables(tables_obj, views, &T) < 0) return NULL;
    d = p2_depth(&T, corners, ud);
    for (int i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
    return PyLong_FromLong(d);
}

/* ---- Table building: one level of a breadth-first search over (class, raw) pairs ---- */

#define BFS_UNSET 255
#define BFS_MAX_MOVES 64

/* bfs_level(depth, d, backward, class_move, class_sym, raw_move, raw_conj, stab, n_raw)
   One level of solver/engines/twophase/tables/bfs.py's sym_bfs over the uint8 depth array of
   n_class * n_raw entries (entry c * n_raw + r: class c's representative with raw coordinate
   r): every unvisited entry next to an entry at depth d gets d + 1, forwards (the entries at
   d mark their neighbours) or backwards (each unvisited entry looks for a neighbour at d);
   then the entries at d + 1 are closed under the symmetries fixing their class's
   representative. class_move (int32) and class_sym (uint8) are n_class x K (the class and the
   symmetry a move leads to), raw_move (int32) n_raw x K, raw_conj (int32) n_raw x 16, stab
   (uint16) the stabiliser mask of each class. Returns how many entries are at d + 1. The GIL
   is released. */
static PyObject *py_bfs_level(PyObject *self, PyObject *args) {
    Py_buffer dv, cmv, csv, rmv, cjv, sv;
    int d, backward;
    Py_ssize_t n_raw, n_class, k_moves;
    uint64_t count = 0, nb[BFS_MAX_MOVES];
    int bad = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*iiy*y*y*y*y*n", &dv, &d, &backward, &cmv, &csv, &rmv, &cjv,
                          &sv, &n_raw))
        return NULL;
    n_class = sv.len / 2;
    k_moves = n_class > 0 ? cmv.len / (4 * n_class) : 0;
    if (n_raw <= 0 || n_class <= 0 || k_moves <= 0 || k_moves > BFS_MAX_MOVES || d < 0 || d >= BFS_UNSET - 1 ||
        sv.len != 2 * n_class || cmv.len != 4 * n_class * k_moves ||
        csv.len != n_class * k_moves || rmv.len != 4 * n_raw * k_moves ||
        cjv.len != 4 * n_raw * N_SYM || dv.len != n_class * n_raw)
        bad = 1;
    if (!bad) {
        uint8_t *D = dv.buf;
        const int32_t *cm = cmv.buf, *rm = rmv.buf, *cj = cjv.buf;
        const uint8_t *cs = csv.buf;
        const uint16_t *stab = sv.buf;
        const uint8_t now = (uint8_t)d, next = (uint8_t)(d + 1);
        const Py_ssize_t K = k_moves;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t c = 0; c < n_class; c++) {
            uint8_t *row = D + (uint64_t)c * n_raw;
            const int32_t *cmc = cm + c * K;
            const uint8_t *csc = cs + c * K;
            for (Py_ssize_t r = 0; r < n_raw; r++) {
                const int32_t *rmr = rm + r * K;
                if (backward) {
                    /* most unvisited entries find a neighbour at d among their first few:
                       look one at a time */
                    if (row[r] != BFS_UNSET) continue;
                    for (Py_ssize_t k = 0; k < K; k++)
                        if (D[(uint64_t)cmc[k] * n_raw + cj[rmr[k] * N_SYM + csc[k]]] == now) {
                            row[r] = next;
                            count++;
                            break;
                        }
                    continue;
                }
                if (row[r] != now) continue;
                /* the neighbours' entries miss the cache: fetch them all, then look (the
                   misses overlap instead of queueing) */
                for (Py_ssize_t k = 0; k < K; k++) {
                    nb[k] = (uint64_t)cmc[k] * n_raw + cj[rmr[k] * N_SYM + csc[k]];
                    __builtin_prefetch(&D[nb[k]]);
                }
                for (Py_ssize_t k = 0; k < K; k++)
                    if (D[nb[k]] == BFS_UNSET) {
                        D[nb[k]] = next;
                        count++;
                    }
            }
        }
        /* an entry marked here is in its source's orbit under the class's stabiliser (a
           group): closing from any member of an orbit marks all of it */
        for (Py_ssize_t c = 0; c < n_class; c++) {
            uint8_t *row = D + (uint64_t)c * n_raw;
            unsigned mask = stab[c];
            if (mask == 1) continue;
            for (Py_ssize_t r = 0; r < n_raw; r++) {
                if (row[r] != next) continue;
                for (int s = 1; s < N_SYM; s++) {
                    if (!((mask >> s) & 1u)) continue;
                    int32_t r2 = cj[r * N_SYM + s];
                    if (row[r2] == BFS_UNSET) {
                        row[r2] = next;
                        count++;
                    }
                }
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&dv);
    PyBuffer_Release(&cmv);
    PyBuffer_Release(&csv);
    PyBuffer_Release(&rmv);
    PyBuffer_Release(&cjv);
    PyBuffer_Release(&sv);
    if (bad) {
        PyErr_SetString(PyExc_ValueError,
                        "bfs_level: array sizes do not match (depth n_class*n_raw uint8, "
                        "class_move int32 and class_sym uint8 n_class*K, raw_move int32 "
                        "n_raw*K, raw_conj int32 n_raw*16, stab uint16 n_class)");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong((unsigned long long)count);
}

/* down_axes(depth, class_move, class_sym, raw_move, raw_conj, n_raw, axis_of)
   For an exact depth table of bfs_level() over K moves (entry c * n_raw + r: class c's
   representative with raw coordinate r, depth in the low four bits; class_move int32 and
   class_sym uint8 n_class x K, raw_move int32 n_raw x K, raw_conj int32 n_raw x 16 as there),
   sets bit 4 + axis_of[k] (uint8, K entries, each 0..2) of every entry that has a neighbour
   one move nearer the goal by move k. A search then knows, at a node with no move to spare,
   which axis its next move must be on (face turns: 0 U/D, 1 R/L, 2 F/B; the robot metric's
   groups likewise). An entry above 15 (an unfinished table) is refused (ValueError). The
   GIL is released. Returns the entries whose nearer moves are all on one axis. */
static PyObject *py_down_axes(PyObject *self, PyObject *args) {
    Py_buffer dv, cmv, csv, rmv, cjv, av;
    Py_ssize_t n_raw, n_class, K;
    uint64_t single = 0, over = 0;
    int bad = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*y*y*y*y*ny*", &dv, &cmv, &csv, &rmv, &cjv, &n_raw, &av))
        return NULL;
    K = av.len;
    n_class = n_raw > 0 ? dv.len / n_raw : 0;
    if (n_raw <= 0 || n_class <= 0 || K <= 0 || K > BFS_MAX_MOVES || dv.len != n_class * n_raw ||
        cmv.len != 4 * n_class * K || csv.len != n_class * K || rmv.len != 4 * n_raw * K ||
        cjv.len != 4 * n_raw * N_SYM)
        bad = 1;
    for (Py_ssize_t k = 0; !bad && k < K; k++)
        if (((const uint8_t *)av.buf)[k] > 2) bad = 1;
    if (!bad) {
        uint8_t *D = dv.buf;
        const int32_t *cm = cmv.buf, *rm = rmv.buf, *cj = cjv.buf;
        const uint8_t *cs = csv.buf, *axis_of = av.buf;
        /* the moves axis by axis (an entry stops looking on an axis at its first nearer
           neighbour there, and altogether once two axes have one) */
        int order[BFS_MAX_MOVES], first[4] = {0, 0, 0, 0}, n = 0;
        for (int a = 0; a < 3; a++) {
            first[a] = n;
            for (Py_ssize_t k = 0; k < K; k++)
                if (axis_of[k] == a) order[n++] = (int)k;
        }
        first[3] = n;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t c = 0; c < n_class; c++) {
            /* every neighbour by move k of the class's entries is in one row (the class k
               leads to): the K rows stay in the cache while the class is walked */
            const uint8_t *row1[BFS_MAX_MOVES];
            const int32_t *conj[BFS_MAX_MOVES];
            uint8_t *row = D + (uint64_t)c * n_raw;
            for (Py_ssize_t k = 0; k < K; k++) {
                row1[k] = D + (uint64_t)cm[c * K + k] * n_raw;
                conj[k] = cj + cs[c * K + k];
            }
            for (Py_ssize_t r = 0; r < n_raw; r++) {
                unsigned d = row[r], axes = 0, found = 0;
                const int32_t *rmr = rm + r * K;
                if (d > 15u) { /* not a finished depth table (the pass reads 4 bits) */
                    over++;
                    continue;
                }
                if (d == 0) continue;
                for (int a = 0; a < 3 && found < 2; a++)
                    for (int i = first[a]; i < first[a + 1]; i++) {
                        int k = order[i];
                        if ((row1[k][conj[k][rmr[k] * N_SYM]] & 15u) + 1u == d) {
                            axes |= 1u << a;
                            found++;
                            break;
                        }
                    }
                row[r] = (uint8_t)(d | axes << 4);
                single += found == 1;
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&dv);
    PyBuffer_Release(&cmv);
    PyBuffer_Release(&csv);
    PyBuffer_Release(&rmv);
    PyBuffer_Release(&cjv);
    PyBuffer_Release(&av);
    if (bad) {
        PyErr_SetString(PyExc_ValueError,
                        "down_axes: array sizes do not match (depth n_class*n_raw uint8, "
                        "class_move int32 and class_sym uint8 n_class*K, raw_move int32 "
                        "n_raw*K, raw_conj int32 n_raw*16, axis_of K uint8 of 0..2)");
        return NULL;
    }
    if (over > 0) {
        PyErr_Format(PyExc_ValueError,
                     "down_axes: %llu entries hold no depth of 0..15 (an unfinished or "
                     "foreign table); none of their axes were marked",
                     (unsigned long long)over);
        return NULL;
    }
    return PyLong_FromUnsignedLongLong((unsigned long long)single);
}

/* ---- mechanism-cost mode: the solution whose planned robot time is least ----------------------
 *
 * mech_search(tables, starts, max_length, budget_s, timeout_s, phase2_max, phase2_slack,
 *             length_slack, mech, shared_found)
 *   The face-turn search of search() with a cost (every phase-1 depth, phase-2 lengths up to
 *   phase2_slack beyond the shortest, each branch bounded by its cost so far plus a lower bound
 *   of the rest), where the cost of a move sequence is a mechanism's planned time
 *   (robot/kinds/mechsearch.py builds the tables from the kind's exact planner): after a face
 *   turn the machine is in one of k states (the face just turned held where the mechanism
 *   turns it, and the parts around it), so a node carries the least planned time into each of
 *   them, and a move is a min-plus product with a k x k matrix.
 *   length_slack solutions may be this many moves longer than the shortest one found (by any
 *               worker sharing shared_found): the time of a solution grows with its length,
 *               and a search open to long solutions spends its budget in long phase-2 trees
 *   starts      as search(); an inverse direction's moves are placed before those found so
 *               far (back)
 *   mech        (k, trans, first, maps, rest1, rest2, start1, back, brest1, brest2):
 *               trans  float64 [6 faces a][18 moves b][k][k]: least time from the i-th end
 *                      state of a turn of face a, by free actions and the turn(s) making b,
 *                      into b's j-th end state (1e30: impossible)
 *               first  float64 [18][k]: the same from the mechanism's start
 *               maps   uint8 [n_dirs][18]: a direction's move as a move of the cube's own
 *                      frame (the conjugation by that direction's rotation)
 *               rest1  float64 [MAX_DEPTH + 2][6][k]: the least time of n more moves from end
 *                      state i of a turn of face a
 *               rest2  float64 [n_dirs][MAX_DEPTH + 2][6][k]: the same with the direction's
 *                      phase-2 moves only (as moves of the cube's own frame)
 *               start1 float64 [MAX_DEPTH + 2]: the least time of n moves from the start
 *               back   uint8 [n_dirs]: 1 for an inverse direction (maps then give each move as
 *                      the move of the cube's own frame it is in the solution read backwards)
 *               brest1, brest2  float64 [MAX_DEPTH + 2][18][k] and [n_dirs][...]: the least
 *                      time from the start through n moves (any; the direction's phase-2
 *                      moves) then move b into its end state i (the inverse directions' bounds)
 *               (the bounds: a branch's time so far into each end state plus rest1 or rest2
 *               from it; the search keeps what beats the best time found)
 *   shared_found None or as search() (16 bytes: byte 1 the shortest solution any worker
 *               found, bytes 8..15 the least planned time any worker holds)
 *   returns (direction or -1, [moves in that direction's frame], stats) with stats as
 *   search()'s plus "robot_time_s", the planned time of the solution returned.
 */
struct Mech {
    int k;
    const double *trans, *first;
    const uint8_t *maps;
    /* least time of n more moves: [n][face a][i] from end state i of a turn of face a, any
       moves (rest1) or phase-2 moves only (rest2); [n] from the start (start1) */
    const double *rest1, *rest2, *start1;
    /* per direction, 1: an inverse direction (its moves are placed before the ones found so
       far: the vector is the least time from each end state of the first move to the end);
       then [n][move b][i]: the least time from the start through n moves, then b into its end
       state i (any moves: brest1; [dir] the direction's phase-2 moves: brest2) */
    const uint8_t *back;
    const double *brest1, *brest2;
};

#define MECH_ROWS (MAX_DEPTH + 2)
#define N_MECH_BUFFERS 9

#define MECH_INF 1e30

/* out[0, k) = the least time into each end state of move b from the vector v (its end states
   of face f1, then those of face f2 if f2 >= 0) */
static void mech_apply(const struct Mech *M, const double *v, int f1, int f2, int b, double *out) {
    const int k = M->k;
    int h, i, j;
    for (j = 0; j < k; j++) out[j] = MECH_INF;
    for (h = 0; h < 2; h++) {
        const int face = h ? f2 : f1;
        const double *X, *vh = v + (size_t)h * (size_t)k;
        if (face < 0) continue;
        X = M->trans + (size_t)(face * N_MOVE + b) * (size_t)k * (size_t)k;
        for (i = 0; i < k; i++) {
            const double vi = vh[i];
            const double *row = X + (size_t)i * (size_t)k;
            if (vi >= MECH_INF) continue;
            for (j = 0; j < k; j++) {
                double t = vi + row[j];
                out[j] = t < out[j] ? t : out[j];
            }
        }
    }
}

/* an inverse direction: out[i] for the end states i of move o placed before the moves so far
   = the least time from i through them to the end, from the vector v whose halves start with
   moves x1 and x2 (-1: none) */
static void mech_apply_back(const struct Mech *M, const double *v, int x1, int x2, int o,
                            double *out) {
    const int k = M->k;
    int h, i, j;
    for (i = 0; i < k; i++) out[i] = MECH_INF;
    for (h = 0; h < 2; h++) {
        const int x = h ? x2 : x1;
        const double *X, *vh = v + (size_t)h * (size_t)k;
        if (x < 0) continue;
        X = M->trans + (size_t)((o / 3) * N_MOVE + x) * (size_t)k * (size_t)k;
        for (i = 0; i < k; i++) {
            const double *row = X + (size_t)i * (size_t)k;
            double best = out[i];
            for (j = 0; j < k; j++) {
                double t = row[j] + vh[j];
                best = t < best ? t : best;
            }
            out[i] = best;
        }
    }
}

/* an inverse direction: the least over the end states of v (halves starting with moves x1,
   x2) of R[x][i] (the least time from the start into it after rest moves) plus v[i] */
static double mech_rest_back(const struct Mech *M, const double *v, int x1, int x2,
                             const double *R, int rest) {
    const int k = M->k;
    double best = MECH_INF;
    int h, i;
    if (rest >= MECH_ROWS) rest = MECH_ROWS - 1;
    for (h = 0; h < 2; h++) {
        const int x = h ? x2 : x1;
        const double *row, *vh = v + (size_t)h * (size_t)k;
        if (x < 0) continue;
        row = R + ((size_t)rest * N_MOVE + (size_t)x) * (size_t)k;
        for (i = 0; i < k; i++) {
            double t = vh[i] + row[i];
            best = t < best ? t : best;
        }
    }
    return best;
}

static inline const double *mech_brest2(const Ctx *c) {
    return c->mech->brest2 + (size_t)c->dir * MECH_ROWS * N_MOVE * (size_t)c->mech->k;
}

/* an inverse direction's mech_step(): the move o = m's placed first */
static double mech_step_back(const Ctx *c, int depth, int o, double *out, int *second) {
    const struct Mech *M = c->mech;
    const int k = M->k;
    int j;
    *second = -1;
    for (j = k; j < 2 * k; j++) out[j] = MECH_INF;
    if (depth == 0) {
        for (j = 0; j < k; j++) out[j] = 0.0;
    } else {
        const int p = c->ms->mmove[depth];
        mech_apply_back(M, c->ms->mvec[depth], p, c->ms->mface2[depth], o, out);
        if ((p / 3) % 3 == (o / 3) % 3) {
            /* the other order: p first, then o, then what came after p */
            double after[MECH_MAX_K];
            if (depth == 1)
                for (j = 0; j < k; j++) after[j] = 0.0;
            else
                mech_apply_back(M, c->ms->mvec[depth - 1], c->ms->mmove[depth - 1], c->ms->mface2[depth - 1],
                                o, after);
            mech_apply_back(M, after, o, -1, p, out + k);
            *second = p;
        }
    }
    /* the time of the whole solution if it begins here: from the start into the end states
       of its first move (first, not brest1[0], which is a minimum over longer beginnings) */
    {
        double best = MECH_INF;
        int h;
        for (h = 0; h < 2; h++) {
            const int x = h ? *second : o;
            const double *row, *vh = out + (size_t)h * (size_t)k;
            if (x < 0) continue;
            row = M->first + (size_t)x * (size_t)k;
            for (j = 0; j < k; j++) {
                double t = vh[j] + row[j];
                best = t < best ? t : best;
            }
        }
        return best;
    }
}

/* the vector after move m at index depth into out (2k entries; *face2 the face of its second
   half, -1: none); returns its least entry. When the move before turns the opposite face, the
   two commute: the second half is the other order, from the vector before both. */
static double mech_step(const Ctx *c, int depth, int m, double *out, int *face2) {
    const struct Mech *M = c->mech;
    const int k = M->k, b = M->maps[c->dir * N_MOVE + m];
    double best = MECH_INF;
    int j;
    if (M->back[c->dir]) return mech_step_back(c, depth, b, out, face2);
    *face2 = -1;
    for (j = k; j < 2 * k; j++) out[j] = MECH_INF;
    if (depth == 0) {
        memcpy(out, M->first + (size_t)b * (size_t)k, sizeof(double) * (size_t)k);
    } else {
        const int p = M->maps[c->dir * N_MOVE + c->path[depth - 1]];
        mech_apply(M, c->ms->mvec[depth], c->ms->mface[depth], c->ms->mface2[depth], b, out);
        if ((p / 3) % 3 == (b / 3) % 3) {
            double before[MECH_MAX_K];
            if (depth == 1)
                memcpy(before, M->first + (size_t)b * (size_t)k, sizeof(double) * (size_t)k);
            else
                mech_apply(M, c->ms->mvec[depth - 1], c->ms->mface[depth - 1], c->ms->mface2[depth - 1], b,
                           before);
            mech_apply(M, before, b / 3, -1, p, out + k);
            *face2 = p / 3;
        }
    }
    for (j = 0; j < 2 * k; j++)
        if (out[j] < best) best = out[j];
    return best;
}

static inline int mech_cached(const Ctx *c, int depth, int m) {
    return c->ms->cver[depth] == c->ms->mver[depth] && c->ms->cdir[depth] == c->dir &&
           ((c->ms->cmask[depth] >> m) & 1u);
}

static void mech_push(Ctx *c, int depth, int m) {
    const int k = c->mech->k;
    if (mech_cached(c, depth, m)) {
        memcpy(c->ms->mvec[depth + 1], c->ms->cvec[depth][m], sizeof(double) * 2 * (size_t)k);
        c->total_at[depth + 1] = c->ms->cmin[depth][m];
        c->ms->mface2[depth + 1] = c->ms->cface2[depth][m];
    } else {
        c->total_at[depth + 1] = mech_step(c, depth, m, c->ms->mvec[depth + 1], &c->ms->mface2[depth + 1]);
    }
    c->open_at[depth + 1] = -1.0;
    c->ms->mmove[depth + 1] = c->mech->maps[c->dir * N_MOVE + m];
    c->ms->mface[depth + 1] = c->ms->mmove[depth + 1] / 3;
    c->ms->mver[depth + 1] = ++c->ms->mcount;
}

/* the direction's table of the least time of phase-2 moves */
static inline const double *mech_rest2(const Ctx *c) {
    return c->mech->rest2 + (size_t)c->dir * MECH_ROWS * 6 * (size_t)c->mech->k;
}

/* the least over the end states of v (faces f1, f2) of the time into it plus rest more moves
   from it (h: rest1 or rest2) */
static double mech_rest(const struct Mech *M, const double *v, int f1, int f2, const double *h,
                        int rest) {
    const int k = M->k;
    double best = MECH_INF;
    int i, hh;
    if (rest >= MECH_ROWS) rest = MECH_ROWS - 1;
    for (hh = 0; hh < 2; hh++) {
        const int face = hh ? f2 : f1;
        const double *row, *vh = v + (size_t)hh * (size_t)k;
        if (face < 0) continue;
        row = h + ((size_t)rest * 6 + (size_t)face) * (size_t)k;
        for (i = 0; i < k; i++) {
            double t = vh[i] + row[i];
            best = t < best ? t : best;
        }
    }
    return best;
}

/* a lower bound of the planned time of path[0..depth) and `rest` more moves (phase-2 moves
   once phase 1 is over): the least over the end states of the time into it plus the least
   time of `rest` moves from it */
static double mech_bound(const Ctx *c, int depth, int rest) {
    const struct Mech *M = c->mech;
    if (rest < 0) rest = 0;
    if (depth == 0) return M->start1[rest < MECH_ROWS ? rest : MECH_ROWS - 1];
    if (rest == 0) return c->total_at[depth];
    if (M->back[c->dir])
        return mech_rest_back(M, c->ms->mvec[depth], c->ms->mmove[depth], c->ms->mface2[depth],
                              depth >= c->n1 ? mech_brest2(c) : M->brest1, rest);
    return mech_rest(M, c->ms->mvec[depth], c->ms->mface[depth], c->ms->mface2[depth],
                     depth >= c->n1 ? mech_rest2(c) : M->rest1, rest);
}

/* the longest solution wanted now: the shortest any worker has found plus length_slack */
static int mech_cap(const Ctx *c) {
    int shortest = c->shared_best != NULL ? __atomic_load_n(c->shared_best, __ATOMIC_RELAXED) : 0;
    if (shortest > 0 && shortest + c->length_slack < c->max_length)
        return shortest + c->length_slack;
    return c->max_length;
}

/* mech_bound() of the child by move m of the node at depth, from the vector kept in cvec */
static double mech_child_bound(const Ctx *c, int depth, int m, int rest) {
    const struct Mech *M = c->mech;
    if (rest <= 0) return c->ms->cmin[depth][m];
    if (M->back[c->dir])
        return mech_rest_back(M, c->ms->cvec[depth][m], M->maps[c->dir * N_MOVE + m],
                              c->ms->cface2[depth][m],
                              depth + 1 >= c->n1 ? mech_brest2(c) : M->brest1, rest);
    return mech_rest(M, c->ms->cvec[depth][m], M->maps[c->dir * N_MOVE + m] / 3, c->ms->cface2[depth][m],
                     depth + 1 >= c->n1 ? mech_rest2(c) : M->rest1, rest);
}

/* the vector of the child by move m of the node at depth, kept for the push that follows */
static inline void mech_keep(Ctx *c, int depth, int m) {
    c->ms->cmin[depth][m] = mech_step(c, depth, m, c->ms->cvec[depth][m], &c->ms->cface2[depth][m]);
    c->ms->cmask[depth] |= 1u << m;
}

static inline void mech_keep_start(Ctx *c, int depth) {
    c->ms->cver[depth] = c->ms->mver[depth];
    c->ms->cdir[depth] = c->dir;
    c->ms->cmask[depth] = 0;
}

/* a phase-1 node's children, least bound first (the search meets cheap solutions first, and
   their time bounds the rest); their vectors are kept for the pushes that follow */
static void mech_order(Ctx *c, int depth, Child *ch, int n, int togo) {
    int i, j;
    mech_keep_start(c, depth);
    for (i = 0; i < n; i++) {
        mech_keep(c, depth, ch[i].m);
        ch[i].total = mech_child_bound(c, depth, ch[i].m, togo - 1);
    }
    for (i = 1; i < n; i++) {
        Child x = ch[i];
        for (j = i; j > 0 && ch[j - 1].total > x.total; j--) ch[j] = ch[j - 1];
        ch[j] = x;
    }
}

/* phase 2 of the mechanism search: phase2() with the children tried least bound first */
static int mech_phase2(Ctx *c, int corners, int ud, int ss, int dist, int depth, int togo) {
    const Tables *T = c->T;
    int prev, k, n = 0, found = 0, i, j;
    struct {
        int m, c1, u1, s1, nd;
        double bound;
    } ch[N_PHASE2_MOVES], x;
    if (togo == 0) {
        if (ss != 0 || corners != 0 || ud != 0) return 0;
        share_len(c, depth);
        record(c, depth);
        return 1;
    }
    c->nodes2++;
    if ((c->nodes2 & 0x3FFF) == 0) {
        check_time(c);
        if (c->stop) return 0;
    }
    prev = depth > 0 ? c->path[depth - 1] : -1;
    mech_keep_start(c, depth);
    for (k = 0; k < N_PHASE2_MOVES; k++) {
        int m = PHASE2_MOVES[k], c1, u1, s1, nd;
        double bound;
        if (!((c->st->allowed >> m) & 1u) || !successor_ok(prev, m)) continue;
        c1 = T->corners_move[corners * N_MOVE + m];
        s1 = T->slice_sorted_move[ss * N_MOVE + m];
        if (T->cornslice_depth[c1 * 24 + s1] >= togo) continue;
        u1 = T->ud_edges_move[ud * N_MOVE + m];
        if (T->edgeslice_depth[u1 * 24 + s1] >= togo) continue;
        nd = next_depth(dist, p2_mod3(T, c1, u1));
        if (nd >= togo) continue;
        mech_keep(c, depth, m);
        bound = mech_child_bound(c, depth, m, togo - 1);
        if (c->bounded && bound >= c->best_time - 1e-12) continue;
        x.m = m;
        x.c1 = c1;
        x.u1 = u1;
        x.s1 = s1;
        x.nd = nd;
        x.bound = bound;
        for (j = n; j > 0 && ch[j - 1].bound > bound; j--) ch[j] = ch[j - 1];
        ch[j] = x;
        n++;
    }
    for (i = 0; i < n; i++) {
        if (c->bounded && ch[i].bound >= c->best_time - 1e-12) break;
        mech_push(c, depth, ch[i].m);
        c->path[depth] = ch[i].m;
        if (mech_phase2(c, ch[i].c1, ch[i].u1, ch[i].s1, ch[i].nd, depth + 1, togo - 1)) found = 1;
        if (c->stop) return found;
    }
    return found;
}

static void mech_free(Ctx *c) {
    PyMem_Free(c->ms);
    PyMem_Free(c);
}

static PyObject *py_mech_search(PyObject *self, PyObject *args) {
    PyObject *tables_obj, *starts_obj, *mech_obj, *shared_obj, *result;
    PyObject *trans_obj, *first_obj, *maps_obj, *rest1_obj, *rest2_obj, *start1_obj;
    PyObject *back_obj, *brest1_obj, *brest2_obj;
    Py_buffer views[N_TABLES], mviews[N_MECH_BUFFERS], shared_view;
    int max_length, phase2_max, phase2_slack, length_slack, n_dirs, i, min_dist = 99, k, bad = 0;
    double budget_s, timeout_s;
    Py_ssize_t sizes[N_MECH_BUFFERS];
    struct Mech M;
    Tables T;
    Start starts[MAX_DIRS];
    Ctx *c;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOiddiiiOO", &tables_obj, &starts_obj, &max_length, &budget_s,
                          &timeout_s, &phase2_max, &phase2_slack, &length_slack, &mech_obj,
                          &shared_obj))
        return NULL;
    if (!PyArg_ParseTuple(mech_obj, "iOOOOOOOOO", &k, &trans_obj, &first_obj, &maps_obj,
                          &rest1_obj, &rest2_obj, &start1_obj, &back_obj, &brest1_obj,
                          &brest2_obj))
        return NULL;
    if (k < 1 || k > MECH_MAX_K) {
        PyErr_Format(PyExc_ValueError, "a mechanism's end states per face must be 1..%d",
                     MECH_MAX_K);
        return NULL;
    }
    n_dirs = parse_starts(starts_obj, max_length, starts);
    if (n_dirs < 0) return NULL;
    {
        PyObject *objs[N_MECH_BUFFERS] = {trans_obj, first_obj, maps_obj,   rest1_obj, rest2_obj,
                                          start1_obj, back_obj,  brest1_obj, brest2_obj};
        Py_ssize_t d = (Py_ssize_t)sizeof(double);
        sizes[0] = 6 * N_MOVE * (Py_ssize_t)k * k * d;
        sizes[1] = N_MOVE * (Py_ssize_t)k * d;
        sizes[2] = (Py_ssize_t)n_dirs * N_MOVE;
        sizes[3] = MECH_ROWS * 6 * (Py_ssize_t)k * d;
        sizes[4] = (Py_ssize_t)n_dirs * sizes[3];
        sizes[5] = MECH_ROWS * d;
        sizes[6] = n_dirs;
        sizes[7] = MECH_ROWS * N_MOVE * (Py_ssize_t)k * d;
        sizes[8] = (Py_ssize_t)n_dirs * sizes[7];
        for (i = 0; i < N_MECH_BUFFERS; i++) {
            if (PyObject_GetBuffer(objs[i], &mviews[i], PyBUF_C_CONTIGUOUS) < 0) {
                while (--i >= 0) PyBuffer_Release(&mviews[i]);
                return NULL;
            }
            if (mviews[i].len != sizes[i]) bad = 1;
        }
    }
    for (i = 0; !bad && i < n_dirs * N_MOVE; i++)
        if (((const uint8_t *)mviews[2].buf)[i] >= N_MOVE) bad = 1;
    if (bad) {
        for (i = 0; i < N_MECH_BUFFERS; i++) PyBuffer_Release(&mviews[i]);
        PyErr_Format(PyExc_ValueError,
                     "mech must be (k, trans float64 6*18*k*k, first float64 18*k, maps uint8 "
                     "n_dirs*18 of moves 0..17, rest1 float64 %d*6*k, rest2 n_dirs times that, "
                     "start1 float64 %d, back uint8 n_dirs, brest1 float64 %d*18*k, brest2 "
                     "n_dirs times that)",
                     MECH_ROWS, MECH_ROWS, MECH_ROWS);
        return NULL;
    }
    M.k = k;
    M.trans = (const double *)mviews[0].buf;
    M.first = (const double *)mviews[1].buf;
    M.maps = (const uint8_t *)mviews[2].buf;
    M.rest1 = (const double *)mviews[3].buf;
    M.rest2 = (const double *)mviews[4].buf;
    M.start1 = (const double *)mviews[5].buf;
    M.back = (const uint8_t *)mviews[6].buf;
    M.brest1 = (const double *)mviews[7].buf;
    M.brest2 = (const double *)mviews[8].buf;
    c = (Ctx *)PyMem_Calloc(1, sizeof(Ctx));
    if (c != NULL) c->ms = (struct MechState *)PyMem_Calloc(1, sizeof(struct MechState));
    if (c == NULL || c->ms == NULL || get_tables(tables_obj, views, &T) < 0) {
        for (i = 0; i < N_MECH_BUFFERS; i++) PyBuffer_Release(&mviews[i]);
        if (c == NULL) return PyErr_NoMemory();
        if (c->ms == NULL) {
            PyMem_Free(c);
            return PyErr_NoMemory();
        }
        mech_free(c);
        return NULL;
    }
    c->robot = 1;
    c->mech = &M;
    if (shared_obj != Py_None) {
        if (PyObject_GetBuffer(shared_obj, &shared_view, PyBUF_WRITABLE) < 0 ||
            shared_view.len < 16 || (uintptr_t)((char *)shared_view.buf + 8) % 8 != 0) {
            if (!PyErr_Occurred()) PyBuffer_Release(&shared_view);
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "shared_found must be a writable, 8-byte aligned buffer of 16 bytes");
            for (i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
            for (i = 0; i < N_MECH_BUFFERS; i++) PyBuffer_Release(&mviews[i]);
            mech_free(c);
            return NULL;
        }
        c->shared_found = (volatile unsigned char *)shared_view.buf;
        c->shared_best = (unsigned char *)shared_view.buf + 1;
        c->shared_time = (uint64_t *)((char *)shared_view.buf + 8);
        adopt_time(c);
    }
    c->length_slack = length_slack < 0 ? 0 : length_slack;
    c->T = &T;
    c->max_length = max_length;
    c->phase2_max = phase2_max;
    c->phase2_slack = phase2_slack < 0 ? 0 : phase2_slack;
    c->stop_at_first = budget_s <= 0.0;

    Py_BEGIN_ALLOW_THREADS
    c->t0 = now_s();
    c->deadline = c->t0 + budget_s;
    c->hard_deadline = c->t0 + (timeout_s > budget_s ? timeout_s : budget_s);
    min_dist = start_distances(&T, starts, n_dirs);
    face_search(c, starts, n_dirs, min_dist);
    if (c->found) {
        /* best_time may be another worker's (adopted as a bound): this one's own is its
           path's */
        c->dir = c->best_dir;
        memcpy(c->path, c->best_path, sizeof(int) * (size_t)c->best_len);
        c->total_at[0] = 0.0;
        for (i = 0; i < c->best_len; i++) mech_push(c, i, c->path[i]);
        c->best_time = c->total_at[c->best_len];
    }
    Py_END_ALLOW_THREADS

    for (i = 0; i < N_TABLES; i++) PyBuffer_Release(&views[i]);
    for (i = 0; i < N_MECH_BUFFERS; i++) PyBuffer_Release(&mviews[i]);
    if (c->shared_found != NULL) PyBuffer_Release(&shared_view);
    result = starts_consistent(starts, n_dirs) ? search_result(c, min_dist, 1) : NULL;
    mech_free(c);
    return result;
}

static PyMethodDef methods[] = {
    {"search", py_search, METH_VARARGS, "Two-phase search (see the module source header)."},
    {"mech_search", py_mech_search, METH_VARARGS,
     "Two-phase search for the least planned time of a mechanism (see mech_search's block)."},
    {"peek", py_peek, METH_VARARGS,
     "peek(shared) -> None or (chunk, direction, [moves], robot time): the best solution the "
     "robot searches sharing the buffer hold so far"},
    {"stop", py_stop, METH_VARARGS,
     "stop(shared): the robot searches sharing the buffer end soon, finding nothing more"},
    {"phase1_depth", py_phase1_depth, METH_VARARGS,
     "phase1_depth(tables, twist, flip, slice_sorted) -> exact phase-1 distance"},
    {"phase2_depth", py_phase2_depth, METH_VARARGS,
     "phase2_depth(tables, corners, ud_edges) -> exact distance in the phase-2 pruning table"},
    {"bfs_level", py_bfs_level, METH_VARARGS,
     "bfs_level(depth, d, backward, class_move, class_sym, raw_move, raw_conj, stab, n_raw) "
     "-> entries at depth d + 1 (one level of a table build; see the source)"},
    {"down_axes", py_down_axes, METH_VARARGS,
     "down_axes(depth, class_move, class_sym, raw_move, raw_conj, n_raw, axis_of) -> entries "
     "whose moves nearer the goal are on one axis (marks them in bits 4..6; see the source)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_twophase", "Two-phase search kernel (C).", -1, methods, NULL, NULL,
    NULL, NULL,
};

PyMODINIT_FUNC PyInit__twophase(void) {
    PyObject *m;
    init_axial();
    init_masks();
    if (PyType_Ready(&CollectorType) < 0) return NULL;
    m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&CollectorType);
    if (PyModule_AddObject(m, "Collector", (PyObject *)&CollectorType) < 0) {
        Py_DECREF(&CollectorType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
