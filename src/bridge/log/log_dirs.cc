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

namespace {
// One DescribeLogDirs, answered when its last GetTopic (and GetStats) is in. Held by shared_ptr
// and never moved: its FanIn points back at it.
struct Describe {
  LogDirDescription out;
  std::vector<std::pair<std::string, std::optional<std::set<int32_t>>>> wanted;  // nullopt: every partition
  std::function<void(LogDirDescription)> cb;
  FanIn<> parts{[this] {
    // Topics none of whose partitions exist are left out, as Kafka does.
    std::erase_if(out.topics, [](const LogDirTopic& t) { return t.partitions.empty(); });
    cb(std::move(out));
  }};
};
}  // namespace

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
