// Key files are small text files; everything read is checked before it reaches libzmq.
#include "peerbloom/client/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "peerbloom/escape.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom::client {
namespace {

std::string Errno() { return std::strerror(errno); }

Status ReadSmallFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open '" + path + "': " + Errno());
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1 << 20)) return Status::InvalidArgument("'" + path + "' is too large");
  *out = text.str();
  return Status::Ok();
}

Status WriteNewFile(const std::string& path, const std::string& text, mode_t mode, bool overwrite) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) return Status::IOError("cannot create '" + path + "': " + Errno());
  bool ok = ::fchmod(fd, mode) == 0 &&
            ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  const std::string err = Errno();
  ::close(fd);
  if (!ok) return Status::IOError("cannot write '" + path + "': " + err);
  return Status::Ok();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::string PublicLine(const CurveKeyPair& pair) {
  if (pair.sign_public_key.empty()) return pair.public_key;
  return pair.public_key + " NODE-ID sign=" + pair.sign_public_key;
}

Status CheckSignKeys(const std::string& path, CurveKeyPair* pair) {
  if (pair->sign_secret_key.empty()) {
    if (!pair->sign_public_key.empty()) {
      return Status::InvalidArgument("key file '" + path +
                                     "' has 'sign-public-key' without 'sign-secret-key'");
    }
    return Status::Ok();
  }
  std::string secret, pub;
  if (!Z85Decode32(pair->sign_secret_key, &secret).ok()) {
    return Status::InvalidArgument("key file '" + path + "' has no valid 'sign-secret-key'");
  }
  PEERBLOOM_RETURN_IF_ERROR(SignPublicKeyOf(secret, &pub));
  const std::string derived = Z85Encode32(pub);
  if (!pair->sign_public_key.empty() && pair->sign_public_key != derived) {
    return Status::InvalidArgument("key file '" + path +
                                   "': 'sign-public-key' does not match 'sign-secret-key'");
  }
  pair->sign_public_key = derived;
  return Status::Ok();
}

bool IsZ85Key(std::string_view text) {
  if (text.size() != kZ85KeyChars) return false;
  std::array<uint8_t, 32> bin;
  std::string copy(text);
  return zmq_z85_decode(bin.data(), copy.c_str()) != nullptr;
}

Status GenerateCurveKeyPair(CurveKeyPair* out) {
  char pub[41] = {};
  char sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) {
    return Status::NotSupported("this libzmq has no CURVE support: " +
                                std::string(zmq_strerror(zmq_errno())));
  }
  out->public_key = pub;
  out->secret_key = sec;
  return Status::Ok();
}

std::string Z85Encode32(std::string_view raw) {
  if (raw.size() != 32) return "";
  char text[41] = {};
  if (zmq_z85_encode(text, reinterpret_cast<const uint8_t*>(raw.data()), raw.size()) == nullptr) {
    return "";
  }
  return text;
}

Status Z85Decode32(std::string_view text, std::string* raw) {
  if (!IsZ85Key(text)) return Status::InvalidArgument("not a 40-character Z85 key");
  std::string bin(32, '\0');
  std::string copy(text);
  if (zmq_z85_decode(reinterpret_cast<uint8_t*>(bin.data()), copy.c_str()) == nullptr) {
    return Status::InvalidArgument("not a 40-character Z85 key");
  }
  *raw = std::move(bin);
  return Status::Ok();
}

Status GenerateSignKeys(CurveKeyPair* out) {
  std::string pub, sec;
  PEERBLOOM_RETURN_IF_ERROR(GenerateSignKeyPair(&pub, &sec));
  out->sign_public_key = Z85Encode32(pub);
  out->sign_secret_key = Z85Encode32(sec);
  return Status::Ok();
}

Status PublicKeyOf(const std::string& secret_key, std::string* public_key) {
  if (!IsZ85Key(secret_key)) return Status::InvalidArgument("not a Z85 CURVE key");
  char pub[41] = {};
  if (zmq_curve_public(pub, secret_key.c_str()) != 0) {
    return Status::InvalidArgument("cannot derive the public key");
  }
  *public_key = pub;
  return Status::Ok();
}

