// The XLA FFI handler behind sigmoid_backward.jax: an XLA custom call that
// runs the very kernel the ufunc runs, _kernels' compute(), so that threads,
// the instruction set chosen at run time and every bit are the ufunc's.
// There is no copy of the formula here.
//
// It is a Python extension module so that it can take compute() from
// _kernels.__pyx_capi__ (the C functions Cython exports from _kernels.pxd)
// when it is imported; handler() gives XLA's handler to
// jax.ffi.register_ffi_target.  The XLA FFI headers are vendored
// (third_party/xla/ffi/api), so building this needs a C++17 compiler, not jax.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#  include <xmmintrin.h>
#endif

#include "xla/ffi/api/ffi.h"

#include "_dtypes.h"
#include "_huge_pages.h"
#include "_kernels_capi.h"

namespace ffi = xla::ffi;

namespace {

// ---- The coupling with _kernels.pxd: _kernels_capi.h. -------------------
sb_capi::ComputeRowsFn sb_compute_rows = nullptr;   // _kernels.compute_rows (_kernels_capi.h)

// The kind of an XLA dtype, from the table; -1 for one the kernels lack.
int KindOf(ffi::DataType dtype) {
#define SB_XLA_KIND(K, name, size, storage, xla) \
  if (dtype == ffi::DataType::xla) return SB_KIND_##K;
  SB_DTYPES(SB_XLA_KIND)
#undef SB_XLA_KIND
  return -1;
}

// XLA runs its CPU threads with subnormals flushed to zero (x86-64: MXCSR's
// FTZ and DAZ bits; AArch64: FPCR's FZ and FZ16), where NumPy's threads keep
// them, so a call clears those bits for its duration.  OpenMP threads that
// the call starts inherit the cleared state.
class SubnormalsKept {
 public:
#if defined(__x86_64__) || defined(_M_X64)
  SubnormalsKept() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ & ~kFlush); }
  ~SubnormalsKept() { _mm_setcsr(saved_); }   // compute() restored the flags

 private:
  static constexpr unsigned int kFlush = (1u << 15) | (1u << 6);   // FTZ, DAZ
  unsigned int saved_;
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
  SubnormalsKept() {
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved_));
    const uint64_t kept = saved_ & ~kFlush;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(kept));
  }
  ~SubnormalsKept() { __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_)); }

 private:
  static constexpr uint64_t kFlush = (1u << 24) | (1u << 19);   // FZ, FZ16
  uint64_t saved_;
#endif
};

// How the call walks its operands: each operand's step along every axis of
// the result, in bytes (0 along an axis it is broadcast on), after merging
// the axes that one step spans for all three.  XLA's buffers are dense and
// row-major, so an operand's step is its element size times its trailing
// extent, or 0 where its extent is 1 and the result's is not.
struct Walk {
  static constexpr int kMaxRank = 64;
  int rank = 0;   // after merging; the last axis is the kernel call's run
  int64_t extent[kMaxRank];
  int64_t step[3][kMaxRank];   // g, y, out
};

// The walk over ``out``'s shape, or false when an operand's shape does not
// broadcast to it (then nothing is computed).  sigmoid_backward.jax hands
// over operands of the result's rank, so no axis is missing.
bool MakeWalk(ffi::AnyBuffer::Dimensions g, ffi::AnyBuffer::Dimensions y,
              ffi::AnyBuffer::Dimensions out, int64_t size, Walk* walk) {
  const int64_t rank = static_cast<int64_t>(out.size());
  if (rank > Walk::kMaxRank || static_cast<int64_t>(g.size()) != rank ||
      static_cast<int64_t>(y.size()) != rank) {
    return false;
  }
  int64_t running[3] = {size, size, size};   // each operand's step for the axis
  int64_t step[3][Walk::kMaxRank];
  for (int64_t axis = rank - 1; axis >= 0; --axis) {
    const int64_t dims[3] = {g[axis], y[axis], out[axis]};
    for (int k = 0; k < 3; ++k) {
      if (dims[k] != dims[2] && dims[k] != 1) return false;
      step[k][axis] = (dims[k] == 1 && dims[2] != 1) ? 0 : running[k];
      running[k] *= dims[k];
    }
  }
  // Merge an axis into the next one (inner) when, for every operand, one
  // step of it is the inner axis' whole extent of steps: a single run then.
  walk->rank = 0;
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (out[axis] == 1) continue;   // nothing to walk
    const int r = walk->rank;
    bool merge = r > 0;
    for (int k = 0; k < 3 && merge; ++k) {
      merge = walk->step[k][r - 1] == step[k][axis] * out[axis];
    }
    if (merge) {
      walk->extent[r - 1] *= out[axis];
      for (int k = 0; k < 3; ++k) walk->step[k][r - 1] = step[k][axis];
    } else {
      walk->extent[r] = out[axis];
      for (int k = 0; k < 3; ++k) walk->step[k][r] = step[k][axis];
      walk->rank = r + 1;
    }
  }
  if (walk->rank == 0) {   // one element (or a rank-0 result)
    walk->rank = 1;
    walk->extent[0] = 1;
    for (int k = 0; k < 3; ++k) walk->step[k][0] = size;
  }
  return true;
}

