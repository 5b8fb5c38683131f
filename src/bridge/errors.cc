#include "bridge/errors.h"

#include "iggy/errors.h"

namespace kib::bridge {

using kafka::ErrorCode;

Error kafka_error(ErrorCode code, std::string message) {
  return Error{ErrorDomain::kKafka, static_cast<uint32_t>(static_cast<uint16_t>(code)), std::move(message)};
}

ErrorCode iggy_to_kafka_error(uint32_t iggy_code) {
  namespace c = iggy::code;
  switch (iggy_code) {
    case c::kUnauthorized:
    // The Iggy user a principal's data requests run as cannot log in ([principals]
    // per_principal): for the client that is an authorization failure on what it asked for, one
    // an operator fixes (the mapping's credentials; the log and kib_iggy_login_refused say so).
    // Kafka clients report TOPIC_AUTHORIZATION_FAILED with the topic; SASL_AUTHENTICATION_FAILED,
    // answered before, is a connection-level error no client expects in a partition's answer.
    case c::kInvalidCredentials:
    case c::kUserInactive:
    case c::kInvalidPersonalAccessToken:
    case c::kPersonalAccessTokenExpired:
      return ErrorCode::kTopicAuthorizationFailed;
    case c::kUnauthenticated:
      // A request on an Iggy connection whose session was lost (Iggy restarted): the pool logs in
      // again, so the client retries (KAFKA_STORAGE_ERROR is retriable and refreshes metadata).
      return ErrorCode::kKafkaStorageError;
    case c::kStreamIdNotFound:
    case c::kStreamNameNotFound:
    case c::kTopicIdNotFound:
    case c::kTopicNameNotFound:
    case c::kPartitionNotFound:
    case c::kNoPartitions:
    case c::kResourceNotFound:  // a send to a missing partition
      return ErrorCode::kUnknownTopicOrPartition;
    case c::kTopicNameAlreadyExists:
      return ErrorCode::kTopicAlreadyExists;
    case c::kInvalidTopicName:
      return ErrorCode::kInvalidTopicException;
    case c::kTooManyPartitions:
    case c::kInvalidPartitionsCount:
      return ErrorCode::kInvalidPartitions;
    case c::kInvalidReplicationFactor:
      return ErrorCode::kInvalidReplicationFactor;
    case c::kInvalidTopicSize:
    case c::kInvalidSegmentSize:
    case c::kUnsupportedOptionKey:
    case c::kInvalidOptionValue:
      return ErrorCode::kInvalidConfig;
    case c::kTooManyTopics:
    case c::kTooManyStreams:
      // A server-side quota, as a CreateTopicPolicy refusal would be: not retriable.
      return ErrorCode::kPolicyViolation;
    case c::kTooBigUserHeaders:
    case c::kTooBigMessagePayload:
      return ErrorCode::kMessageTooLarge;
    case c::kTooManyMessages:
      return ErrorCode::kRecordListTooLarge;
    case c::kInvalidMessageChecksum:
    case c::kInvalidBatchChecksum:
      return ErrorCode::kCorruptMessage;
    case c::kInvalidOffset:
      return ErrorCode::kOffsetOutOfRange;
    case c::kTransientNotCommitted:
    case c::kTransientNotAccepted:
      return ErrorCode::kNotEnoughReplicas;
    case c::kInvalidCommand:
    case c::kInvalidFormat:
    case c::kInvalidIdentifier:
    case c::kFeatureUnavailable:
    case c::kIncompatibleProtocolVersion:
      // The bridge sent Iggy something it does not take: a bridge bug or version mismatch the
      // client cannot fix by retrying.
      return ErrorCode::kUnknownServerError;
    default:
      // Anything else from Iggy is a storage-side failure the client may retry.
      return ErrorCode::kKafkaStorageError;
  }
}

ErrorCode to_kafka_error(const Error& e) {
  switch (e.domain) {
    case ErrorDomain::kKafka:
      // Errors made with kafka_error() carry the Kafka code itself.
      return static_cast<ErrorCode>(static_cast<int16_t>(static_cast<uint16_t>(e.code)));
    case ErrorDomain::kInvalid:
      // Someone passed something invalid (e.g. iggy::invalid_argument for a request the Iggy wire
      // format cannot carry). Never a success: Kafka answers an unexpected failure with
      // UNKNOWN_SERVER_ERROR, which clients do not retry.
      return ErrorCode::kUnknownServerError;
    case ErrorDomain::kTransport:
      // Iggy unreachable, timed out or the connection dropped: the client should retry.
      return ErrorCode::kRequestTimedOut;
    case ErrorDomain::kState:
      // SQLite could not make the change durable: retriable.
      return ErrorCode::kCoordinatorNotAvailable;
    case ErrorDomain::kProtocol:
      return ErrorCode::kCorruptMessage;
    case ErrorDomain::kIggy:
      return iggy_to_kafka_error(e.code);
  }
  return ErrorCode::kUnknownServerError;
}

ErrorCode to_kafka_metadata_error(const Error& e) {
  const ErrorCode code = to_kafka_error(e);
  if (code == ErrorCode::kRequestTimedOut || code == ErrorCode::kKafkaStorageError) return ErrorCode::kLeaderNotAvailable;
  return code;
}

ErrorCode to_kafka_fetch_error(const Error& e) {
  switch (const ErrorCode code = to_kafka_error(e)) {
    case ErrorCode::kLeaderNotAvailable:
    case ErrorCode::kRequestTimedOut:
    case ErrorCode::kNotEnoughReplicas:
    case ErrorCode::kCoordinatorNotAvailable:
      return ErrorCode::kNotLeaderOrFollower;
    default:
      return code;
  }
}

}  // namespace kib::bridge
