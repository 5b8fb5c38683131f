// Result<T>: a value or an Error, for code paths where failure is an expected outcome
// (network, Iggy, SQLite), not a programming bug.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace kib {

// Where an error came from decides how it is mapped to a Kafka error code later.
enum class ErrorDomain : uint8_t {
  kTransport,  // socket closed, timeout, connection refused: retriable
  kIggy,       // the Iggy server answered with a non-zero status; `code` is Iggy's code
  kState,      // SQLite failure
  kProtocol,   // malformed bytes from a peer
  kInvalid,    // caller passed something invalid (a bug of the caller, never a success)
  kKafka,      // `code` is a Kafka error code (bridge::kafka_error); only this domain carries one
};

struct Error {
  ErrorDomain domain = ErrorDomain::kInvalid;
  uint32_t code = 0;      // domain-specific (Iggy status code, SQLite code, ...)
  std::string message;    // human readable, names the field or limit
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}        // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace kib
