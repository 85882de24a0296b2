/*
 * The ufunc's promoter: which loop a call runs, from its operands' DTypes.
 *
 * NumPy calls it for every combination of input DTypes that has no loop of
 * its own (float32 with float64, int8 with a Python float, ...), once: the
 * answer is cached.  The rule is NumPy's promotion, with Python int, float
 * and complex weak (NEP 50), and ml_dtypes' where it has one (float8 with
 * bfloat16 gives bfloat16), except that
 *
 * - where ml_dtypes has no rule, a narrow dtype of ml_dtypes (bfloat16,
 *   float8) promotes as float16 does: with Python scalars (NumPy would
 *   treat them as strong: np.result_type(bfloat16, 0.5) is float64), and
 *   with NumPy's types before ml_dtypes 0.7 (bfloat16 with int16); float16
 *   stands in for it, and a float16 result is that dtype;
 * - there, two different narrow dtypes give float32;
 * - a narrow result that cannot hold every value of an integer or bool
 *   input is refused, naming both dtypes: ml_dtypes promotes float8 with
 *   int8 to float8, which would round 17 to 16;
 * - an integer or bool result computes in float64, as a sigmoid's gradient
 *   is never an integer;
 * - anything else (strings, objects, long double...) is a TypeError naming
 *   the argument and its dtype.
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

/* A DType as a message shows it, as NumPy prints dtypes (new reference):
 * its one dtype, dtype('O') or dtype(bfloat16); a Python complex as the
 * complex128 NumPy makes of it.  The promoter sees DTypes, not the
 * operands' dtypes, and a parametric DType (strings, datetimes, structured)
 * has no one dtype: its class then, <class 'numpy.dtypes.StrDType'>, as
 * NumPy's own ufuncs name it.  sigmoid_backward.sigmoid_backward knows the
 * operands, and has the message name their dtypes (sb_refuse's known). */
static PyObject *sb_shown_dtype(PyArray_DTypeMeta *dt)
{
    if (dt == &PyArray_PyComplexDType) {
        PyArray_Descr *descr = PyArray_DescrFromType(NPY_CDOUBLE);
        if (descr == NULL) return NULL;
        PyObject *shown = PyObject_Repr((PyObject *)descr);
        Py_DECREF(descr);
        return shown;
    }
    if (dt->singleton != NULL && !(dt->flags & NPY_DT_PARAMETRIC))
        return PyObject_Repr((PyObject *)dt->singleton);
    return PyObject_Repr((PyObject *)dt);
}

/* A narrow dtype other than NumPy's float16 (ml_dtypes' bfloat16, float8):
 * its kind, else -1. */
static int sb_foreign_narrow_kind(PyArray_DTypeMeta *dt)
{
    const int kind = sb_kind_of_dtype(dt);
    return kind >= 0 && sb_kind_is_narrow(kind) && dt != &PyArray_HalfDType ? kind : -1;
}

/* The inputs' names, and what a message shows of an operand's dtype (new
 * reference): its own when the caller knows it, else its DType's. */
static const char *const sb_input_names[2] = {"grad_output", "output"};

static PyObject *sb_shown(PyArray_DTypeMeta *dt, PyObject *known)
{
    return known != NULL ? PyObject_Repr(known) : sb_shown_dtype(dt);
}

/* The promoter's refusals, in its order: -1 with a TypeError naming the
 * argument and its dtype, or 0 when it takes these operands.
 * dtypes: grad_output's, output's (NULL: not given) and dtype='s (NULL:
 * none) DTypes; known: the same dtypes, when the caller knows them (the
 * promoter does not; sigmoid_backward.sigmoid_backward does, through
 * _ufunc.refuse), else NULLs. */
