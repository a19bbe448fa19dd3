/*
 * The hot loop of the block-commutator planner (solver/engines/nxn/centres.py, _line_plan):
 * the best single line of one commutator configuration.
 *
 * A configuration cycles target cells; each cell has its layer u along the commutator's axis
 * (what m turns) and its line u2 (what m2 turns), both in 2..N-1, never equal, and a net gain
 * (pieces put in place minus pieces taken out when it is cycled). The cells come sorted by
 * line, then by layer (strictly increasing within a line).
 *
 * best_line(net, u, u2, n, fixed, layers_out) -> (line, gain, cost, count)
 *   net, u, u2: int64 buffers of one length; layers_out: writable int64 buffer of at least
 *   N entries. For each line, the cells that lose nothing (net >= 0) form runs of adjacent
 *   layers; a run is kept when its total is positive (taking its neutral cells joins gaining
 *   cells into one range move). A line's gain is the total of its kept runs and its cost
 *   `fixed` (the outer turns: 3 for the target's, + 1 for a setup turn of the source, ...)
 *   + 2 x the OBTM of each kept run of m (1 when it touches layer 2 or N-1, a wide move; else
 *   2) + 2 x the OBTM of m2 (the line: 1 at layer 2 or N-1, else 2). Returns the line of the highest gain / cost (lines without
 *   gain rank -1; ties: the lowest line, 0 when none gains), its gain and cost, and writes the
 *   layers of its kept runs, increasing, into layers_out (count of them). A ValueError when
 *   the buffers disagree in length or the cells are not sorted.
 *
 * nets(state, idx, colours, out) -> None
 *   state: uint8 colours of every sticker; idx: int64 sticker indices, 2k rows of one length
 *   L (row 2j: where the pieces come from, row 2j + 1: the cells they go to); colours: int64,
 *   k pairs (c_in, c_out); out: writable int64 buffer of L entries. out[i] = the sum over j of
 *   [state[src] == c_in] - [state[cell] == c_in] + (c_out >= 0: [state[cell] == c_out] -
 *   [state[src] == c_out]) with src = idx[2j][i], cell = idx[2j + 1][i]: what cycling cell i
 *   gains (pieces of c_in put on the cells' face, pieces of c_out kept on the sources' face).
 *   A ValueError when the sizes disagree or an index is outside state.
 *
 * plan_lines(state, cells, src, colours, u, u2, groups, fixed, bias, n, out) -> None
 *   nets and best_line fused, for many configurations, each after several setups, at once.
 *   A configuration (group) is a run of cells [groups[g], groups[g + 1]) of a length-L
 *   layout; its cells are sorted as best_line wants. cells: int32, P rows of L (the cells of
 *   each of P colour pairs); src: int32, S x P rows of L (where the pieces that land on
 *   them come from after setup s); colours: int64, P pairs (c_in, c_out) as for nets; u, u2:
 *   int32 of L entries; groups: int64, G + 1 starts (0 .. L); fixed: int64, S outer-turn
 *   counts (one per setup); bias: int64 of L entries added to each cell's net (a cell that
 *   may not be cycled: a large negative bias; |bias| <= 2^30), or empty; out: writable int64 of S x G x 5
 *   entries, per setup and group: the best line, its gain, its cost (as best_line with n and
 *   the setup's fixed), the total of the positive nets, and the largest total of the
 *   positive nets of one line. The nets are those of nets(), summed over the P pairs. A
 *   ValueError when sizes disagree, an index is outside state, or cells are not sorted.
 *   The work runs with the GIL released (only the buffers, held for the call, are read).
 *
 * plan_start(state, jobs, threads) -> pending;  plan_wait(pending, i);  plan_finish(pending)
 *   Several plan_lines calls on one state, in the background: jobs is a sequence of tuples
 *   (cells, src, colours, u, u2, groups, fixed, bias, n, out), plan_lines' arguments after
 *   the state. plan_start parses and checks every job, starts threads - 1 helper threads
 *   (threads 1..8; 0 helpers for threads 1), which take the jobs in the order given, and
 *   returns at once (a capsule) while they work. plan_wait(pending, i) returns
 *   when job i's out is written: a job no thread has taken yet is run on the calling thread
 *   (GIL released); while another thread runs it, the calling thread takes the next jobs not
 *   taken, then waits for it; it raises the job's ValueError. plan_finish
 *   runs or waits for the rest, joins the helpers and releases the buffers (also done when
 *   the capsule is freed). Until plan_finish the state must not change (the helpers read
 *   it); each out may be read once its job was waited for. Every job writes only its own
 *   out, so the outputs do not depend on the threads or their timing.
 *
 * rank_lines(out, fixed, extra, floor) -> list of block numbers
 *   out: int64, B x 5 (plan_lines' output, B = S x G); fixed: int64, S entries. The blocks
 *   whose best line beats the floor, as centres.candidates looked for them: by the bound
 *   total / least (total = out[b][3], least = fixed[b / G] + extra; highest first, ties in
 *   block order) until a bound total <= floor x least; a block of gain out[b][1] > 0 is kept
 *   and raises the floor to its gain / cost (out[b][2]) when that is higher. The same double
 *   operations as the Python loop (its reference is in the tests). A ValueError when the
 *   sizes disagree or a least is not positive.
 *
 * max_runs(values, allowed, lam, n, taken_out) -> count
 *   values: int64, allowed: one byte (bool) per layer, N entries at least; taken_out:
 *   writable int64 of N. The layers (2..N-1, allowed ones) whose runs maximise sum(values) -
 *   lam x their cost (2 for a run touching layer 2 or N-1, else 4), from the highest down:
 *   the dynamic programme of rectangles.py's max_runs, the same float operations in the
 *   same order (so the same choice among equal scores).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* plan_start's most threads */
