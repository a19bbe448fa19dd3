/*
 * The hot loops of the 5x5 staged centre search (solver/engines/nxn/staged5.py).
 *
 * A stage's state is one bit mask per centre orbit, x and t: bit i is set when the stage's
 * position i holds a colour the stage is placing (at most 24 positions). A move, or a symmetry
 * of the stage, maps a mask through three byte tables (uint32 [3][256], 768 entries per move:
 * the new bits that each byte value of the old mask gives), so nothing here knows stickers.
 *
 * A distance table (int8, -1: not reached) is indexed by rank(lx, x) + rank(lt, t), a rank
 * being a sum of one lookup per byte of the mask in a rank table uint32 [3][9][256], indexed
 * by the byte's position, the number of set bits in the lower bytes (clamped to 8) and the byte
 * value: enough for the colex rank of a mask of fixed popcount (up to 8 bits set), for a product
 * of per-byte ranks, or for none (all zero). Python owns every table; nothing here is global
 * but the popcounts, and the GIL is released while the C loops run.
 *
 * bfs_level(dist, d, moves_x, moves_t, ux, ut, lx, lt[, backward]) -> entries set to d + 1
 *   one level of a table's breadth-first build: index i is the pair (ux[i / len(ut)],
 *   ut[i % len(ut)]) of masks, so that lx and lt rank them back to i (ux, ut uint32 arrays);
 *   every entry at d gets its neighbours under each move (moves_x, moves_t: n_moves * 768
 *   uint32 each) that are still -1 set to d + 1. With backward true, every entry still -1
 *   with a neighbour at d is set to d + 1 instead: the same level when the moves are closed
 *   under inverses, and cheaper once fewer entries are left than there are at d.
 *
 * perimeter(table, moves_x, moves_t, goal_x, goal_t, depth) -> pairs stored
 *   fills `table` (writable, 2^k uint64 slots, k >= 1) with every pair of masks within `depth`
 *   moves of the goal and its distance (open addressing; a ValueError when they would fill
 *   more than half of the slots).
 *
 * search(heuristics, moves_x, moves_t, axis, slot, start_x, start_t, goal_x, goal_t,
 *        min_depth, max_depth, limit, node_limit, perimeter, perimeter_depth) -> ([[move, ...], ...], nodes)
 *   IDA* on the pair of masks, from the larger of min_depth and the start's bound. heuristics is a tuple of (dist, lx, lt, sym_x, sym_t) (sym_x,
 *   sym_t: None or a 768-entry byte table applied to the masks before ranking: a table built
 *   for one axis read for another); the bound is the largest of their distances, each a lower
 *   bound of the joint distance. axis and slot are bytes, one per move: moves of one axis
 *   commute, so after a move only moves of another axis or of a higher slot of the same axis
 *   are tried. perimeter (None or a table filled by perimeter() to perimeter_depth) prunes the
 *   last perimeter_depth moves exactly: a pair not in it is farther. Returns up to `limit` solutions of the least length (none when none has at most
 *   max_depth moves, or node_limit nodes were expanded first) and the nodes expanded.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_MOVES 64
#define MAX_DEPTH 40
#define MAX_HEUR 8
#define KMAX 9
#define RANK_ENTRIES (3 * KMAX * 256)
#define UNREACHED 127

static uint8_t POP[256];

static inline uint32_t turn(const uint32_t *t, uint32_t s) {
    return t[s & 255] | t[256 + ((s >> 8) & 255)] | t[512 + ((s >> 16) & 255)];
}

static inline uint32_t rank(const uint32_t *L, uint32_t s) {
    uint32_t b0 = s & 255, b1 = (s >> 8) & 255, b2 = (s >> 16) & 255;
    int k1 = POP[b0], k2 = k1 + POP[b1];
    if (k1 > KMAX - 1) k1 = KMAX - 1;
    if (k2 > KMAX - 1) k2 = KMAX - 1;
    return L[b0] + L[(KMAX + k1) * 256 + b1] + L[(2 * KMAX + k2) * 256 + b2];
}

typedef struct {
    const int8_t *dist;
    Py_ssize_t size;
    const uint32_t *lx, *lt, *sx, *st; /* lx or lt NULL: a table of the other orbit alone */
} Heur;

