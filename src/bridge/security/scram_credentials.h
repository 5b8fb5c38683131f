// DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554) on the state database,
// with Kafka 4.1's semantics, errors and texts (ScramImage.describe, ScramControlManager): the
// client sends a salt and a salted password, so the bridge never sees a password; it keeps
// StoredKey and ServerKey. An alteration is one state-store job: validated and written
// together, answered once durable.
#pragma once

#include <uv.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/liveness.h"
#include "common/result.h"
#include "kafka/protocol/error_code.h"

namespace kib::state {
class StateStore;
}

namespace kib::bridge {

struct ScramUserDescription {
  std::string user;
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::optional<std::string> message;
  std::vector<std::pair<int8_t, int32_t>> credentials;  // (Kafka mechanism type, iterations), SHA-256 first
};

struct ScramDeletion {
  std::string user;
  int8_t mechanism = 0;  // Kafka's type byte: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
};

struct ScramUpsertion {
  std::string user;
  int8_t mechanism = 0;
  int32_t iterations = 0;
  Bytes salt;
  Bytes salted_password;
};

struct ScramAlterResult {
  std::string user;
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::optional<std::string> message;
};

class ScramCredentials {
 public:
  explicit ScramCredentials(state::StateStore& store) : store_(store) {}

  // `users` nullopt or empty: every user with a SCRAM credential. A user named twice gets
  // DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND. `done` gets the
  // state store's error when the read failed.
  void describe(std::optional<std::vector<std::string>> users,
                std::function<void(Result<std::vector<ScramUserDescription>>)> done);

  // Kafka's order of results: deletions, upsertions, then the users that failed. A user
  // altered twice gets DUPLICATE_RESOURCE; an empty name or iterations outside 4096..16384
  // UNACCEPTABLE_CREDENTIAL; an unknown mechanism UNSUPPORTED_SASL_MECHANISM; deleting a
  // credential that does not exist RESOURCE_NOT_FOUND.
  void alter(std::vector<ScramDeletion> deletions, std::vector<ScramUpsertion> upsertions,
             std::function<void(Result<std::vector<ScramAlterResult>>)> done);

 private:
  state::StateStore& store_;
  Liveness alive_;
};

}  // namespace kib::bridge