#define MAX_THREADS 8

typedef struct {
    long long line, sum;
    int cheap;
    Py_ssize_t first, last; /* cell indices of the run */
} Run;

static int get_int64(Py_buffer *view, Py_ssize_t *count) {
    if (view->itemsize != 8 || view->len % 8) {
        PyErr_SetString(PyExc_ValueError, "best_line: buffers must hold int64 values");
        return -1;
    }
    *count = view->len / 8;
    return 0;
}

/* Of lines 0..n with these kept-run totals: the line of the highest gain / cost (lines
   without gain rank -1; ties: the lowest line), its gain and its cost (see best_line). */
static void choose_line(long long n, long long fixed, const long long *gain,
                        const long long *runs, const long long *cheap, long long *line,
                        long long *line_gain, long long *line_cost) {
    double best_ratio = 0.0;
    long long k;
    for (k = 0; k <= n; k++) {
        long long m2 = (k == 2 || k == n - 1) ? 1 : 2;
        long long cost = fixed + 2 * (2 * runs[k] - cheap[k]) + 2 * m2;
        double ratio = gain[k] > 0 ? (double)gain[k] / (double)cost : -1.0;
        if (k == 0 || ratio > best_ratio) {
            best_ratio = ratio;
            *line = k;
            *line_gain = gain[k];
            *line_cost = cost;
        }
    }
}

static PyObject *py_best_line(PyObject *self, PyObject *args) {
    Py_buffer nv, uv, u2v, ov;
    int n, fixed;
    Py_ssize_t m, mu, mu2, mo, i, k, written = 0;
    long long *gain = NULL, *runs = NULL, *cheap = NULL;
    long long best_line = 0, best_gain = 0, best_cost = 0;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*iiw*", &nv, &uv, &u2v, &n, &fixed, &ov))
        return NULL;
    if (get_int64(&nv, &m) || get_int64(&uv, &mu) || get_int64(&u2v, &mu2) ||
        get_int64(&ov, &mo))
        goto done;
    if (m != mu || m != mu2 || n < 4 || mo < n) {
        PyErr_SetString(PyExc_ValueError,
                        "best_line: net, u and u2 must have one length and layers_out N");
        goto done;
    }
    {
        const long long *net = nv.buf, *u = uv.buf, *u2 = u2v.buf;
        long long *out = ov.buf;
        Run run = {-1, 0, 0, 0, -1};
        int open = 0;
        gain = PyMem_Calloc((size_t)n + 1, sizeof(long long));
        runs = PyMem_Calloc((size_t)n + 1, sizeof(long long));
        cheap = PyMem_Calloc((size_t)n + 1, sizeof(long long));
        if (!gain || !runs || !cheap) {
            PyErr_NoMemory();
            goto done;
        }
        for (i = 0; i <= m; i++) {
            int extend = 0;
            if (i < m) {
                if (u[i] < 2 || u[i] > n - 1 || u2[i] < 2 || u2[i] > n - 1 ||
                    (i && (u2[i] < u2[i - 1] || (u2[i] == u2[i - 1] && u[i] <= u[i - 1])))) {
                    PyErr_SetString(PyExc_ValueError,
                                    "best_line: cells must be sorted by line, then layer, "
                                    "with layers and lines in 2..N-1");
                    goto done;
                }
                extend = net[i] >= 0 && open && run.line == u2[i] && u[run.last] + 1 == u[i];
            }
            if (open && !extend) { /* close the run */
                if (run.sum > 0) {
                    gain[run.line] += run.sum;
                    runs[run.line] += 1;
                    cheap[run.line] += run.cheap;
                }
                open = 0;
            }
            if (i == m || net[i] < 0)
                continue;
            if (!open) {
                run.line = u2[i];
                run.sum = 0;
                run.cheap = 0;
                run.first = i;
                open = 1;
            }
            run.last = i;
            run.sum += net[i];
            run.cheap += (u[i] == 2) + (u[i] == n - 1);
        }
        choose_line(n, fixed, gain, runs, cheap, &best_line, &best_gain, &best_cost);
        /* the layers of the best line's kept runs */
        open = 0;
        for (i = 0; i <= m && best_gain > 0; i++) {
            int extend = 0;
            if (i < m)
                extend = net[i] >= 0 && open && u2[i] == best_line && u[run.last] + 1 == u[i];
            if (open && !extend) {
                if (run.sum > 0)
                    for (k = run.first; k <= run.last; k++)
                        out[written++] = u[k];
                open = 0;
            }
            if (i == m || net[i] < 0 || u2[i] != best_line)
                continue;
            if (!open) {
                run.sum = 0;
                run.first = i;
                open = 1;
            }
            run.last = i;
            run.sum += net[i];
        }
    }
    result = Py_BuildValue("LLLn", best_line, best_gain, best_cost, written);
done:
    PyMem_Free(gain);
    PyMem_Free(runs);
    PyMem_Free(cheap);
    PyBuffer_Release(&nv);
    PyBuffer_Release(&uv);
    PyBuffer_Release(&u2v);
    PyBuffer_Release(&ov);
    return result;
}

