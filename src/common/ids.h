// The numbers services exchange, each its own type (named_type.h), so that the places where
// they are easy to mix up — a partition id where an offset goes, Kafka's milliseconds where
// Iggy's microseconds go — do not compile. The wire codecs keep plain integers: handlers wrap
// what they decode and unwrap what they encode.
//
// Time: Kafka timestamps are ms since the epoch, Iggy's are µs, and both are instants with
// sentinels (-1 "none", ListOffsets' -2/-3/-4), not durations; std::chrono durations would
// convert ms to µs implicitly (correctly, but silently, and only between chrono types, while the
// values arrive as raw integers), and a sys_time cannot hold the sentinels. So timestamps are
// named types too, converted only by the named functions below; durations (timeouts, waits)
// stay std::chrono.
#pragma once

#include <cstdint>

#include "common/named_type.h"

namespace kib {

// A Kafka offset. Iggy's offsets are the same numbers (docs/mapping.md), unsigned: the log
// backend converts at the Iggy edge.
using KafkaOffset = named_type<int64_t, struct kafka_offset_tag>;
using PartitionId = named_type<int32_t, struct partition_id_tag>;
using ProducerId = named_type<int64_t, struct producer_id_tag>;
using ProducerEpoch = named_type<int16_t, struct producer_epoch_tag>;
// Kafka record and log timestamps: ms since the epoch, or a sentinel.
using TimestampMs = named_type<int64_t, struct timestamp_ms_tag>;
// Iggy message timestamps (origin, append): µs since the epoch.
using TimestampUs = named_type<uint64_t, struct timestamp_us_tag>;

inline constexpr KafkaOffset kNoOffset{-1};        // unknown, not reported
inline constexpr ProducerId kNoProducerId{-1};     // not an idempotent producer
inline constexpr ProducerEpoch kNoProducerEpoch{-1};
inline constexpr TimestampMs kNoTimestamp{-1};     // none (CreateTime answers, "not found")

// Offsets move by counts of records; the distance between two offsets is a count.
constexpr KafkaOffset operator+(KafkaOffset o, int64_t count) { return KafkaOffset(o() + count); }
constexpr KafkaOffset operator-(KafkaOffset o, int64_t count) { return KafkaOffset(o() - count); }
constexpr int64_t operator-(KafkaOffset a, KafkaOffset b) { return a() - b(); }
constexpr KafkaOffset& operator+=(KafkaOffset& o, int64_t count) { return o = o + count; }
constexpr KafkaOffset& operator++(KafkaOffset& o) { return o += 1; }

// Kafka ms ⇄ Iggy µs, for non-negative instants (the mapping refuses what would overflow).
constexpr TimestampUs to_iggy_us(TimestampMs ms) { return TimestampUs(static_cast<uint64_t>(ms()) * 1000); }
constexpr TimestampMs to_kafka_ms(TimestampUs us) { return TimestampMs(static_cast<int64_t>(us() / 1000)); }

}  // namespace kib
