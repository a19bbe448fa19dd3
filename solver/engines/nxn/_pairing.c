/*
 * The hot loop of the edge-pairing beam (solver/engines/nxn/pairing.py, _gains): the wings
 * each freeslice macro pairs (or unpairs: negative), scored on the edges it mixes only.
 *
 * gains(codes, after, split, edges, counted, refs, width, length, out) -> None
 *   codes: uint8, the wing code (6 * colour + partner's colour) of every sticker of the cube;
 *   after: int32, m rows of width x length sticker indices (the stickers each of the macro's
 *   `width` mixed edges gets on its first side, in order along the edge); split: uint8, m rows
 *   of `width` edge indices (0..11, the edges the macro splits); edges: int32, 12 x length,
 *   the first-side stickers of the twelve edges; counted: uint8, `length` flags (1: the
 *   position is counted); refs: uint8, 1 or 2 reference positions (the middle edge of odd N,
 *   the two innermost wings of even N); out: writable int64 of m entries.
 *   An edge's score is, for the reference that gives most, the counted positions whose code
 *   equals the reference's; out[r] = the sum over the row's mixed edges of their score minus
 *   the sum over its split edges of their score now. A ValueError when the sizes disagree or
 *   an index is outside its array (checked before anything is written).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

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

static PyObject *py_gains(PyObject *self, PyObject *args) {
    Py_buffer cv, av, sv, ev, kv, rv, outv;
    int width, length;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*iiw*", &cv, &av, &sv, &ev, &kv, &rv, &width,
                          &length, &outv))
        return NULL;
    {
        Py_ssize_t rows = outv.len / 8, i;
        const uint8_t *codes = cv.buf, *split = sv.buf, *counted = kv.buf, *refs = rv.buf;
        const int32_t *after = av.buf, *edges = ev.buf;
        long long *out = outv.buf;
        long long own[12];
        if (width < 1 || length < 1 || outv.itemsize != 8 || outv.len % 8 ||
            av.len != (Py_ssize_t)4 * rows * width * length ||
            sv.len != (Py_ssize_t)rows * width || ev.len != (Py_ssize_t)4 * 12 * length ||
            kv.len != length || rv.len < 1 || rv.len > 2) {
            PyErr_SetString(PyExc_ValueError, "gains: buffer sizes disagree");
            goto done;
        }
        {
            /* one pass for the bounds: the largest and smallest sticker of the rows */
            int32_t lo = 0, hi = 0;
            for (i = 0; i < rows * width * length; i++) {
                lo = after[i] < lo ? after[i] : lo;
                hi = after[i] > hi ? after[i] : hi;
            }
            if (lo < 0 || hi >= cv.len) {
                PyErr_SetString(PyExc_ValueError, "gains: a sticker outside the cube");
                goto done;
            }
        }
        for (i = 0; i < 12 * length; i++)
            if (edges[i] < 0 || edges[i] >= cv.len) {
                PyErr_SetString(PyExc_ValueError, "gains: an edge sticker outside the cube");
                goto done;
            }
        for (i = 0; i < rows * width; i++)
            if (split[i] >= 12) {
                PyErr_SetString(PyExc_ValueError, "gains: an edge index outside 0..11");
                goto done;
            }
        for (i = 0; i < rv.len; i++)
            if (refs[i] >= length) {
                PyErr_SetString(PyExc_ValueError, "gains: a reference outside the edge");
                goto done;
            }
        for (i = 0; i < 12; i++)
            own[i] = score(codes, edges + i * length, counted, refs, rv.len, length);
        for (i = 0; i < rows; i++) {
            const int32_t *row = after + i * width * length;
            const uint8_t *sp = split + i * width;
            long long total = 0;
            int w;
            for (w = 0; w < width; w++)
                total += score(codes, row + w * length, counted, refs, rv.len, length) - own[sp[w]];
            out[i] = total;
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&cv);
    PyBuffer_Release(&av);
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
