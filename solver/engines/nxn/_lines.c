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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

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

static PyObject *py_best_line(PyObject *self, PyObject *args) {
    Py_buffer nv, uv, u2v, ov;
    int n, fixed;
    Py_ssize_t m, mu, mu2, mo, i, k, written = 0;
    long long *gain = NULL, *runs = NULL, *cheap = NULL;
    long long best_line = 0, best_gain = 0, best_cost = 0;
    double best_ratio = 0.0;
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
        for (k = 0; k <= n; k++) {
            long long m2 = (k == 2 || k == n - 1) ? 1 : 2;
            long long cost = fixed + 2 * (2 * runs[k] - cheap[k]) + 2 * m2;
            double ratio = gain[k] > 0 ? (double)gain[k] / (double)cost : -1.0;
            if (k == 0 || ratio > best_ratio) {
                best_ratio = ratio;
                best_line = k;
                best_gain = gain[k];
                best_cost = cost;
            }
        }
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

static PyMethodDef methods[] = {
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
