// The one place that turns bridge-internal errors (Iggy, transport, SQLite) into Kafka error
// codes. Failures of Iggy or SQLite surface as retriable Kafka errors.
#pragma once

#include "common/result.h"
#include "kafka/protocol/error_code.h"

namespace kib::bridge {

// Never kNone for an error: ErrorDomain::kKafka carries its code, every Iggy code maps by name
// (iggy/errors.h), kInvalid (a caller bug) is UNKNOWN_SERVER_ERROR.
kafka::ErrorCode to_kafka_error(const Error& e);
// The Kafka error for an Iggy status code (ErrorDomain::kIggy).
kafka::ErrorCode iggy_to_kafka_error(uint32_t iggy_code);
// The Kafka error for a topic Metadata could not look up or create: Iggy unreachable or failing
// (REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR) is LEADER_NOT_AVAILABLE, the retriable error clients
// know to wait out in Metadata; anything else as to_kafka_error().
kafka::ErrorCode to_kafka_metadata_error(const Error& e);
// The Kafka error for a partition Fetch could not read: only codes clients handle in a Fetch
// answer. Java's FetchCollector stops its consumer (IllegalStateException "Unexpected error
// code", a dead Kafka Streams thread) on LEADER_NOT_AVAILABLE or REQUEST_TIMED_OUT there, so
// Iggy unreachable, timed out or not ready is NOT_LEADER_OR_FOLLOWER (refresh metadata, retry),
// as a Kafka broker that lost a partition answers; anything else as to_kafka_error().
kafka::ErrorCode to_kafka_fetch_error(const Error& e);

// Builds an Error that carries a Kafka error code (domain kKafka, code = the Kafka code).
Error kafka_error(kafka::ErrorCode code, std::string message);

}  // namespace kib::bridge