static PyObject *py_nets(PyObject *self, PyObject *args) {
    Py_buffer sv, iv, cv, ov;
    Py_ssize_t rows, len, pairs, ncol, i, j;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &sv, &iv, &cv, &ov))
        return NULL;
    if (get_int64(&iv, &rows) || get_int64(&cv, &ncol) || get_int64(&ov, &len))
        goto done;
    pairs = ncol / 2;
    if (ncol % 2 || pairs < 1 || len == 0 || rows != 2 * pairs * len) {
        PyErr_SetString(PyExc_ValueError, "nets: idx must hold 2 rows per colour pair, "
                                          "each as long as out");
        goto done;
    }
    {
        const uint8_t *state = sv.buf;
        const long long *idx = iv.buf, *col = cv.buf;
        long long *out = ov.buf;
        for (i = 0; i < rows; i++)
            if (idx[i] < 0 || idx[i] >= sv.len) {
                PyErr_SetString(PyExc_ValueError, "nets: a sticker index outside the state");
                goto done;
            }
        for (i = 0; i < len; i++)
            out[i] = 0;
        for (j = 0; j < pairs; j++) {
            const long long *src = idx + 2 * j * len, *cell = src + len;
            long long c_in = col[2 * j], c_out = col[2 * j + 1];
            for (i = 0; i < len; i++) {
                long long a = state[src[i]], b = state[cell[i]];
                out[i] += (a == c_in) - (b == c_in);
                if (c_out >= 0)
                    out[i] += (b == c_out) - (a == c_out);
            }
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&sv);
    PyBuffer_Release(&iv);
    PyBuffer_Release(&cv);
    PyBuffer_Release(&ov);
    return result;
}

static int get_sized(Py_buffer *view, Py_ssize_t size, Py_ssize_t *count, const char *what) {
    if (view->itemsize != size || view->len % size) {
        PyErr_Format(PyExc_ValueError, "plan_lines: %s must hold int%d values", what,
                     (int)(8 * size));
        return -1;
    }
    *count = view->len / size;
    return 0;
}

/* One setup of one group: the cells' nets (base: the cells' part, per cell; then the sources'
 * part), their runs per line (flags: bit 0 the cell follows the one before in its line, bit 1
 * it starts a new line, bit 2 its layer is 2 or N-1), added into gain, runs, cheap and pos (per line). Returns the total of
 * the positive nets. Everything the loop carries stays in registers. */
static inline long long scan_setup(const uint8_t *restrict state, const int32_t *restrict src,
                                   Py_ssize_t len, const int pairs, const long long *col,
                                   const int32_t *restrict base,
                                   const uint8_t *restrict flags, const int32_t *restrict u2,
                                   Py_ssize_t lo, Py_ssize_t hi, long long *restrict gain, long long *restrict runs,
                                   long long *restrict cheap, long long *restrict pos) {
    const long long in0 = col[0], out0 = col[1];
    const long long in1 = pairs > 1 ? col[2] : -1, out1 = pairs > 1 ? col[3] : -1;
    long long line = u2[lo], sum = 0, run_cheap = 0, total = 0;
    long long lgain = 0, lruns = 0, lcheap = 0, lpos = 0;
    long long open = 0;
    Py_ssize_t i, j;
    for (i = lo; i < hi; i++) {
        const int f = flags[i - lo];
        long long v = base[i - lo], keep, pv, nonneg, ext;
        long long a = state[src[i]];
        v += (a == in0) - (a == out0);
        if (pairs > 1) {
            a = state[src[len + i]];
            v += (a == in1) - (a == out1);
            for (j = 2; j < pairs; j++) {
                a = state[src[j * len + i]];
                v += (a == col[2 * j]) - (a == col[2 * j + 1]);
            }
        }
        if (f & 2) { /* a new line: the last one's totals (its open run ends) */
            keep = open & (sum > 0);
            gain[line] += lgain + keep * sum;
            runs[line] += lruns + keep;
            cheap[line] += lcheap + keep * run_cheap;
            pos[line] += lpos;
            lgain = lruns = lcheap = lpos = 0;
            open = 0;
            line = u2[i];
        }
        /* branch-free: the signs of the nets are data, not a pattern to predict */
        nonneg = v >= 0;
        ext = (f & 1) & open & nonneg;
        keep = (open & !ext) & (sum > 0); /* the run before ends, gaining */
        lgain += keep * sum;
        lruns += keep;
        lcheap += keep * run_cheap;
        sum = nonneg * (ext * sum + v);
        run_cheap = nonneg * (ext * run_cheap + ((f >> 2) & 1));
        open = nonneg;
        pv = v > 0 ? v : 0;
        total += pv;
        lpos += pv;
    }
    if (lo < hi) {
        long long keep = open & (sum > 0);
        gain[line] += lgain + keep * sum;
        runs[line] += lruns + keep;
        cheap[line] += lcheap + keep * run_cheap;
        pos[line] += lpos;
    }
    return total;
}

