// `topics list`, `groups list`, `groups describe`: read-only views of the running bridge.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "admin/admin_commands.h"
#include "admin/bridge_admin.h"
#include "admin/text_table.h"
#include "common/text.h"
#include "net/blocking_socket.h"
#include "state/compaction_store.h"

namespace kib::admin {
namespace {

using nlohmann::json;

std::string dash_if_negative(int64_t v) { return v < 0 ? "-" : std::to_string(v); }
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

// Strings from clients need not be UTF-8: shown with U+FFFD rather than failing the command.
std::string dump_json(const json& doc) { return doc.dump(2, ' ', false, json::error_handler_t::replace); }

json offset_or_null(int64_t v) { return v < 0 ? json(nullptr) : json(v); }

}  // namespace

std::map<std::pair<std::string, int32_t>, state::CompactionStateRow> cleaned_partitions(const config::Config& cfg) {
  std::map<std::pair<std::string, int32_t>, state::CompactionStateRow> out;
  try {
    SQLite::Database db(cfg.state.path, SQLite::OPEN_READONLY);
    db.setBusyTimeout(2000);
    for (auto& r : state::load_compaction_states(db)) out[{r.topic, r.partition}] = std::move(r);
  } catch (const std::exception&) {
  }
  return out;
}

config::HostPort default_bootstrap(const config::Config& cfg) {
  config::HostPort hp = cfg.kafka.listeners.empty() ? config::HostPort{"127.0.0.1", 9092} : cfg.kafka.listeners.front().address;
  hp.host = net::connectable_host(hp.host);
  return hp;
}

int topics_list(const AdminContext& c) {
  auto admin = BridgeAdmin::connect(c.bootstrap);
  if (!admin) return fail(c, admin.error());
  auto topics = admin->topics();
  if (!topics) return fail(c, topics.error());
  std::vector<TopicPartition> parts;
  for (const auto& t : *topics)
    for (int32_t p = 0; p < t.partitions; ++p) parts.emplace_back(t.name, p);
  auto ranges = admin->offset_ranges(parts);
  if (!ranges) return fail(c, ranges.error());
  const auto cleaned = cleaned_partitions(c.cfg);
  json doc = json::array();
  // MESSAGES counts offsets (gaps of a compacted partition included); CLEANED: the partitions
  // with a cleaned head, GENERATIONS their generation topics in [compaction] stream.
  TextTable table({"TOPIC", "PARTITIONS", "MESSAGES", "TOPIC-ID", "CLEANED", "GENERATIONS"});
  for (const auto& t : *topics) {
    int64_t messages = 0;
    int cleaned_count = 0;
    std::string generations;
    json partitions = json::array();
    for (int32_t p = 0; p < t.partitions; ++p) {
      const OffsetRange& r = (*ranges)[{t.name, p}];
      if (r.start >= 0 && r.end >= r.start) messages += r.end - r.start;
      json part = {{"partition", p}, {"log_start_offset", offset_or_null(r.start)}, {"log_end_offset", offset_or_null(r.end)}};
      if (auto it = cleaned.find({t.name, p}); it != cleaned.end()) {
        const state::CompactionStateRow& row = it->second;
        ++cleaned_count;
        generations += (generations.empty() ? "" : ",") + row.generation_topic;
        part["cleaner_point"] = row.cleaner_point;
        part["generation"] = row.generation;
        part["generation_topic"] = row.generation_topic;
        part["kept_records"] = row.kept_records;
      }
      partitions.push_back(std::move(part));
    }
    table.add({t.name, std::to_string(t.partitions), std::to_string(messages), t.topic_id,
               cleaned_count ? std::to_string(cleaned_count) : "-", or_dash(generations)});
    doc.push_back({{"topic", t.name}, {"topic_id", t.topic_id}, {"messages", messages}, {"partitions", partitions}});
  }
  if (c.json) {
    c.out << dump_json(doc) << "\n";
  } else {
    c.out << table.render();
    if (!cleaned.empty()) c.out << "generation topics: Iggy stream '" << c.cfg.compaction.stream << "'\n";
  }
  return 0;
}

int groups_list(const AdminContext& c) {
  auto admin = BridgeAdmin::connect(c.bootstrap);
  if (!admin) return fail(c, admin.error());
  auto listed = admin->list_groups();
  if (!listed) return fail(c, listed.error());
  std::vector<std::string> ids;
  for (const auto& [id, state] : *listed) ids.push_back(id);
  auto described = admin->describe_groups(ids);
  if (!described) return fail(c, described.error());
  json doc = json::array();
  TextTable table({"GROUP", "STATE", "MEMBERS", "PROTOCOL-TYPE", "ASSIGNOR"});
  for (const auto& g : *described) {
    table.add({g.group_id, g.state, std::to_string(g.members.size()), or_dash(g.protocol_type), or_dash(g.protocol)});
    doc.push_back({{"group", g.group_id}, {"state", g.state}, {"members", g.members.size()},
                   {"protocol_type", g.protocol_type}, {"assignor", g.protocol}});
  }
  if (c.json) c.out << dump_json(doc) << "\n";
  else c.out << table.render();
  return 0;
}

int groups_describe(const AdminContext& c, const std::vector<std::string>& group_ids) {
  auto admin = BridgeAdmin::connect(c.bootstrap);
  if (!admin) return fail(c, admin.error());
  auto described = admin->describe_groups(group_ids);
  if (!described) return fail(c, described.error());
  int rc = 0;
  json doc = json::array();
  std::string text;
  for (const auto& g : *described) {
    if (g.error != kafka::ErrorCode::kNone) {
      c.err << "group " << escape(g.group_id) << ": " << describe_error(g.error) << "\n";
      rc = 1;
      continue;
    }
    auto committed = admin->committed_offsets(g.group_id);
    if (!committed) {
      c.err << committed.error().message << "\n";
      rc = 1;
      continue;
    }
    if (g.state == "Dead" && committed->empty()) {
      c.err << "Consumer group '" << escape(g.group_id) << "' does not exist.\n";
      rc = 1;
      continue;
    }
    // Every partition the group committed or a member owns.
    std::map<TopicPartition, const MemberSummary*> owner;
    for (const auto& m : g.members)
      for (const auto& tp : m.assignment) owner[tp] = &m;
    std::map<TopicPartition, const CommittedOffset*> offsets;
    for (const auto& o : *committed) offsets[{o.topic, o.partition}] = &o;
    std::set<TopicPartition> partitions;
    for (const auto& [tp, _] : owner) partitions.insert(tp);
    for (const auto& [tp, _] : offsets) partitions.insert(tp);
    auto ranges = admin->offset_ranges({partitions.begin(), partitions.end()});
    if (!ranges) {
      c.err << ranges.error().message << "\n";
      rc = 1;
      continue;
    }

    text += "Consumer group '" + escape(g.group_id, TextTable::kMaxCellBytes) + "': " + escape(g.state) + ", " +
            std::to_string(g.members.size()) + (g.members.size() == 1 ? " member" : " members") +
            (g.protocol.empty() ? "" : ", assignor " + escape(g.protocol)) + "\n";
    TextTable table({"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                     "CLIENT-ID"});
    json rows = json::array();
    for (const auto& tp : partitions) {
      const CommittedOffset* o = offsets.count(tp) ? offsets[tp] : nullptr;
      const MemberSummary* m = owner.count(tp) ? owner[tp] : nullptr;
      const OffsetRange& r = (*ranges)[tp];
      const int64_t current = o ? o->offset : -1;
      const int64_t lag = current >= 0 && r.end >= 0 ? std::max<int64_t>(0, r.end - current) : -1;
      table.add({g.group_id, tp.first, std::to_string(tp.second), dash_if_negative(current), dash_if_negative(r.end),
                 dash_if_negative(lag), m ? m->member_id : "-", m ? m->client_host : "-", m ? m->client_id : "-"});
      rows.push_back({{"topic", tp.first}, {"partition", tp.second}, {"committed_offset", offset_or_null(current)},
                      {"metadata", o ? json(o->metadata) : json(nullptr)}, {"log_end_offset", offset_or_null(r.end)},
                      {"lag", offset_or_null(lag)}, {"member_id", m ? json(m->member_id) : json(nullptr)}});
    }
    if (table.rows() > 0) text += "\n" + table.render();
    text += "\n";
    json members = json::array();
    for (const auto& m : g.members) {
      json assignment = json::array();
      for (const auto& [t, p] : m.assignment) assignment.push_back({{"topic", t}, {"partition", p}});
      members.push_back({{"member_id", m.member_id},
                         {"group_instance_id", m.group_instance_id ? json(*m.group_instance_id) : json(nullptr)},
                         {"client_id", m.client_id}, {"host", m.client_host}, {"assignment", assignment}});
    }
    doc.push_back({{"group", g.group_id}, {"state", g.state}, {"protocol_type", g.protocol_type},
                   {"assignor", g.protocol}, {"members", members}, {"offsets", rows}});
  }
  if (c.json) c.out << dump_json(doc) << "\n";
  else c.out << text;
  return rc;
}

}  // namespace kib::admin