Status WriteKeyFile(const std::string& path, const CurveKeyPair& pair, bool overwrite) {
  const std::string text =
      "# peerbloom CURVE key pair. Keep this file secret: anyone holding it can join the\n"
      "# cluster as this node. Share only the public key (" +
      path + ".pub).\n" + "public-key = " + pair.public_key + "\nsecret-key = " + pair.secret_key +
      "\n" +
      (pair.sign_secret_key.empty() ? ""
                                    : "sign-public-key = " + pair.sign_public_key +
                                          "\nsign-secret-key = " + pair.sign_secret_key + "\n");
  PEERBLOOM_RETURN_IF_ERROR(WriteNewFile(path, text, 0600, overwrite));
  return WriteNewFile(path + ".pub", pair.public_key + "\n", 0644, overwrite);
}

Status ReadKeyFile(const std::string& path, CurveKeyPair* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Status::IOError("cannot open key file '" + path + "': " + Errno());
  }
  if (S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("key file '" + path + "' is a directory, not a key file");
  }
  if ((st.st_mode & 077) != 0) {
    return Status::InvalidArgument("key file '" + path +
                                   "' is readable by group or others; chmod 600 it");
  }
  std::string text;
  PEERBLOOM_RETURN_IF_ERROR(ReadSmallFile(path, &text));
  CurveKeyPair pair;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::string_view l = Trim(line);
    auto value_of = [&](std::string_view name, std::string* dst) {
      if (l.substr(0, name.size()) != name) return false;
      std::string_view rest = Trim(l.substr(name.size()));
      if (rest.empty() || rest.front() != '=') return false;
      *dst = std::string(Trim(rest.substr(1)));
      return true;
    };
    if (value_of("public-key", &pair.public_key) || value_of("secret-key", &pair.secret_key) ||
        value_of("sign-public-key", &pair.sign_public_key) ||
        value_of("sign-secret-key", &pair.sign_secret_key)) {
      continue;
    }
    if (l.empty() || l.front() == '#') continue;
    return Status::InvalidArgument(path + ":" + std::to_string(number) +
                                   ": expected 'public-key = KEY' or 'secret-key = KEY'");
  }
  PEERBLOOM_RETURN_IF_ERROR(CheckSignKeys(path, &pair));
  if (!IsZ85Key(pair.secret_key)) {
    return Status::InvalidArgument("key file '" + path + "' has no valid 'secret-key'");
  }
  std::string derived;
  PEERBLOOM_RETURN_IF_ERROR(PublicKeyOf(pair.secret_key, &derived));
  if (!pair.public_key.empty() && pair.public_key != derived) {
    return Status::InvalidArgument("key file '" + path +
                                   "': 'public-key' does not match 'secret-key'");
  }
  pair.public_key = derived;
  *out = std::move(pair);
  return Status::Ok();
}

Status AddSignKeys(const std::string& path, CurveKeyPair* out) {
  CurveKeyPair pair;
  PEERBLOOM_RETURN_IF_ERROR(ReadKeyFile(path, &pair));
  if (!pair.sign_secret_key.empty()) {
    return Status::InvalidArgument("key file '" + path + "' already has sign keys");
  }
  PEERBLOOM_RETURN_IF_ERROR(GenerateSignKeys(&pair));
  PEERBLOOM_RETURN_IF_ERROR(WriteKeyFile(path, pair, /*overwrite=*/true));
  *out = std::move(pair);
  return Status::Ok();
}

bool IsContactEndpoint(std::string_view endpoint) {
  constexpr std::string_view kScheme = "tcp://";
  if (endpoint.substr(0, kScheme.size()) != kScheme) return false;
  std::string_view rest = endpoint.substr(kScheme.size());
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || rest.size() > 255) return false;
  for (char c : rest.substr(0, colon)) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
                    c == '_' || c == '[' || c == ']' || c == ':';
    if (!ok) return false;
  }
  std::string_view port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  uint32_t value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  return value >= 1 && value <= 65535;
}

namespace {

// A line's fields, split at blanks; a field starting with '#' after the first starts the
// comment. REQUIRES: `line` is trimmed and not empty.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (!line.empty()) {
    const size_t end = line.find_first_of(" \t");
    std::string_view field = line.substr(0, end);
    if (field.front() == '#' && !fields.empty()) break;
    fields.push_back(field);
    line = end == std::string_view::npos ? std::string_view() : Trim(line.substr(end));
  }
  return fields;
}

