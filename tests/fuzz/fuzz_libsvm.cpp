// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the libsvm reader on arbitrary bytes. Any outcome but a parsed, valid matrix or a
// ParseError/InvalidArgument is a bug (crashes and sanitizer reports are caught by the fuzzer itself).
// Differential: the streaming reader (read_libsvm_stream), fed in pieces of 1..16 bytes with blocks of 1..64
// bytes (both chosen from the input's size; 4 KiB blocks for gzip), must give exactly what parse_libsvm gives on
// the whole text: the same arrays or the same message. Text that starts with the gzip magic bytes is inflated by
// the streaming reader only, so there it just must not crash.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/matrix.hpp"

namespace {

struct Outcome {
  bool ok = false;
  hetglm::Dataset data;
  std::string error;
};

template <class F>
Outcome run(F&& f) {
  Outcome o;
  try {
    o.data = f();
    o.ok = true;
  } catch (const hetglm::ParseError& e) {
    o.error = std::string("ParseError ") + e.what();
  } catch (const hetglm::IoError& e) {
    o.error = std::string("IoError ") + e.what();
  }
  return o;
}

void check_valid(const hetglm::Dataset& d, const hetglm::LibsvmOptions& o) {
  hetglm::validate(d.X, "fuzz");  // throws InvalidArgument on a broken matrix: that would be a bug
  if (d.y.size() != static_cast<std::size_t>(d.X.n_rows)) std::abort();
  if (o.n_features >= 0 && d.X.n_cols > o.n_features) std::abort();
}

/// Bitwise equality (floats by bits, so -0 and 0 differ).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool same(const hetglm::Dataset& a, const hetglm::Dataset& b) {
  return a.X.n_rows == b.X.n_rows && a.X.n_cols == b.X.n_cols && a.X.offsets == b.X.offsets &&
         a.X.indices == b.X.indices && same_bits(a.X.values, b.X.values) && same_bits(a.y, b.y);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the options; the rest is the file. The streaming geometry follows from the size.
  const std::uint8_t mode = data[0];
  hetglm::LibsvmOptions o;
  o.zero_based = mode & 1;
  o.n_threads = (mode & 2) ? 2 : 1;
  if (mode & 4) o.n_features = mode >> 3;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool gzip = text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f &&
                    static_cast<unsigned char>(text[1]) == 0x8b;

  const Outcome whole = run([&] { return hetglm::parse_libsvm(text, "fuzz.svm", o); });
  if (whole.ok) check_valid(whole.data, o);

  hetglm::LibsvmOptions so = o;
  // gzip may expand 1000-fold: blocks of 4 KiB keep such an input's batches few.
  so.block_bytes = gzip ? 4096 : 1 + (size * 7) % 64;
  const std::size_t piece = 1 + size % 16;
  std::size_t pos = 0;
  const Outcome streamed = run([&] {
    return hetglm::read_libsvm_stream(
        [&](char* buf, std::size_t n) {
          const std::size_t k = std::min({n, piece, text.size() - pos});
          std::memcpy(buf, text.data() + pos, k);
          pos += k;
          return k;
        },
        "fuzz.svm", so);
  });
  if (streamed.ok) check_valid(streamed.data, o);
  if (gzip) return 0;
  if (whole.ok != streamed.ok || whole.error != streamed.error) std::abort();
  if (whole.ok && !same(whole.data, streamed.data)) std::abort();
  return 0;
}
