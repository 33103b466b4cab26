// Fuzzes the cache-file swap metadata parser and the swap.state header, record and replay
// code: no input may crash them, a parsed metadata's views and lengths stay inside the
// input, and a replay never returns more keys than it applied ADD records. The verdict
// reported to the corpus replay: accepted when either reading (cache-file metadata or a
// swap.state header) accepts the bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "peerbloom/squid_cache_dir.h"
#include "peerbloom/squid_swap_meta.h"
#include "tests/fuzz/verdict.h"

namespace {

bool Inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  peerbloom::SwapMeta meta;
  const bool meta_ok = peerbloom::ParseSquidSwapMeta(input, &meta).ok();
  if (meta_ok) {
    if (meta.header_bytes > input.size() || !Inside(meta.url, input) ||
        !Inside(meta.vary_headers, input)) {
      std::abort();
    }
  }
  // The same bytes as a swap.state: a header, then whole records.
  peerbloom::SwapStateReplay replay;
  const bool state_ok = replay.Begin(input).ok();
  peerbloom::fuzz::ReportVerdict(meta_ok || state_ok);
  if (state_ok) {
    size_t at = peerbloom::kSwapStateRecordBytes;
    for (; at + peerbloom::kSwapStateRecordBytes <= input.size();
         at += peerbloom::kSwapStateRecordBytes) {
      replay.Apply(input.substr(at, peerbloom::kSwapStateRecordBytes));
    }
    const size_t live = replay.Finish().size();
    const peerbloom::SwapStateStats& s = replay.stats();
    if (live > s.adds - s.private_adds || s.adds + s.dels + s.invalid != s.records) std::abort();
  }
  return 0;
}
