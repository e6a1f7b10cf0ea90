// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the libsvm reader on arbitrary bytes. Any outcome but a parsed, valid matrix or a
// ParseError/InvalidArgument is a bug (crashes and sanitizer reports are caught by the fuzzer itself).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/matrix.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the options; the rest is the file.
  const std::uint8_t mode = data[0];
  hetglm::LibsvmOptions o;
  o.zero_based = mode & 1;
  o.n_threads = (mode & 2) ? 2 : 1;
  if (mode & 4) o.n_features = mode >> 3;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const hetglm::Dataset d = hetglm::parse_libsvm(text, "fuzz.svm", o);
    hetglm::validate(d.X, "fuzz");  // throws InvalidArgument on a broken matrix: that would be a bug
    if (d.y.size() != static_cast<std::size_t>(d.X.n_rows)) std::abort();
    if (o.n_features >= 0 && d.X.n_cols > o.n_features) std::abort();
  } catch (const hetglm::ParseError&) {
  } catch (const hetglm::IoError&) {
  }
  return 0;
}
