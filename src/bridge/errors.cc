#include "bridge/errors.h"

namespace kib::bridge {

using kafka::ErrorCode;

Error kafka_error(ErrorCode code, std::string message) {
  return Error{ErrorDomain::kInvalid, static_cast<uint32_t>(static_cast<uint16_t>(code)), std::move(message)};
}

ErrorCode to_kafka_error(const Error& e) {
  switch (e.domain) {
    case ErrorDomain::kInvalid:
      // Errors made with kafka_error() carry the Kafka code itself.
      return static_cast<ErrorCode>(static_cast<int16_t>(static_cast<uint16_t>(e.code)));
    case ErrorDomain::kTransport:
      // Iggy unreachable, timed out or the connection dropped: the client should retry.
      return ErrorCode::kRequestTimedOut;
    case ErrorDomain::kState:
      // SQLite could not make the change durable: retriable.
      return ErrorCode::kCoordinatorNotAvailable;
    case ErrorDomain::kProtocol:
      return ErrorCode::kCorruptMessage;
    case ErrorDomain::kIggy:
      switch (e.code) {
        case 41:    // Unauthorized
          return ErrorCode::kTopicAuthorizationFailed;
        case 40:    // Unauthenticated
        case 42:    // InvalidCredentials
          return ErrorCode::kSaslAuthenticationFailed;
        case 1009:  // StreamIdNotFound
        case 2010:  // TopicIdNotFound
        case 3007:  // PartitionNotFound
        case 20:    // ResourceNotFound (send to a missing partition)
          return ErrorCode::kUnknownTopicOrPartition;
        case 2013:  // TopicNameAlreadyExists
          return ErrorCode::kTopicAlreadyExists;
        case 2015:  // TooManyPartitions
        case 2019:  // InvalidPartitionsCount
          return ErrorCode::kInvalidPartitions;
        case 1019:  // InvalidTopicSize
        case 4041:  // UnsupportedOptionKey
        case 4042:  // InvalidOptionValue
          return ErrorCode::kInvalidConfig;
        case 4017:  // TooBigUserHeaders
        case 4022:  // TooBigMessagePayload
          return ErrorCode::kMessageTooLarge;
        case 4100:  // InvalidOffset
          return ErrorCode::kOffsetOutOfRange;
        case 57:    // TransientNotCommitted
        case 58:    // TransientNotAccepted
          return ErrorCode::kNotEnoughReplicas;
        default:
          // Anything else from Iggy is a storage-side failure the client may retry.
          return ErrorCode::kKafkaStorageError;
      }
  }
  return ErrorCode::kUnknownServerError;
}

}  // namespace kib::bridge
