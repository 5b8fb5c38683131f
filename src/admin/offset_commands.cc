// `offsets import` (a listing from the Kafka cluster being left -> the bridge's committed
// offsets) and `offsets export` (the bridge's committed offsets -> Iggy consumer offsets).
// Both print their plan first and change nothing without --execute, as kafka-consumer-groups
// --reset-offsets does.
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "admin/admin_commands.h"
#include "admin/bridge_admin.h"
#include "admin/text_table.h"

namespace kib::admin {
namespace {

using nlohmann::json;

// Offsets of a group can be changed by a non-member only while it has no active members.
bool inactive(const std::string& state) { return state == "Empty" || state == "Dead"; }

Result<std::string> read_input(const std::string& file) {
  if (file == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{ErrorDomain::kInvalid, 0, file + ": cannot be read"};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kDryRunNote = "Dry run: nothing was changed. Add --execute to apply these offsets.\n";

// One listed offset on its way in: the offset to commit (after clamping), a note, or why not.
struct Planned {
  OffsetRow row;
  int64_t offset = 0;  // after clamping
  std::string note;
  std::string error;
};

// What the bridge knows of the rows' groups and topics: a group that is not inactive cannot be
// changed now, a topic it does not have or a partition beyond its count is an error.
Status check_groups_and_topics(BridgeAdmin& admin, std::vector<Planned>& plan) {
  std::set<std::string> group_ids, topic_names;
  for (const auto& p : plan) {
    group_ids.insert(p.row.group);
    topic_names.insert(p.row.topic);
  }
  auto groups = admin.describe_groups({group_ids.begin(), group_ids.end()});
  auto topics = admin.topics({topic_names.begin(), topic_names.end()});
  if (!groups) return groups.error();
  if (!topics) return topics.error();
  std::map<std::string, std::string> busy;  // group -> why it cannot be changed now
  for (const auto& g : *groups)
    if (!inactive(g.state))
      busy[g.group_id] = "group is " + g.state + " with " + std::to_string(g.members.size()) +
                         " members; stop its consumers first";
  std::map<std::string, int32_t> partition_count;
  for (const auto& t : *topics)
    if (t.error == kafka::ErrorCode::kNone) partition_count[t.name] = t.partitions;
  for (auto& p : plan) {
    auto it = partition_count.find(p.row.topic);
    if (busy.count(p.row.group)) p.error = busy[p.row.group];
    else if (it == partition_count.end()) p.error = "no such topic on the bridge";
    else if (p.row.partition >= it->second) p.error = "the topic has " + std::to_string(it->second) + " partitions";
  }
  return ok_status();
}

// Offsets outside the partition's range are moved into it, as kafka-consumer-groups does.
Status clamp_to_ranges(BridgeAdmin& admin, std::vector<Planned>& plan) {
  std::vector<TopicPartition> known;
  for (const auto& p : plan)
    if (p.error.empty()) known.emplace_back(p.row.topic, p.row.partition);
  auto ranges = admin.offset_ranges(known);
  if (!ranges) return ranges.error();
  for (auto& p : plan) {
    if (!p.error.empty()) continue;
    const OffsetRange& r = (*ranges)[{p.row.topic, p.row.partition}];
    if (r.error != kafka::ErrorCode::kNone) {
      p.error = "ListOffsets: " + describe_error(r.error);
    } else if (r.end >= 0 && p.offset > r.end) {
      p.note = "clamped from " + std::to_string(p.offset) + " to the log end";
      p.offset = r.end;
    } else if (r.start >= 0 && p.offset < r.start) {
      p.note = "clamped from " + std::to_string(p.offset) + " to the log start";
      p.offset = r.start;
    }
  }
  return ok_status();
}

// Commits the planned offsets, one OffsetCommit per group.
void commit_plan(BridgeAdmin& admin, std::vector<Planned>& plan) {
  std::map<std::string, std::vector<size_t>> by_group;
  for (size_t i = 0; i < plan.size(); ++i)
    if (plan[i].error.empty()) by_group[plan[i].row.group].push_back(i);
  for (const auto& [group, idx] : by_group) {
    std::vector<OffsetToCommit> commits;
    for (size_t i : idx) commits.push_back({plan[i].row.topic, plan[i].row.partition, plan[i].offset, plan[i].row.metadata});
    auto errors = admin.commit_offsets(group, commits);
    for (size_t k = 0; k < idx.size(); ++k) {
      Planned& p = plan[idx[k]];
      if (!errors) p.error = errors.error().message;
      else if ((*errors)[k] != kafka::ErrorCode::kNone) p.error = "OffsetCommit: " + describe_error((*errors)[k]);
    }
  }
}

// The plan as a table (or JSON); 1 if any row has an error.
int print_plan(const AdminContext& c, const std::vector<Planned>& plan, bool execute) {
  int rc = 0;
  TextTable table({"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET", "RESULT"});
  json doc = json::array();
  for (const auto& p : plan) {
    if (!p.error.empty()) rc = 1;
    std::string result = !p.error.empty() ? "error: " + p.error : (execute ? "committed" : "planned");
    if (p.error.empty() && !p.note.empty()) result += " (" + p.note + ")";
    table.add({p.row.group, p.row.topic, std::to_string(p.row.partition), std::to_string(p.offset), result});
    doc.push_back({{"group", p.row.group}, {"topic", p.row.topic}, {"partition", p.row.partition},
                   {"listed_offset", p.row.offset}, {"new_offset", p.offset}, {"note", p.note},
                   {"committed", execute && p.error.empty()}, {"error", p.error.empty() ? json(nullptr) : json(p.error)}});
  }
  if (c.json) c.out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  else c.out << table.render();
  if (!execute) c.err << kDryRunNote;
  return rc;
}

}  // namespace

int offsets_import(const AdminContext& c, const ImportOptions& o) {
  auto text = read_input(o.file);
  if (!text) return fail(c, text.error());
  auto rows = parse_offset_listing(*text, o.format, o.group);
  if (!rows) {
    c.err << (o.file == "-" ? "<stdin>" : o.file) << ": " << rows.error().message << "\n";
    return 1;
  }
  if (rows->empty()) {
    c.err << (o.file == "-" ? "<stdin>" : o.file) << ": no committed offsets to import"
          << (o.group ? " for group " + *o.group : std::string()) << "\n";
    return 1;
  }
  auto admin = BridgeAdmin::connect(c.bootstrap);
  if (!admin) return fail(c, admin.error());
  std::vector<Planned> plan;
  for (const auto& r : *rows) plan.push_back({r, r.offset, "", ""});
  if (auto st = check_groups_and_topics(*admin, plan); !st) {
    c.err << st.error().message << "\n";
    return 1;
  }
  if (auto st = clamp_to_ranges(*admin, plan); !st) return fail(c, st.error());
  if (o.execute) commit_plan(*admin, plan);
  return print_plan(c, plan, o.execute);
}

namespace {

// A committed offset below a compacted partition's cleaner point (docs/compaction.md): the live
// Iggy topic may have lost the records from it (the cleaner deletes its sealed segments below the
// point), so a native consumer given committed - 1 would start at the live topic's first retained
// offset and miss the kept records between; they are in the generation topic. Empty otherwise.
std::string below_cleaner_point(const config::Config& cfg,
                                const std::map<std::pair<std::string, int32_t>, state::CompactionStateRow>& cleaned,
                                const ExportItem& item) {
  auto it = cleaned.find({item.topic, item.partition});
  if (it == cleaned.end() || item.committed >= it->second.cleaner_point) return "";
  return item.topic + "-" + std::to_string(item.partition) + ": committed offset " + std::to_string(item.committed) +
         " is below the cleaner point " + std::to_string(it->second.cleaner_point) +
         "; the records kept from it on up to there are in Iggy topic '" + it->second.generation_topic +
         "' of stream '" + cfg.compaction.stream + "' (Kafka offsets in their kib.offset header), and the live topic "
         "may start later: a native consumer given the exported offset would skip them";
}

}  // namespace

int offsets_export(const AdminContext& c, const ExportOptions& o) {
  auto admin = BridgeAdmin::connect(c.bootstrap);
  if (!admin) return fail(c, admin.error());
  auto groups = admin->describe_groups({o.group});
  if (!groups) return fail(c, groups.error());
  if (!groups->empty() && !inactive(groups->front().state)) {
    c.err << "group " << o.group << " is " << groups->front().state << " with " << groups->front().members.size()
          << " members: stop its Kafka consumers first, or their commits would move on after the export\n";
    return 1;
  }
  auto committed = admin->committed_offsets(o.group);
  if (!committed) return fail(c, committed.error());
  std::vector<ExportItem> items;
  const std::set<std::string> only(o.topics.begin(), o.topics.end());
  for (const auto& x : *committed)
    if (only.empty() || only.count(x.topic)) items.push_back({x.topic, x.partition, x.offset});
  if (items.empty()) {
    c.err << "group " << o.group << " has no committed offsets"
          << (only.empty() ? std::string() : std::string(" for the topics given")) << "\n";
    return 1;
  }
  IggyOffsetTarget target = o.target;
  if (target.name.empty()) target.name = o.group;
  auto outcomes = export_offsets_to_iggy(c.cfg, target, items, o.execute);
  if (!outcomes) return fail(c, outcomes.error());
  const char* kind = target.kind == IggyOffsetTarget::Kind::kConsumerGroup ? "consumer group" : "consumer";
  int rc = 0;
  TextTable table({"TOPIC", "PARTITION", "KAFKA-COMMITTED", "IGGY-OFFSET", "RESULT"});
  json rows = json::array();
  const auto cleaned = cleaned_partitions(c.cfg);
  for (const auto& x : *outcomes) {
    if (!x.error.empty()) rc = 1;
    const std::string warning = below_cleaner_point(c.cfg, cleaned, x.item);
    if (!warning.empty()) c.err << "warning: " << warning << "\n";
    table.add({x.item.topic, std::to_string(x.item.partition), std::to_string(x.item.committed),
               x.stored ? std::to_string(*x.stored) : "-", x.error.empty() ? x.action : "error: " + x.error});
    rows.push_back({{"topic", x.item.topic}, {"partition", x.item.partition}, {"kafka_committed_offset", x.item.committed},
                    {"iggy_offset", x.stored ? json(*x.stored) : json(nullptr)}, {"action", x.action},
                    {"error", x.error.empty() ? json(nullptr) : json(x.error)},
                    {"warning", warning.empty() ? json(nullptr) : json(warning)}});
  }
  if (c.json) {
    c.out << json{{"group", o.group}, {"iggy_stream", c.cfg.iggy.stream}, {"iggy_target_kind", kind},
                  {"iggy_target", target.name}, {"executed", o.execute}, {"partitions", rows}}
                 .dump(2, ' ', false, json::error_handler_t::replace)
          << "\n";
  } else {
    c.out << "Kafka group '" << o.group << "' -> Iggy " << kind << " '" << target.name << "' in stream '"
          << c.cfg.iggy.stream << "' (Iggy stores the last consumed offset: committed - 1)\n\n"
          << table.render();
  }
  if (!o.execute) c.err << kDryRunNote;
  return rc;
}

}  // namespace kib::admin
