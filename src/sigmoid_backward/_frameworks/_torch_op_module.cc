// The Python side of sigmoid_backward._frameworks._torch_op (the extension
// module whose ops _torch_op.cc registers): the module itself, its
// kernel_counts(), and the entry points through which sigmoid_backward.torch
// calls the ops in eager mode.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/Tensor.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <pybind11/pybind11.h>

#include "_torch_op.h"

namespace {

// ---- The Python entry points of sigmoid_backward.torch's eager calls. ----
// sigmoid(x), sigmoid_backward(g, y) and the generic function on two
// tensors call the ops as torch.sigmoid's own binding calls its op: the
// tensors straight to the dispatcher, unboxed, without the GIL, when torch
// would run no __torch_function__ (every argument a plain tensor or
// Parameter, no TorchFunctionMode).  Anything else takes the op's Python
// object, which runs __torch_function__ first.  Through that object
// (OpOverload.__call__, torch.ops' boxed call) a 64 x 64 float32 sigmoid
// cost about 450 ns more than nn.Sigmoid's, and a 1e3 op call 0.2 us more
// than aten's.

// (A pending "skip the next __torch_function__", which torch.overrides sets
// to redispatch, is left for the op object's call to consume.)
bool Direct(PyObject* const* args, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!THPVariable_CheckExact(args[i])) return false;
  }
  return !at::impl::torch_function_mode_enabled() &&
         !at::impl::PythonTorchFunctionTLS::peek_skip_next();
}

// torch.ops.sigmoid_backward.<name>.default(*args), the op found once.
PyObject* CallOpObject(const char* name, PyObject** op, PyObject* const* args, Py_ssize_t n) {
  if (*op == nullptr) {
    PyObject* found = PyImport_ImportModule("torch");
    for (const char* attr : {"ops", "sigmoid_backward", name, "default"}) {
      if (found == nullptr) return nullptr;
      PyObject* next = PyObject_GetAttrString(found, attr);
      Py_DECREF(found);
      found = next;
    }
    if (found == nullptr) return nullptr;
    *op = found;   // kept for the process's life, as torch.ops keeps it
  }
  return PyObject_Vectorcall(*op, args, n, nullptr);
}

// The Python callable that takes sigmoid's other calls (set_sigmoid_fallback),
// set once at import, under the GIL; until then, the op object.
PyObject* sigmoid_fallback = nullptr;

PyObject* SigmoidEntry(PyObject*, PyObject* x) {
  HANDLE_TH_ERRORS
  static PyObject* op = nullptr;
  if (!Direct(&x, 1)) {
    if (sigmoid_fallback != nullptr) {
      PyObject* fallback = Py_NewRef(sigmoid_fallback);   // held: it may be replaced meanwhile
      PyObject* result = PyObject_CallOneArg(fallback, x);
      Py_DECREF(fallback);
      return result;
    }
    return CallOpObject("sigmoid", &op, &x, 1);
  }
  // Owned before the GIL goes, as torch's bindings hold theirs: another
  // thread may then swap the Python tensor's contents (swap_tensors).
  const at::Tensor input = THPVariable_Unpack(x);
  at::Tensor result;
  {
    pybind11::gil_scoped_release no_gil;
    result = sb_torch::SigmoidOp().call(input);
  }
  return THPVariable_Wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

PyObject* SigmoidBackwardEntry(PyObject*, PyObject* const* args, Py_ssize_t n) {
  HANDLE_TH_ERRORS
  static PyObject* op = nullptr;
  if (n != 2) {
    PyErr_Format(PyExc_TypeError, "sigmoid_backward() takes 2 arguments (%zd given)", n);
    return nullptr;
  }
  if (!Direct(args, n)) return CallOpObject("sigmoid_backward", &op, args, n);
  const at::Tensor grad_output = THPVariable_Unpack(args[0]), output = THPVariable_Unpack(args[1]);
  at::Tensor result;
  {
    pybind11::gil_scoped_release no_gil;
    result = sb_torch::Op().call(grad_output, output);
  }
  return THPVariable_Wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

PyObject* KernelCounts(PyObject*, PyObject*) {
  const auto [calls, elements] = sb_torch::KernelCounts();
  return Py_BuildValue("(LL)", static_cast<long long>(calls), static_cast<long long>(elements));
}

PyObject* SetTransforms(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "set_transforms(sigmoid_backward, sigmoid) takes two "
                    "callables");
    return nullptr;
  }
  sb_torch::SetTransforms(args[0], args[1]);
  Py_RETURN_NONE;
}

PyObject* SetSigmoidFallback(PyObject*, PyObject* fallback) {
  if (!PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_TypeError, "set_sigmoid_fallback(callable)");
    return nullptr;
  }
  Py_INCREF(fallback);
  Py_XSETREF(sigmoid_fallback, fallback);
  Py_RETURN_NONE;
}

PyMethodDef kMethods[] = {
    {"sigmoid", SigmoidEntry, METH_O,
     "torch.ops.sigmoid_backward.sigmoid(x), called as torch.sigmoid's binding calls its op."},
    {"sigmoid_backward", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(
                             SigmoidBackwardEntry)),
     METH_FASTCALL,
     "torch.ops.sigmoid_backward.sigmoid_backward(g, y), called the same way."},
    {"set_transforms", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(
                           SetTransforms)),
     METH_FASTCALL,
     "set_transforms(sigmoid_backward, sigmoid): the Python kernels of the ops' calls under "
     "torch.func that are not vmap's usual ones (_torch_op_transforms.cc)."},
    {"set_sigmoid_fallback", SetSigmoidFallback, METH_O,
     "set_sigmoid_fallback(f): sigmoid(x) calls f(x) where it does not call the op directly "
     "(a tensor subclass, a TorchFunctionMode; export's tracing), in place of the op object."},
    {"kernel_counts", KernelCounts, METH_NOARGS,
     "(calls, elements): the native CPU kernel's calls so far, and their elements."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_torch_op",
                       "The native sigmoid_backward op's registration with PyTorch.", -1,
                       kMethods};

}  // namespace

PyMODINIT_FUNC PyInit__torch_op(void) {
  if (!sb_torch::ImportKernels()) return nullptr;
  return PyModule_Create(&kModule);
}
