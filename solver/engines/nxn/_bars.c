/*
 * The hot loop of the 6x6/7x7 bar beam (solver/engines/nxn/bars.py, _macro_scores): the
 * cells paired after each macro of one group, scored on the bars the macro mixes only.
 *
 * scores(colours, cells, split, sources, own, lut, width, length, now, unpaired, out) -> None
 *   colours: uint8, 256 entries: the colour (0..5) of every bar cell (24 x length) first, the
 *   rest padding (any colour 0..5), so that no uint8 cell index can read outside it; cells:
 *   uint8, m rows of width x length bar-cell indices (the cells each of the macro's `width`
 *   mixed bars gets, in order along the bar); split: uint8, m rows of `width` bar indices
 *   (the bars the macro splits); sources: uint32, m entries, the bit mask of the bars each
 *   row splits; own: int64, 256 entries, the cells paired of each bar now (bars 0..23, the
 *   rest padding); lut: uint8, 6^length entries, the cells paired of a bar by its colour
 *   code (first cell most significant); unpaired: the bit mask of the bars not one colour;
 *   out: writable int64 of m entries.
 *   out[r] = max(now, now + the sum over the row's mixed bars of lut[code] - the sum over its
 *   split bars of own[bar]); a row that splits only one-colour bars (sources & unpaired ==
 *   0) cannot pair more (each split bar had the most a bar can have) and gets `now` without
 *   being read. A ValueError when the sizes disagree or a colour is outside 0..5 (checked
 *   before anything is written); the padded buffers make every index in range by its type.
 *   The scoring loop runs without the GIL (it touches the buffers only).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *py_scores(PyObject *self, PyObject *args) {
    Py_buffer cv, cev, sv, bv, ov, lv, outv;
    int width, length;
    long long now, unpaired;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*iiLLw*", &cv, &cev, &sv, &bv, &ov, &lv, &width,
                          &length, &now, &unpaired, &outv))
        return NULL;
    {
        Py_ssize_t rows = outv.len / 8, i, lut_size = 1, k;
        const uint8_t *colours = cv.buf, *lut = lv.buf;
        const uint8_t *cells = cev.buf, *split = sv.buf;
        const uint32_t *sources = bv.buf;
        const long long *own = ov.buf;
        long long *out = outv.buf;
        const uint32_t mask = (uint32_t)(unpaired & 0xffffff);
        for (k = 0; k < length && k < 6; k++)
            lut_size *= 6;
        if (width < 1 || length < 1 || length > 6 || outv.itemsize != 8 || outv.len % 8 ||
            cev.len != (Py_ssize_t)rows * width * length ||
            sv.len != (Py_ssize_t)rows * width || bv.len != (Py_ssize_t)rows * 4 ||
            ov.len != 8 * 256 || cv.len != 256 || lv.len != lut_size) {
            PyErr_SetString(PyExc_ValueError, "scores: buffer sizes disagree");
            goto done;
        }
        for (i = 0; i < cv.len; i++)
            if (colours[i] > 5) {
                PyErr_SetString(PyExc_ValueError, "scores: a colour outside 0..5");
                goto done;
            }
        /* the loop reads and writes the buffers only: other threads may run (the 7x7's
           inner-ring solutions pair their bars side by side, ring.bar_centres) */
        Py_BEGIN_ALLOW_THREADS
        for (i = 0; i < rows; i++) {
            const uint8_t *row = cells + i * width * length, *sp = split + i * width;
            long long total = now;
            int w, j;
            if (!(sources[i] & mask)) {
                out[i] = now;
                continue;
            }
            for (w = 0; w < width; w++) {
                long long code = 0;
                for (j = 0; j < length; j++)
                    code = code * 6 + colours[row[w * length + j]];
                total += lut[code] - own[sp[w]];
            }
            out[i] = total > now ? total : now;
        }
        Py_END_ALLOW_THREADS
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&cv);
    PyBuffer_Release(&cev);
    PyBuffer_Release(&sv);
    PyBuffer_Release(&bv);
    PyBuffer_Release(&ov);
    PyBuffer_Release(&lv);
    PyBuffer_Release(&outv);
    return result;
}

static PyMethodDef methods[] = {
    {"scores", py_scores, METH_VARARGS,
     "Cells paired after each macro of one group (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bars", "Bar beam scoring kernel (C).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__bars(void) { return PyModule_Create(&module); }
