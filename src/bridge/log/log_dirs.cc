#include "bridge/log/log_dirs.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <spdlog/spdlog.h>

#include "common/fan_in.h"

namespace kib::bridge {

std::string log_dir_name(const std::string& iggy_address, const std::string& stream) {
  return "iggy://" + iggy_address + "/" + stream;
}

// One DescribeLogDirs, answered when its last GetTopic (and GetStats) is in. Held by shared_ptr
// and never moved: its FanIn points back at it.
struct LogDirs::Describe {
  LogDirDescription out;
  std::vector<std::pair<std::string, std::optional<std::set<int32_t>>>> wanted;  // nullopt: every partition
  std::function<void(LogDirDescription)> cb;
  FanIn<> parts{[this] {
    // Topics none of whose partitions exist are left out, as Kafka does.
    std::erase_if(out.topics, [](const LogDirTopic& t) { return t.partitions.empty(); });
    cb(std::move(out));
  }};
};

// A compacted partition's size on disk is its live log's (what Iggy has left of it after the
// cleaner's DeleteSegments) plus its current generation topic's (docs/compaction.md): the cleaned
// head lives there. A generation retired between the two reads (a pass committed meanwhile) is
// looked up once more under the partition's new head.
void LogDirs::add_generation_size(std::shared_ptr<Describe> d, size_t topic_index, size_t partition_index,
                                  const std::string& topic, int32_t partition,
                                  std::shared_ptr<const compaction::CleanedHead> head, bool retry) {
  d->parts.add();
  backend_.get_generation_topic(
      head->stream, head->topic,
      [this, d, topic_index, partition_index, topic, partition, head, retry](Result<std::optional<iggy::TopicInfo>> r) {
        if (!r) {
          spdlog::debug("DescribeLogDirs: GetTopic {}/{} failed: {}", head->stream, head->topic, r.error().message);
        } else if (*r && !(*r)->partitions.empty()) {
          d->out.topics[topic_index].partitions[partition_index].size_bytes +=
              static_cast<int64_t>((*r)->partitions[0].size_bytes);
        } else if (retry) {
          const PartitionOffsets* p = offsets_.find(topic, PartitionId(partition));
          if (p && p->cleaned && p->cleaned != head)
            add_generation_size(d, topic_index, partition_index, topic, partition, p->cleaned, false);
        }
        d->parts.done();
      });
}

void LogDirs::describe(LogDirQuery query, bool with_totals, std::function<void(LogDirDescription)> cb) {
  auto d = std::make_shared<Describe>();
  d->out.log_dir = log_dir_;
  d->cb = std::move(cb);
  std::map<std::string, int32_t> known;
  for (auto& [name, partitions] : topics_()) known[name] = partitions;
  if (!query) {
    for (const auto& [name, partitions] : known) d->wanted.emplace_back(name, std::nullopt);
  } else {
    std::map<std::string, std::set<int32_t>> merged;  // a topic listed twice: the union
    for (const auto& [name, partitions] : *query)
      if (known.count(name)) merged[name].insert(partitions.begin(), partitions.end());
    for (auto& [name, partitions] : merged) d->wanted.emplace_back(name, std::move(partitions));
  }
  d->out.topics.resize(d->wanted.size());

  for (size_t i = 0; i < d->wanted.size(); ++i) {
    d->parts.add();
    const std::string topic = d->wanted[i].first;
    const int32_t count = known[topic];
    offsets_.refresh_topic(topic, [this, d, i, topic, count](Status s) {
      LogDirTopic& t = d->out.topics[i];
      t.name = topic;
      if (!s) {
        spdlog::debug("DescribeLogDirs: GetTopic {} failed: {}", topic, s.error().message);
      } else {
        const auto& only = d->wanted[i].second;
        for (const PartitionOffsets* p : offsets_.of_topic(topic)) {
          if (p->id() < 0 || p->id() >= count) continue;
          if (only && !only->count(p->id())) continue;
          t.partitions.push_back({p->id(), static_cast<int64_t>(p->size_bytes)});
          if (p->cleaned) add_generation_size(d, i, t.partitions.size() - 1, topic, p->id(), p->cleaned, true);
        }
      }
      d->parts.done();
    });
  }
  if (with_totals) {
    d->parts.add();
    backend_.get_stats([d](Result<iggy::Stats> r) {
      if (r) {
        d->out.total_bytes = static_cast<int64_t>(r->total_disk_space);
        d->out.usable_bytes = static_cast<int64_t>(r->free_disk_space);
      } else {
        spdlog::debug("DescribeLogDirs: GetStats failed (total and usable bytes unknown): {}", r.error().message);
      }
      d->parts.done();
    });
  }
  d->parts.done();
}

}  // namespace kib::bridge
