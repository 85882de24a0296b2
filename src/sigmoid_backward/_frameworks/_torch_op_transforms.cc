// The native ops under torch.func's transforms: their kernels at
// FuncTorchDynamicLayerFrontMode, the dispatch key every call meets first
// while a transform is active.
//
// vmap's usual call (the batch at dimension 0 of each batched operand, one
// dtype, no rank padding) runs here, in C++, as aten's batching rules do:
// the operands unwrapped at the vmap level, the op called one level down,
// its result wrapped with the batch at 0.  The rest (grad, vjp, jvp and
// what is built of them, functionalize of the op, and vmap's other calls)
// goes to the Python callables that sigmoid_backward.torch gives at import
// (set_transforms): their autograd.Functions have the derivatives at each
// level, and _torch_transforms._batched the general vmap rule.
//
// Like torch's own kernel at this key, each first unwraps an input whose
// transform has ended (a "dead" wrapper, such as the values a vjp saved
// for a backward that vmap runs later, in jacrev): unwrapped at a level of
// their own, they would reach a level that no longer exists.
//
// Why not Python for vmap too: the Python kernel, its interpreter lookup
// and its pytrees cost about 35 us a call more than aten's batching rule
// on 64 x 4096 float32 values (the op's own time there is about 100 us),
// and the sigmoid op's autograd.Function vmap path 320 us more.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <ATen/functorch/DynamicLayer.h>
#include <ATen/functorch/PlumbingHelper.h>
#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <optional>

#include "_torch_op.h"

namespace {

using sb_torch::Op;
using sb_torch::SigmoidOp;

// The Python kernels of the calls C++ leaves to Python, kept for the
// process's life (set_transforms).
PyObject* python_sigmoid_backward = nullptr;
PyObject* python_sigmoid = nullptr;

// The callable is read, and held, under the GIL, which set_transforms also holds.
template <typename... Tensors>
at::Tensor CallPython(PyObject* const* slot, const Tensors&... tensors) {
  pybind11::gil_scoped_acquire gil;
  TORCH_CHECK(*slot != nullptr, "sigmoid_backward: the op ran under a torch.func transform "
              "before sigmoid_backward.torch was imported");
  const auto fn = pybind11::reinterpret_borrow<pybind11::function>(*slot);
  const pybind11::object result = fn(tensors...);
  TORCH_CHECK_TYPE(THPVariable_Check(result.ptr()), "sigmoid_backward: the Python kernel under "
                   "a torch.func transform returned ", Py_TYPE(result.ptr())->tp_name,
                   ", not a tensor");
  return THPVariable_Unpack(result.ptr());
}

// The vmap level popped for the scope's life, as torch.func's own
// interpreter.lower() pops it: calls made meanwhile meet the levels below.
class LevelBelow {
 public:
  LevelBelow() : layer_(at::functorch::popDynamicLayer()) {}
  ~LevelBelow() { at::functorch::pushDynamicLayer(std::move(layer_)); }
  LevelBelow(const LevelBelow&) = delete;
  LevelBelow& operator=(const LevelBelow&) = delete;

 private:
  at::functorch::DynamicLayer layer_;
};

// Whether vmap's call on these operands is the usual one: each batched
// operand has its batch at 0 and the examples' full rank (so broadcasting
// the batched values batches the examples' broadcast), and the two share a
// dtype (a 0-d example promotes as a scalar, which its batch does not).
bool Usual(const at::Tensor& g, std::optional<int64_t> g_dim, const at::Tensor& y,
           std::optional<int64_t> y_dim) {
  if (g.scalar_type() != y.scalar_type()) return false;
  if ((g_dim && *g_dim != 0) || (y_dim && *y_dim != 0)) return false;
  const int64_t rank = std::max(g.dim() - (g_dim ? 1 : 0), y.dim() - (y_dim ? 1 : 0));
  return (!g_dim || g.dim() == rank + 1) && (!y_dim || y.dim() == rank + 1);
}

at::Tensor SigmoidBackwardTransforms(c10::DispatchKeySet keys, const at::Tensor& grad_output,
                                     const at::Tensor& output) {
  const auto layer = at::functorch::maybeCurrentDynamicLayer();
  if (!layer) {   // no transform active: the next key
    return Op().redispatch(keys.remove(c10::DispatchKey::FuncTorchDynamicLayerFrontMode),
                           grad_output, output);
  }
  if (layer->key() == at::functorch::TransformType::Vmap) {
    const int64_t level = layer->layerId();
    auto [g, g_dim] =
        at::functorch::unwrapTensorAtLevel(at::functorch::unwrapIfDead(grad_output), level);
    auto [y, y_dim] =
        at::functorch::unwrapTensorAtLevel(at::functorch::unwrapIfDead(output), level);
    if (!g_dim && !y_dim) {   // nothing batched at this level
      LevelBelow below;
      return Op().call(g, y);
    }
    if (Usual(g, g_dim, y, y_dim)) {
      at::Tensor result;
      {
        LevelBelow below;
        result = Op().call(g, y);
      }
      return at::functorch::makeBatched(std::move(result), 0, level);
    }
  }
  return CallPython(&python_sigmoid_backward, grad_output, output);
}

// sigmoid is unary and elementwise: the batch stays where it is.
at::Tensor SigmoidTransforms(c10::DispatchKeySet keys, const at::Tensor& x) {
  const auto layer = at::functorch::maybeCurrentDynamicLayer();
  if (!layer) {
    return SigmoidOp().redispatch(keys.remove(c10::DispatchKey::FuncTorchDynamicLayerFrontMode),
                                  x);
  }
  if (layer->key() != at::functorch::TransformType::Vmap) return CallPython(&python_sigmoid, x);
  const int64_t level = layer->layerId();
  auto [value, dim] = at::functorch::unwrapTensorAtLevel(at::functorch::unwrapIfDead(x), level);
  at::Tensor result;
  {
    LevelBelow below;
    result = SigmoidOp().call(value);
  }
  return dim ? at::functorch::makeBatched(std::move(result), *dim, level) : result;
}

}  // namespace

namespace sb_torch {

void SetTransforms(PyObject* sigmoid_backward, PyObject* sigmoid) {
  Py_INCREF(sigmoid_backward);
  Py_INCREF(sigmoid);
  Py_XSETREF(python_sigmoid_backward, sigmoid_backward);
  Py_XSETREF(python_sigmoid, sigmoid);
}

}  // namespace sb_torch

TORCH_LIBRARY_IMPL(sigmoid_backward, FuncTorchDynamicLayerFrontMode, m) {
  m.impl("sigmoid_backward", &SigmoidBackwardTransforms);
  m.impl("sigmoid", &SigmoidTransforms);
}
