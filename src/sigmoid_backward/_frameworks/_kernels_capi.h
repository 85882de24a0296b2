// The coupling of the C++ framework modules (_xla_ffi.cc, _torch_op.cc)
// with _kernels.pxd, all of it: they call _kernels' compute() through the
// capsule Cython exports in _kernels.__pyx_capi__.  The kinds are
// _dtypes.h's table.  Cython names each capsule by the C signature it gave
// the function; the signature is checked at import, so that a changed
// declaration fails there, not in a call.
#ifndef SIGMOID_BACKWARD_KERNELS_CAPI_H
#define SIGMOID_BACKWARD_KERNELS_CAPI_H

#include <Python.h>

#include <cstring>

#include "_dtypes.h"

namespace sb_capi {

constexpr const char kComputeSignature[] =
    "void (sb_kind, sb_kind, char const *, Py_ssize_t, sb_kind, char const *, "
    "Py_ssize_t, char *, Py_ssize_t, Py_ssize_t, int)";
// nthreads 0: the default count
using ComputeFn = void (*)(sb_kind kind, sb_kind g_kind, const char* g, Py_ssize_t g_step,
                           sb_kind y_kind, const char* y, Py_ssize_t y_step, char* out,
                           Py_ssize_t out_step, Py_ssize_t n, int nthreads);

// _kernels' compute(), for the module ``module`` (named in the error), or
// nullptr with an ImportError set.  _kernels stays imported (sys.modules
// holds it), so the function stays.
inline ComputeFn ImportCompute(const char* module) {
  PyObject* kernels = PyImport_ImportModule("sigmoid_backward._kernel._kernels");
  if (kernels == nullptr) return nullptr;
  PyObject* capi = PyObject_GetAttrString(kernels, "__pyx_capi__");
  Py_DECREF(kernels);
  if (capi == nullptr) return nullptr;
  PyObject* capsule = PyDict_GetItemString(capi, "compute");  // borrowed
  const char* actual = capsule ? PyCapsule_GetName(capsule) : nullptr;
  void* compute = nullptr;
  if (actual == nullptr || std::strcmp(actual, kComputeSignature) != 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_ImportError,
                 "%s: _kernels exports compute as \"%s\", where this build expects \"%s\": "
                 "_kernels_capi.h must follow _kernels.pxd",
                 module, actual ? actual : "nothing", kComputeSignature);
  } else {
    compute = PyCapsule_GetPointer(capsule, kComputeSignature);
  }
  Py_DECREF(capi);
  return reinterpret_cast<ComputeFn>(compute);
}

}  // namespace sb_capi

#endif  // SIGMOID_BACKWARD_KERNELS_CAPI_H
