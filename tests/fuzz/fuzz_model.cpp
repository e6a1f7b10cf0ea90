// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the model loader on arbitrary bytes. A model that loads must format and load back to
// the same text (round trip) and must predict on a small matrix without failing. Differential: the streaming
// loader (read_model_stream), fed in pieces of 1..16 bytes with blocks of 1..64 bytes (chosen from the input's
// size), must give the same model or the same message as parse_model on the whole text.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hetglm/error.hpp"
#include "hetglm/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  hetglm::ModelLoadOptions so;
  so.block_bytes = 1 + (size * 7) % 64;
  const std::size_t piece = 1 + size % 16;
  std::size_t pos = 0;
  std::string streamed_error, streamed_text;
  try {
    streamed_text = hetglm::format_model(hetglm::read_model_stream(
        [&](char* buf, std::size_t n) {
          const std::size_t k = std::min({n, piece, text.size() - pos});
          std::memcpy(buf, text.data() + pos, k);
          pos += k;
          return k;
        },
        "fuzz.model", so));
  } catch (const hetglm::ParseError& e) {
    streamed_error = e.what();
  }
  hetglm::LinearModel m;
  try {
    m = hetglm::parse_model(text, "fuzz.model");
  } catch (const hetglm::ParseError& e) {
    if (streamed_error != e.what()) std::abort();
    return 0;
  }
  const std::string once = hetglm::format_model(m);
  if (!streamed_error.empty() || streamed_text != once) std::abort();
  const std::string twice = hetglm::format_model(hetglm::parse_model(once, "fuzz.model"));
  if (once != twice) std::abort();
  hetglm::CsrMatrix X;
  X.n_rows = 2;
  X.n_cols = 3;
  X.offsets = {0, 2, 3};
  X.indices = {0, 2, 1};
  X.values = {1.0f, -2.0f, 0.5f};
  (void)hetglm::predict(m, X);
  if (m.model == "logistic") (void)hetglm::predict_proba(m, X);
  return 0;
}
