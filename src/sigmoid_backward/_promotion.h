/*
 * The ufunc's promoter: which loop a call runs, from its operands' DTypes.
 *
 * NumPy calls it for every combination of input DTypes that has no loop of
 * its own (float32 with float64, int8 with a Python float, ...), once: the
 * answer is cached.  The rule is NumPy's promotion, with Python int, float
 * and complex weak (NEP 50), except that
 *
 * - bfloat16 promotes as float16 does: ml_dtypes' bfloat16 defines no
 *   promotion with Python scalars or with NumPy's types that NumPy could
 *   use here (np.result_type(bfloat16, 0.5) is float64), so float16 stands
 *   in for it, and a float16 result with a bfloat16 input is bfloat16;
 * - float16 with bfloat16 gives float32: neither holds the other;
 * - an integer or bool result computes in float64, as a sigmoid's gradient
 *   is never an integer;
 * - anything else (strings, objects, long double...) is a TypeError naming
 *   the argument.
 *
 * dtype= fixes the loop: all three DTypes become it, and NumPy then checks
 * that the inputs cast to it under the call's casting rule.
 * sigmoid_backward.reference's dtype rules (_dtypes.py) are this file's
 * slow twin, and the tests compare the two.
 */
#ifndef SIGMOID_BACKWARD_PROMOTION_H
#define SIGMOID_BACKWARD_PROMOTION_H

#include <Python.h>
#include <numpy/arrayobject.h>
#include <numpy/dtype_api.h>

/* ml_dtypes' bfloat16 DType, set at import (_ufunc.pyx). */
static PyArray_DTypeMeta *sb_bfloat16_dtype = NULL;

#define SB_SUPPORTED_NAMES \
    "float16, bfloat16, float32, float64, complex64 and complex128"

/* One of the six dtypes the kernels compute in? */
static int sb_is_compute_dtype(PyArray_DTypeMeta *dt)
{
    return dt == &PyArray_HalfDType || dt == &PyArray_FloatDType
        || dt == &PyArray_DoubleDType || dt == &PyArray_CFloatDType
        || dt == &PyArray_CDoubleDType || dt == sb_bfloat16_dtype;
}

/* An input DType the promotion accepts (bfloat16 already replaced by
 * float16): bool, integers, the compute dtypes, and Python scalars. */
static int sb_is_input_dtype(PyArray_DTypeMeta *dt)
{
    if (dt == &PyArray_PyLongDType || dt == &PyArray_PyFloatDType
            || dt == &PyArray_PyComplexDType)
        return 1;
    if (dt->flags & NPY_DT_ABSTRACT) return 0;
    return (dt->type_num >= NPY_BOOL && dt->type_num <= NPY_ULONGLONG)
        || sb_is_compute_dtype(dt);
}

static int sb_is_integer_result(PyArray_DTypeMeta *dt)
{
    return dt == &PyArray_PyLongDType
        || (!(dt->flags & NPY_DT_ABSTRACT)
            && dt->type_num >= NPY_BOOL && dt->type_num <= NPY_ULONGLONG);
}

static int sb_is_complex(PyArray_DTypeMeta *dt)
{
    return dt == &PyArray_PyComplexDType
        || (!(dt->flags & NPY_DT_ABSTRACT)
            && dt->type_num >= NPY_CFLOAT && dt->type_num <= NPY_CLONGDOUBLE);
}

static const char *sb_dtype_name(PyArray_DTypeMeta *dt)
{
    return ((PyTypeObject *)dt)->tp_name;
}

/* The compute DType of two input DTypes (new reference), or NULL with a
 * TypeError set. */
