// named_type<T, Tag>: a T that is its own type, so a Kafka offset, a partition id and a producer
// id (all plain integers on the wire) cannot be passed for one another (after Redpanda's
// utils/named_type.h). Construction is explicit, access is `x()` or `x.value()`, two values
// of one tag compare and hash like their T, fmt and ostreams print the T. Nothing converts
// implicitly: not to T, not from T, not between tags. No arithmetic either, except what a tag
// opts into by declaring operators next to its alias (ids.h: offset + count).
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <ostream>
#include <type_traits>

#include <fmt/format.h>

namespace kib {

template <typename T, typename Tag>
class named_type {
  static_assert(std::is_arithmetic_v<T>, "named_type wraps numbers");

 public:
  using type = T;

  constexpr named_type() = default;  // T{}: 0
  constexpr explicit named_type(T v) : v_(v) {}

  constexpr T value() const { return v_; }
  constexpr T operator()() const { return v_; }

  friend constexpr bool operator==(const named_type&, const named_type&) = default;
  friend constexpr auto operator<=>(const named_type&, const named_type&) = default;

  friend std::ostream& operator<<(std::ostream& os, named_type v) {
    if constexpr (sizeof(T) == 1) {
      return os << static_cast<int>(v.v_);  // a number, not a character
    } else {
      return os << v.v_;
    }
  }

 private:
  T v_{};
};

}  // namespace kib

template <typename T, typename Tag>
struct std::hash<kib::named_type<T, Tag>> {
  size_t operator()(kib::named_type<T, Tag> v) const noexcept { return std::hash<T>{}(v()); }
};

template <typename T, typename Tag>
struct fmt::formatter<kib::named_type<T, Tag>> : fmt::formatter<T> {
  template <typename FormatContext>
  auto format(kib::named_type<T, Tag> v, FormatContext& ctx) const {
    return fmt::formatter<T>::format(v(), ctx);
  }
};
