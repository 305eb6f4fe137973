// Replays a fuzz corpus without libFuzzer: `fuzz_replay_<area> DIR|FILE...` feeds every
// regular file (directories: every file inside, in name order) to the harness's
// LLVMFuzzerTestOneInput once. A harness reports a bug by aborting (fuzz_support.hpp),
// so a clean exit means every input passed. Built in the normal build with the tests:
// the seeds and every crash reproducer stay a regression test without clang.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "fuzz replay: %s is neither a file nor a directory\n", argv[i]);
      return 2;
    }
  }
  // An empty corpus would make the test pass vacuously.
  if (files.empty()) {
    std::fprintf(stderr, "fuzz replay: no inputs (usage: %s DIR|FILE...)\n", argv[0]);
    return 2;
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::vector<std::uint8_t> bytes = read_bytes(f);
    // The name first: when a harness aborts, the last line names the input.
    std::fprintf(stderr, "replay %s (%zu bytes)\n", f.filename().c_str(), bytes.size());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("fuzz replay: %zu inputs passed\n", files.size());
  return 0;
}
