#include "iggy/errors.h"

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

namespace kib::iggy {
namespace {

struct CodeName {
  uint32_t code;
  const char* name;
};

// Every IggyError discriminant of core/common/src/error/iggy_error.rs at apache/iggy cc269ef70ef2,
// sorted by code.
constexpr CodeName kIggyCodes[] = {
    {1, "Error"},
    {2, "InvalidConfiguration"},
    {3, "InvalidCommand"},
    {4, "InvalidFormat"},
    {5, "FeatureUnavailable"},
    {6, "InvalidIdentifier"},
    {7, "InvalidVersion"},
    {8, "Disconnected"},
    {9, "CannotEstablishConnection"},
    {10, "CannotCreateBaseDirectory"},
    {11, "CannotCreateRuntimeDirectory"},
    {12, "CannotRemoveRuntimeDirectory"},
    {13, "CannotCreateStateDirectory"},
    {14, "StateFileNotFound"},
    {15, "StateFileCorrupted"},
    {16, "InvalidStateEntryChecksum"},
    {19, "CannotOpenDatabase"},
    {20, "ResourceNotFound"},
    {21, "CannotCloseWebSocketConnection"},
    {30, "StaleClient"},
    {31, "TcpError"},
    {32, "QuicError"},
    {33, "InvalidServerAddress"},
    {34, "InvalidClientAddress"},
    {35, "InvalidIpAddress"},
    {36, "HttpError"},
    {37, "InvalidApiUrl"},
    {40, "Unauthenticated"},
    {41, "Unauthorized"},
    {42, "InvalidCredentials"},
    {43, "InvalidUsername"},
    {44, "InvalidPassword"},
    {45, "InvalidUserStatus"},
    {46, "UserAlreadyExists"},
    {47, "UserInactive"},
    {48, "CannotDeleteUser"},
    {49, "CannotChangePermissions"},
    {50, "InvalidPersonalAccessTokenName"},
    {51, "PersonalAccessTokenAlreadyExists"},
    {52, "PersonalAccessTokensLimitReached"},
    {53, "InvalidPersonalAccessToken"},
    {54, "PersonalAccessTokenExpired"},
    {55, "UsersLimitReached"},
    {56, "InvalidPersonalAccessTokenExpiry"},
    {57, "TransientNotCommitted"},
    {58, "TransientNotAccepted"},
    {59, "RequestAlreadyApplied"},
    {61, "NotConnected"},
    {63, "ClientShutdown"},
    {64, "InvalidTlsDomain"},
    {65, "InvalidTlsCertificatePath"},
    {66, "InvalidTlsCertificate"},
    {67, "FailedToAddCertificate"},
    {70, "InvalidEncryptionKey"},
    {71, "CannotEncryptData"},
    {72, "CannotDecryptData"},
    {73, "InvalidJwtAlgorithm"},
    {74, "InvalidJwtSecret"},
    {75, "JwtMissing"},
    {76, "CannotGenerateJwt"},
    {77, "AccessTokenMissing"},
    {78, "InvalidAccessToken"},
    {79, "CannotFetchJwks"},
    {80, "InvalidSizeBytes"},
    {81, "InvalidUtf8"},
    {82, "InvalidNumberEncoding"},
    {83, "InvalidBooleanValue"},
    {84, "InvalidNumberValue"},
    {100, "ClientNotFound"},
    {101, "InvalidClientId"},
    {206, "ConnectionClosed"},
    {209, "CannotParseHeaderKind"},
    {300, "HttpResponseError"},
    {301, "InvalidHttpRequest"},
    {302, "InvalidJsonResponse"},
    {303, "InvalidBytesResponse"},
    {304, "EmptyResponse"},
    {305, "CannotCreateEndpoint"},
    {306, "CannotParseUrl"},
    {400, "WebSocketError"},
    {401, "WebSocketConnectionError"},
    {402, "WebSocketCloseError"},
    {403, "WebSocketReceiveError"},
    {404, "WebSocketSendError"},
    {1000, "CannotCreateStreamsDirectory"},
    {1001, "CannotCreateStreamDirectory"},
    {1002, "CannotCreateStreamInfo"},
    {1003, "CannotUpdateStreamInfo"},
    {1004, "CannotOpenStreamInfo"},
    {1005, "CannotReadStreamInfo"},
    {1006, "CannotCreateStream"},
    {1007, "CannotDeleteStream"},
    {1008, "CannotDeleteStreamDirectory"},
    {1009, "StreamIdNotFound"},
    {1010, "StreamNameNotFound"},
    {1011, "StreamDirectoryNotFound"},
    {1012, "StreamNameAlreadyExists"},
    {1013, "InvalidStreamName"},
    {1014, "InvalidStreamId"},
    {1015, "CannotReadStreams"},
    {1019, "InvalidTopicSize"},
    {1020, "TooManyStreams"},
    {2000, "CannotCreateTopicsDirectory"},
    {2001, "CannotCreateTopicDirectory"},
    {2002, "CannotCreateTopicInfo"},
    {2003, "CannotUpdateTopicInfo"},
    {2004, "CannotOpenTopicInfo"},
    {2005, "CannotReadTopicInfo"},
    {2006, "CannotCreateTopic"},
    {2007, "CannotDeleteTopic"},
    {2008, "CannotDeleteTopicDirectory"},
    {2009, "CannotPollTopic"},
    {2010, "TopicIdNotFound"},
    {2011, "TopicNameNotFound"},
    {2013, "TopicNameAlreadyExists"},
    {2014, "InvalidTopicName"},
    {2015, "TooManyPartitions"},
    {2016, "InvalidTopicId"},
    {2017, "CannotReadTopics"},
    {2018, "InvalidReplicationFactor"},
    {2019, "InvalidPartitionsCount"},
    {2020, "TopicDirectoryNotFound"},
    {2021, "TooManyTopics"},
    {3000, "CannotCreatePartition"},
    {3001, "CannotCreatePartitionsDirectory"},
    {3002, "CannotCreatePartitionDirectory"},
    {3003, "CannotOpenPartitionLogFile"},
    {3004, "CannotReadPartitions"},
    {3005, "CannotDeletePartition"},
    {3006, "CannotDeletePartitionDirectory"},
    {3007, "PartitionNotFound"},
    {3008, "NoPartitions"},
    {3009, "TopicFull"},
    {3010, "CannotDeleteConsumerOffsetsDirectory"},
    {3011, "CannotDeleteConsumerOffsetFile"},
    {3012, "CannotCreateConsumerOffsetsDirectory"},
    {3013, "PartitionIdSpaceExhausted"},
    {3020, "CannotReadConsumerOffsets"},
    {3021, "ConsumerOffsetNotFound"},
    {3022, "NotResolvedConsumer"},
    {3023, "CannotOpenConsumerOffsetsFile"},
    {3024, "TooManyConsumerOffsets"},  // release 0.9.0 (iggy_common 0.11.0)
    {4000, "SegmentNotFound"},
    {4001, "SegmentClosed"},
    {4002, "InvalidSegmentSize"},
    {4003, "CannotCreateSegmentLogFile"},
    {4004, "CannotCreateSegmentIndexFile"},
    {4005, "CannotCreateSegmentTimeIndexFile"},
    {4006, "CannotSaveMessagesToSegment"},
    {4007, "CannotSaveIndexToSegment"},
    {4008, "CannotSaveTimeIndexToSegment"},
    {4009, "InvalidMessagesCount"},
    {4010, "CannotAppendMessage"},
    {4011, "CannotReadMessage"},
    {4012, "CannotReadMessageId"},
    {4013, "CannotReadMessageState"},
    {4014, "CannotReadMessageTimestamp"},
    {4015, "CannotReadHeadersLength"},
    {4016, "CannotReadHeadersPayload"},
    {4017, "TooBigUserHeaders"},
    {4018, "InvalidHeaderKey"},
    {4019, "InvalidHeaderValue"},
    {4020, "CannotReadMessageLength"},
    {4021, "CannotReadMessagePayload"},
    {4022, "TooBigMessagePayload"},
    {4023, "TooManyMessages"},
    {4024, "EmptyMessagePayload"},
    {4025, "InvalidMessagePayloadLength"},
    {4026, "CannotReadMessageChecksum"},
    {4027, "InvalidMessageChecksum"},
    {4028, "InvalidKeyValueLength"},
    {4029, "CommandLengthError"},
    {4030, "InvalidSegmentsCount"},
    {4031, "NonZeroOffset"},
    {4032, "NonZeroTimestamp"},
    {4033, "MissingIndex"},
    {4034, "InvalidIndexesByteSize"},
    {4035, "InvalidIndexesCount"},
    {4036, "InvalidMessagesSize"},
    {4037, "TooSmallMessage"},
    {4038, "InvalidMessageTimestampDelta"},
    {4039, "InvalidBatchChecksum"},
    {4040, "InvalidHeaderKind"},
    {4041, "UnsupportedOptionKey"},
    {4042, "InvalidOptionValue"},
    {4043, "OptionsBlockTooLarge"},
    {4050, "CannotSendMessagesDueToClientDisconnection"},
    {4051, "BackgroundSendError"},
    {4052, "BackgroundSendTimeout"},
    {4053, "BackgroundSendBufferFull"},
    {4054, "BackgroundWorkerDisconnected"},
    {4055, "BackgroundSendBufferOverflow"},
    {4056, "ProducerSendFailed"},
    {4057, "ProducerClosed"},
    {4100, "InvalidOffset"},
    {4101, "InvalidReservedField"},
    {4102, "SegmentSizeMismatchAtOpen"},  // release 0.9.0 (iggy_common 0.11.0)
    {5000, "ConsumerGroupIdNotFound"},
    {5002, "InvalidConsumerGroupId"},
    {5003, "ConsumerGroupNameNotFound"},
    {5004, "ConsumerGroupNameAlreadyExists"},
    {5005, "InvalidConsumerGroupName"},
    {5006, "ConsumerGroupMemberNotFound"},
    {5007, "CannotCreateConsumerGroupInfo"},
    {5008, "CannotDeleteConsumerGroupInfo"},
    {5009, "ConsumerGroupPartitionNotOwned"},
    {6000, "MissingBaseOffsetRetainedMessageBatch"},
    {6001, "MissingLastOffsetDeltaRetainedMessageBatch"},
    {6002, "MissingMaxTimestampRetainedMessageBatch"},
    {6003, "MissingLengthRetainedMessageBatch"},
    {6004, "MissingPayloadRetainedMessageBatch"},
    {7000, "CannotReadBatchBaseOffset"},
    {7001, "CannotReadBatchLength"},
    {7002, "CannotReadLastOffsetDelta"},
    {7003, "CannotReadMaxTimestamp"},
    {7004, "CannotReadBatchPayload"},
    {8000, "InvalidConnectionString"},
    {9000, "SnapshotFileCompletionFailed"},
    {10000, "CannotSerializeResource"},
    {10001, "CannotDeserializeResource"},
    {10002, "CannotReadFile"},
    {10003, "CannotReadFileMetadata"},
    {10004, "CannotSeekFile"},
    {10005, "CannotAppendToFile"},
    {10006, "CannotWriteToFile"},
    {10007, "CannotOverwriteFile"},
    {10008, "CannotDeleteFile"},
    {10009, "CannotSyncFile"},
    {10010, "CannotReadIndexOffset"},
    {10011, "CannotReadIndexPosition"},
    {10012, "CannotReadIndexTimestamp"},
    {10013, "TimestampOutOfRange"},
    {11000, "ShardNotFound"},
    {11001, "ShardCommunicationError"},
    {12000, "CannotBindToSocket"},
    {12001, "TaskTimeout"},
    {13000, "IoError"},
    {14000, "AlreadyAuthenticated"},
    {14001, "InvalidSession"},
    {14003, "IncompatibleProtocolVersion"},
};

constexpr bool sorted_by_code() {
  for (size_t i = 1; i < std::size(kIggyCodes); ++i)
    if (kIggyCodes[i - 1].code >= kIggyCodes[i].code) return false;
  return true;
}
static_assert(sorted_by_code(), "kIggyCodes must be sorted for binary search");

constexpr const char* kEvictionNames[] = {
    "Reserved",           "NoSession",          "ClientReleaseTooLow", "ClientReleaseTooHigh",
    "InvalidRequestOperation", "InvalidRequestBody", "InvalidRequestBodySize", "SessionTooLow",
    "SessionReleaseMismatch", "InvalidCredentials", "InvalidToken", "UserInactive",
    "SessionError",       "StaleClient",        "IncompatibleProtocol", "MalformedLogin",
};

}  // namespace

const char* iggy_error_name(uint32_t code) {
  auto it = std::lower_bound(std::begin(kIggyCodes), std::end(kIggyCodes), code,
                             [](const CodeName& c, uint32_t v) { return c.code < v; });
  if (it != std::end(kIggyCodes) && it->code == code) return it->name;
  return "Unknown";
}

const char* transport_error_name(TransportCode code) {
  switch (code) {
    case TransportCode::kConnectFailed: return "ConnectFailed";
    case TransportCode::kTimeout: return "Timeout";
    case TransportCode::kDisconnected: return "Disconnected";
    case TransportCode::kQueueTimeout: return "QueueTimeout";
    case TransportCode::kClosed: return "Closed";
    case TransportCode::kNotLoggedIn: return "NotLoggedIn";
    case TransportCode::kUnconfirmed: return "Unconfirmed";
  }
  return "Unknown";
}

const char* eviction_reason_name(uint8_t reason) {
  if (reason < std::size(kEvictionNames)) return kEvictionNames[reason];
  return "Unknown";
}

uint32_t eviction_reason_to_code(uint8_t reason) {
  switch (static_cast<EvictionReason>(reason)) {
    case EvictionReason::kInvalidCredentials: return code::kInvalidCredentials;
    case EvictionReason::kInvalidToken: return code::kInvalidPersonalAccessToken;
    case EvictionReason::kUserInactive:
    case EvictionReason::kSessionError:
    case EvictionReason::kNoSession:
    case EvictionReason::kSessionTooLow:
    case EvictionReason::kSessionReleaseMismatch: return code::kUnauthenticated;
    case EvictionReason::kStaleClient: return code::kStaleClient;
    case EvictionReason::kIncompatibleProtocol: return code::kIncompatibleProtocolVersion;
    case EvictionReason::kMalformedLogin: return code::kInvalidFormat;
    default: return code::kInvalidCommand;
  }
}

Error iggy_error(uint32_t code, std::string_view context) {
  std::string msg = fmt::format("Iggy error {} {}", code, iggy_error_name(code));
  if (!context.empty()) fmt::format_to(std::back_inserter(msg), ": {}", context);
  return Error{ErrorDomain::kIggy, code, std::move(msg)};
}

Error transport_error(TransportCode code, std::string_view context) {
  std::string msg = fmt::format("Iggy transport error {}", transport_error_name(code));
  if (!context.empty()) fmt::format_to(std::back_inserter(msg), ": {}", context);
  return Error{ErrorDomain::kTransport, static_cast<uint32_t>(code), std::move(msg)};
}

Error protocol_error(std::string_view what) {
  return Error{ErrorDomain::kProtocol, 0, fmt::format("malformed Iggy reply: {}", what)};
}

Error invalid_argument(std::string_view what) {
  return Error{ErrorDomain::kInvalid, 0, std::string(what)};
}

bool is_transport(const Error& e) { return e.domain == ErrorDomain::kTransport; }

bool is_iggy(const Error& e, uint32_t c) { return e.domain == ErrorDomain::kIggy && e.code == c; }

bool is_retriable(const Error& e) {
  if (e.domain == ErrorDomain::kTransport) return e.code != static_cast<uint32_t>(TransportCode::kClosed);
  if (e.domain != ErrorDomain::kIggy) return false;
  switch (e.code) {
    case code::kTransientNotCommitted:
    case code::kTransientNotAccepted:
    case code::kStaleClient:
    case code::kUnauthenticated: return true;
    default: return false;
  }
}

}  // namespace kib::iggy
