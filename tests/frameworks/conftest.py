"""PyTorch and JAX: tensors back for tensors, DLPack inputs, the
torch.library op, the XLA FFI target.  The tests skip without the library
they need, and fail instead under SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1
(.ci/run's framework step)."""