// The first two fields: the CURVE key and the node id it speaks for. The message has no place.
Status KeyAndNodeId(const std::vector<std::string_view>& fields, AuthorizedKey* key) {
  if (!IsZ85Key(fields[0])) {
    return Status::InvalidArgument("not a 40-character Z85 public key: " +
                                   QuoteBytes(fields[0], 60));
  }
  key->curve_key = std::string(fields[0]);
  if (fields.size() < 2 || fields[1].find('=') != std::string_view::npos) {
    return Status::InvalidArgument(
        "the key needs the node id it speaks for: 'KEY NODE-ID' (authorized_keys format 2)");
  }
  if (!IsValidNodeId(fields[1])) {
    return Status::InvalidArgument("node id must be 1-64 characters of [A-Za-z0-9._:-], got " +
                                   QuoteBytes(fields[1], 80));
  }
  if (fields[1].substr(0, kImportedIdPrefix.size()) == kImportedIdPrefix) {
    return Status::InvalidArgument("node id " + QuoteBytes(fields[1], 80) +
                                   " uses the prefix 'squid:', reserved for imported digests");
  }
  key->node_id = std::string(fields[1]);
  return Status::Ok();
}

// One NAME=VALUE field after the node id: sign= or endpoint=, each at most once.
Status OptionField(std::string_view f, AuthorizedKey* key) {
  const size_t eq = f.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument("expected 'sign=KEY' or 'endpoint=tcp://HOST:PORT', got " +
                                   QuoteBytes(f, 80));
  }
  const std::string_view name = f.substr(0, eq);
  const std::string_view value = f.substr(eq + 1);
  if (name == "sign") {
    if (!key->sign_key.empty()) return Status::InvalidArgument("'sign' given twice");
    if (!IsZ85Key(value)) {
      return Status::InvalidArgument("'sign' is not a 40-character Z85 key: " +
                                     QuoteBytes(value, 60));
    }
    key->sign_key = std::string(value);
    return Status::Ok();
  }
  if (name == "endpoint") {
    if (!key->endpoint.empty()) return Status::InvalidArgument("'endpoint' given twice");
    if (!IsContactEndpoint(value)) {
      return Status::InvalidArgument("'endpoint' must be tcp://HOST:PORT, got " +
                                     QuoteBytes(value, 80));
    }
    key->endpoint = std::string(value);
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown field " + QuoteBytes(name, 40) +
                                 " (expected 'sign' or 'endpoint')");
}

// One key line (trimmed, not a comment).
Status KeyLine(std::string_view line, AuthorizedKey* key) {
  const std::vector<std::string_view> fields = Fields(line);
  PEERBLOOM_RETURN_IF_ERROR(KeyAndNodeId(fields, key));
  for (size_t i = 2; i < fields.size(); ++i) PEERBLOOM_RETURN_IF_ERROR(OptionField(fields[i], key));
  return Status::Ok();
}

}  // namespace

Status ParseAuthorizedKeys(std::string_view text, const std::string& path,
                           std::vector<AuthorizedKey>* out) {
  std::vector<AuthorizedKey> keys;
  std::set<std::string> seen;
  size_t number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    // Z85 has '#' among its characters: a line whose first word is a key is a key line.
    if (line.empty() ||
        (line.front() == '#' && !IsZ85Key(line.substr(0, line.find_first_of(" \t"))))) {
      continue;
    }
    const std::string where = path + ":" + std::to_string(number) + ": ";
    AuthorizedKey key;
    key.line = number;
    const Status s = KeyLine(line, &key);
    if (!s.ok()) return Status::InvalidArgument(where + s.message());
    if (!seen.insert(key.curve_key).second) {
      return Status::InvalidArgument(where + "key " + QuoteBytes(key.curve_key, 60) +
                                     " is listed twice");
    }
    keys.push_back(std::move(key));
  }
  *out = std::move(keys);
  return Status::Ok();
}

Status ReadAuthorizedKeys(const std::string& path, std::vector<AuthorizedKey>* out) {
  std::string text;
  PEERBLOOM_RETURN_IF_ERROR(ReadSmallFile(path, &text));
  return ParseAuthorizedKeys(text, path, out);
}

}  // namespace peerbloom::client
