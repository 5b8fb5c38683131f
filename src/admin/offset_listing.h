// Committed-offset listings that `offsets import` reads: a CSV file, or the output of
// `kafka-consumer-groups --describe` captured on the Kafka cluster being left. Pure parsing;
// kafka-iggy-bridge(8) documents both formats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kib::admin {

struct OffsetRow {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;  // Kafka's committed offset: the next offset the group reads
  std::optional<std::string> metadata;
  size_t line = 0;  // 1-based, for messages
};

enum class ListingFormat { kAuto, kCsv, kDescribe };

// CSV: `group,topic,partition,offset[,metadata]`, or `topic,partition,offset` (what
// `kafka-consumer-groups --reset-offsets --export` writes for one group) when `group` is given.
// A first line naming the columns is skipped, as are blank lines and lines starting with '#'.
// Fields may be double-quoted ("" inside quotes is one quote).
//
// Describe: the column header `GROUP TOPIC PARTITION CURRENT-OFFSET ...` and its rows, any
// number of groups; rows without a committed offset (CURRENT-OFFSET "-") and the tool's other
// lines ("Consumer group 'g' has no active members.", warnings) are skipped. Columns are
// separated by whitespace, so group and topic names must not contain any.
//
// `group`, when given, keeps only that group's rows (and supplies the group of 3-column CSV).
// Kauto picks Describe when the first meaningful line starts with the GROUP header. Errors name
// the line and the field.
Result<std::vector<OffsetRow>> parse_offset_listing(std::string_view text, ListingFormat format,
                                                    const std::optional<std::string>& group);

}  // namespace kib::admin
