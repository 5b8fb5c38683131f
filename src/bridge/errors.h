// The one place that turns bridge-internal errors (Iggy, transport, SQLite) into Kafka error
// codes. Failures of Iggy or SQLite surface as retriable Kafka errors.
#pragma once

#include "common/result.h"
#include "kafka/protocol/error_code.h"

namespace kib::bridge {

kafka::ErrorCode to_kafka_error(const Error& e);

// Builds an Error that carries a Kafka error code (domain kInvalid, code = the Kafka code).
Error kafka_error(kafka::ErrorCode code, std::string message);

}  // namespace kib::bridge
