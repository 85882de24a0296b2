// The coupling of the C++ framework modules (_xla_ffi.cc, _torch_op.cc)
// with _kernels.pxd, all of it: they call _kernels' compute_rows() through
// the capsule Cython exports in _kernels.__pyx_capi__.  The kinds are
// _dtypes.h's table.  Cython names each capsule by the C signature it gave
// the function; the signature is checked at import, so that a changed
// declaration fails there, not in a call.
#ifndef SIGMOID_BACKWARD_KERNELS_CAPI_H
#define SIGMOID_BACKWARD_KERNELS_CAPI_H

#include <Python.h>

#include <cstring>

#include "_dtypes.h"

namespace sb_capi {

// _kernels' compute_rows(): out = g * (1 - y) * y over `rows` runs of n
// elements, each operand's next run *_row bytes on (steps in bytes, 0 for a
// broadcast axis), the runs sharing the threads as one long run would;
// nthreads 0: the default count.
constexpr const char kComputeRowsSignature[] =
    "void (sb_kind, sb_kind, char const *, Py_ssize_t, Py_ssize_t, sb_kind, char const *, "
    "Py_ssize_t, Py_ssize_t, char *, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, int)";
using ComputeRowsFn = void (*)(sb_kind kind, sb_kind g_kind, const char* g, Py_ssize_t g_step,
                               Py_ssize_t g_row, sb_kind y_kind, const char* y,
                               Py_ssize_t y_step, Py_ssize_t y_row, char* out,
                               Py_ssize_t out_step, Py_ssize_t out_row, Py_ssize_t n,
                               Py_ssize_t rows, int nthreads);

// _kernels' function ``name``, exported with C signature ``signature``, for
// the module ``module`` (named in the error), or nullptr with an ImportError
// set.  _kernels stays imported (sys.modules holds it), so the function
// stays.
inline void* ImportFunction(const char* module, const char* name, const char* signature) {
  PyObject* kernels = PyImport_ImportModule("sigmoid_backward._kernel._kernels");
  if (kernels == nullptr) return nullptr;
  PyObject* capi = PyObject_GetAttrString(kernels, "__pyx_capi__");
  Py_DECREF(kernels);
  if (capi == nullptr) return nullptr;
  PyObject* capsule = PyDict_GetItemString(capi, name);  // borrowed
  const char* actual = capsule ? PyCapsule_GetName(capsule) : nullptr;
  void* function = nullptr;
  if (actual == nullptr || std::strcmp(actual, signature) != 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_ImportError,
                 "%s: _kernels exports %s as \"%s\", where this build expects \"%s\": "
                 "_kernels_capi.h must follow _kernels.pxd",
                 module, name, actual ? actual : "nothing", signature);
  } else {
    function = PyCapsule_GetPointer(capsule, signature);
  }
  Py_DECREF(capi);
  return function;
}

inline ComputeRowsFn ImportComputeRows(const char* module) {
  return reinterpret_cast<ComputeRowsFn>(
      ImportFunction(module, "compute_rows", kComputeRowsSignature));
}

}  // namespace sb_capi

#endif  // SIGMOID_BACKWARD_KERNELS_CAPI_H