static inline int heur(const Heur *H, uint32_t x, uint32_t t) {
    uint32_t idx = 0;
    int8_t d;
    if (H->lx != NULL) idx += rank(H->lx, H->sx != NULL ? turn(H->sx, x) : x);
    if (H->lt != NULL) idx += rank(H->lt, H->st != NULL ? turn(H->st, t) : t);
    if ((Py_ssize_t)idx >= H->size) return UNREACHED;
    d = H->dist[idx];
    return d < 0 ? UNREACHED : d;
}

/* The perimeter: an open-addressing hash of every pair of masks within `depth` moves of the
   goal, one uint64 per slot: (x << 24 | t) + 1 in bits 0..48, the distance in bits 56..63;
   0 is an empty slot. */
static inline uint64_t slot_of(uint64_t key, uint64_t mask) {
    return ((key * 0x9E3779B97F4A7C15ULL) >> 20) & mask;
}

/* The exact distance of (x, t) when it is at most the perimeter's depth, else -1. */
static inline int perim_find(const uint64_t *table, uint64_t mask, uint32_t x, uint32_t t) {
    uint64_t key = (((uint64_t)x << 24) | t) + 1, i = slot_of(key, mask);
    for (;; i = (i + 1) & mask) {
        uint64_t e = table[i];
        if (e == 0) return -1;
        if ((e & 0xFFFFFFFFFFFFULL) == key) return (int)(e >> 56);
    }
}

/* Insert (x, t) at distance d unless present; 1 when inserted. */
static inline int perim_add(uint64_t *table, uint64_t mask, uint32_t x, uint32_t t, int d) {
    uint64_t key = (((uint64_t)x << 24) | t) + 1, i = slot_of(key, mask);
    for (;; i = (i + 1) & mask) {
        uint64_t e = table[i];
        if (e == 0) {
            table[i] = key | ((uint64_t)d << 56);
            return 1;
        }
        if ((e & 0xFFFFFFFFFFFFULL) == key) return 0;
    }
}

typedef struct {
    Heur heur[MAX_HEUR];
    int n_heur;
    const uint32_t *mv_x, *mv_t;
    const uint8_t *axis, *slot;
    uint32_t goal_x, goal_t;
    const uint64_t *perim; /* NULL, or the perimeter hash (see perimeter()) */
    uint64_t perim_mask;
    int perim_depth, boost;
    int n_moves, bound, limit, found;
    long long nodes, node_limit;
    int path[MAX_DEPTH];
    int *out; /* limit * MAX_DEPTH moves */
} Search;

static void dfs(Search *S, uint32_t x, uint32_t t, int g, int last) {
    int m, j, h, hmin, hmax;
    S->nodes++;
    if (g == S->bound) {
        if (x == S->goal_x && t == S->goal_t) {
            memcpy(S->out + (size_t)S->found * MAX_DEPTH, S->path, sizeof(int) * S->bound);
            S->found++;
        }
        return;
    }
    for (m = 0; m < S->n_moves; m++) {
        uint32_t nx, nt = 0;
        if (last >= 0 && S->axis[m] == S->axis[last] && S->slot[m] <= S->slot[last]) continue;
        nx = turn(S->mv_x + (size_t)m * 768, x);
        hmax = 0;
        hmin = UNREACHED;
        for (j = 0; j < S->n_heur; j++) { /* the x-only tables first: t is not turned yet */
            if (S->heur[j].lt != NULL) continue;
            h = heur(&S->heur[j], nx, 0);
            if (g + 1 + h > S->bound) break;
            if (h > hmax) hmax = h;
            if (h < hmin) hmin = h;
        }
        if (j < S->n_heur) continue;
        nt = turn(S->mv_t + (size_t)m * 768, t);
        for (j = 0; j < S->n_heur; j++) {
            if (S->heur[j].lt == NULL) continue;
            h = heur(&S->heur[j], nx, nt);
            if (g + 1 + h > S->bound) break;
            if (h > hmax) hmax = h;
            if (h < hmin) hmin = h;
        }
        if (j < S->n_heur) continue;
        if (S->boost > 0 && S->bound - g - 1 > S->perim_depth &&
            g + 1 + hmax + (hmin * S->boost) / 4 > S->bound)
            continue;
        if (S->perim != NULL && S->bound - g - 1 <= S->perim_depth) {
            int d = perim_find(S->perim, S->perim_mask, nx, nt);
            if (d < 0 || g + 1 + d > S->bound) continue;
        }
        S->path[g] = m;
        dfs(S, nx, nt, g + 1, m);
        if (S->found >= S->limit || S->nodes >= S->node_limit) return;
    }
}

