//===- Status.h - Error values of the runtime API ---------------*- C++ -*-===//
//
// The runtime never throws across its API: every fallible call returns a
// Status or a StatusOr<T> whose message names the tensor, op or file at fault.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_STATUS_H
#define GOPT_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace gopt::runtime {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kFailedPrecondition,
  kUnimplemented,
  kInternal,
  kDataLoss,
  kResourceExhausted,
  // A peer (another rank of a data-parallel run) or the network is gone.
  kUnavailable,
  kDeadlineExceeded,
};

const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}
  static Status success() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  // "invalid argument: <message>", or "ok".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

namespace detail {
template <typename... Args> std::string concat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
} // namespace detail

template <typename... Args> Status invalidArgument(const Args &...args) {
  return Status(StatusCode::kInvalidArgument, detail::concat(args...));
}
template <typename... Args> Status notFound(const Args &...args) {
  return Status(StatusCode::kNotFound, detail::concat(args...));
}
template <typename... Args> Status failedPrecondition(const Args &...args) {
  return Status(StatusCode::kFailedPrecondition, detail::concat(args...));
}
template <typename... Args> Status unimplemented(const Args &...args) {
  return Status(StatusCode::kUnimplemented, detail::concat(args...));
}
template <typename... Args> Status internalError(const Args &...args) {
  return Status(StatusCode::kInternal, detail::concat(args...));
}
template <typename... Args> Status dataLoss(const Args &...args) {
  return Status(StatusCode::kDataLoss, detail::concat(args...));
}
template <typename... Args> Status unavailable(const Args &...args) {
  return Status(StatusCode::kUnavailable, detail::concat(args...));
}
template <typename... Args> Status deadlineExceeded(const Args &...args) {
  return Status(StatusCode::kDeadlineExceeded, detail::concat(args...));
}
template <typename... Args> Status resourceExhausted(const Args &...args) {
  return Status(StatusCode::kResourceExhausted, detail::concat(args...));
}

// A value or the error that prevented computing it.
template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "StatusOr built from an ok Status has no value");
    if (status_.ok())
      status_ = internalError("StatusOr constructed from an ok status");
  }
  StatusOr(T value) : value_(std::move(value)) {}

  bool ok() const { return status_.ok(); }
  const Status &status() const { return status_; }
  T &value() & { return *value_; }
  const T &value() const & { return *value_; }
  T &&value() && { return std::move(*value_); }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }

private:
  Status status_;
  std::optional<T> value_;
};

} // namespace gopt::runtime

#define GOPT_CONCAT_IMPL(a, b) a##b
#define GOPT_CONCAT(a, b) GOPT_CONCAT_IMPL(a, b)

#define GOPT_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::gopt::runtime::Status gopt_status_ = (expr);                             \
    if (!gopt_status_.ok())                                                    \
      return gopt_status_;                                                     \
  } while (0)

#define GOPT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                             \
  auto tmp = (expr);                                                           \
  if (!tmp.ok())                                                               \
    return tmp.status();                                                       \
  lhs = std::move(tmp).value()

#define GOPT_ASSIGN_OR_RETURN(lhs, expr)                                       \
  GOPT_ASSIGN_OR_RETURN_IMPL(GOPT_CONCAT(gopt_statusor_, __LINE__), lhs, expr)

#endif // GOPT_RUNTIME_STATUS_H
