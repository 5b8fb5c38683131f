// PRODUCER_FENCED (KIP-588) as each transaction API's clients know it. Kafka answers a producer
// fenced by a newer epoch PRODUCER_FENCED only from the request version that introduced it
// (InitProducerId v4; AddPartitionsToTxn, AddOffsetsToTxn and EndTxn v2); older clients get
// INVALID_PRODUCER_EPOCH, which they handle the same way. TxnOffsetCommit never carries it: the
// group coordinator answers a fenced producer INVALID_PRODUCER_EPOCH (GroupMetadataManager).
#pragma once

#include <cstdint>
#include <limits>

#include "kafka/protocol/error_code.h"
#include "server/context/request.h"

namespace kib::kafka {

// The first version of an API whose answers may say PRODUCER_FENCED.
inline constexpr int16_t kProducerFencedSinceV2 = 2;  // AddPartitionsToTxn, AddOffsetsToTxn, EndTxn
inline constexpr int16_t kProducerFencedSinceV4 = 4;  // InitProducerId
inline constexpr int16_t kProducerFencedNever = std::numeric_limits<int16_t>::max();  // TxnOffsetCommit

// `e` as the request's version knows it: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH below
// `since`; any other code is kept.
inline ErrorCode fenced_as_known(ErrorCode e, const Responder& respond, int16_t since) {
  return e == ErrorCode::kProducerFenced && respond.header().api_version < since ? ErrorCode::kInvalidProducerEpoch
                                                                                  : e;
}

}  // namespace kib::kafka
