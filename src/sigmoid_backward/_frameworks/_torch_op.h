// What the native op's two files share: _torch_op.cc registers the ops and
// has their kernels; _torch_op_module.cc is the extension module's Python
// side, whose entry points call the ops through these handles;
// _torch_op_transforms.cc has the ops' kernels under torch.func.
#ifndef SIGMOID_BACKWARD_TORCH_OP_H
#define SIGMOID_BACKWARD_TORCH_OP_H

#include <Python.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <utility>

namespace sb_torch {

using OpSignature = at::Tensor(const at::Tensor&, const at::Tensor&);
using SigmoidSignature = at::Tensor(const at::Tensor&);

// sigmoid_backward::sigmoid_backward and sigmoid_backward::sigmoid, found once.
const c10::TypedOperatorHandle<OpSignature>& Op();
const c10::TypedOperatorHandle<SigmoidSignature>& SigmoidOp();

// _kernels' compute_rows, through its capsule (_kernels_capi.h): false,
// with a Python ImportError set, when _kernels cannot give it.
bool ImportKernels();

// (calls, elements): the native CPU kernel's calls so far, and their elements.
std::pair<int64_t, int64_t> KernelCounts();

// The Python kernels of the calls under torch.func's transforms that
// _torch_op_transforms.cc leaves to Python: fn(grad_output, output) and
// fn(x), called only while a transform is active.  Kept (new references).
void SetTransforms(PyObject* sigmoid_backward, PyObject* sigmoid);

}  // namespace sb_torch

#endif  // SIGMOID_BACKWARD_TORCH_OP_H
