// The control token: a secret that clients of a tcp control endpoint send in every request
// header ("token"), so that only those who can read the token file (the daemon's user, mode
// 0600) may use the endpoint. An ipc endpoint needs none: the socket file's own mode (0600)
// keeps others out. docs/control-protocol.md, "Authentication".
#ifndef PEERBLOOM_CLIENT_CONTROL_TOKEN_H_
#define PEERBLOOM_CLIENT_CONTROL_TOKEN_H_

#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::client {

// The header field that carries the token.
inline constexpr std::string_view kTokenField = "token";
// Hex digits of a token the daemon generates (128 random bits).
inline constexpr size_t kGeneratedTokenChars = 32;

// The default `control_token_file`: "<data_dir>/control.token" for a tcp control endpoint,
// "" (no token) for an ipc one or when data_dir is unknown.
std::string DefaultControlTokenFile(std::string_view control, std::string_view data_dir);

// Reads a secret from a file: its first line, surrounding whitespace dropped. InvalidArgument
// when the file is a directory, is accessible by others, is writable by its group, or holds
// nothing; a group may read it. `what` names the file in messages ("control token file").
Status ReadSecretFile(std::string_view what, const std::string& path, std::string* secret);

// ReadSecretFile("control token file", ...).
Status ReadControlToken(const std::string& path, std::string* token);

// Reads the token file at `path`, or creates it (mode 0600, O_EXCL, never through a link)
// with a new random token when it does not exist.
Status EnsureControlToken(const std::string& path, std::string* token);

// Whether `sent` equals `token`, in time that does not depend on where they differ.
bool TokenMatches(std::string_view sent, std::string_view token);

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_CONTROL_TOKEN_H_
