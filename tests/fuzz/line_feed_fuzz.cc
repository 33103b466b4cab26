// Fuzz target for the line feed parser (lib/feed, ParseFeedLine), the format of feed files
// and FIFOs that other programs write. Each line of the input is parsed under both key
// schemes. Properties: no crash, no sanitizer report; the verdict is the first line's under
// squid-md5.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "peerbloom/feed.h"
#include "tests/fuzz/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  bool first = true;
  while (true) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    peerbloom::FeedLine out;
    const bool ok = peerbloom::ParseFeedLine(line, peerbloom::KeyScheme::kSquidMd5, &out).ok();
    if (first) peerbloom::fuzz::ReportVerdict(ok);
    first = false;
    static peerbloom::KeyEncoder squid(peerbloom::KeyScheme::kSquidMd5);
    static peerbloom::KeyEncoder raw(peerbloom::KeyScheme::kRaw);
    std::string key;
    if (ok && out.op != peerbloom::FeedOp::kNone) {
      (void)peerbloom::FeedLineKeyBytes(out, &squid, &key);
    }
    if (peerbloom::ParseFeedLine(line, peerbloom::KeyScheme::kRaw, &out).ok() &&
        out.op != peerbloom::FeedOp::kNone) {
      (void)peerbloom::FeedLineKeyBytes(out, &raw, &key);
    }
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return 0;
}
