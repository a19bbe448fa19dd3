/*
 * The hot loop of the 6x6/7x7 bar beam (solver/engines/nxn/bars.py, _macro_scores): the
 * cells paired after each macro of one group, scored on the bars the macro mixes only.
 *
 * scores(colours, cells, split, own, lut, width, length, now, out) -> None
 *   colours: uint8, the colour (0..5) of every bar cell (24 x length); cells: uint8, m rows
 *   of width x length bar-cell indices (the cells each of the macro's `width` mixed bars
 *   gets, in order along the bar); split: uint8, m rows of `width` bar indices (the bars the
 *   macro splits); own: int64, 24 entries, the cells paired of each bar now; lut: uint8,
 *   6^length entries, the cells paired of a bar by its colour code (first cell most
 *   significant); out: writable int64 of m entries. out[r] = now + the sum over the row's
 *   mixed bars of lut[code] - the sum over its split bars of own[bar]. A ValueError when the
 *   sizes disagree or an index is outside its array (checked before anything is written).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *py_scores(PyObject *self, PyObject *args) {
    Py_buffer cv, cev, sv, ov, lv, outv;
    int width, length;
    long long now;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iiLw*", &cv, &cev, &sv, &ov, &lv, &width, &length,
                          &now, &outv))
        return NULL;
    {
        Py_ssize_t rows = outv.len / 8, i, lut_size = 1, k;
        const uint8_t *colours = cv.buf, *lut = lv.buf;
        const uint8_t *cells = cev.buf, *split = sv.buf;
        const long long *own = ov.buf;
        long long *out = outv.buf;
        for (k = 0; k < length && k < 6; k++)
            lut_size *= 6;
        if (width < 1 || length < 1 || length > 6 || outv.itemsize != 8 || outv.len % 8 ||
            cev.len != (Py_ssize_t)rows * width * length ||
            sv.len != (Py_ssize_t)rows * width || ov.len != 8 * 24 ||
            cv.len != (Py_ssize_t)24 * length || lv.len != lut_size) {
            PyErr_SetString(PyExc_ValueError, "scores: buffer sizes disagree");
            goto done;
        }
        for (i = 0; i < rows * width * length; i++)
            if (cells[i] >= cv.len) {
                PyErr_SetString(PyExc_ValueError, "scores: a cell outside the bars");
                goto done;
            }
        for (i = 0; i < rows * width; i++)
            if (split[i] >= 24) {
                PyErr_SetString(PyExc_ValueError, "scores: a bar index outside 0..23");
                goto done;
            }
        for (i = 0; i < cv.len; i++)
            if (colours[i] > 5) {
                PyErr_SetString(PyExc_ValueError, "scores: a colour outside 0..5");
                goto done;
            }
        for (i = 0; i < rows; i++) {
            const uint8_t *row = cells + i * width * length, *sp = split + i * width;
            long long total = now;
            int w, j;
            for (w = 0; w < width; w++) {
                long long code = 0;
                for (j = 0; j < length; j++)
                    code = code * 6 + colours[row[w * length + j]];
                total += lut[code] - own[sp[w]];
            }
            out[i] = total;
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&cv);
    PyBuffer_Release(&cev);
    PyBuffer_Release(&sv);
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