// out = g * (1 - y) * y (conjugated for complex), element for element, with
// g and y broadcast to out's shape in place: an operand of extent 1 along an
// axis is read with step 0 there, as NumPy's iterator reads it, so nothing
// is materialised.  The two innermost merged axes are one kernel call, rows
// of runs (compute_rows: g (n, m) with y (m,) is n runs of m, which share
// the threads as one run of n x m would, where a call per run of 1,000
// elements ran on one thread: 0.83x XLA's speed); the others are walked here.
ffi::Error SigmoidBackward(ffi::AnyBuffer g, ffi::AnyBuffer y,
                           ffi::Result<ffi::AnyBuffer> out) {
  const ffi::DataType dtype = out->element_type();
  const int kind = KindOf(dtype);
  if (kind < 0 || g.element_type() != dtype || y.element_type() != dtype) {
    return ffi::Error::InvalidArgument(
        "sigmoid_backward: grad_output, output and the result must share one dtype of "
        "the kernels'");
  }
  const auto size = static_cast<int64_t>(ffi::ByteWidth(dtype));
  Walk walk;
  if (!MakeWalk(g.dimensions(), y.dimensions(), out->dimensions(), size, &walk)) {
    return ffi::Error::InvalidArgument(
        "sigmoid_backward: grad_output and output must broadcast to the result's shape, "
        "at its rank");
  }
  if (out->element_count() == 0) return ffi::Error::Success();
  // Before anything writes it: a fresh large result then faults in huge
  // pages (_huge_pages.h).
  sb_pages::AdviseHugePages(out->untyped_data(), out->size_bytes());
  const sb_kind k = static_cast<sb_kind>(kind);
  const int inner = walk.rank - 1;
  const int row = inner - 1;              // the runs' axis, or -1: one run
  const int outer = row < 0 ? 0 : row;    // the axes walked here
  const char* base[3] = {static_cast<const char*>(g.untyped_data()),
                         static_cast<const char*>(y.untyped_data()),
                         static_cast<const char*>(out->untyped_data())};
  int64_t row_step[3] = {0, 0, 0};
  if (row >= 0) {
    for (int j = 0; j < 3; ++j) row_step[j] = walk.step[j][row];
  }
  const int64_t rows = row < 0 ? 1 : walk.extent[row];
  int64_t index[Walk::kMaxRank] = {0};   // the outer axes' position
  const SubnormalsKept kept;
  for (;;) {
    int64_t offset[3] = {0, 0, 0};
    for (int axis = 0; axis < outer; ++axis) {
      for (int j = 0; j < 3; ++j) offset[j] += index[axis] * walk.step[j][axis];
    }
    sb_compute_rows(k, k, base[0] + offset[0], static_cast<Py_ssize_t>(walk.step[0][inner]),
                    static_cast<Py_ssize_t>(row_step[0]), k, base[1] + offset[1],
                    static_cast<Py_ssize_t>(walk.step[1][inner]),
                    static_cast<Py_ssize_t>(row_step[1]),
                    const_cast<char*>(base[2]) + offset[2],
                    static_cast<Py_ssize_t>(walk.step[2][inner]),
                    static_cast<Py_ssize_t>(row_step[2]),
                    static_cast<Py_ssize_t>(walk.extent[inner]), static_cast<Py_ssize_t>(rows),
                    0);
    int axis = outer - 1;   // the next position of the outer axes, last fastest
    while (axis >= 0 && ++index[axis] == walk.extent[axis]) index[axis--] = 0;
    if (axis < 0) break;
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(SbSigmoidBackward, SigmoidBackward,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // grad_output
                                  .Arg<ffi::AnyBuffer>()  // output
                                  .Ret<ffi::AnyBuffer>());

namespace {

PyObject* Handler(PyObject*, PyObject*) {
  return PyCapsule_New(reinterpret_cast<void*>(&SbSigmoidBackward), nullptr, nullptr);
}

PyMethodDef kMethods[] = {
    {"handler", Handler, METH_NOARGS,
     "The XLA FFI handler (a PyCapsule), for jax.ffi.register_ffi_target."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_xla_ffi",
                       "The XLA FFI handler of sigmoid_backward.jax.", -1, kMethods};

}  // namespace

PyMODINIT_FUNC PyInit__xla_ffi(void) {
  sb_compute_rows = sb_capi::ImportComputeRows("sigmoid_backward._frameworks._xla_ffi");
  if (sb_compute_rows == nullptr) return nullptr;
  return PyModule_Create(&kModule);
}
