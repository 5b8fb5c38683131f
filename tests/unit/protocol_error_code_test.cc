// Kafka error codes: numbering, canonical names and retriability as in kafka-clients 4.1.0.
#include <boost/test/unit_test.hpp>

#include <cctype>
#include <set>
#include <string>

#include "kafka/protocol/error_code.h"

using kib::kafka::ErrorCode;
using kib::kafka::error_message;
using kib::kafka::error_name;
using kib::kafka::is_retriable;
using kib::kafka::to_int16;

BOOST_AUTO_TEST_SUITE(kafka_error_codes)

BOOST_AUTO_TEST_CASE(codes_have_kafkas_numbers) {
  BOOST_TEST(to_int16(ErrorCode::kUnknownServerError) == -1);
  BOOST_TEST(to_int16(ErrorCode::kNone) == 0);
  BOOST_TEST(to_int16(ErrorCode::kOffsetOutOfRange) == 1);
  BOOST_TEST(to_int16(ErrorCode::kCorruptMessage) == 2);
  BOOST_TEST(to_int16(ErrorCode::kUnknownTopicOrPartition) == 3);
  BOOST_TEST(to_int16(ErrorCode::kNotLeaderOrFollower) == 6);
  BOOST_TEST(to_int16(ErrorCode::kMessageTooLarge) == 10);
  BOOST_TEST(to_int16(ErrorCode::kNotCoordinator) == 16);
  BOOST_TEST(to_int16(ErrorCode::kRebalanceInProgress) == 27);
  BOOST_TEST(to_int16(ErrorCode::kUnsupportedVersion) == 35);
  BOOST_TEST(to_int16(ErrorCode::kOutOfOrderSequenceNumber) == 45);
  BOOST_TEST(to_int16(ErrorCode::kInvalidTransactionTimeout) == 50);
  BOOST_TEST(to_int16(ErrorCode::kMemberIdRequired) == 79);
  BOOST_TEST(to_int16(ErrorCode::kUnknownTopicId) == 100);
  BOOST_TEST(to_int16(ErrorCode::kShareSessionLimitReached) == 133);
}

BOOST_AUTO_TEST_CASE(names_are_kafkas_upper_case_names) {
  BOOST_TEST(std::string(error_name(ErrorCode::kNone)) == "NONE");
  BOOST_TEST(std::string(error_name(ErrorCode::kUnknownServerError)) == "UNKNOWN_SERVER_ERROR");
  BOOST_TEST(std::string(error_name(ErrorCode::kUnknownTopicOrPartition)) == "UNKNOWN_TOPIC_OR_PARTITION");
  BOOST_TEST(std::string(error_name(ErrorCode::kUnsupportedVersion)) == "UNSUPPORTED_VERSION");
  BOOST_TEST(std::string(error_name(ErrorCode::kInvalidTopicException)) == "INVALID_TOPIC_EXCEPTION");
  BOOST_TEST(std::string(error_name(ErrorCode::kShareSessionLimitReached)) == "SHARE_SESSION_LIMIT_REACHED");
}

BOOST_AUTO_TEST_CASE(every_code_from_minus_1_to_133_has_a_distinct_name_and_a_message) {
  std::set<std::string> names;
  for (int c = -1; c <= 133; ++c) {
    std::string name = error_name(static_cast<ErrorCode>(c));
    for (char ch : name) BOOST_TEST((std::isupper(static_cast<unsigned char>(ch)) || ch == '_'), name);
    names.insert(name);
    if (c != 0) BOOST_TEST(std::string(error_message(static_cast<ErrorCode>(c))).size() > 0u, name);
  }
  BOOST_TEST(names.size() == 135u);
  BOOST_TEST(std::string(error_message(ErrorCode::kNone)).empty());
}

BOOST_AUTO_TEST_CASE(unknown_codes_read_as_unknown_server_error_like_errors_for_code) {
  BOOST_TEST(std::string(error_name(static_cast<ErrorCode>(134))) == "UNKNOWN_SERVER_ERROR");
  BOOST_TEST(std::string(error_name(static_cast<ErrorCode>(-2))) == "UNKNOWN_SERVER_ERROR");
  BOOST_TEST(std::string(error_name(static_cast<ErrorCode>(INT16_MAX))) == "UNKNOWN_SERVER_ERROR");
  BOOST_TEST(!is_retriable(static_cast<ErrorCode>(999)));
}

BOOST_AUTO_TEST_CASE(retriable_codes_are_those_whose_exception_is_retriable) {
  for (ErrorCode c : {ErrorCode::kCorruptMessage, ErrorCode::kUnknownTopicOrPartition, ErrorCode::kLeaderNotAvailable,
                      ErrorCode::kNotLeaderOrFollower, ErrorCode::kRequestTimedOut, ErrorCode::kNetworkException,
                      ErrorCode::kCoordinatorLoadInProgress, ErrorCode::kCoordinatorNotAvailable,
                      ErrorCode::kNotCoordinator, ErrorCode::kNotEnoughReplicas, ErrorCode::kConcurrentTransactions,
                      ErrorCode::kKafkaStorageError, ErrorCode::kFencedLeaderEpoch, ErrorCode::kUnknownLeaderEpoch,
                      ErrorCode::kOffsetNotAvailable, ErrorCode::kUnstableOffsetCommit,
                      ErrorCode::kThrottlingQuotaExceeded, ErrorCode::kUnknownTopicId})
    BOOST_TEST(is_retriable(c), error_name(c));
  for (ErrorCode c : {ErrorCode::kNone, ErrorCode::kUnknownServerError, ErrorCode::kOffsetOutOfRange,
                      ErrorCode::kMessageTooLarge, ErrorCode::kRebalanceInProgress, ErrorCode::kIllegalGeneration,
                      ErrorCode::kUnknownMemberId, ErrorCode::kTopicAuthorizationFailed,
                      ErrorCode::kUnsupportedVersion, ErrorCode::kTopicAlreadyExists,
                      ErrorCode::kOutOfOrderSequenceNumber, ErrorCode::kInvalidProducerEpoch,
                      ErrorCode::kProducerFenced, ErrorCode::kMemberIdRequired})
    BOOST_TEST(!is_retriable(c), error_name(c));
}

BOOST_AUTO_TEST_SUITE_END()