static int all_zero(const uint32_t *L) {
    int i;
    for (i = 0; i < RANK_ENTRIES; i++)
        if (L[i] != 0) return 0;
    return 1;
}

/* Views of one (dist, lx, lt, sym_x, sym_t) heuristic; returns the number of views held in
   views[0..4] (to release) or -1 with an exception set (nothing held). */
static int get_heur(PyObject *item, Py_buffer *views, Heur *H) {
    PyObject *objs[5];
    int i, n = 0;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 5) {
        PyErr_SetString(PyExc_ValueError, "search: a heuristic is (dist, lx, lt, sym_x, sym_t)");
        return -1;
    }
    for (i = 0; i < 5; i++) objs[i] = PyTuple_GET_ITEM(item, i);
    memset(H, 0, sizeof *H);
    for (i = 0; i < 5; i++) {
        Py_ssize_t want = i == 0 ? -1 : i < 3 ? RANK_ENTRIES * 4 : 768 * 4;
        if (i >= 3 && objs[i] == Py_None) continue;
        if (PyObject_GetBuffer(objs[i], &views[n], PyBUF_C_CONTIGUOUS) < 0) goto fail;
        n++;
        if (want >= 0 && views[n - 1].len != want) {
            PyErr_Format(PyExc_ValueError,
                         "search: heuristic part %d has %zd bytes, expected %zd", i,
                         views[n - 1].len, want);
            goto fail;
        }
        switch (i) {
        case 0: H->dist = views[n - 1].buf; H->size = views[n - 1].len; break;
        case 1: H->lx = all_zero(views[n - 1].buf) ? NULL : views[n - 1].buf; break;
        case 2: H->lt = all_zero(views[n - 1].buf) ? NULL : views[n - 1].buf; break;
        case 3: H->sx = views[n - 1].buf; break;
        default: H->st = views[n - 1].buf; break;
        }
    }
    return n;
fail:
    while (--n >= 0) PyBuffer_Release(&views[n]);
    return -1;
}