/* What plan_lines reports when its input is wrong (found while the GIL is released). */
enum { PLAN_OK, PLAN_GROUPS_ENDS, PLAN_OUTSIDE, PLAN_GROUPS_DECREASE, PLAN_UNSORTED, PLAN_BIAS };

/* plan_lines' work on plain buffers: no Python object is touched, so it runs with the GIL
 * released (the caller holds the buffers and allocated the scratch arrays). */
static int plan_all(const uint8_t *state, Py_ssize_t slen, const int32_t *cells,
                    Py_ssize_t ncells, const int32_t *src, Py_ssize_t nsrc,
                    const long long *col, Py_ssize_t pairs, const int32_t *u,
                    const int32_t *u2, Py_ssize_t len, const long long *grp, Py_ssize_t ng1,
                    const long long *fixed, Py_ssize_t setups, const long long *bias, int n,
                    long long *out, long long *gain, long long *runs, long long *cheap,
                    long long *pos, long long *totals, int32_t *base, uint8_t *flags) {
    const Py_ssize_t ngroups = ng1 - 1;
    Py_ssize_t g, i, j, k, s;
    int32_t least = 0, most = 0;
    if (grp[0] != 0 || grp[ngroups] != len)
        return PLAN_GROUPS_ENDS;
    /* every index inside the state, checked once (a vectorisable pass) */
    for (i = 0; i < ncells; i++) {
        least = cells[i] < least ? cells[i] : least;
        most = cells[i] > most ? cells[i] : most;
    }
    for (i = 0; i < nsrc; i++) {
        least = src[i] < least ? src[i] : least;
        most = src[i] > most ? src[i] : most;
    }
    if (least < 0 || most >= slen)
        return PLAN_OUTSIDE;
    for (g = 0; g < ngroups; g++) {
        Py_ssize_t lo = grp[g], hi = grp[g + 1];
        if (hi < lo || hi > len)
            return PLAN_GROUPS_DECREASE;
        for (k = 0; k < setups * (n + 1); k++)
            gain[k] = runs[k] = cheap[k] = pos[k] = 0;
        for (i = lo; i < hi; i++) {
            const long long ui = u[i], u2i = u2[i];
            long long cell_part = 0;
            if (ui < 2 || ui > n - 1 || u2i < 2 || u2i > n - 1 ||
                (i > lo && (u2i < u2[i - 1] || (u2i == u2[i - 1] && ui <= u[i - 1]))))
                return PLAN_UNSORTED;
            for (j = 0; j < pairs; j++) {
                const long long c = state[cells[j * len + i]];
                cell_part += (c == col[2 * j + 1]) - (c == col[2 * j]); /* c_out -1: never */
            }
            cell_part += bias ? bias[i] : 0;
            if (cell_part < -(1LL << 30) || cell_part > (1LL << 30))
                return PLAN_BIAS;
            base[i - lo] = (int32_t)cell_part;
            flags[i - lo] = (uint8_t)((i > lo && u2i == u2[i - 1] && ui == u[i - 1] + 1) |
                                      (i > lo && u2i != u2[i - 1]) << 1 |
                                      (ui == 2 || ui == n - 1) << 2);
        }
        for (s = 0; s < setups; s++) {
            const int32_t *ssrc = src + s * pairs * len;
            long long *sg = gain + s * (n + 1), *sr = runs + s * (n + 1);
            long long *sc = cheap + s * (n + 1), *sp = pos + s * (n + 1);
            if (pairs == 1)
                totals[s] = scan_setup(state, ssrc, len, 1, col, base, flags, u2, lo, hi,
                                       sg, sr, sc, sp);
            else if (pairs == 2)
                totals[s] = scan_setup(state, ssrc, len, 2, col, base, flags, u2, lo, hi,
                                       sg, sr, sc, sp);
            else if (pairs == 4) /* the mixed slice commutators: two 3-cycles a cell */
                totals[s] = scan_setup(state, ssrc, len, 4, col, base, flags, u2, lo, hi,
                                       sg, sr, sc, sp);
            else
                totals[s] = scan_setup(state, ssrc, len, (int)pairs, col, base, flags, u2,
                                       lo, hi, sg, sr, sc, sp);
        }
        for (s = 0; s < setups; s++) {
            long long best_pos = 0, best_line = 0, best_gain = 0, best_cost = 0;
            const long long *sg = gain + s * (n + 1), *sr = runs + s * (n + 1);
            const long long *sc = cheap + s * (n + 1), *sp = pos + s * (n + 1);
            long long *o = out + 5 * (s * ngroups + g);
            choose_line(n, fixed[s], sg, sr, sc, &best_line, &best_gain, &best_cost);
            for (k = 0; k <= n; k++)
                if (sp[k] > best_pos)
                    best_pos = sp[k];
            o[0] = best_line;
            o[1] = best_gain;
            o[2] = best_cost;
            o[3] = totals[s];
            o[4] = best_pos;
        }
    }
    return PLAN_OK;
}

