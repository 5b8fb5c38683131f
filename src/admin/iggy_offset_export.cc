#include "admin/iggy_offset_export.h"

#include <uv.h>

#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "admin/sync_iggy.h"
#include "iggy/client.h"
#include "iggy/errors.h"
#include "iggy/pool.h"

namespace kib::admin {
namespace {

using iggy::Identifier;

// Joins the group as its only member and waits (bounded) until Iggy assigned it every
// partition in `needed`; the reason when that cannot be.
std::string join_as_only_member(SyncIggy& iggy, const Identifier& stream, const Identifier& topic,
                                const std::string& group, uint32_t partitions) {
  auto info = iggy.run<std::optional<iggy::ConsumerGroupInfo>>(
      [&](iggy::IggyClient& c, auto cb) { c.get_consumer_group(stream, topic, Identifier::named(group), cb); });
  if (!info) return "reading Iggy consumer group " + group + ": " + iggy_message(info.error());
  if (*info && (*info)->members_count > 0)
    return "Iggy consumer group " + group + " has " + std::to_string((*info)->members_count) +
           " members; stop its consumers before exporting";
  if (!*info) {
    auto made = iggy.run<iggy::ConsumerGroupInfo>(
        [&](iggy::IggyClient& c, auto cb) { c.create_consumer_group(stream, topic, group, cb); });
    if (!made) return "creating Iggy consumer group " + group + ": " + iggy_message(made.error());
  }
  auto joined = iggy.run<Unit>(
      [&](iggy::IggyClient& c, auto cb) { c.join_consumer_group(stream, topic, Identifier::named(group), cb); });
  if (!joined) return "joining Iggy consumer group " + group + ": " + iggy_message(joined.error());
  // Iggy assigns partitions itself; a sole member gets all of them, possibly not at once.
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto a = iggy.run<std::optional<iggy::ConsumerGroupAssignment>>(
        [&](iggy::IggyClient& c, auto cb) { c.sync_consumer_group(stream, topic, Identifier::named(group), cb); });
    if (!a) return "syncing Iggy consumer group " + group + ": " + iggy_message(a.error());
    if (*a && (*a)->partitions.size() >= partitions) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "Iggy did not assign every partition of " + topic.to_string() + " to the export within 5 s";
}

// Plans each row of one topic before anything is written: the offset to store (the last offset
// consumed, committed - 1), a delete (committed 0), or why not.
void plan_rows(std::vector<ExportOutcome>& out, const std::vector<size_t>& rows, const std::string& topic_name,
               const iggy::TopicInfo& info) {
  std::map<uint32_t, iggy::PartitionInfo> partitions;
  for (const auto& p : info.partitions) partitions[p.id] = p;
  for (size_t i : rows) {
    ExportOutcome& o = out[i];
    auto p = partitions.find(static_cast<uint32_t>(o.item.partition));
    if (p == partitions.end()) {
      o.error = "Iggy topic " + topic_name + " has no partition " + std::to_string(o.item.partition);
      continue;
    }
    if (o.item.committed == 0) {
      o.action = "delete";
      continue;
    }
    const int64_t last = o.item.committed - 1;
    const bool empty = p->second.messages_count == 0;
    if (empty || static_cast<uint64_t>(last) > p->second.current_offset) {
      o.error = "committed offset " + std::to_string(o.item.committed) + " is beyond the partition's end (" +
                (empty ? std::string("empty") : "last offset " + std::to_string(p->second.current_offset)) + ")";
      continue;
    }
    o.stored = last;
    o.action = "store " + std::to_string(last);
  }
}

// Writes the planned rows of one topic (those without an error) as `consumer`'s offsets.
void write_rows(SyncIggy& iggy, const iggy::Consumer& consumer, const Identifier& stream, const Identifier& topic,
                std::vector<ExportOutcome>& out, const std::vector<size_t>& rows) {
  for (size_t i : rows) {
    ExportOutcome& o = out[i];
    if (!o.error.empty()) continue;
    const auto partition = std::optional<uint32_t>(static_cast<uint32_t>(o.item.partition));
    if (o.stored) {
      auto r = iggy.run<Unit>([&](iggy::IggyClient& c, auto cb) {
        c.store_consumer_offset(consumer, stream, topic, partition, static_cast<uint64_t>(*o.stored), cb);
      });
      if (!r) o.error = "storing the offset: " + iggy_message(r.error());
      else o.action = "stored " + std::to_string(*o.stored);
    } else {
      auto r = iggy.run<Unit>(
          [&](iggy::IggyClient& c, auto cb) { c.delete_consumer_offset(consumer, stream, topic, partition, cb); });
      if (r) o.action = "deleted";
      else if (r.error().domain == ErrorDomain::kIggy && r.error().code == iggy::code::kConsumerOffsetNotFound)
        o.action = "none stored";
      else o.error = "deleting the offset: " + iggy_message(r.error());
    }
  }
}

// One topic's rows: read the Iggy topic, plan, and with `execute` write them (as the consumer
// group's only member, where the target is a consumer group).
void export_topic(SyncIggy& iggy, const config::Config& cfg, const IggyOffsetTarget& target,
                  const iggy::Consumer& consumer, const std::string& topic_name, const std::vector<size_t>& rows,
                  std::vector<ExportOutcome>& out, bool execute) {
  const Identifier stream = Identifier::named(cfg.iggy.stream);
  const Identifier topic = Identifier::named(topic_name);
  auto fail_all = [&](const std::string& why) {
    for (size_t i : rows)
      if (out[i].error.empty()) out[i].error = why;
  };
  auto info =
      iggy.run<std::optional<iggy::TopicInfo>>([&](iggy::IggyClient& c, auto cb) { c.get_topic(stream, topic, cb); });
  if (!info) return fail_all("reading Iggy topic: " + iggy_message(info.error()));
  if (!*info) return fail_all("no topic " + topic_name + " in Iggy stream " + cfg.iggy.stream);
  plan_rows(out, rows, topic_name, **info);
  if (!execute) return;
  const bool group = target.kind == IggyOffsetTarget::Kind::kConsumerGroup;
  auto leave = [&] {
    auto left = iggy.run<Unit>([&](iggy::IggyClient& c, auto cb) {
      c.leave_consumer_group(stream, topic, Identifier::named(target.name), cb);
    });
    (void)left;  // not a member is fine here; closing the connection leaves the group too
  };
  if (group) {
    std::string why = join_as_only_member(iggy, stream, topic, target.name, (*info)->partitions_count);
    if (!why.empty()) {
      fail_all(why);
      return leave();
    }
  }
  write_rows(iggy, consumer, stream, topic, out, rows);
  if (group) leave();
}

}  // namespace

Result<std::vector<ExportOutcome>> export_offsets_to_iggy(const config::Config& cfg, const IggyOffsetTarget& target,
                                                          const std::vector<ExportItem>& items, bool execute) {
  std::vector<ExportOutcome> out;
  std::map<std::string, std::vector<size_t>> by_topic;
  for (const auto& item : items) {
    by_topic[item.topic].push_back(out.size());
    out.push_back({item, std::nullopt, "", ""});
  }
  if (items.empty()) return out;
  SyncIggy iggy(cfg);
  auto me = iggy.run<iggy::ClientInfo>([](iggy::IggyClient& c, auto cb) { c.get_me(cb); });
  if (!me)
    return Error{me.error().domain, me.error().code,
                 "Iggy at " + cfg.iggy.address.str() + ": " + iggy_message(me.error())};
  const iggy::Consumer consumer = target.kind == IggyOffsetTarget::Kind::kConsumerGroup
                                      ? iggy::Consumer::group(Identifier::named(target.name))
                                      : iggy::Consumer::consumer(Identifier::named(target.name));
  for (const auto& [topic_name, rows] : by_topic)
    export_topic(iggy, cfg, target, consumer, topic_name, rows, out, execute);
  return out;
}

}  // namespace kib::admin
