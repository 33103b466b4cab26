#include "daemon/relay/relay_seen_file.h"

#include <charconv>

#include "peerbloom/hex.h"

namespace peerbloom::daemon {
namespace {

constexpr std::string_view kHeader = "peerbloom-relay-seen 1";
constexpr char kHex[] = "0123456789abcdef";

bool ParseNumber(std::string_view s, uint64_t* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

bool ParseHex(std::string_view s, std::string* out) {
  if (s.empty() || s.size() % 2 != 0) return false;
  out->clear();
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = HexDigitValue(s[i], /*lower_only=*/true);
    const int lo = HexDigitValue(s[i + 1], /*lower_only=*/true);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

// The next space-separated word of *line, consumed.
std::string_view Word(std::string_view* line) {
  const size_t end = line->find(' ');
  const std::string_view w = line->substr(0, end);
  line->remove_prefix(end == std::string_view::npos ? line->size() : end + 1);
  return w;
}

Status LineError(size_t n, const std::string& why) {
  return Status::Corruption(std::string(kRelaySeenFile) + " line " + std::to_string(n) + ": " +
                            why);
}

}  // namespace

std::string EncodeRelaySeen(const std::vector<SeenSet::SavedOrigin>& saved) {
  std::string out(kHeader);
  out += '\n';
  for (const SeenSet::SavedOrigin& s : saved) {
    for (unsigned char c : s.origin) {
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    out += ' ' + std::to_string(s.floor);
    for (const auto& [lo, hi] : s.ranges) {
      out += ' ' + std::to_string(lo) + '-' + std::to_string(hi);
    }
    out += '\n';
  }
  return out;
}

Status DecodeRelaySeen(std::string_view text, std::vector<SeenSet::SavedOrigin>* saved) {
  saved->clear();
  if (text.size() > kMaxRelaySeenBytes) {
    return Status::Corruption(std::string(kRelaySeenFile) + " is larger than " +
                              std::to_string(kMaxRelaySeenBytes) + " bytes");
  }
  if (text.empty() || text.back() != '\n') {
    return Status::Corruption(std::string(kRelaySeenFile) + " is cut short (no final newline)");
  }
  size_t n = 0;
  while (!text.empty()) {
    ++n;
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol + 1);
    if (n == 1) {
      if (line != kHeader) return LineError(n, "not '" + std::string(kHeader) + "'");
      continue;
    }
    SeenSet::SavedOrigin s;
    if (!ParseHex(Word(&line), &s.origin)) return LineError(n, "the origin is not hex");
    if (!ParseNumber(Word(&line), &s.floor)) return LineError(n, "the floor is not a number");
    uint64_t last = s.floor;
    while (!line.empty()) {
      const std::string_view range = Word(&line);
      const size_t dash = range.find('-');
      uint64_t lo = 0;
      uint64_t hi = 0;
      if (dash == std::string_view::npos || !ParseNumber(range.substr(0, dash), &lo) ||
          !ParseNumber(range.substr(dash + 1), &hi)) {
        return LineError(n, "'" + std::string(range) + "' is not a range LO-HI");
      }
      if (lo > hi || lo <= last) {
        return LineError(n, "ranges must ascend above the floor, disjoint");
      }
      s.ranges.emplace_back(lo, hi);
      last = hi;
    }
    saved->push_back(std::move(s));
  }
  if (n == 0) return LineError(1, "empty");
  return Status::Ok();
}

}  // namespace peerbloom::daemon
