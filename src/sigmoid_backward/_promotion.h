/*
 * The ufunc's promoter: which loop a call runs, from its operands' DTypes.
 *
 * NumPy calls it for every combination of input DTypes that has no loop of
 * its own (float32 with float64, int8 with a Python float, ...), once: the
 * answer is cached.  The rule is NumPy's promotion, with Python int, float
 * and complex weak (NEP 50), except that
 *
 * - a narrow dtype of ml_dtypes (bfloat16) promotes as float16 does:
 *   ml_dtypes defines no promotion with Python scalars or with NumPy's types
 *   that NumPy could use here (np.result_type(bfloat16, 0.5) is float64), so
 *   float16 stands in for it, and a float16 result is that dtype;
 * - two different narrow dtypes (float16 with bfloat16) give float32: neither
 *   holds the other;
 * - an integer or bool result computes in float64, as a sigmoid's gradient
 *   is never an integer;
 * - anything else (strings, objects, long double...) is a TypeError naming
 *   the argument.
 *
 * dtype= fixes the loop: all three DTypes become it, and NumPy then checks
 * that the inputs cast to it under the call's casting rule.
 * The dtypes are _dtypes.h's table.  sigmoid_backward.reference states the
 * same rules with a table of its own, and the tests compare the two.
 */
#ifndef SIGMOID_BACKWARD_PROMOTION_H
#define SIGMOID_BACKWARD_PROMOTION_H

#include <Python.h>
#include <numpy/arrayobject.h>
#include <numpy/dtype_api.h>

#include "_numpy_dtypes.h"

/* The kind of a DType (-1: none of the table's). */
static int sb_kind_of_dtype(PyArray_DTypeMeta *dt)
{
    return (dt->flags & NPY_DT_ABSTRACT) ? -1 : sb_kind_of(dt->type_num);
}

static int sb_is_compute_dtype(PyArray_DTypeMeta *dt) { return sb_kind_of_dtype(dt) >= 0; }

/* The DType class of a kind (borrowed: NumPy and ml_dtypes keep it). */
static PyArray_DTypeMeta *sb_kind_dtype(int kind)
{
    PyArray_Descr *descr = PyArray_DescrFromType(sb_kind_typenum(kind));
    if (descr == NULL) return NULL;
    PyArray_DTypeMeta *dt = (PyArray_DTypeMeta *)Py_TYPE(descr);
    Py_DECREF(descr);
    return dt;
}

/* "float32, float64, ...": the table's names, for messages.  Each name
 * follows ", ", and the list is read from its third character: a plain %s,
 * as PyUnicode_FromFormat takes a precision from the arguments (%.*s) only
 * from Python 3.12, and before prints "%.*s" itself. */
static const char sb_supported_list[] =
#define SB_KIND_LISTED(K, name, size, num, widen, round, xla) ", " name
    SB_DTYPES(SB_KIND_LISTED)
#undef SB_KIND_LISTED
    ;
#define SB_SUPPORTED (sb_supported_list + 2)

/* An input DType the promotion accepts (narrow dtypes already replaced by
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

/* A narrow dtype other than NumPy's float16 (ml_dtypes' bfloat16): its kind,
 * else -1. */
static int sb_foreign_narrow_kind(PyArray_DTypeMeta *dt)
{
    const int kind = sb_kind_of_dtype(dt);
    return kind >= 0 && sb_kind_is_narrow(kind) && dt != &PyArray_HalfDType ? kind : -1;
}

/* The compute DType of two input DTypes (new reference), or NULL with a
 * TypeError set. */
