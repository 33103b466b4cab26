#include "peerbloom/feed.h"

#include "peerbloom/escape.h"

namespace peerbloom {
namespace {

bool IsWs(char c) noexcept { return c == ' ' || c == '\t'; }
bool IsAlpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsSchemeChar(char c) noexcept {
  return IsAlpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}
// Visible ASCII or any byte >= 0x80 (UTF-8 in an IRI): not whitespace, not control.
bool IsVisible(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f;
}

// Lines come from outside: a quoted value is escaped so the message is valid UTF-8 with no
// control bytes, fit for a log line or a JSON reply.
std::string Quote(std::string_view s) { return QuoteBytes(s); }

std::string_view Trim(std::string_view s) noexcept {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  while (!s.empty() && IsWs(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsWs(s.back())) s.remove_suffix(1);
  return s;
}

// Splits `s` (already trimmed) at its first run of whitespace.
void SplitFirst(std::string_view s, std::string_view* first, std::string_view* rest) noexcept {
  size_t i = 0;
  while (i < s.size() && !IsWs(s[i])) ++i;
  *first = s.substr(0, i);
  while (i < s.size() && IsWs(s[i])) ++i;
  *rest = s.substr(i);
}

bool ParseOp(std::string_view word, FeedOp* op, FeedSubject* subject) noexcept {
  if (word == "+" || word == "-") {
    *subject = FeedSubject::kKey;
  } else if (word == "+url" || word == "-url") {
    *subject = FeedSubject::kUrl;
  } else {
    return false;
  }
  *op = word[0] == '+' ? FeedOp::kAdd : FeedOp::kRemove;
  return true;
}

Status CheckToken(std::string_view op_word, std::string_view rest, std::string_view* token) {
  std::string_view extra;
  SplitFirst(rest, token, &extra);
  if (token->empty()) return Status::InvalidArgument(Quote(op_word) + " needs an argument");
  if (!extra.empty()) {
    return Status::InvalidArgument("unexpected text " + Quote(extra) + " after " + Quote(*token));
  }
  for (char c : *token) {
    if (!IsVisible(c)) {
      return Status::InvalidArgument("argument " + Quote(*token) + " contains a control byte");
    }
  }
  return Status::Ok();
}

Status CheckSubject(const FeedLine& line, KeyScheme scheme) {
  if (line.subject == FeedSubject::kUrl) {
    if (!LooksLikeUrl(line.text)) {
      return Status::InvalidArgument(Quote(line.text) + " is not an absolute url");
    }
    return Status::Ok();
  }
  SquidKey key;
  if (IsMd5KeyScheme(scheme) && !ParseSquidKeyHex(line.text, &key)) {
    return Status::InvalidArgument("key " + Quote(line.text) + " is not 32 hex digits");
  }
  return Status::Ok();
}

}  // namespace

bool LooksLikeUrl(std::string_view text) noexcept {
  const size_t sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0 || sep + 3 == text.size()) return false;
  if (!IsAlpha(text[0])) return false;
  for (size_t i = 1; i < sep; ++i) {
    if (!IsSchemeChar(text[i])) return false;
  }
  for (char c : text) {
    if (!IsVisible(c)) return false;
  }
  return true;
}

Status ParseFeedLine(std::string_view line, KeyScheme scheme, FeedLine* out) {
  if (line.size() > kMaxFeedLineBytes) {
    return Status::InvalidArgument("line of '" + std::to_string(line.size()) +
                                   "' bytes exceeds the limit of '" +
                                   std::to_string(kMaxFeedLineBytes) + "'");
  }
  *out = FeedLine();
  const std::string_view body = Trim(line);
  if (body.empty() || body.front() == '#') return Status::Ok();
  std::string_view word, rest;
  SplitFirst(body, &word, &rest);
  if (ParseOp(word, &out->op, &out->subject)) {
    PEERBLOOM_RETURN_IF_ERROR(CheckToken(word, rest, &out->text));
    return CheckSubject(*out, scheme);
  }
  if (LooksLikeUrl(word)) {
    if (!rest.empty()) {
      return Status::InvalidArgument("unexpected text " + Quote(rest) + " after url " +
                                     Quote(word));
    }
    out->op = FeedOp::kAdd;
    out->subject = FeedSubject::kUrl;
    out->text = word;
    return Status::Ok();
  }
  out->op = FeedOp::kNone;
  return Status::InvalidArgument("unknown command " + Quote(word) +
                                 " (expected '+', '-', '+url', '-url', a url or '#')");
}

Status FeedLineKeyBytes(const FeedLine& line, KeyEncoder* encoder, std::string* out) {
  if (line.op == FeedOp::kNone) return Status::InvalidArgument("line has no key");
  if (line.subject == FeedSubject::kUrl) {
    out->assign(encoder->FromUrl(line.text));
    return Status::Ok();
  }
  return KeyBytesFromToken(encoder->scheme(), line.text, out);
}

}  // namespace peerbloom
