/*
 * The hot loop of the edge-pairing beam (solver/engines/nxn/pairing.py, _gains): the wings
 * each freeslice macro pairs (or unpairs: negative), scored on the edges it mixes only.
 *
 * gains(codes, rows, index, split, edges, counted, refs, width, length, out) -> None
 *   codes: uint8, the wing code (6 * colour + partner's colour) of every sticker of the cube;
 *   rows: int32, u rows of `length` sticker indices: the distinct edges the macros make (the
 *   stickers a mixed edge gets on its first side, in order along the edge; many macros make
 *   the same one, so each is scored once a call); index: int32, m rows of `width` row numbers
 *   (0..u-1: the edges each macro mixes, padded with an edge left as it is); split: uint8, m
 *   rows of `width` edge indices (0..11, the edges the macro splits, padded with the padding
 *   edge's own index); edges: int32, 12 x length, the first-side stickers of the twelve edges;
 *   counted: uint8, `length` flags (1: the position is counted); refs: uint8, 1 or 2
 *   reference positions (the middle edge of odd N, the two innermost wings of even N); out:
 *   writable int64 of m entries.
 *   An edge's score is, for the reference that gives most, the counted positions whose code
 *   equals the reference's; out[r] = the sum over the row's mixed edges of their score minus
 *   the sum over its split edges of their score now. A ValueError when the sizes disagree or
 *   an index is outside its array (checked before anything is written).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

static int score(const uint8_t *codes, const int32_t *cells, const uint8_t *counted,
                 const uint8_t *refs, Py_ssize_t nrefs, int length) {
    int best = 0, r, i;
    for (r = 0; r < nrefs; r++) {
        uint8_t ref = codes[cells[refs[r]]];
        int same = 0;
        for (i = 0; i < length; i++)
            same += counted[i] && codes[cells[i]] == ref;
        if (same > best)
            best = same;
    }
    return best;
}

/* the checks of every index, before anything is written: 0 when all hold (else the error
   is set) */
static int check(const Py_buffer *cv, const int32_t *rows, Py_ssize_t nrows_cells,
                 const int32_t *index, const uint8_t *split, Py_ssize_t entries, Py_ssize_t nu,
                 const int32_t *edges, int length, const uint8_t *refs, Py_ssize_t nrefs) {
    Py_ssize_t i;
    int32_t lo = 0, hi = 0;
    for (i = 0; i < nrows_cells; i++) {
        lo = rows[i] < lo ? rows[i] : lo;
        hi = rows[i] > hi ? rows[i] : hi;
    }
    if (lo < 0 || hi >= cv->len) {
        PyErr_SetString(PyExc_ValueError, "gains: a sticker outside the cube");
        return -1;
    }
    lo = hi = 0;
    for (i = 0; i < entries; i++) {
        lo = index[i] < lo ? index[i] : lo;
        hi = index[i] > hi ? index[i] : hi;
        if (split[i] >= 12) {
            PyErr_SetString(PyExc_ValueError, "gains: an edge index outside 0..11");
            return -1;
        }
    }
    if (lo < 0 || hi >= nu) {
        PyErr_SetString(PyExc_ValueError, "gains: a row number outside the rows");
        return -1;
    }
    for (i = 0; i < 12 * length; i++)
        if (edges[i] < 0 || edges[i] >= cv->len) {
            PyErr_SetString(PyExc_ValueError, "gains: an edge sticker outside the cube");
            return -1;
        }
    for (i = 0; i < nrefs; i++)
        if (refs[i] >= length) {
            PyErr_SetString(PyExc_ValueError, "gains: a reference outside the edge");
            return -1;
        }
    return 0;
}

static PyObject *py_gains(PyObject *self, PyObject *args) {
    Py_buffer cv, uv, iv, sv, ev, kv, rv, outv;
    int width, length;
    int *scores = NULL;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*iiw*", &cv, &uv, &iv, &sv, &ev, &kv, &rv, &width,
                          &length, &outv))
        return NULL;
    {
        Py_ssize_t m = outv.len / 8, nu, i;
        const uint8_t *codes = cv.buf, *split = sv.buf, *counted = kv.buf, *refs = rv.buf;
        const int32_t *rows = uv.buf, *index = iv.buf, *edges = ev.buf;
        long long *out = outv.buf;
        long long own[12];
        if (width < 1 || length < 1 || outv.itemsize != 8 || outv.len % 8 ||
            uv.len % ((Py_ssize_t)4 * length) || uv.len == 0 ||
            iv.len != (Py_ssize_t)4 * m * width || sv.len != (Py_ssize_t)m * width ||
            ev.len != (Py_ssize_t)4 * 12 * length || kv.len != length || rv.len < 1 ||
            rv.len > 2) {
            PyErr_SetString(PyExc_ValueError, "gains: buffer sizes disagree");
            goto done;
        }
        nu = uv.len / ((Py_ssize_t)4 * length);
        if (check(&cv, rows, nu * length, index, split, m * width, nu, edges, length, refs,
                  rv.len))
            goto done;
        scores = malloc((size_t)nu * sizeof(int));
        if (scores == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (i = 0; i < nu; i++)
            scores[i] = score(codes, rows + i * length, counted, refs, rv.len, length);
        for (i = 0; i < 12; i++)
            own[i] = score(codes, edges + i * length, counted, refs, rv.len, length);
        for (i = 0; i < m; i++) {
            const int32_t *ix = index + i * width;
            const uint8_t *sp = split + i * width;
            long long total = 0;
            int w;
            for (w = 0; w < width; w++)
                total += scores[ix[w]] - own[sp[w]];
            out[i] = total;
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    free(scores);
    PyBuffer_Release(&cv);
    PyBuffer_Release(&uv);
    PyBuffer_Release(&iv);
    PyBuffer_Release(&sv);
    PyBuffer_Release(&ev);
    PyBuffer_Release(&kv);
    PyBuffer_Release(&rv);
    PyBuffer_Release(&outv);
    return result;
}

static PyMethodDef methods[] = {
    {"gains", py_gains, METH_VARARGS,
     "Wings each edge macro pairs, on the edges it mixes (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pairing", "Edge-pairing beam scoring kernel (C).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pairing(void) { return PyModule_Create(&module); }
