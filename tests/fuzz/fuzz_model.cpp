// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the model loader on arbitrary bytes. A model that loads must format and load back to
// the same text (round trip) and must predict on a small matrix without failing.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "hetglm/error.hpp"
#include "hetglm/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  hetglm::LinearModel m;
  try {
    m = hetglm::parse_model(text, "fuzz.model");
  } catch (const hetglm::ParseError&) {
    return 0;
  }
  const std::string once = hetglm::format_model(m);
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
