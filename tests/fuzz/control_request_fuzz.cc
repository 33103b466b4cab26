// Fuzz target for a control request as the daemon decodes it: the header frame (size, UTF-8,
// JSON, an object with a string "op", the "input" field) and each line of a batch body as a
// key token or a URL under both key schemes. Input: header bytes, a NUL, body bytes (no NUL:
// header only). Properties: no crash, no sanitizer report, an accepted header is an object
// with a string op; the verdict is the header's.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/control/control_server.h"
#include "peerbloom/key_scheme.h"
#include "tests/fuzz/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  const std::string_view body = nul == std::string_view::npos ? "" : input.substr(nul + 1);
  nlohmann::json header;
  const bool ok = peerbloom::daemon::ParseControlHeader(text, &header).ok();
  peerbloom::fuzz::ReportVerdict(ok);
  if (!ok) return 0;
  if (!header.is_object() || !header["op"].is_string()) std::abort();
  const auto input_field = header.find("input");
  const bool keys = input_field != header.end() && *input_field == "key";
  static peerbloom::KeyEncoder squid(peerbloom::KeyScheme::kSquidMd5);
  static peerbloom::KeyEncoder raw(peerbloom::KeyScheme::kRaw);
  std::string scratch;
  std::string_view rest = body;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    if (keys) {
      (void)peerbloom::KeyBytesFromToken(peerbloom::KeyScheme::kSquidMd5, line, &scratch);
      (void)peerbloom::KeyBytesFromToken(peerbloom::KeyScheme::kRaw, line, &scratch);
    } else {
      (void)squid.FromUrl(line);
      (void)raw.FromUrl(line);
    }
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return 0;
}