static PyArray_DTypeMeta *sb_promote(PyArray_DTypeMeta *g, PyArray_DTypeMeta *y)
{
    static const char *const names[2] = {"grad_output", "output"};
    PyArray_DTypeMeta *in[2] = {g, y};
    int bf16 = 0, f16 = 0;
    for (int i = 0; i < 2; i++) {
        if (in[i] == sb_bfloat16_dtype) {
            bf16 = 1;
            in[i] = &PyArray_HalfDType;
        }
        else if (in[i] == &PyArray_HalfDType) {
            f16 = 1;
        }
        if (!sb_is_input_dtype(in[i])) {
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: %s has dtype %s, which is not supported; "
                "supported are " SB_SUPPORTED_NAMES ", and bool or integer "
                "inputs (computed in float64)", names[i], sb_dtype_name(i ? y : g));
            return NULL;
        }
    }
    if (bf16 && f16) {
        Py_INCREF(&PyArray_FloatDType);
        return &PyArray_FloatDType;
    }
    PyArray_DTypeMeta *result = PyArray_PromoteDTypeSequence(2, in);
    if (result == NULL) return NULL;
    PyArray_DTypeMeta *chosen = result;
    if (sb_is_integer_result(result) || result == &PyArray_PyFloatDType)
        chosen = &PyArray_DoubleDType;   /* Python scalars only: their defaults */
    else if (result == &PyArray_PyComplexDType)
        chosen = &PyArray_CDoubleDType;
    else if (result == &PyArray_HalfDType && bf16)
        chosen = sb_bfloat16_dtype;
    Py_INCREF(chosen);
    Py_DECREF(result);
    if (!sb_is_compute_dtype(chosen)) {
        PyErr_Format(PyExc_TypeError,
            "sigmoid_backward: grad_output (%s) and output (%s) promote to %s, "
            "which is not supported; supported are " SB_SUPPORTED_NAMES,
            sb_dtype_name(g), sb_dtype_name(y), sb_dtype_name(chosen));
        Py_DECREF(chosen);
        return NULL;
    }
    return chosen;
}

/* NumPy forbids casting complex to a real dtype under 'same_kind', but
 * ml_dtypes lets complex cast to bfloat16 (dropping the imaginary part), so
 * NumPy would accept it for a bfloat16 dtype= or out=.  Refused here, under
 * every casting rule: a complex value never becomes a bfloat16 one.
 * op_dtypes: the inputs' DTypes (a dtype= call), or NULL; result: the
 * compute DType (an out= call), or NULL. */
static int sb_refuse_complex_into_bfloat16(PyArray_DTypeMeta *const op_dtypes[],
                                           PyArray_DTypeMeta *result, const char *what)
{
    static const char *const names[2] = {"grad_output", "output"};
    for (int i = 0; op_dtypes != NULL && i < 2; i++) {
        if (op_dtypes[i] != NULL && sb_is_complex(op_dtypes[i])) {
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: %s is complex (%s), and a complex value is never cast "
                "to %s's bfloat16; compute in complex and take .real first",
                names[i], sb_dtype_name(op_dtypes[i]), what);
            return -1;
        }
    }
    if (result != NULL && sb_is_complex(result)) {
        PyErr_Format(PyExc_TypeError,
            "sigmoid_backward: the result is complex (%s), and a complex value is never "
            "cast to %s's bfloat16; compute in complex and take .real first",
            sb_dtype_name(result), what);
        return -1;
    }
    return 0;
}

/* PyArrayMethod_PromoterFunction: the loop's DTypes for op_dtypes (op_dtypes[2]
 * is out's DType when out= is given).  The signature's DTypes (from dtype=
 * or signature=) are kept as they are. */
static int sb_promoter(PyObject *NPY_UNUSED(ufunc),
                       PyArray_DTypeMeta *const op_dtypes[],
                       PyArray_DTypeMeta *const signature[],
                       PyArray_DTypeMeta *new_op_dtypes[])
{
    PyArray_DTypeMeta *result;
    if (signature[2] != NULL) {
        if (!sb_is_compute_dtype(signature[2])) {
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: dtype=%S is not supported; choose one of "
                SB_SUPPORTED_NAMES, (PyObject *)signature[2]->singleton);
            return -1;
        }
        if (signature[2] == sb_bfloat16_dtype
                && sb_refuse_complex_into_bfloat16(op_dtypes, NULL, "dtype=") < 0)
            return -1;
        result = signature[2];
        Py_INCREF(result);
    }
    else {
        /* A reduction passes no first operand: it is the second's DType. */
        PyArray_DTypeMeta *g = op_dtypes[0] != NULL ? op_dtypes[0] : op_dtypes[1];
        result = sb_promote(g, op_dtypes[1]);
        if (result == NULL) return -1;
        if (op_dtypes[2] == sb_bfloat16_dtype
                && sb_refuse_complex_into_bfloat16(NULL, result, "out=") < 0) {
            Py_DECREF(result);
            return -1;
        }
    }
    for (int i = 0; i < 3; i++) {
        new_op_dtypes[i] = signature[i] != NULL ? signature[i] : result;
        Py_INCREF(new_op_dtypes[i]);
    }
    Py_DECREF(result);
    return 0;
}

#endif /* SIGMOID_BACKWARD_PROMOTION_H */
