// Fuzzes the store.log line parser and live-key bookkeeping, the generic feed line parser
// and the live-key snapshot decoder: no input may crash them, the live set must stay equal
// to adds minus removes, and a snapshot of it must decode back to the same size. The verdict
// reported to the corpus replay is the store.log parser's: accepted when no non-empty line is
// malformed (feed_lines.txt holds feed commands, not store.log lines, and names no verdict).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "peerbloom/feed.h"
#include "peerbloom/squid_store_log_state.h"
#include "tests/fuzz/verdict.h"

namespace {

void CheckSnapshotRoundTrip(const peerbloom::StoreLogState& state) {
  std::string snapshot;
  state.EncodeTo(&snapshot);
  peerbloom::SquidKeySet back;
  if (!back.DecodeFrom(snapshot, state.live().size()).ok()) std::abort();
  if (back.size() != state.live().size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  peerbloom::StoreLogState state;
  bool every_line_parsed = true;  // the verdict: no non-empty line is a malformed store.log line
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(start, end - start);
    peerbloom::SquidKey key;
    peerbloom::Status error;
    const peerbloom::StoreLogDecision decision = state.ApplyLine(line, &key, &error);
    if (decision == peerbloom::StoreLogDecision::kMalformed) {
      if (error.message().empty()) std::abort();
      every_line_parsed &= line.empty();
    }
    peerbloom::FeedLine feed;
    for (auto scheme : {peerbloom::KeyScheme::kRaw, peerbloom::KeyScheme::kSquidMd5}) {
      if (!peerbloom::ParseFeedLine(line, scheme, &feed).ok()) continue;
      if (feed.op == peerbloom::FeedOp::kNone) continue;
      peerbloom::KeyEncoder encoder(scheme);
      std::string bytes;
      if (!peerbloom::FeedLineKeyBytes(feed, &encoder, &bytes).ok()) std::abort();
    }
    start = end + 1;
  }
  peerbloom::fuzz::ReportVerdict(every_line_parsed);
  const peerbloom::StoreLogCounters& c = state.counters();
  if (state.live().size() != c.adds - c.removes) std::abort();
  CheckSnapshotRoundTrip(state);
  // The raw input as a snapshot: refused or decoded, never more than the cap.
  peerbloom::SquidKeySet set;
  if (set.DecodeFrom(input, 4096).ok() && set.size() > 4096) std::abort();
  return 0;
}
