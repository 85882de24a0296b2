// The native torch.ops.sigmoid_backward.sigmoid_backward: the op's schema, its
// CPU kernel and its autograd kernel registered with PyTorch's dispatcher in
// C++, so that an eager call never enters Python (a Python kernel costs
// 5-9 us a call; aten's whole call is about 2 us at 1e3 elements).
//
// The CPU kernel runs the very kernel the ufunc runs, _kernels' compute(),
// taken from _kernels.__pyx_capi__ when this module is imported, as
// _xla_ffi.cc does: no copy of the formula here.  aten's TensorIterator
// gives the result's dtype (promotion), shape (broadcasting) and memory
// format exactly as for aten.sigmoid_backward, and the strides compute()
// walks (0 for a broadcast operand).
//
// What stays in Python (_torch_registration.py, _torch_transforms.py): the
// fake kernel, the ops under torch.func's transforms other than vmap's usual
// calls (_torch_op_transforms.cc hands them over), and a second op,
// sigmoid_backward::_python_route, which has the Python autograd kernel
// with forward mode.  The autograd kernel here sends a call whose inputs
// carry forward-mode tangents there: its node has no
// forward mode, and skipping it for such a call would return a result
// without tangent, that is zero tangents, silently.
// Errors (dtypes the kernels lack, shapes that do not broadcast) are also
// the Python route's, so that their messages and types are the package's.
//
// The extension module's Python side, and the entry points through which
// sigmoid_backward.torch calls these ops, are _torch_op_module.cc's; what the
// two files share, _torch_op.h.  The module must be imported after torch;
// it is tied to the torch it was built against (_torch_registration.py
// compares the versions before importing it).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/sigmoid_cpu_dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/forward_grad.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>

#include <atomic>
#include <mutex>
#include <string>
#include <cstring>

#include "_dtypes.h"
#include "_huge_pages.h"
#include "_kernels_capi.h"
#include "_torch_op.h"

namespace {

// ---- The coupling with _kernels.pxd: _kernels_capi.h. -------------------
sb_capi::ComputeRowsFn sb_compute_rows = nullptr;   // _kernels.compute_rows (_kernels_capi.h)

// The kernel's calls and the elements they computed, for the tests that
// show eager calls ran this kernel (kernel_counts()).
std::atomic<int64_t> kernel_calls{0}, kernel_elements{0};

}  // namespace

namespace sb_torch {

bool ImportKernels() {
  sb_compute_rows = sb_capi::ImportComputeRows("sigmoid_backward._frameworks._torch_op");
  return sb_compute_rows != nullptr;
}

std::pair<int64_t, int64_t> KernelCounts() { return {kernel_calls.load(), kernel_elements.load()}; }

const c10::TypedOperatorHandle<OpSignature>& Op() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("sigmoid_backward::sigmoid_backward", "")
                             .typed<OpSignature>();
  return op;
}

const c10::TypedOperatorHandle<SigmoidSignature>& SigmoidOp() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("sigmoid_backward::sigmoid", "")
                             .typed<SigmoidSignature>();
  return op;
}

}  // namespace sb_torch

namespace {

using sb_torch::Op;
using sb_torch::OpSignature;
using sb_torch::SigmoidOp;

// The kind of a torch dtype, from the table (_dtype_spec.py's "torch"); -1 for
// one the kernels lack.
int KindOf(c10::ScalarType dtype) {
  switch (dtype) {
#define SB_TORCH_KIND(K, torch) \
    case c10::ScalarType::torch: return SB_KIND_##K;
    SB_TORCH_DTYPES(SB_TORCH_KIND)
#undef SB_TORCH_KIND
    default: return -1;
  }
}

// The Python registration (_torch_registration.py), for the calls this file leaves to it.
at::Tensor PythonRoute(const at::Tensor& grad_output, const at::Tensor& output) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("sigmoid_backward::_python_route", "")
                             .typed<OpSignature>();
  return op.call(grad_output, output);
}

// Whether the shapes broadcast together (aten's rule), without allocating.
bool Broadcast(c10::IntArrayRef a, c10::IntArrayRef b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 1; i <= n; ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

// The result's dtype, as at::result_type gives it, without that op's trip
// through the dispatcher: one dtype (the usual call) is its own result.
c10::ScalarType ResultType(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() == b.scalar_type()) return a.scalar_type();
  return at::native::result_type(
      at::native::update_result_type_state(b, at::native::update_result_type_state(a, {})));
}