static PyObject *py_search(PyObject *self, PyObject *args) {
    PyObject *heur_obj, *result = NULL, *solutions = NULL;
    PyObject *perim_obj;
    Py_buffer mx, mt, ax, sl, pv, views[MAX_HEUR * 5];
    int perim_depth, has_perim = 0, S_boost = 0;
    unsigned int start_x, start_t, goal_x, goal_t;
    int min_depth, max_depth, limit, i, k, bound, n_views = 0;
    long long node_limit;
    Search S;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*IIIIiiiLOi|i", &heur_obj, &mx, &mt, &ax, &sl,
                          &start_x, &start_t, &goal_x, &goal_t, &min_depth, &max_depth, &limit,
                          &node_limit,
                          &perim_obj, &perim_depth, &S_boost))
        return NULL;
    memset(&S, 0, sizeof S);
    S.boost = S_boost;
    if (perim_obj != Py_None) {
        if (PyObject_GetBuffer(perim_obj, &pv, PyBUF_C_CONTIGUOUS) < 0) goto done;
        has_perim = 1;
        if (pv.len < 16 || (pv.len & (pv.len - 1)) || perim_depth < 0 || perim_depth > 60) {
            PyErr_SetString(PyExc_ValueError,
                            "search: the perimeter needs 2^k uint64 slots and a depth 0..60");
            goto done;
        }
        S.perim = pv.buf;
        S.perim_mask = (uint64_t)(pv.len / 8 - 1);
        S.perim_depth = perim_depth;
    }
    S.n_moves = (int)ax.len;
    if (S.n_moves < 1 || S.n_moves > MAX_MOVES || sl.len != ax.len ||
        mx.len != (Py_ssize_t)S.n_moves * 768 * 4 || mt.len != mx.len) {
        PyErr_SetString(PyExc_ValueError,
                        "search: axis and slot need one byte per move (1..64 moves) and each "
                        "move table n_moves * 768 uint32");
        goto done;
    }
    if (max_depth < 0 || max_depth > MAX_DEPTH || limit < 1) {
        PyErr_Format(PyExc_ValueError, "search: max_depth must be 0..%d and limit >= 1",
                     MAX_DEPTH);
        goto done;
    }
    if (!PyTuple_Check(heur_obj) || PyTuple_GET_SIZE(heur_obj) < 1 ||
        PyTuple_GET_SIZE(heur_obj) > MAX_HEUR) {
        PyErr_Format(PyExc_ValueError, "search: heuristics must be a tuple of 1..%d", MAX_HEUR);
        goto done;
    }
    for (i = 0; i < PyTuple_GET_SIZE(heur_obj); i++) {
        int got = get_heur(PyTuple_GET_ITEM(heur_obj, i), views + n_views, &S.heur[i]);
        if (got < 0) goto done;
        n_views += got;
        S.n_heur++;
    }
    S.mv_x = mx.buf;
    S.mv_t = mt.buf;
    S.axis = ax.buf;
    S.slot = sl.buf;
    S.goal_x = goal_x;
    S.goal_t = goal_t;
    S.limit = limit;
    S.node_limit = node_limit;
    S.out = PyMem_RawMalloc(sizeof(int) * (size_t)limit * MAX_DEPTH);
    if (S.out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    bound = min_depth;
    for (i = 0; i < S.n_heur; i++) {
        int h = heur(&S.heur[i], start_x, start_t);
        if (h > bound) bound = h;
    }
    Py_BEGIN_ALLOW_THREADS
    for (; bound <= max_depth && S.found == 0 && S.nodes < S.node_limit; bound++) {
        S.bound = bound;
        dfs(&S, start_x, start_t, 0, -1);
    }
    Py_END_ALLOW_THREADS
    solutions = PyList_New(S.found);
    if (solutions == NULL) goto done;
    for (i = 0; i < S.found; i++) {
        PyObject *path = PyList_New(S.bound);
        if (path == NULL) goto done;
        PyList_SET_ITEM(solutions, i, path);
        for (k = 0; k < S.bound; k++) {
            PyObject *v = PyLong_FromLong(S.out[(size_t)i * MAX_DEPTH + k]);
            if (v == NULL) goto done;
            PyList_SET_ITEM(path, k, v);
        }
    }
    result = Py_BuildValue("(OL)", solutions, S.nodes);
done:
    Py_XDECREF(solutions);
    PyMem_RawFree(S.out);
    while (--n_views >= 0) PyBuffer_Release(&views[n_views]);
    if (has_perim) PyBuffer_Release(&pv);
    PyBuffer_Release(&mx);
    PyBuffer_Release(&mt);
    PyBuffer_Release(&ax);
    PyBuffer_Release(&sl);
    return result;
}

static PyObject *py_bfs_level(PyObject *self, PyObject *args) {
    Py_buffer dv, mx, mt, uxv, utv, lxv, ltv;
    int d, n_moves, m, backward = 0;
    Py_ssize_t size, nx, nt, i;
    long long added = 0;
    int8_t *dist;
    const uint32_t *mvx, *mvt, *ux, *ut, *lx, *lt;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*iy*y*y*y*y*y*|p", &dv, &d, &mx, &mt, &uxv, &utv, &lxv, &ltv,
                          &backward))
        return NULL;
    size = dv.len;
    n_moves = (int)(mx.len / (768 * 4));
    nx = uxv.len / 4;
    nt = utv.len / 4;
    if (n_moves < 1 || n_moves > MAX_MOVES || mx.len != (Py_ssize_t)n_moves * 768 * 4 ||
        mt.len != mx.len || nx < 1 || nt < 1 || nx * nt != size ||
        lxv.len != RANK_ENTRIES * 4 || ltv.len != RANK_ENTRIES * 4 || d < 0 || d > 120) {
        PyErr_SetString(PyExc_ValueError,
                        "bfs_level: dist needs len(ux) * len(ut) int8 entries, each move table "
                        "n_moves * 768 uint32, each rank table 3 * 9 * 256 uint32, 0 <= d <= 120");
        goto done;
    }
    dist = dv.buf;
    mvx = mx.buf;
    mvt = mt.buf;
    ux = uxv.buf;
    ut = utv.buf;
    lx = lxv.buf;
    lt = ltv.buf;
    Py_BEGIN_ALLOW_THREADS
    if (backward) { /* each entry not reached yet looks for a neighbour at d */
        for (i = 0; i < size; i++) {
            uint32_t x, t;
            if (dist[i] >= 0) continue;
            x = ux[i / nt];
            t = ut[i % nt];
            for (m = 0; m < n_moves; m++) {
                uint32_t idx = rank(lx, turn(mvx + (size_t)m * 768, x)) +
                               rank(lt, turn(mvt + (size_t)m * 768, t));
                if ((Py_ssize_t)idx < size && dist[idx] == d) {
                    dist[i] = (int8_t)(d + 1);
                    added++;
                    break;
                }
            }
        }
    }
    for (i = 0; i < size && !backward; i++) {
        uint32_t x, t;
        if (dist[i] != d) continue;
        x = ux[i / nt];
        t = ut[i % nt];
        for (m = 0; m < n_moves; m++) {
            uint32_t idx = rank(lx, turn(mvx + (size_t)m * 768, x)) +
                           rank(lt, turn(mvt + (size_t)m * 768, t));
            if ((Py_ssize_t)idx < size && dist[idx] < 0) {
                dist[idx] = (int8_t)(d + 1);
                added++;
            }
        }
    }
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&dv);
    PyBuffer_Release(&mx);
    PyBuffer_Release(&mt);
    PyBuffer_Release(&uxv);
    PyBuffer_Release(&utv);
    PyBuffer_Release(&lxv);
    PyBuffer_Release(&ltv);
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromLongLong(added);
}