/* One plan_lines call: its buffers (held while it runs), sizes and scratch arrays. */
typedef struct {
    Py_buffer view[9]; /* cells, src, colours, u, u2, groups, fixed, bias, out */
    int held, n, err;
    Py_ssize_t ncells, nsrc, pairs, len, ng1, setups, nbias;
    long long *gain, *runs, *cheap, *pos, *totals;
    int32_t *base;
    uint8_t *flags;
} PlanJob;

static void job_close(PlanJob *job) {
    int i;
    PyMem_RawFree(job->gain);
    PyMem_RawFree(job->runs);
    PyMem_RawFree(job->cheap);
    PyMem_RawFree(job->pos);
    PyMem_RawFree(job->totals);
    PyMem_RawFree(job->base);
    PyMem_RawFree(job->flags);
    for (i = 0; i < job->held; i++)
        PyBuffer_Release(&job->view[i]);
    memset(job, 0, sizeof(*job));
}

/* Parses (cells, src, colours, u, u2, groups, fixed, bias, n, out), checks the sizes and
   allocates the scratch arrays; -1 with an exception set (and nothing held) on failure. */
static int job_open(PlanJob *job, PyObject *args) {
    Py_buffer *v = job->view;
    Py_ssize_t ncol, lu, lu2, nfx, nout;
    memset(job, 0, sizeof(*job));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*iw*", &v[0], &v[1], &v[2], &v[3], &v[4],
                          &v[5], &v[6], &v[7], &job->n, &v[8]))
        return -1;
    job->held = 9;
    if (get_sized(&v[0], 4, &job->ncells, "cells") || get_sized(&v[1], 4, &job->nsrc, "src") ||
        get_sized(&v[2], 8, &ncol, "colours") || get_sized(&v[3], 4, &lu, "u") ||
        get_sized(&v[4], 4, &lu2, "u2") || get_sized(&v[5], 8, &job->ng1, "groups") ||
        get_sized(&v[6], 8, &nfx, "fixed") || get_sized(&v[7], 8, &job->nbias, "bias") ||
        get_sized(&v[8], 8, &nout, "out"))
        goto fail;
    job->pairs = ncol / 2;
    job->len = lu;
    job->setups = nfx;
    if (ncol % 2 || job->pairs < 1 || nfx < 1 || job->ng1 < 1 ||
        job->ncells != job->pairs * lu || job->nsrc != nfx * job->pairs * lu || lu2 != lu ||
        nout != 5 * nfx * (job->ng1 - 1) || (job->nbias != 0 && job->nbias != lu) ||
        job->n < 4) {
        PyErr_SetString(PyExc_ValueError,
                        "plan_lines: cells must hold P rows and src S x P rows of u's length, "
                        "u2 (and bias) that length, out 5 per setup and group");
        goto fail;
    }
    {
        size_t width = (size_t)nfx * ((size_t)job->n + 1);
        job->gain = PyMem_RawMalloc(width * sizeof(long long));
        job->runs = PyMem_RawMalloc(width * sizeof(long long));
        job->cheap = PyMem_RawMalloc(width * sizeof(long long));
        job->pos = PyMem_RawMalloc(width * sizeof(long long));
        job->totals = PyMem_RawMalloc((size_t)nfx * sizeof(long long));
        job->base = PyMem_RawMalloc(((size_t)lu + 1) * sizeof(int32_t));
        job->flags = PyMem_RawMalloc((size_t)lu + 1);
        if (!job->gain || !job->runs || !job->cheap || !job->pos || !job->totals ||
            !job->base || !job->flags) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    return 0;
fail:
    job_close(job);
    return -1;
}

