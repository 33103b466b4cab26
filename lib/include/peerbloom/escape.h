// Escaping: any byte string as text that is safe to put in a JSON string, a log line or a
// terminal, for messages that quote what came from outside (a request, a feed line, an
// argument).
//
// Well-formed UTF-8 (RFC 3629: shortest form only, no surrogates, nothing above U+10FFFF)
// passes through unchanged except for:
//
//   backslash                          ->  \\        (doubled)
//   C0 controls 0x00-0x1f and DEL 0x7f ->  \xHH      (lower-case hex)
//   C1 controls U+0080-U+009F          ->  \u00HH    (a terminal may act on them)
//   a byte that does not begin a
//   well-formed sequence               ->  \xHH      (each such byte on its own)
//
// So "a\x80b" reads `a\x80b`, an overlong "\xc0\xaf" reads `\xc0\xaf`, and "café" stays
// "café". The result is always well-formed UTF-8 with no control characters, and the original
// bytes can be recovered from it (a backslash never stands for itself).
//
// Pure. Thread-safety: the functions are reentrant.
#ifndef PEERBLOOM_ESCAPE_H_
#define PEERBLOOM_ESCAPE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace peerbloom {

// How many bytes of a value a message quotes by default.
inline constexpr size_t kMaxQuotedBytes = 64;

// Whether `bytes` is well-formed UTF-8 (as above). The empty string is.
bool IsValidUtf8(std::string_view bytes) noexcept;

// `bytes` escaped as described above.
std::string EscapeBytes(std::string_view bytes);

// "'" + EscapeBytes(prefix) + "'", where the prefix holds at most `max_bytes` bytes of the
// input and never ends inside a well-formed multi-byte character. For values in messages:
// "key " + QuoteBytes(token) + " is not 32 hex digits".
std::string QuoteBytes(std::string_view bytes, size_t max_bytes = kMaxQuotedBytes);

}  // namespace peerbloom

#endif  // PEERBLOOM_ESCAPE_H_