static PyObject *py_perimeter(PyObject *self, PyObject *args) {
    Py_buffer tv, mx, mt;
    unsigned int goal_x, goal_t;
    int depth, d, m, n_moves;
    Py_ssize_t slots, i;
    long long count = 1, added = 1;
    uint64_t *table, mask;
    const uint64_t *cur;
    const uint32_t *mvx, *mvt;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*y*y*IIi", &tv, &mx, &mt, &goal_x, &goal_t, &depth))
        return NULL;
    slots = tv.len / 8;
    n_moves = (int)(mx.len / (768 * 4));
    if (slots < 2 || (slots & (slots - 1)) || tv.len != slots * 8 || n_moves < 1 ||
        mx.len != (Py_ssize_t)n_moves * 768 * 4 || mt.len != mx.len || depth < 0 ||
        depth > 60) {
        PyErr_SetString(PyExc_ValueError,
                        "perimeter: the table needs 2^k uint64 slots, each move table n_moves "
                        "* 768 uint32, and a depth 0..60");
        goto done;
    }
    table = tv.buf;
    mask = (uint64_t)slots - 1;
    mvx = mx.buf;
    mvt = mt.buf;
    Py_BEGIN_ALLOW_THREADS
    memset(table, 0, (size_t)tv.len);
    perim_add(table, mask, goal_x, goal_t, 0);
    for (d = 0; d < depth && added > 0 && count * 2 < slots; d++) {
        added = 0;
        cur = table;
        for (i = 0; i < slots && count * 2 < slots; i++) {
            uint64_t e = cur[i], key;
            uint32_t x, t;
            if (e == 0 || (int)(e >> 56) != d) continue;
            key = (e & 0xFFFFFFFFFFFFULL) - 1;
            x = (uint32_t)(key >> 24);
            t = (uint32_t)(key & 0xFFFFFF);
            for (m = 0; m < n_moves; m++) {
                uint32_t nx = turn(mvx + (size_t)m * 768, x), nt = turn(mvt + (size_t)m * 768, t);
                if (perim_add(table, mask, nx, nt, d + 1)) {
                    added++;
                    count++;
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (count * 2 >= slots) {
        PyErr_Format(PyExc_ValueError, "perimeter: more than %zd pairs within %d moves: give "
                     "it more slots or less depth", slots / 2, depth);
    }
done:
    PyBuffer_Release(&tv);
    PyBuffer_Release(&mx);
    PyBuffer_Release(&mt);
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromLongLong(count);
}

static PyMethodDef methods[] = {
    {"search", py_search, METH_VARARGS, "IDA* on two centre orbits (see the module source)."},
    {"perimeter", py_perimeter, METH_VARARGS,
     "Fill the hash of the pairs near the goal (see the module source)."},
    {"bfs_level", py_bfs_level, METH_VARARGS,
     "One level of a distance table's breadth-first build (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_staged5", "5x5 staged centre search kernel (C).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__staged5(void) {
    int v;
    for (v = 0; v < 256; v++) POP[v] = (uint8_t)((v & 1) + POP[v >> 1]);
    return PyModule_Create(&module);
}
