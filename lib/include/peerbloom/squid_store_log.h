// Squid store.log lines (`cache_store_log`), as written by Squid 5 and 6 (src/store_log.cc):
//
//   time action dir_no file_no KEY status date lastmod expires content-type sizes method URL
//   1795327317.643 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F  200 1795327317 ...
//     ... 1795327306 1795413717 text/plain 1354/1354 GET http://127.0.0.1:8080/obj1.txt
//
// Fields are separated by runs of spaces (Squid pads some numbers). The content type may
// contain spaces ("text/html; charset=utf-8"), so the parser takes the first nine fields from
// the left and the last three (sizes, method, URL) from the right; whatever lies between is
// the content type. Under Squid's default `uri_whitespace strip` the URL is one field; if the
// sizes field does not parse (a URL with spaces), the first sizes-shaped field after the
// content type is used and the URL is the rest of the line.
//
// KEY is the 16-byte MD5 store key in hex. It is the object's identity: the URL column is not
// (query strings may be stripped to "...?", some lines print "?"). URLs whose path starts with
// "/squid-internal-" (the Cache Digest itself, cache manager pages, icons) are flagged so that
// callers can ignore them. docs/squid.md describes the format and its pitfalls.
#ifndef PEERBLOOM_SQUID_STORE_LOG_H_
#define PEERBLOOM_SQUID_STORE_LOG_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom {

// A store.log line longer than this is refused without being looked at. Squid refuses
// request URLs longer than 8 KiB (MAX_URL), so a real line stays far below.
inline constexpr size_t kMaxStoreLogLineBytes = 32 * 1024;

enum class StoreLogAction : uint8_t {
  kSwapOut,  // the object was written to the disk store: it is now held
  kRelease,  // the object was removed (or never stored; the key says which object)
  kSoFail,   // writing to disk failed: nothing is held
  kOther,    // an action this parser does not know; callers ignore it
};

// One parsed line. The string views point into the line given to ParseStoreLogLine and are
// valid as long as it is.
struct StoreLogEntry {
  StoreLogAction action = StoreLogAction::kOther;
  std::string_view action_name;   // as written, e.g. "SWAPOUT"
  SquidKey key{};                 // the MD5 store key (field 5)
  std::string_view content_type;  // may contain spaces
  std::string_view method;        // e.g. "GET", "PURGE"
  std::string_view url;           // as logged; not a reliable identity
  bool squid_internal = false;    // URL path starts with "/squid-internal-"
};

// Parses one line (without its '\n'; a trailing '\r' or spaces are tolerated). Returns
// InvalidArgument with the reason for a malformed line: too long, too few fields, a bad
// timestamp, key or sizes field. Never reads past `line`.
Status ParseStoreLogLine(std::string_view line, StoreLogEntry* out);

// Whether a URL (absolute, or a bare path as Squid logs for some errors) names one of
// Squid's internal objects: its path starts with "/squid-internal-".
bool IsSquidInternalUrl(std::string_view url) noexcept;

// The 16 key bytes as a string_view, for IndexHasher::Hash and the like.
inline std::string_view SquidKeyBytes(const SquidKey& key) noexcept {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_STORE_LOG_H_