/* Runs one job on the state (no Python object touched: called with the GIL released). */
static void job_run(PlanJob *job, const Py_buffer *state) {
    const Py_buffer *v = job->view;
    job->err = plan_all(state->buf, state->len, v[0].buf, job->ncells, v[1].buf, job->nsrc,
                        v[2].buf, job->pairs, v[3].buf, v[4].buf, job->len, v[5].buf, job->ng1,
                        v[6].buf, job->setups, job->nbias ? v[7].buf : NULL, job->n, v[8].buf,
                        job->gain, job->runs, job->cheap, job->pos, job->totals, job->base,
                        job->flags);
}

static int job_error(const PlanJob *job) {
    static const char *why[] = {
        "",
        "plan_lines: groups must run from 0 to L",
        "plan_lines: a sticker index outside the state",
        "plan_lines: groups must not decrease",
        "plan_lines: a group's cells must be sorted by line, then layer, with layers and "
        "lines in 2..N-1",
        "plan_lines: a bias out of range",
    };
    if (!job->err)
        return 0;
    PyErr_SetString(PyExc_ValueError, why[job->err]);
    return -1;
}

static PyObject *py_plan_lines(PyObject *self, PyObject *args) {
    Py_buffer sv;
    PlanJob job;
    PyObject *rest;
    int failed;
    (void)self;
    if (PyTuple_GET_SIZE(args) < 1) {
        PyErr_SetString(PyExc_TypeError, "plan_lines: 11 arguments, the state first");
        return NULL;
    }
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(args, 0), &sv, PyBUF_SIMPLE))
        return NULL;
    rest = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
    failed = !rest || job_open(&job, rest);
    Py_XDECREF(rest);
    if (failed) {
        PyBuffer_Release(&sv);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    job_run(&job, &sv);
    Py_END_ALLOW_THREADS
    failed = job_error(&job);
    job_close(&job);
    PyBuffer_Release(&sv);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

/* plan_start's background batch: helper threads take the jobs in order; the calling
   thread waits for one job at a time (plan_wait), running it itself when none has taken it. */
typedef struct {
    PlanJob *jobs;
    int *status; /* per job: 0 not taken, 1 being run, 2 done (written under lock) */
    Py_ssize_t count, cursor;
    Py_buffer state;
    pthread_mutex_t lock;
    pthread_cond_t done;
    pthread_t helpers[MAX_THREADS];
    int started, finished;
} Pending;

#define PENDING_NAME "cuberobot.nxn._lines.pending"

static int pending_claim(Pending *p, Py_ssize_t i) {
    int expected = 0;
    return __atomic_compare_exchange_n(&p->status[i], &expected, 1, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* Runs claimed job i and marks it done (no Python object touched). */
static void pending_run(Pending *p, Py_ssize_t i) {
    job_run(&p->jobs[i], &p->state);
    pthread_mutex_lock(&p->lock);
    __atomic_store_n(&p->status[i], 2, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->lock);
}

static void *pending_worker(void *arg) {
    Pending *p = arg;
    for (;;) {
        Py_ssize_t i = __atomic_fetch_add(&p->cursor, 1, __ATOMIC_RELAXED);
        if (i >= p->count)
            break;
        if (pending_claim(p, i))
            pending_run(p, i);
    }
    return NULL;
}

/* Job i done: run it here if not taken, else take the next jobs no thread has taken while
   the thread running it works, then wait for it (no GIL needed). */
static void pending_settle(Pending *p, Py_ssize_t i) {
    if (__atomic_load_n(&p->status[i], __ATOMIC_ACQUIRE) == 2)
        return;
    if (pending_claim(p, i)) {
        pending_run(p, i);
        return;
    }
    while (__atomic_load_n(&p->status[i], __ATOMIC_ACQUIRE) != 2) {
        Py_ssize_t j = __atomic_fetch_add(&p->cursor, 1, __ATOMIC_RELAXED);
        if (j >= p->count)
            break;
        if (pending_claim(p, j))
            pending_run(p, j);
    }
    pthread_mutex_lock(&p->lock);
    while (__atomic_load_n(&p->status[i], __ATOMIC_ACQUIRE) != 2)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

/* Every job done, the helpers joined (called without the GIL, or from the destructor). */
static void pending_drain(Pending *p) {
    Py_ssize_t i;
    int t;
    for (i = 0; i < p->count; i++)
        pending_settle(p, i);
    for (t = 0; t < p->started; t++)
        pthread_join(p->helpers[t], NULL);
    p->started = 0;
}

static void pending_free(Pending *p) {
    Py_ssize_t i;
    if (!p->finished)
        pending_drain(p);
    for (i = 0; i < p->count; i++)
        job_close(&p->jobs[i]);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    PyBuffer_Release(&p->state);
    PyMem_Free(p->status);
    PyMem_Free(p->jobs);
    PyMem_Free(p);
}

static void pending_capsule_free(PyObject *capsule) {
    Pending *p = PyCapsule_GetPointer(capsule, PENDING_NAME);
    if (p)
        pending_free(p);
    else
        PyErr_Clear();
}

static PyObject *py_plan_start(PyObject *self, PyObject *args) {
    PyObject *state, *seq, *fast = NULL, *capsule = NULL;
    int threads, t;
    Py_ssize_t count, opened = 0, i;
    Pending *p = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOi", &state, &seq, &threads))
        return NULL;
    if (threads < 1 || threads > MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "plan_start: threads must be 1..%d, not %d", MAX_THREADS,
                     threads);
        return NULL;
    }
    fast = PySequence_Fast(seq, "plan_start: jobs must be a sequence of argument tuples");
    if (!fast)
        return NULL;
    count = PySequence_Fast_GET_SIZE(fast);
    p = PyMem_Calloc(1, sizeof(Pending));
    if (!p) {
        Py_DECREF(fast);
        return PyErr_NoMemory();
    }
    if (PyObject_GetBuffer(state, &p->state, PyBUF_SIMPLE)) {
        PyMem_Free(p);
        Py_DECREF(fast);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->done, NULL);
    p->jobs = PyMem_Calloc((size_t)count + 1, sizeof(PlanJob));
    p->status = PyMem_Calloc((size_t)count + 1, sizeof(int));
    if (!p->jobs || !p->status) {
        PyErr_NoMemory();
        goto fail;
    }
    for (opened = 0; opened < count; opened++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, opened);
        if (!PyTuple_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "plan_start: each job is a tuple of arguments");
            goto fail;
        }
        if (job_open(&p->jobs[opened], item))
            goto fail;
    }
    p->count = count;
    capsule = PyCapsule_New(p, PENDING_NAME, pending_capsule_free);
    if (!capsule)
        goto fail;
    for (t = 1; t < threads && t < count; t++) {
        if (pthread_create(&p->helpers[p->started], NULL, pending_worker, p))
            break; /* fewer helpers: plan_wait runs the rest on the calling thread */
        p->started++;
    }
    Py_DECREF(fast);
    return capsule;
fail:
    p->count = opened; /* the jobs opened so far: none started, nothing to wait for */
    for (i = 0; i < opened; i++)
        p->status[i] = 2;
    pending_free(p);
    Py_DECREF(fast);
    return NULL;
}

static Pending *pending_of(PyObject *capsule) {
    Pending *p = PyCapsule_GetPointer(capsule, PENDING_NAME);
    if (p && p->finished) {
        PyErr_SetString(PyExc_ValueError, "plan_wait: the batch was finished");
        return NULL;
    }
    return p;
}

static PyObject *py_plan_wait(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_ssize_t i;
    Pending *p;
    (void)self;
    if (!PyArg_ParseTuple(args, "On", &capsule, &i) || !(p = pending_of(capsule)))
        return NULL;
    if (i < 0 || i >= p->count) {
        PyErr_Format(PyExc_IndexError, "plan_wait: no job %zd of %zd", i, p->count);
        return NULL;
    }
    if (__atomic_load_n(&p->status[i], __ATOMIC_ACQUIRE) != 2) {
        Py_BEGIN_ALLOW_THREADS
        pending_settle(p, i);
        Py_END_ALLOW_THREADS
    }
    if (job_error(&p->jobs[i]))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_plan_finish(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_ssize_t i;
    Pending *p;
    (void)self;
    if (!PyArg_ParseTuple(args, "O", &capsule) || !(p = pending_of(capsule)))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    pending_drain(p);
    Py_END_ALLOW_THREADS
    p->finished = 1;
    for (i = 0; i < p->count; i++)
        if (job_error(&p->jobs[i]))
            return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_rank_lines(PyObject *self, PyObject *args) {
    Py_buffer ov, fv;
    long long extra;
    double floor_;
    Py_ssize_t nout, nfx, blocks, groups, i, j;
    Py_ssize_t *order = NULL;
    double *bound = NULL;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*Ld", &ov, &fv, &extra, &floor_))
        return NULL;
    if (get_sized(&ov, 8, &nout, "out") || get_sized(&fv, 8, &nfx, "fixed"))
        goto done;
    blocks = nout / 5;
    if (nout % 5 || nfx < 1 || blocks % nfx) {
        PyErr_SetString(PyExc_ValueError, "rank_lines: out must hold 5 per block, S x G blocks");
        goto done;
    }
    groups = blocks / nfx;
    order = PyMem_Malloc(((size_t)blocks + 1) * sizeof(Py_ssize_t));
    bound = PyMem_Malloc(((size_t)blocks + 1) * sizeof(double));
    result = PyList_New(0);
    if (!order || !bound || !result) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        Py_CLEAR(result);
        goto done;
    }
    {
        const long long *out = ov.buf, *fixed = fv.buf;
        for (i = 0; i < blocks; i++) {
            long long least = fixed[i / groups] + extra;
            if (least <= 0) {
                PyErr_SetString(PyExc_ValueError, "rank_lines: a block's least cost <= 0");
                Py_CLEAR(result);
                goto done;
            }
            /* numpy's -out[:, 3] / least, sorted stably: highest bound first, ties by block */
            bound[i] = (double)(-out[5 * i + 3]) / (double)least;
            for (j = i; j > 0 && bound[order[j - 1]] > bound[i]; j--)
                order[j] = order[j - 1];
            order[j] = i;
        }
        for (i = 0; i < blocks; i++) {
            Py_ssize_t k = order[i];
            const long long *row = out + 5 * k;
            double least = (double)(fixed[k / groups] + extra);
            if ((double)row[3] <= floor_ * least)
                break;
            if (row[1] > 0) {
                double ratio = (double)row[1] / (double)row[2];
                PyObject *item = PyLong_FromSsize_t(k);
                if (!item || PyList_Append(result, item)) {
                    Py_XDECREF(item);
                    Py_CLEAR(result);
                    goto done;
                }
                Py_DECREF(item);
                if (ratio > floor_)
                    floor_ = ratio;
            }
        }
    }
done:
    PyMem_Free(order);
    PyMem_Free(bound);
    PyBuffer_Release(&ov);
    PyBuffer_Release(&fv);
    return result;
}

static PyObject *py_max_runs(PyObject *self, PyObject *args) {
    Py_buffer vv, av, tv;
    double lam, o = 0.0, a = -INFINITY, b = -INFINITY;
    int n, r, state;
    Py_ssize_t nv, nt, count = 0;
    uint8_t *from_o = NULL, *b_new = NULL;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*diw*", &vv, &av, &lam, &n, &tv))
        return NULL;
    if (get_int64(&vv, &nv) || get_int64(&tv, &nt))
        goto done;
    if (n < 3 || nv < n || av.itemsize != 1 || av.len < n || nt < n) {
        PyErr_SetString(PyExc_ValueError, "max_runs: values and allowed need N entries, "
                                          "taken_out N");
        goto done;
    }
    from_o = PyMem_Malloc((size_t)n);
    b_new = PyMem_Malloc((size_t)n);
    if (!from_o || !b_new) {
        PyErr_NoMemory();
        goto done;
    }
    {
        const long long *vals = vv.buf;
        const uint8_t *ok = av.buf;
        long long *taken = tv.buf;
        /* best score at each layer: not taken (o), in a run that started at layer 2 (a), in
           another run (b); back pointers: the state before (o) and whether (b) started here
           (the same operations, in the same order, as rectangles.py's reference) */
        for (r = 2; r < n; r++) {
            const int k = (o >= a && o >= b) ? 0 : (a >= b) ? 1 : 2;
            const double prev = k == 0 ? o : k == 1 ? a : b;
            double v, start;
            int fresh;
            from_o[r - 2] = (uint8_t)k;
            if (!ok[r]) {
                o = prev;
                a = b = -INFINITY;
                b_new[r - 2] = 0;
                continue;
            }
            v = (double)vals[r];
            start = r > 2 ? o - 4 * lam : -INFINITY;
            fresh = start > b;
            a = r == 2 ? v - 2 * lam : a + v;
            b = (fresh ? start : b) + v;
            o = prev;
            b_new[r - 2] = (uint8_t)fresh;
        }
        b += 2 * lam; /* a run ending at N-1 is a wide move */
        state = (o >= a && o >= b) ? 0 : (a >= b) ? 1 : 2;
        for (r = n - 1; r > 1; r--) {
            if (state == 0) {
                state = from_o[r - 2];
                continue;
            }
            taken[count++] = r;
            if (state == 2 && b_new[r - 2])
                state = 0;
        }
    }
    result = PyLong_FromSsize_t(count);
done:
    PyMem_Free(from_o);
    PyMem_Free(b_new);
    PyBuffer_Release(&vv);
    PyBuffer_Release(&av);
    PyBuffer_Release(&tv);
    return result;
}

static PyMethodDef methods[] = {
    {"plan_lines", py_plan_lines, METH_VARARGS,
     "nets and best_line of many configurations at once (see the module source)."},
    {"max_runs", py_max_runs, METH_VARARGS,
     "The runs of layers of most value less lam x their cost (see rectangles.py)."},
    {"plan_start", py_plan_start, METH_VARARGS,
     "Several plan_lines calls started on helper threads; returns at once (see the module source)."},
    {"plan_wait", py_plan_wait, METH_VARARGS,
     "Wait for one job of a started batch (see the module source)."},
    {"plan_finish", py_plan_finish, METH_VARARGS,
     "Finish a started batch: every job done, the helpers joined (see the module source)."},
    {"rank_lines", py_rank_lines, METH_VARARGS,
     "The blocks whose best line beats a floor, best bound first (see the module source)."},
    {"nets", py_nets, METH_VARARGS,
     "What cycling each cell gains, for many configurations (see the module source)."},
    {"best_line", py_best_line, METH_VARARGS,
     "The best line of one commutator configuration (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_lines", "Block-commutator line planner kernel (C).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__lines(void) { return PyModule_Create(&module); }
