// Fuzz target for the daemon's config file parser (TOML, then every key's checks and the
// cross-key checks). Properties: no crash, no sanitizer report; an error names the file and
// a line ("fuzz.toml:N: ..."); an accepted config has the required keys.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/config/config.h"
#include "tests/fuzz/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  peerbloom::daemon::Config config;
  const peerbloom::Status s = peerbloom::daemon::ParseConfig(text, "fuzz.toml", &config);
  peerbloom::fuzz::ReportVerdict(s.ok());
  if (s.ok() && (config.node_id.empty() || config.listen.empty() || config.data_dir.empty())) {
    std::abort();
  }
  if (!s.ok() && s.message().rfind("fuzz.toml", 0) != 0) std::abort();
  return 0;
}
