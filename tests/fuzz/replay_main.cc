// Replays a fuzz target's corpus as an ordinary test under any compiler: every file of the
// directory given on the command line is fed to LLVMFuzzerTestOneInput once. A crash or a
// sanitizer report fails the test; an empty or missing corpus fails it too. Seeds named by
// what the decoder must answer are checked against the verdict the target reports
// (verdict.h): valid-* must be accepted; corrupt-*, trunc-* and unsupported-* (well formed,
// but of a kind or version this reader does not take) refused.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using peerbloom::fuzz::Verdict;

// What a seed's name says the decoder must answer (kNone: the name promises nothing).
Verdict Expected(const std::string& name) {
  if (name.starts_with("valid-")) return Verdict::kAccepted;
  for (const char* refused : {"corrupt-", "trunc-", "unsupported-"}) {
    if (name.starts_with(refused)) return Verdict::kRefused;
  }
  return Verdict::kNone;
}

const char* Describe(Verdict v) {
  switch (v) {
    case Verdict::kAccepted:
      return "accepted";
    case Verdict::kRefused:
      return "refused";
    case Verdict::kNone:
      break;
  }
  return "no verdict";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  size_t files = 0, checked = 0, wrong = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1], ec)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    peerbloom::fuzz::LastVerdict() = Verdict::kNone;
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++files;
    const std::string name = entry.path().filename().string();
    const Verdict want = Expected(name);
    if (want == Verdict::kNone) continue;
    ++checked;
    const Verdict got = peerbloom::fuzz::LastVerdict();
    if (got != want) {
      std::fprintf(stderr, "replay: seed '%s' was %s, its name says %s\n", name.c_str(),
                   Describe(got), Describe(want));
      ++wrong;
    }
  }
  if (ec || files == 0) {
    std::fprintf(stderr, "replay: no corpus files in '%s'\n", argv[1]);
    return 1;
  }
  std::printf("replayed %zu corpus files, %zu checked against their names, %zu wrong\n", files,
              checked, wrong);
  return wrong == 0 ? 0 : 1;
}