static int sb_refuse(PyArray_DTypeMeta *const dtypes[3], PyObject *const known[3])
{
    PyArray_DTypeMeta *const dtype = dtypes[2];
    /* dtype= selects a DType, never a size or unit (NumPy refuses 'U1'
     * there): its one dtype is what was given, dtype('<U') included. */
    PyObject *const given_dtype = known[2] != NULL || dtype == NULL
        ? known[2] : (PyObject *)dtype->singleton;
    PyObject *shown, *shown_dtype;
    if (dtype != NULL && !sb_is_compute_dtype(dtype)) {
        if ((shown_dtype = sb_shown(dtype, given_dtype)) == NULL) return -1;
        PyErr_Format(PyExc_TypeError,
            "sigmoid_backward: dtype=%U is not supported; choose one of %s",
            shown_dtype, SB_SUPPORTED);
        Py_DECREF(shown_dtype);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        if (dtypes[i] == NULL) continue;
        if (dtype == NULL && !sb_is_input_dtype(dtypes[i])) {
            if ((shown = sb_shown(dtypes[i], known[i])) == NULL) return -1;
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: %s's dtype, %U, is not supported; supported are %s, "
                "and bool or integer inputs (computed in float64)",
                sb_input_names[i], shown, SB_SUPPORTED);
            Py_DECREF(shown);
            return -1;
        }
        /* NumPy never casts complex to a real dtype under 'same_kind', but
         * ml_dtypes lets complex cast to its narrow dtypes, dropping the
         * imaginary part, with no ComplexWarning: refused under every rule. */
        if (dtype != NULL && sb_foreign_narrow_kind(dtype) >= 0 && sb_is_complex(dtypes[i])) {
            if ((shown = sb_shown(dtypes[i], known[i])) == NULL) return -1;
            if ((shown_dtype = sb_shown(dtype, given_dtype)) == NULL) {
                Py_DECREF(shown);
                return -1;
            }
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: %s's dtype, %U, is complex, and a complex value is "
                "never cast to dtype=%U: compute in complex and take .real first",
                sb_input_names[i], shown, shown_dtype);
            Py_DECREF(shown);
            Py_DECREF(shown_dtype);
            return -1;
        }
    }
    return 0;
}

/* Does the narrow kind hold every value of the integer or bool DType dt? */
static int sb_holds_integers(int kind, PyArray_DTypeMeta *dt)
{
    const int bits = dt->type_num == NPY_BOOL
        ? 1 : 8 * (int)PyDataType_ELSIZE(dt->singleton) - (PyTypeNum_ISSIGNED(dt->type_num) != 0);
    return bits <= sb_kind_precision[kind] && bits - 1 <= sb_kind_max_exp[kind];
}

/* NumPy's (and ml_dtypes') promotion of two concrete DTypes, or NULL with
 * no error set where it has no rule. */
static PyArray_DTypeMeta *sb_known_promotion(PyArray_DTypeMeta *g, PyArray_DTypeMeta *y)
{
    PyArray_DTypeMeta *in[2] = {g, y};
    for (int i = 0; i < 2; i++) {
        /* Python's scalars: NumPy asks a user DType for its promotion with
         * float16 on their behalf, and ml_dtypes 0.7 answers float32 for
         * bfloat16, where a weak scalar must keep bfloat16. */
        if (in[i] == &PyArray_PyLongDType || in[i] == &PyArray_PyFloatDType
                || in[i] == &PyArray_PyComplexDType || (in[i]->flags & NPY_DT_ABSTRACT))
            return NULL;
    }
    PyArray_DTypeMeta *result = PyArray_PromoteDTypeSequence(2, in);
    if (result == NULL) PyErr_Clear();   /* "no common DType": no rule */
    return result;
}

/* Float16 standing in for ml_dtypes' narrow dtypes (the header comment):
 * the compute DType of two input DTypes (new reference), or NULL with a
 * TypeError set. */