// aten.sigmoid_backward's iterator, built as aten's own structured CPU
// kernel builds it: the operands borrowed, and the result allocated on the
// CPU directly (at::detail::empty_*_cpu), where TensorIterator's at::empty
// goes through the dispatcher.  Counted by callgrind (a 1e3 float32 call):
// without those two dispatches (at::empty, at::result_type) and the owned
// operands, the op took 1,150 instructions a call beyond aten's, not 2,390.
struct CpuIterator final : at::TensorIteratorBase {
  at::Tensor result;

  const at::Tensor& maybe_get_output(int64_t) override { return result; }

  void set_output_raw_strided(int64_t index, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              c10::TensorOptions options) override {
    result = at::Tensor(strides.empty() ? at::detail::empty_cpu(sizes, options)
                                        : at::detail::empty_strided_cpu(sizes, strides, options));
    // Before anything touches it: a fresh large result then faults in huge
    // pages (_huge_pages.h).
    sb_pages::AdviseHugePages(result.data_ptr(), result.storage().nbytes());
    at::TensorIteratorBase::set_output_raw_strided(index, sizes, strides, options);
  }
};

at::Tensor SigmoidBackwardCpu(const at::Tensor& grad_output, const at::Tensor& output) {
  if (grad_output.layout() != c10::kStrided || output.layout() != c10::kStrided ||
      KindOf(ResultType(grad_output, output)) < 0 ||
      !Broadcast(grad_output.sizes(), output.sizes())) {
    return PythonRoute(grad_output, output);   // raises the package's error
  }
  TORCH_CHECK(sb_compute_rows != nullptr, "sigmoid_backward: the native op's module failed to "
              "import, so it has no kernel");
  // aten.sigmoid_backward's own iterator (a binary op): promotion, broadcast,
  // the output's memory format, the devices checked.
  CpuIterator iter;
  iter.build_borrowing_binary_op(iter.result, grad_output, output);
  kernel_calls.fetch_add(1, std::memory_order_relaxed);
  kernel_elements.fetch_add(iter.numel(), std::memory_order_relaxed);
  if (iter.numel() == 0) return std::move(iter.result);
  const auto kind = static_cast<sb_kind>(KindOf(iter.dtype(0)));
  const auto g_kind = static_cast<sb_kind>(KindOf(iter.dtype(1)));
  const auto y_kind = static_cast<sb_kind>(KindOf(iter.dtype(2)));
  // One call per 2-D piece of the coalesced iteration (one in all for
  // contiguous operands, and for a broadcast row or column): its rows share
  // the threads as one run would (compute_rows), where a call per row of a
  // few thousand elements ran on one thread.
  iter.serial_for_each(
      [=](char** data, const int64_t* strides, int64_t size0, int64_t size1) {
        sb_compute_rows(kind, g_kind, data[1], strides[1], strides[4], y_kind, data[2],
                        strides[2], strides[5], data[0], strides[0], strides[3], size0, size1,
                        0);
      },
      {0, iter.numel()});
  return std::move(iter.result);
}

// The op's node in autograd's graph, with aten's derivatives
// (derivatives.yaml) term for term, as the Python Function in _torch_transforms.py
// has them.  A Node of its own, as PyTorch's generated ones are, rather than a
// torch::autograd::Function, whose apply and backward cost about 2 us more
// a call (it binds a context, checks views and marks outputs).
struct SigmoidBackwardBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable grad_output_, output_;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const at::Tensor& grad = grads[0];
    at::Tensor grad_g, grad_y;
    if (grad.defined()) {
      const at::Tensor output = output_.unpack();
      if (task_should_compute_output(0)) grad_g = Op().call(grad, output.conj());
      if (task_should_compute_output(1)) {
        grad_y = grad.conj().mul(grad_output_.unpack()).mul(output.conj().mul(-2).add(1));
      }
    }
    return {grad_g, grad_y};
  }

  std::string name() const override { return "SigmoidBackwardBackward"; }

  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    grad_output_.reset_data();
    output_.reset_data();
  }
};

// A forward-mode tangent (torch.autograd.forward_ad) on the tensor?
bool HasTangent(const at::Tensor& t) {
  const auto* meta = torch::autograd::impl::get_autograd_meta(t);
  return meta != nullptr && meta->fw_grad_ && !meta->fw_grad_->empty();
}