static PyArray_DTypeMeta *sb_promote(PyArray_DTypeMeta *g, PyArray_DTypeMeta *y)
{
    static const char *const names[2] = {"grad_output", "output"};
    PyArray_DTypeMeta *in[2] = {g, y};
    int narrow[2] = {-1, -1};   /* each input's narrow kind, or -1 */
    int stood_in = -1;          /* the foreign narrow kind float16 stands in for */
    for (int i = 0; i < 2; i++) {
        const int kind = sb_kind_of_dtype(in[i]);
        if (kind >= 0 && sb_kind_is_narrow(kind)) narrow[i] = kind;
        if (sb_foreign_narrow_kind(in[i]) >= 0) {
            stood_in = kind;
            in[i] = &PyArray_HalfDType;
        }
        if (!sb_is_input_dtype(in[i])) {
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: %s has dtype %s, which is not supported; "
                "supported are %s, and bool or integer "
                "inputs (computed in float64)", names[i], sb_dtype_name(i ? y : g),
                SB_SUPPORTED);
            return NULL;
        }
    }
    if (narrow[0] >= 0 && narrow[1] >= 0 && narrow[0] != narrow[1]) {
        Py_INCREF(&PyArray_FloatDType);   /* neither holds the other */
        return &PyArray_FloatDType;
    }
    PyArray_DTypeMeta *result = PyArray_PromoteDTypeSequence(2, in);
    if (result == NULL) return NULL;
    PyArray_DTypeMeta *chosen = result;
    if (sb_is_integer_result(result) || result == &PyArray_PyFloatDType)
        chosen = &PyArray_DoubleDType;   /* Python scalars only: their defaults */
    else if (result == &PyArray_PyComplexDType)
        chosen = &PyArray_CDoubleDType;
    else if (result == &PyArray_HalfDType && stood_in >= 0)
        chosen = sb_kind_dtype(stood_in);
    if (chosen == NULL) {
        Py_DECREF(result);
        return NULL;
    }
    Py_INCREF(chosen);
    Py_DECREF(result);
    if (!sb_is_compute_dtype(chosen)) {
        PyErr_Format(PyExc_TypeError,
            "sigmoid_backward: grad_output (%s) and output (%s) promote to %s, "
            "which is not supported; supported are %s",
            sb_dtype_name(g), sb_dtype_name(y), sb_dtype_name(chosen), SB_SUPPORTED);
        Py_DECREF(chosen);
        return NULL;
    }
    return chosen;
}

/* PyArrayMethod_PromoterFunction: the loop's DTypes for the inputs' DTypes.
 * The signature's DTypes (from dtype= or signature=) are kept as they are.
 * (NumPy does not pass out's DType: it chooses a loop from the inputs.) */
static int sb_promoter(PyObject *NPY_UNUSED(ufunc),
                       PyArray_DTypeMeta *const op_dtypes[],
                       PyArray_DTypeMeta *const signature[],
                       PyArray_DTypeMeta *new_op_dtypes[])
{
    PyArray_DTypeMeta *result;
    if (signature[2] != NULL) {
        if (!sb_is_compute_dtype(signature[2])) {
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: dtype=%S is not supported; choose one of %s",
                (PyObject *)signature[2]->singleton, SB_SUPPORTED);
            return -1;
        }
        /* NumPy never casts complex to a real dtype under 'same_kind', but
         * ml_dtypes lets complex cast to its narrow dtypes, dropping the
         * imaginary part, with no ComplexWarning: refused under every rule. */
        for (int i = 0; i < 2; i++) {
            if (sb_foreign_narrow_kind(signature[2]) >= 0 && op_dtypes[i] != NULL
                    && sb_is_complex(op_dtypes[i])) {
                PyErr_Format(PyExc_TypeError,
                    "sigmoid_backward: %s is complex (%s), and a complex value is never "
                    "cast to dtype='s %s; compute in complex and take .real first",
                    i ? "output" : "grad_output", sb_dtype_name(op_dtypes[i]),
                    sb_dtype_name(signature[2]));
                return -1;
            }
        }
        result = signature[2];
        Py_INCREF(result);
    }
    else {
        /* A reduction passes no first operand: it is the second's DType. */
        PyArray_DTypeMeta *g = op_dtypes[0] != NULL ? op_dtypes[0] : op_dtypes[1];
        result = sb_promote(g, op_dtypes[1]);
        if (result == NULL) return -1;
    }
    for (int i = 0; i < 3; i++) {
        new_op_dtypes[i] = signature[i] != NULL ? signature[i] : result;
        Py_INCREF(new_op_dtypes[i]);
    }
    Py_DECREF(result);
    return 0;
}

#endif /* SIGMOID_BACKWARD_PROMOTION_H */
