#include "peerbloom/squid_store_log.h"

#include <array>
#include <string>

#include "peerbloom/escape.h"

namespace peerbloom {
namespace {

constexpr size_t kKeyFields = 5;    // time action dir_no file_no KEY
constexpr size_t kLeftFields = 9;   // the key fields, then status date lastmod expires
constexpr size_t kRightFields = 3;  // sizes method URL
constexpr size_t kMinFields = kLeftFields + 1 + kRightFields;

bool IsSpace(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }
bool IsDigit(char c) noexcept { return c >= '0' && c <= '9'; }

// A bad field is quoted escaped (peerbloom/escape.h): store.log holds whatever bytes a client
// sent, and the message goes to logs.
std::string Quote(std::string_view field) { return QuoteBytes(field); }

// Splits off up to `n` fields from the left of `rest`; returns how many it found and leaves
// `rest` just after the last one.
size_t TakeLeft(std::string_view* rest, std::string_view* fields, size_t n) noexcept {
  size_t found = 0;
  size_t i = 0;
  while (found < n) {
    while (i < rest->size() && IsSpace((*rest)[i])) ++i;
    if (i == rest->size()) break;
    const size_t start = i;
    while (i < rest->size() && !IsSpace((*rest)[i])) ++i;
    fields[found++] = rest->substr(start, i - start);
  }
  rest->remove_prefix(i);
  return found;
}

// Splits off up to `n` fields from the right of `rest` (fields[n-1] is the last one).
size_t TakeRight(std::string_view* rest, std::string_view* fields, size_t n) noexcept {
  size_t found = 0;
  size_t end = rest->size();
  while (found < n) {
    while (end > 0 && IsSpace((*rest)[end - 1])) --end;
    if (end == 0) break;
    size_t start = end;
    while (start > 0 && !IsSpace((*rest)[start - 1])) --start;
    fields[n - 1 - found] = rest->substr(start, end - start);
    ++found;
    end = start;
  }
  rest->remove_suffix(rest->size() - end);
  return found;
}

std::string_view Trim(std::string_view s) noexcept {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// "1795327317.643": digits, optionally a '.' and more digits.
bool IsTimestamp(std::string_view s) noexcept {
  size_t i = 0;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == 0) return false;
  if (i == s.size()) return true;
  if (s[i] != '.') return false;
  for (++i; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
  }
  return true;
}

// An optionally negative decimal integer ("200", "-1").
bool IsInteger(std::string_view s) noexcept {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// "expected/real", each an optionally negative integer.
// "expected/real", each an optionally negative integer, or "?/?" (no reply to measure).
bool IsSizes(std::string_view s) noexcept {
  if (s == "?/?") return true;
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return false;
  return IsInteger(s.substr(0, slash)) && IsInteger(s.substr(slash + 1));
}

StoreLogAction ActionFromName(std::string_view name) noexcept {
  if (name == "SWAPOUT") return StoreLogAction::kSwapOut;
  if (name == "RELEASE") return StoreLogAction::kRelease;
  if (name == "SO_FAIL") return StoreLogAction::kSoFail;
  return StoreLogAction::kOther;
}

// The key columns, which every line form carries: time, action, dir_no, file_no, KEY.
Status CheckKeyFields(const std::string_view* left, StoreLogEntry* out) {
  if (!IsTimestamp(left[0]))
    return Status::InvalidArgument("timestamp " + Quote(left[0]) + " is not a number");
  if (!ParseSquidKeyHex(left[4], &out->key)) {
    return Status::InvalidArgument("store key " + Quote(left[4]) + " is not 32 hex digits");
  }
  out->action_name = left[1];
  out->action = ActionFromName(left[1]);
  return Status::Ok();
}

// status, date, lastmod, expires: integers, or "?" where Squid had no reply to print.
Status CheckReplyFields(const std::string_view* left) {
  static constexpr std::string_view kNames[] = {"http status", "date", "last-modified", "expires"};
  for (size_t i = 0; i < std::size(kNames); ++i) {
    const std::string_view field = left[kKeyFields + i];
    if (field != "?" && !IsInteger(field)) {
      return Status::InvalidArgument(std::string(kNames[i]) + " " + Quote(field) +
                                     " is not an integer");
    }
  }
  return Status::Ok();
}

// The fallback for a URL with spaces in it (squid.conf `uri_whitespace allow`): the first
// sizes-shaped field after the content type, followed by the method and the URL (the rest).
// The key, on the left, is unaffected either way.
bool SplitAtSizes(std::string_view s, StoreLogEntry* entry) {
  std::array<std::string_view, 2> f;
  std::string_view rest = s;
  size_t seen = 0;
  while (TakeLeft(&rest, f.data(), 1) == 1) {
    ++seen;
    if (seen < 2 || !IsSizes(f[0])) continue;
    std::string_view after = rest;
    if (TakeLeft(&after, &f[1], 1) != 1 || Trim(after).empty()) return false;
    entry->content_type = Trim(s.substr(0, static_cast<size_t>(f[0].data() - s.data())));
    entry->method = f[1];
    entry->url = Trim(after);
    return true;
  }
  return false;
}

// Splits what follows the key fields: four reply fields, the content type, sizes, method
// and URL. `left` holds the line's first `n_left` fields, `after_left` what follows them.
Status ParseReplyFields(const std::string_view* left, size_t n_left, std::string_view after_left,
                        StoreLogEntry* entry) {
  std::array<std::string_view, kRightFields> right;
  std::string_view rest = after_left;
  const size_t n_right = TakeRight(&rest, right.data(), kRightFields);
  const std::string_view content_type = Trim(rest);
  if (n_left < kLeftFields || n_right < kRightFields || content_type.empty()) {
    const size_t fields = n_left + n_right + (content_type.empty() ? 0 : 1);
    return Status::InvalidArgument("line has '" + std::to_string(fields) +
                                   "' fields, expected at least '" + std::to_string(kMinFields) +
                                   "'");
  }
  PEERBLOOM_RETURN_IF_ERROR(CheckReplyFields(left));
  entry->content_type = content_type;
  entry->method = right[1];
  entry->url = right[2];
  if (!IsSizes(right[0]) && !SplitAtSizes(after_left, entry)) {
    return Status::InvalidArgument("sizes field " + Quote(right[0]) + " is not 'expected/real'");
  }
  entry->squid_internal = IsSquidInternalUrl(entry->url);
  return Status::Ok();
}

}  // namespace

bool IsSquidInternalUrl(std::string_view url) noexcept {
  constexpr std::string_view kInternal = "/squid-internal-";
  std::string_view path = url;
  const size_t scheme = url.find("://");
  if (scheme != std::string_view::npos) {
    const size_t slash = url.find('/', scheme + 3);
    if (slash == std::string_view::npos) return false;
    path = url.substr(slash);
  }
  return path.substr(0, kInternal.size()) == kInternal;
}

Status ParseStoreLogLine(std::string_view line, StoreLogEntry* out) {
  if (line.size() > kMaxStoreLogLineBytes) {
    return Status::InvalidArgument("line of '" + std::to_string(line.size()) +
                                   "' bytes exceeds the limit of '" +
                                   std::to_string(kMaxStoreLogLineBytes) + "'");
  }
  std::array<std::string_view, kLeftFields> left;
  std::string_view rest = line;
  const size_t n_left = TakeLeft(&rest, left.data(), kLeftFields);
  if (n_left == 0) return Status::InvalidArgument("empty line");
  if (n_left < kKeyFields) {
    return Status::InvalidArgument("line has '" + std::to_string(n_left) +
                                   "' fields, expected at least '" + std::to_string(kMinFields) +
                                   "'");
  }
  StoreLogEntry entry;
  PEERBLOOM_RETURN_IF_ERROR(CheckKeyFields(left.data(), &entry));
  const Status reply = ParseReplyFields(left.data(), n_left, rest, &entry);
  if (!reply.ok()) {
    // A RELEASE names its object by the key alone, and Squid prints the rest only when the
    // object still has a memory copy (`... KEY   ?  ?  ?  ? ?/? ?/? ? ?` otherwise, the usual
    // eviction of an on-disk object). Whatever follows the key, the key stops being held.
    if (entry.action != StoreLogAction::kRelease) return reply;
    entry.content_type = entry.method = entry.url = {};
    entry.squid_internal = false;
  }
  *out = entry;
  return Status::Ok();
}

}  // namespace peerbloom