at::Tensor SigmoidBackwardAutograd(c10::DispatchKeySet keys, const at::Tensor& grad_output,
                                   const at::Tensor& output) {
  if (c10::AutogradState::get_tls_state().get_fw_grad_mode() &&
      (HasTangent(grad_output) || HasTangent(output))) {
    return PythonRoute(grad_output, output);   // forward mode: the Python Function's jvp
  }
  c10::intrusive_ptr<SigmoidBackwardBackward> node;
  if (torch::autograd::compute_requires_grad(grad_output, output)) {
    node = c10::make_intrusive<SigmoidBackwardBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(grad_output, output));
    node->grad_output_ = torch::autograd::SavedVariable(grad_output, false);
    node->output_ = torch::autograd::SavedVariable(output, false);
  }
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = Op().redispatch(keys & c10::after_autograd_keyset, grad_output, output);
  }
  if (node) torch::autograd::set_history(result, node);
  return result;
}

// ---- sigmoid: torch.sigmoid forward, this op as its derivative. ----------
// sigmoid_backward.torch.Sigmoid's forward, so that a model's training step
// enters no Python for its sigmoids either.

// aten's CPU kernel itself (at::cpu::), not at::sigmoid: that would be a
// second trip through the dispatcher, on the way to the same kernel.  (So a
// profile shows sigmoid_backward::sigmoid, with no aten::sigmoid inside.)
// A result of two huge pages or more is allocated by CpuIterator instead,
// which advises it (_huge_pages.h), from the iterator aten's structured
// sigmoid builds (a unary float op), so with the strides aten's would have;
// at::cpu::sigmoid_out then computes into it.  (The kernel at::cpu::sigmoid
// runs, sigmoid_stub, is not exported to call directly.)
at::Tensor SigmoidCpu(const at::Tensor& x) {
  // The result's bytes: an integral or bool input gives the default float.
  const c10::ScalarType result_type = c10::isIntegralType(x.scalar_type(), /*includeBool=*/true)
                                          ? c10::typeMetaToScalarType(c10::get_default_dtype())
                                          : x.scalar_type();
  const size_t huge = sb_pages::AdvisedHugePageBytes();
  if (huge == 0 || static_cast<size_t>(x.numel()) * c10::elementSize(result_type) / 2 < huge) {
    return at::cpu::sigmoid(x);
  }
  at::Tensor result;
  {
    CpuIterator iter;
    iter.build_borrowing_unary_float_op(iter.result, x);
    result = std::move(iter.result);
  }
  at::cpu::sigmoid_out(result, x);
  return result;
}

// aten's derivative of sigmoid (derivatives.yaml: sigmoid_backward(grad,
// result)), with this op.
struct SigmoidBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable result_;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const at::Tensor& grad = grads[0];
    at::Tensor grad_x;
    if (grad.defined() && task_should_compute_output(0)) {
      grad_x = Op().call(grad, result_.unpack(getptr()));
    }
    return {grad_x};
  }

  std::string name() const override { return "SigmoidBackward"; }

  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    result_.reset_data();
  }
};

at::Tensor SigmoidAutograd(c10::DispatchKeySet keys, const at::Tensor& x) {
  c10::intrusive_ptr<SigmoidBackward> node;
  if (torch::autograd::compute_requires_grad(x)) {
    node = c10::make_intrusive<SigmoidBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(x));
  }
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = SigmoidOp().redispatch(keys & c10::after_autograd_keyset, x);
  }
  if (node) {
    torch::autograd::set_history(result, node);
    node->result_ = torch::autograd::SavedVariable(result, true);
  }
  // Forward mode (PyTorch has one level, 0, as its generated kernels
  // assume): aten's tangent, conj(op(conj(dx), y)).
  if (c10::AutogradState::get_tls_state().get_fw_grad_mode() && HasTangent(x)) {
    const at::Tensor tangent = x._fw_grad(0);
    if (tangent.defined()) {
      result._set_fw_grad(Op().call(tangent.conj(), result).conj(), 0, false);
    }
  }
  return result;
}

}  // namespace

TORCH_LIBRARY(sigmoid_backward, m) {
  m.def("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor");
  m.def("sigmoid(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(sigmoid_backward, CPU, m) {
  m.impl("sigmoid_backward", &SigmoidBackwardCpu);
  m.impl("sigmoid", &SigmoidCpu);
}

TORCH_LIBRARY_IMPL(sigmoid_backward, Autograd, m) {
  m.impl("sigmoid_backward", &SigmoidBackwardAutograd);
  m.impl("sigmoid", &SigmoidAutograd);
}
