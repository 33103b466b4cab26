// Replays a fuzz target's corpus as an ordinary test under any compiler: every file of the
// directory given on the command line is fed to LLVMFuzzerTestOneInput once. A crash or a
// sanitizer report fails the test; an empty or missing corpus fails it too.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  size_t files = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1], ec)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++files;
  }
  if (ec || files == 0) {
    std::fprintf(stderr, "replay: no corpus files in '%s'\n", argv[1]);
    return 1;
  }
  std::printf("replayed %zu corpus files\n", files);
  return 0;
}
