// Status: the result of a fallible operation. Cheap to copy when OK.
//
// Fallible operations return [[nodiscard]] Status; outputs go through out-pointers.
// Thread-safety: immutable after construction, safe to share.
#ifndef PEERBLOOM_STATUS_H_
#define PEERBLOOM_STATUS_H_

#include <string>
#include <string_view>

namespace peerbloom {

class [[nodiscard]] Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kCorruption,
    kInvalidArgument,
    kNotSupported,
    kIOError,
    kNotFound,
    kResourceExhausted,
    kOutOfRange,  // e.g. a delta whose base is not the one held: ask for a full summary
  };

  Status() noexcept = default;
  static Status Ok() noexcept { return Status(); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status InvalidArgument(std::string_view msg) {
    return Status(Code::kInvalidArgument, msg);
  }
  static Status NotSupported(std::string_view msg) { return Status(Code::kNotSupported, msg); }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, msg); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status ResourceExhausted(std::string_view msg) {
    return Status(Code::kResourceExhausted, msg);
  }
  static Status OutOfRange(std::string_view msg) { return Status(Code::kOutOfRange, msg); }

  bool ok() const noexcept { return code_ == Code::kOk; }
  Code code() const noexcept { return code_; }
  bool IsCorruption() const noexcept { return code_ == Code::kCorruption; }
  bool IsInvalidArgument() const noexcept { return code_ == Code::kInvalidArgument; }
  bool IsNotSupported() const noexcept { return code_ == Code::kNotSupported; }
  bool IsIOError() const noexcept { return code_ == Code::kIOError; }
  bool IsNotFound() const noexcept { return code_ == Code::kNotFound; }
  bool IsResourceExhausted() const noexcept { return code_ == Code::kResourceExhausted; }
  bool IsOutOfRange() const noexcept { return code_ == Code::kOutOfRange; }

  // The message alone, for people: lowercase, no trailing period.
  const std::string& message() const noexcept { return message_; }
  // "corruption: <message>", or "ok".
  std::string ToString() const;

 private:
  Status(Code code, std::string_view msg) : code_(code), message_(msg) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// Returns early from the enclosing function when `expr` is not OK.
#define PEERBLOOM_RETURN_IF_ERROR(expr)      \
  do {                                       \
    ::peerbloom::Status _pb_status = (expr); \
    if (!_pb_status.ok()) return _pb_status; \
  } while (0)

}  // namespace peerbloom

#endif  // PEERBLOOM_STATUS_H_
