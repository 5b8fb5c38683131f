// bridge::to_kafka_error: Kafka codes travel in their own domain, every Iggy code maps by name,
// and no error ever becomes Kafka's 0 (success).
#include <boost/test/unit_test.hpp>

#include <cstdint>

#include "bridge/errors.h"
#include "iggy/errors.h"

using namespace kib;
using kib::kafka::ErrorCode;
namespace code = kib::iggy::code;

namespace {
int mapped(const Error& e) { return static_cast<int>(bridge::to_kafka_error(e)); }
int of_iggy(uint32_t c) { return mapped(iggy::iggy_error(c)); }
}  // namespace

BOOST_AUTO_TEST_SUITE(bridge_errors)

BOOST_AUTO_TEST_CASE(an_iggy_invalid_argument_never_maps_to_success) {
  // It used to share ErrorDomain::kInvalid with kafka_error(), so its code 0 read as NONE.
  Error e = iggy::invalid_argument("SendMessages: frame of 70000000 bytes exceeds the 67108864 byte limit");
  BOOST_TEST(mapped(e) != 0);
  BOOST_TEST(mapped(e) == int(ErrorCode::kUnknownServerError));
  // Whatever code an invalid argument carries.
  for (uint32_t c : {0u, 1u, 3u, 36u, 87u, 65535u})
    BOOST_TEST(mapped(Error{ErrorDomain::kInvalid, c, "x"}) == int(ErrorCode::kUnknownServerError));
}

BOOST_AUTO_TEST_CASE(kafka_errors_carry_their_code_in_their_own_domain) {
  Error e = bridge::kafka_error(ErrorCode::kInvalidConfig, "bad");
  BOOST_TEST((e.domain == ErrorDomain::kKafka));
  BOOST_TEST(mapped(e) == int(ErrorCode::kInvalidConfig));
  BOOST_TEST(mapped(bridge::kafka_error(ErrorCode::kUnknownServerError, "")) == -1);
  BOOST_TEST(mapped(bridge::kafka_error(ErrorCode::kUnknownTopicId, "")) == 100);
}

BOOST_AUTO_TEST_CASE(other_domains_map_to_retriable_or_corrupt) {
  BOOST_TEST(mapped(iggy::transport_error(iggy::TransportCode::kTimeout)) == int(ErrorCode::kRequestTimedOut));
  BOOST_TEST(mapped(Error{ErrorDomain::kState, 0, "disk full"}) == int(ErrorCode::kCoordinatorNotAvailable));
  BOOST_TEST(mapped(iggy::protocol_error("short")) == int(ErrorCode::kCorruptMessage));
}

BOOST_AUTO_TEST_CASE(metadata_answers_iggy_failures_with_leader_not_available) {
  auto metadata = [](const Error& e) { return static_cast<int>(bridge::to_kafka_metadata_error(e)); };
  const Error timeout = iggy::transport_error(iggy::TransportCode::kTimeout);
  const Error storage = iggy::iggy_error(999999);  // no Iggy code: a storage-side failure
  BOOST_TEST(mapped(storage) == int(ErrorCode::kKafkaStorageError));
  BOOST_TEST(metadata(timeout) == int(ErrorCode::kLeaderNotAvailable));
  BOOST_TEST(metadata(storage) == int(ErrorCode::kLeaderNotAvailable));
  // Everything else as to_kafka_error.
  for (const Error& e : {iggy::iggy_error(code::kTopicNameNotFound), iggy::iggy_error(code::kInvalidTopicName),
                         bridge::kafka_error(ErrorCode::kUnknownTopicOrPartition, ""),
                         Error{ErrorDomain::kState, 0, "disk full"}, iggy::protocol_error("short")})
    BOOST_TEST(metadata(e) == mapped(e), e.message);
}

// Java's FetchCollector knows no LEADER_NOT_AVAILABLE or REQUEST_TIMED_OUT in a Fetch answer: it
// threw IllegalStateException and a Kafka Streams thread died right after a bridge restart.
BOOST_AUTO_TEST_CASE(fetch_answers_a_backend_not_ready_with_not_leader_or_follower) {
  auto fetch = [](const Error& e) { return static_cast<int>(bridge::to_kafka_fetch_error(e)); };
  for (const Error& e : {iggy::transport_error(iggy::TransportCode::kTimeout),
                         bridge::kafka_error(ErrorCode::kLeaderNotAvailable, "Iggy is not reachable; retry"),
                         Error{ErrorDomain::kState, 0, "busy"}})
    BOOST_TEST(fetch(e) == int(ErrorCode::kNotLeaderOrFollower), e.message);
  for (const Error& e : {iggy::iggy_error(999999), bridge::kafka_error(ErrorCode::kUnknownTopicOrPartition, ""),
                         bridge::kafka_error(ErrorCode::kOffsetOutOfRange, ""), iggy::protocol_error("short")})
    BOOST_TEST(fetch(e) == mapped(e), e.message);
}

