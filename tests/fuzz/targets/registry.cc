#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {

std::span<const Target> targets() {
  static constexpr Target kTargets[] = {
      {"kafka_request", &fuzz_kafka_request},   {"record_batch", &fuzz_record_batch},
      {"decompress", &fuzz_decompress},         {"produce_mapping", &fuzz_produce_mapping},
      {"iggy_reply", &fuzz_iggy_reply},         {"iggy_message", &fuzz_iggy_message},
      {"user_headers", &fuzz_user_headers},     {"http_request", &fuzz_http_request},
      {"config_toml", &fuzz_config_toml},
      {"sasl_scram", &fuzz_sasl_scram},         {"sasl_plain", &fuzz_sasl_plain},
      {"connection_pipeline", &fuzz_connection_pipeline},
  };
  return kTargets;
}

}  // namespace kib::fuzz
