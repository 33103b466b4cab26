#include "peerbloom/status.h"

namespace peerbloom {

std::string Status::ToString() const {
  const char* kind = "ok";
  switch (code_) {
    case Code::kOk:
      return "ok";
    case Code::kCorruption:
      kind = "corruption";
      break;
    case Code::kInvalidArgument:
      kind = "invalid argument";
      break;
    case Code::kNotSupported:
      kind = "not supported";
      break;
    case Code::kIOError:
      kind = "io error";
      break;
    case Code::kNotFound:
      kind = "not found";
      break;
    case Code::kResourceExhausted:
      kind = "resource exhausted";
      break;
    case Code::kOutOfRange:
      kind = "out of range";
      break;
  }
  return std::string(kind) + ": " + message_;
}

}  // namespace peerbloom
