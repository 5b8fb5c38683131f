// A Kafka principal ("User:alice"), as KafkaPrincipal in Kafka: the identity a connection's
// requests are authorized as (docs/security.md "Principals").
#pragma once

#include <string>
#include <tuple>

namespace kib::security {

struct KafkaPrincipal {
  static constexpr const char* kUserType = "User";
  static constexpr const char* kAnonymousName = "ANONYMOUS";

  std::string type = kUserType;
  std::string name = kAnonymousName;

  static KafkaPrincipal user(std::string name) { return KafkaPrincipal{kUserType, std::move(name)}; }
  static KafkaPrincipal anonymous() { return KafkaPrincipal{}; }

  bool is_anonymous() const { return type == kUserType && name == kAnonymousName; }
  // "User:alice", the form ACLs, super_users and the Iggy mapping use.
  std::string str() const { return type + ":" + name; }

  friend bool operator==(const KafkaPrincipal&, const KafkaPrincipal&) = default;
  friend bool operator<(const KafkaPrincipal& a, const KafkaPrincipal& b) {
    return std::tie(a.type, a.name) < std::tie(b.type, b.name);
  }
};

}  // namespace kib::security