static PyArray_DTypeMeta *sb_stand_in_promotion(PyArray_DTypeMeta *g, PyArray_DTypeMeta *y)
{
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
    }
    if (narrow[0] >= 0 && narrow[1] >= 0 && narrow[0] != narrow[1]) {
        Py_INCREF(&PyArray_FloatDType);   /* neither holds the other */
        return &PyArray_FloatDType;
    }
    PyArray_DTypeMeta *result = PyArray_PromoteDTypeSequence(2, in);
    if (result == NULL || result != &PyArray_HalfDType || stood_in < 0) return result;
    PyArray_DTypeMeta *chosen = sb_kind_dtype(stood_in);
    Py_XINCREF(chosen);
    Py_DECREF(result);
    return chosen;
}

/* The compute DType of two input DTypes (new reference), or NULL with a
 * TypeError set. */
static PyArray_DTypeMeta *sb_promote(PyArray_DTypeMeta *g, PyArray_DTypeMeta *y)
{
    PyArray_DTypeMeta *const given[3] = {g, y, NULL};
    PyObject *const unknown[3] = {NULL, NULL, NULL};
    if (sb_refuse(given, unknown) < 0) return NULL;
    PyArray_DTypeMeta *result = sb_known_promotion(g, y);
    if (result != NULL && !sb_is_compute_dtype(result) && !sb_is_integer_result(result))
        Py_CLEAR(result);   /* a rule, but to a dtype the kernels lack: as if none */
    if (result == NULL) result = sb_stand_in_promotion(g, y);
    if (result == NULL) return NULL;
    PyArray_DTypeMeta *chosen = result;
    if (sb_is_integer_result(result) || result == &PyArray_PyFloatDType)
        chosen = &PyArray_DoubleDType;   /* Python scalars only: their defaults */
    else if (result == &PyArray_PyComplexDType)
        chosen = &PyArray_CDoubleDType;
    Py_INCREF(chosen);
    Py_DECREF(result);
    if (!sb_is_compute_dtype(chosen)) {
        /* A guard, not a refusal: NumPy promotes bool, the integers and the
         * table's dtypes (all that sb_refuse lets through) to one of the
         * table's or an integer (the tests call every pair), so no input
         * reaches it, and its message has nothing to fill in. */
        PyErr_SetString(PyExc_TypeError,
            "sigmoid_backward: NumPy promoted the inputs to a dtype the kernels lack; "
            "this is a bug, please report it");
        Py_DECREF(chosen);
        return NULL;
    }
    const int kind = sb_kind_of_dtype(chosen);
    PyArray_DTypeMeta *const in[2] = {g, y};
    for (int i = 0; i < 2 && sb_kind_is_narrow(kind); i++) {
        if ((in[i]->flags & NPY_DT_ABSTRACT) || in[i]->type_num < NPY_BOOL
                || in[i]->type_num > NPY_ULONGLONG || sb_holds_integers(kind, in[i]))
            continue;
        PyObject *shown_g = sb_shown_dtype(g), *shown_y = sb_shown_dtype(y);
        PyObject *shown = sb_shown_dtype(chosen);
        if (shown_g != NULL && shown_y != NULL && shown != NULL)
            PyErr_Format(PyExc_TypeError,
                "sigmoid_backward: grad_output's dtype, %U, and output's, %U, promote to %U, "
                "which cannot hold every %U value exactly; cast the integers to a wider "
                "floating dtype first (or pass dtype=)",
                shown_g, shown_y, shown, i == 0 ? shown_g : shown_y);
        Py_XDECREF(shown_g);
        Py_XDECREF(shown_y);
        Py_XDECREF(shown);
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
    /* A reduction passes no first operand: it is the second's DType. */
    PyArray_DTypeMeta *g = op_dtypes[0] != NULL ? op_dtypes[0] : op_dtypes[1];
    if (signature[2] != NULL) {
        PyArray_DTypeMeta *const given[3] = {g, op_dtypes[1], signature[2]};
        PyObject *const unknown[3] = {NULL, NULL, NULL};
        if (sb_refuse(given, unknown) < 0) return -1;
        result = signature[2];
        Py_INCREF(result);
    }
    else {
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
