// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the hetglm command line's option parsing. The input is split at NUL bytes into argv;
// the CLI runs in the current folder (the runner uses an empty scratch folder). Any exit code is fine; a
// crash, a sanitizer report or an uncaught exception is a bug.
#include <cstdint>
#include <string>
#include <vector>

int hetglm_cli_main(int argc, char** argv);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"hetglm"};
  std::string cur;
  for (std::size_t i = 0; i < size && args.size() < 32; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) args.push_back(cur);
  // A long run that the input asks for is not a bug: cap the epoch budget.
  for (std::size_t i = 1; i + 1 < args.size(); ++i)
    if (args[i] == "--max-epochs" && args[i + 1].size() > 3) args[i + 1] = "100";
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  (void)hetglm_cli_main(static_cast<int>(args.size()), argv.data());
  return 0;
}
