// Iggy status/result codes and the client's own transport failures.
//
// Two error domains leave this layer:
//   ErrorDomain::kIggy      `code` is the Iggy code from a reply status, a result section or an
//                           eviction (core/common/src/error/iggy_error.rs); names come from
//                           iggy_error_name().
//   ErrorDomain::kTransport `code` is a TransportCode below; the request may or may not have
//                           reached the server and is safe to retry only if the command is.
// Malformed bytes from the server are ErrorDomain::kProtocol, bad arguments ErrorDomain::kInvalid.
// Mapping to Kafka error codes is not done here.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace kib::iggy {

// Codes the client and the bridge branch on. The full list (with names) is in errors.cc.
namespace code {
inline constexpr uint32_t kError = 1;
inline constexpr uint32_t kInvalidCommand = 3;
inline constexpr uint32_t kInvalidFormat = 4;
inline constexpr uint32_t kFeatureUnavailable = 5;
inline constexpr uint32_t kInvalidIdentifier = 6;
inline constexpr uint32_t kResourceNotFound = 20;
inline constexpr uint32_t kStaleClient = 30;
inline constexpr uint32_t kUnauthenticated = 40;
inline constexpr uint32_t kUnauthorized = 41;
inline constexpr uint32_t kInvalidCredentials = 42;
inline constexpr uint32_t kInvalidUsername = 43;
inline constexpr uint32_t kUserAlreadyExists = 46;
inline constexpr uint32_t kUserInactive = 47;
inline constexpr uint32_t kCannotDeleteUser = 48;
inline constexpr uint32_t kCannotChangePermissions = 49;
inline constexpr uint32_t kPersonalAccessTokenAlreadyExists = 51;
inline constexpr uint32_t kPersonalAccessTokensLimitReached = 52;
inline constexpr uint32_t kInvalidPersonalAccessToken = 53;
inline constexpr uint32_t kTransientNotCommitted = 57;
inline constexpr uint32_t kTransientNotAccepted = 58;
inline constexpr uint32_t kRequestAlreadyApplied = 59;
inline constexpr uint32_t kStreamIdNotFound = 1009;
inline constexpr uint32_t kStreamNameAlreadyExists = 1012;
inline constexpr uint32_t kInvalidTopicSize = 1019;
inline constexpr uint32_t kTopicIdNotFound = 2010;
inline constexpr uint32_t kTopicNameAlreadyExists = 2013;
inline constexpr uint32_t kTooManyPartitions = 2015;
inline constexpr uint32_t kInvalidPartitionsCount = 2019;
inline constexpr uint32_t kPartitionNotFound = 3007;
inline constexpr uint32_t kConsumerOffsetNotFound = 3021;
inline constexpr uint32_t kTooManyConsumerOffsets = 3024;
inline constexpr uint32_t kUnsupportedOptionKey = 4041;
inline constexpr uint32_t kInvalidOptionValue = 4042;
inline constexpr uint32_t kInvalidOffset = 4100;
inline constexpr uint32_t kConsumerGroupIdNotFound = 5000;
inline constexpr uint32_t kConsumerGroupNameAlreadyExists = 5004;
inline constexpr uint32_t kConsumerGroupMemberNotFound = 5006;
inline constexpr uint32_t kTooManyStreams = 1020;
inline constexpr uint32_t kStreamNameNotFound = 1010;
inline constexpr uint32_t kTopicNameNotFound = 2011;
inline constexpr uint32_t kInvalidTopicName = 2014;
inline constexpr uint32_t kInvalidReplicationFactor = 2018;
inline constexpr uint32_t kTooManyTopics = 2021;
inline constexpr uint32_t kNoPartitions = 3008;
inline constexpr uint32_t kInvalidSegmentSize = 4002;
inline constexpr uint32_t kTooBigUserHeaders = 4017;
inline constexpr uint32_t kTooBigMessagePayload = 4022;
inline constexpr uint32_t kTooManyMessages = 4023;
inline constexpr uint32_t kInvalidMessageChecksum = 4027;
inline constexpr uint32_t kInvalidBatchChecksum = 4039;
inline constexpr uint32_t kPersonalAccessTokenExpired = 54;
inline constexpr uint32_t kIncompatibleProtocolVersion = 14003;
}  // namespace code

// ErrorDomain::kTransport codes.
enum class TransportCode : uint32_t {
  kConnectFailed = 1,  // TCP connect or name resolution failed
  kTimeout = 2,        // no reply within the request timeout; the socket was closed
  kDisconnected = 3,   // the socket closed or failed while the request was in flight
  kQueueTimeout = 4,   // no connection became available in time; never sent
  kClosed = 5,         // the pool or connection was closed by its owner
  kNotLoggedIn = 6,    // login keeps failing for a transport reason
  // The server answered without confirming the write (a SendMessages reply with no body, which a
  // release server sends for a request it classified as a duplicate): whether the data is stored
  // is unknown, so it is never reported as a success.
  kUnconfirmed = 7,
};

// Eviction reasons (server -> client frame, docs/iggy-protocol.md §1.4).
enum class EvictionReason : uint8_t {
  kNoSession = 1,
  kClientReleaseTooLow = 2,
  kClientReleaseTooHigh = 3,
  kInvalidRequestOperation = 4,
  kInvalidRequestBody = 5,
  kInvalidRequestBodySize = 6,
  kSessionTooLow = 7,
  kSessionReleaseMismatch = 8,
  kInvalidCredentials = 9,
  kInvalidToken = 10,
  kUserInactive = 11,
  kSessionError = 12,
  kStaleClient = 13,
  kIncompatibleProtocol = 14,
  kMalformedLogin = 15,
};

// Name of an Iggy code ("StreamIdNotFound"), or "Unknown" for codes not in iggy_error.rs.
const char* iggy_error_name(uint32_t code);
const char* transport_error_name(TransportCode code);
const char* eviction_reason_name(uint8_t reason);

// The Iggy code the Rust SDK surfaces for an eviction reason (core/common/src/error/eviction.rs).
uint32_t eviction_reason_to_code(uint8_t reason);

// Constructors that fill in a readable message: "Iggy error 1009 StreamIdNotFound: <context>".
Error iggy_error(uint32_t code, std::string_view context = {});
Error transport_error(TransportCode code, std::string_view context = {});
Error protocol_error(std::string_view what);
Error invalid_argument(std::string_view what);

bool is_transport(const Error& e);
bool is_iggy(const Error& e, uint32_t code);

// True when repeating the same call later may succeed without any change by the caller: transport
// failures and Iggy's transient/session codes (57, 58, 30 StaleClient, 40 Unauthenticated after an
// eviction). Whether a retry can duplicate a write is the caller's concern (sends are
// at-least-once).
bool is_retriable(const Error& e);

}  // namespace kib::iggy
