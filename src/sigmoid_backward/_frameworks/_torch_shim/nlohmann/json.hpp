// Not nlohmann's json: the declarations that torch's own headers need to
// compile, for the native op's build only (meson.build puts this folder on
// its include path).
//
// torch's ATen/functorch/Interpreter.h (under DynamicLayer.h, which the
// vmap kernels of _torch_op_transforms.cc need) includes <nlohmann/json.hpp>
// for Interpreter::serialize and deserialize, and torch's wheels do not
// ship that header (pytorch/pytorch#181565).  Those two inline members are
// never used here, so none of what they name is compiled into the module:
// these members are declared and never defined (nm -D of the module lists
// no nlohmann symbol).  What this guards: a future torch header that
// calls one of them in code the module keeps makes the module fail to
// import with an undefined symbol, which the native op's tests import.
// What it does not: a torch type holding a json by value would compile
// with this empty class's size.  In torch 2.13 only Interpreter.h, among
// the headers the module includes, names json, and only in those two
// members and in templates the module never instantiates; check again
// when the build moves to another torch.
#ifndef SIGMOID_BACKWARD_TORCH_SHIM_NLOHMANN_JSON_HPP
#define SIGMOID_BACKWARD_TORCH_SHIM_NLOHMANN_JSON_HPP

#include <string>

namespace nlohmann {

class json {
 public:
  json();
  template <typename T>
  json(const T& value);
  std::string dump() const;
  static json parse(const std::string& text);
  template <typename T>
  T get() const;
};

}  // namespace nlohmann

#endif  // SIGMOID_BACKWARD_TORCH_SHIM_NLOHMANN_JSON_HPP