BOOST_AUTO_TEST_CASE(each_iggy_code_maps_as_intended) {
  // Issue 31, finding 9: a mapped Iggy user that cannot log in is an authorization failure a
  // client understands, a lost Iggy session a retriable storage error; never SASL_AUTHENTICATION_FAILED.
  for (uint32_t c : {code::kUnauthorized, code::kInvalidCredentials, code::kUserInactive,
                     code::kInvalidPersonalAccessToken, code::kPersonalAccessTokenExpired})
    BOOST_TEST(of_iggy(c) == int(ErrorCode::kTopicAuthorizationFailed), "iggy code " << c);
  BOOST_TEST(of_iggy(code::kUnauthenticated) == int(ErrorCode::kKafkaStorageError));
  for (uint32_t c : {code::kStreamIdNotFound, code::kStreamNameNotFound, code::kTopicIdNotFound,
                     code::kTopicNameNotFound, code::kPartitionNotFound, code::kNoPartitions, code::kResourceNotFound})
    BOOST_TEST(of_iggy(c) == int(ErrorCode::kUnknownTopicOrPartition), "iggy code " << c);
  BOOST_TEST(of_iggy(code::kTopicNameAlreadyExists) == int(ErrorCode::kTopicAlreadyExists));
  BOOST_TEST(of_iggy(code::kInvalidTopicName) == int(ErrorCode::kInvalidTopicException));
  BOOST_TEST(of_iggy(code::kTooManyPartitions) == int(ErrorCode::kInvalidPartitions));
  BOOST_TEST(of_iggy(code::kInvalidPartitionsCount) == int(ErrorCode::kInvalidPartitions));
  BOOST_TEST(of_iggy(code::kInvalidReplicationFactor) == int(ErrorCode::kInvalidReplicationFactor));
  for (uint32_t c : {code::kInvalidTopicSize, code::kInvalidSegmentSize, code::kUnsupportedOptionKey,
                     code::kInvalidOptionValue})
    BOOST_TEST(of_iggy(c) == int(ErrorCode::kInvalidConfig), "iggy code " << c);
  BOOST_TEST(of_iggy(code::kTooManyTopics) == int(ErrorCode::kPolicyViolation));
  BOOST_TEST(of_iggy(code::kTooManyStreams) == int(ErrorCode::kPolicyViolation));
  BOOST_TEST(of_iggy(code::kTooBigUserHeaders) == int(ErrorCode::kMessageTooLarge));
  BOOST_TEST(of_iggy(code::kTooBigMessagePayload) == int(ErrorCode::kMessageTooLarge));
  BOOST_TEST(of_iggy(code::kTooManyMessages) == int(ErrorCode::kRecordListTooLarge));
  BOOST_TEST(of_iggy(code::kInvalidMessageChecksum) == int(ErrorCode::kCorruptMessage));
  BOOST_TEST(of_iggy(code::kInvalidBatchChecksum) == int(ErrorCode::kCorruptMessage));
  BOOST_TEST(of_iggy(code::kInvalidOffset) == int(ErrorCode::kOffsetOutOfRange));
  BOOST_TEST(of_iggy(code::kTransientNotCommitted) == int(ErrorCode::kNotEnoughReplicas));
  BOOST_TEST(of_iggy(code::kTransientNotAccepted) == int(ErrorCode::kNotEnoughReplicas));
  for (uint32_t c : {code::kInvalidCommand, code::kInvalidFormat, code::kInvalidIdentifier, code::kFeatureUnavailable,
                     code::kIncompatibleProtocolVersion})
    BOOST_TEST(of_iggy(c) == int(ErrorCode::kUnknownServerError), "iggy code " << c);
  // The rest are storage-side failures a client may retry.
  for (uint32_t c : {code::kError, code::kStaleClient, 4006u /* CannotSaveMessagesToSegment */, 99999u})
    BOOST_TEST(of_iggy(c) == int(ErrorCode::kKafkaStorageError), "iggy code " << c);
}

BOOST_AUTO_TEST_CASE(no_iggy_code_maps_to_success) {
  for (uint32_t c = 0; c <= 15000; ++c) {
    if (of_iggy(c) == 0) BOOST_FAIL("iggy code " << c << " maps to Kafka NONE");
    if (mapped(Error{ErrorDomain::kTransport, c, ""}) == 0) BOOST_FAIL("transport code " << c << " maps to NONE");
  }
}

BOOST_AUTO_TEST_SUITE_END()
