// The compaction cleaner (bridge/cleaner/cleaner.h, docs/compaction.md "A pass") against a real
// iggy-server: a pass keeps the latest record of each key below the cleaner point with its offset,
// Fetch reads them back through the partition log, a second pass replaces the first generation
// (deleted afterwards), the state is in SQLite, and a restart finds interrupted passes and
// generation topics nothing names and cleans them up.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/log_start_persistence.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/cleaner/cleaner.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry_impl.h"
#include "config/config.h"
#include "iggy/client.h"
#include "kafka/records/record_batch.h"
#include "state/compaction_store.h"
#include "state/state_store.h"
#include "support/iggy_harness.h"

using namespace kib;
using namespace kib::bridge;
using kib::kafka::ErrorCode;
using kib::test::IggyTestContext;
using namespace std::chrono_literals;

namespace {

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(const std::optional<ByteSpan>& s) {
  return s ? std::string(reinterpret_cast<const char*>(s->data()), s->size()) : "<null>";
}

struct Rec {
  std::string key;
  std::optional<std::string> value;
  int64_t timestamp = 1'700'000'000'000;
};

struct CleanerPath {
  IggyTestContext ctx;
  config::Config cfg;
  std::string db_path;
  std::unique_ptr<state::StateStore> state;
  std::unique_ptr<TopicCatalog> catalog;
  std::unique_ptr<ProducerRegistry> producers;
  std::unique_ptr<PartitionLog> log;
  std::unique_ptr<compaction::Cleaner> cleaner;

  CleanerPath() {
    cfg.iggy.stream = kib::test::unique_name("kafka");
    cfg.compaction.stream = kib::test::unique_name("kc");
    cfg.compaction.io_bytes_per_second = 0;
    cfg.compaction.backoff_ms = 3600000;  // no pass but the ones a test asks for
    cfg.topics.enforce_fsync = false;
    db_path = "/tmp/" + kib::test::unique_name("cleaner") + ".db";
    auto st = state::StateStore::open(db_path, ctx.loop());
    BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message));
    state = std::move(st.value());
    catalog = std::make_unique<TopicCatalog>(cfg, ctx.client(), *state, ctx.loop());
    auto started = ctx.await<Unit>([&](auto cb) { catalog->start([cb](Status s) { cb(s); }); });
    BOOST_REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().message));
    producers = make_producer_registry(*state, ctx.loop());
    restart_log();
  }

  // A new partition log and cleaner, as after a restart: the cleaned heads from SQLite, then
  // the cleaner's recovery.
  void restart_log() {
    cleaner.reset();
    log.reset();
    log = std::make_unique<PartitionLog>(ctx.loop(), ctx.client(), *catalog, producers.get(), cfg);
    // As the daemon does at startup (app/log_start_persistence.h).
    const Status heads = app::restore_cleaned_heads(*log, *state, cfg.compaction.stream);
    BOOST_REQUIRE_MESSAGE(heads.ok(), (heads.ok() ? "" : heads.error().message));
    cleaner = std::make_unique<compaction::Cleaner>(ctx.loop(), cfg.compaction, ctx.client(), *catalog, *log, *state);
    auto recovered = ctx.await<Unit>([&](auto cb) { cleaner->start([cb](Status s) { cb(s); }); });
    BOOST_REQUIRE_MESSAGE(recovered.ok(), (recovered.ok() ? "" : recovered.error().message));
  }

  ~CleanerPath() {
    cleaner.reset();
    log.reset();
    for (const std::string& s : {cfg.iggy.stream, cfg.compaction.stream})
      (void)ctx.await<Unit>([&](auto cb) { ctx.client().delete_stream(iggy::Identifier::named(s), cb); });
    catalog->stop();
    catalog.reset();
    producers.reset();
    state->close();
    state.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db_path + suffix).c_str());
  }

  std::string create_compacted_topic() {
    CreateTopicRequest req;
    req.name = kib::test::unique_name("t");
    req.partitions = 1;
    // Every append after 1 ms rolls the virtual active segment; everything rolled is cleanable.
    req.configs = {{"cleanup.policy", "compact"}, {"segment.ms", "1"}, {"min.cleanable.dirty.ratio", "0.01"}};
    std::optional<Result<TopicMetadata>> out;
    catalog->create(req, [&](Result<TopicMetadata> r) { out.emplace(std::move(r)); });
    ctx.run_until([&] { return out.has_value(); });
    BOOST_REQUIRE(out.has_value());
    BOOST_REQUIRE_MESSAGE(out->ok(), (out->ok() ? "" : out->error().message));
    return req.name;
  }

  void produce(const std::string& topic, const std::vector<Rec>& records) {
    std::vector<kafka::RecordToEncode> enc;
    for (const Rec& r : records)
      enc.push_back({r.timestamp, std::optional<ByteSpan>(span_of(r.key)),
                     r.value ? std::optional<ByteSpan>(span_of(*r.value)) : std::nullopt, {}});
    ByteWriter w;
    kafka::encode_record_batch(w, kafka::BatchSettings{}, enc);
    auto input = std::make_shared<Bytes>(w.take());
    kafka::DecompressionBudget budget{64u << 20};
    auto decoded = kafka::decode_record_batches(*input, budget);
    BOOST_REQUIRE(decoded.ok());
    std::optional<ProduceResult> out;
    log->produce(topic, PartitionId(0), std::move(decoded.value()), SharedSpan{input, *input}, -1,
                 [&out](ProduceResult r) { out.emplace(std::move(r)); });
    BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 20s));
    BOOST_REQUIRE((out->error == ErrorCode::kNone));
    std::this_thread::sleep_for(3ms);  // the next append rolls the virtual segment (segment.ms=1)
  }

  Status clean(const std::string& topic) {
    std::optional<Status> out;
    cleaner->clean(topic, 0, [&](Status s) { out.emplace(std::move(s)); });
    BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 60s));
    return *out;
  }

  // Every record from `from` to the end: offset -> "key=value".
  std::map<int64_t, std::string> read_all(const std::string& topic, int64_t from = 0) {
    std::map<int64_t, std::string> out;
    int64_t at = from;
    for (int i = 0; i < 100; ++i) {
      std::optional<std::vector<FetchPartitionResult>> r;
      log->fetch({{topic, PartitionId(0), KafkaOffset(at), 1 << 20}}, FetchParams{},
                 [&r](std::vector<FetchPartitionResult> v) { r.emplace(std::move(v)); });
      BOOST_REQUIRE(ctx.run_until([&] { return r.has_value(); }, 30s));
      BOOST_REQUIRE(r->size() == 1u);
      const FetchPartitionResult& f = (*r)[0];
      BOOST_REQUIRE((f.error == ErrorCode::kNone));
      kafka::DecompressionBudget budget{1u << 30};
      auto batches = kafka::decode_record_batches(f.records.span(), budget);
      BOOST_REQUIRE(batches.ok());
      int64_t next = at;
      for (const auto& b : *batches)
        for (const auto& rec : b.records) {
          out[b.offset_of(rec)] = str(rec.key) + "=" + str(rec.value);
          next = std::max(next, b.offset_of(rec) + 1);
        }
      if (next >= f.high_watermark()) break;
      at = next;
    }
    return out;
  }

  OffsetLookup list_offsets(const std::string& topic, int64_t timestamp) {
    std::optional<OffsetLookup> out;
    log->list_offsets(topic, PartitionId(0), TimestampMs(timestamp), [&out](OffsetLookup r) { out.emplace(r); });
    BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 30s));
    return *out;
  }

  bool generation_exists(const std::string& name) {
    auto r = ctx.await<std::optional<iggy::TopicInfo>>([&](auto cb) {
      ctx.client().get_topic(iggy::Identifier::named(cfg.compaction.stream), iggy::Identifier::named(name), cb);
    });
    return r.ok() && r->has_value();
  }
};

// What Kafka's compaction guarantees of `written` (offset -> key=value in order) cleaned below
// `point`: below it the latest record of each key, tombstones kept; from it everything.
std::map<int64_t, std::string> compacted(const std::map<int64_t, std::string>& written, int64_t point) {
  std::map<std::string, int64_t> latest;
  for (const auto& [o, kv] : written)
    if (o < point) latest[kv.substr(0, kv.find('='))] = o;
  std::map<int64_t, std::string> out;
  for (const auto& [o, kv] : written)
    if (o >= point || latest[kv.substr(0, kv.find('='))] == o) out[o] = kv;
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compaction_cleaner, *boost::unit_test::precondition(kib::test::iggy_available))

BOOST_FIXTURE_TEST_CASE(a_pass_keeps_the_latest_record_of_each_key_at_its_offset, CleanerPath) {
  const std::string topic = create_compacted_topic();
  std::map<int64_t, std::string> written;
  int64_t offset = 0;
  for (int round = 0; round < 4; ++round) {
    std::vector<Rec> batch;
    for (int k = 0; k < 5; ++k) {
      Rec r{"k" + std::to_string(k), "v" + std::to_string(round) + "-" + std::to_string(k)};
      if (round == 2 && k == 4) r.value = std::nullopt;  // a tombstone, superseded by round 3
      if (round == 3 && k == 3) r.value = std::nullopt;  // a tombstone that stays (delete.retention.ms)
      written[offset++] = r.key + "=" + str(r.value ? std::optional<ByteSpan>(span_of(*r.value)) : std::nullopt);
      batch.push_back(r);
    }
    produce(topic, batch);
  }
  produce(topic, {{"k0", "last"}});  // in the active segment: never cleaned by this pass
  written[offset++] = "k0=last";
  BOOST_REQUIRE(read_all(topic) == written);

  Status st = clean(topic);
  BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message));
  const auto status = cleaner->status();
  BOOST_REQUIRE(status.size() == 1u);
  BOOST_TEST(status[0].cleaner_point == 20);
  BOOST_TEST(status[0].generation == 1);
  BOOST_TEST(status[0].kept_records == 5);
  BOOST_TEST(cleaner->stats().passes_committed == 1u);
  BOOST_TEST(cleaner->stats().records_removed == 15u);
  const auto expected = compacted(written, 20);
  BOOST_TEST(expected.size() == 6u);
  BOOST_TEST((read_all(topic) == expected));
  // A read from inside a gap starts at the next kept record.
  BOOST_TEST(read_all(topic, 1).begin()->first == 15);

  // More updates, a second pass: generation 2 from generation 1 and the new dirty section.
  for (int k = 0; k < 3; ++k) {
    produce(topic, {{"k" + std::to_string(k), "w" + std::to_string(k)}});
    written[offset++] = "k" + std::to_string(k) + "=w" + std::to_string(k);
  }
  produce(topic, {{"k9", "tail"}});
  written[offset++] = "k9=tail";
  const std::string first_generation = status[0].generation_topic;
  BOOST_TEST(generation_exists(first_generation));
  st = clean(topic);
  BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message));
  const auto second = cleaner->status();
  BOOST_TEST(second[0].generation == 2);
  BOOST_TEST(second[0].cleaner_point == offset - 1);
  BOOST_TEST((read_all(topic) == compacted(written, offset - 1)));
  BOOST_TEST(!generation_exists(first_generation));
  BOOST_TEST(generation_exists(second[0].generation_topic));

  // The state is in SQLite: after a restart the reads are the same.
  std::vector<state::CompactionStateRow> rows;
  BOOST_REQUIRE(state->run_blocking([&](SQLite::Database& db) { rows = state::load_compaction_states(db); }).ok());
  BOOST_REQUIRE(rows.size() == 1u);
  BOOST_TEST(rows[0].cleaner_point == offset - 1);
  BOOST_TEST(rows[0].generation_topic == second[0].generation_topic);
  restart_log();
  BOOST_TEST((read_all(topic) == compacted(written, offset - 1)));
}

BOOST_FIXTURE_TEST_CASE(nothing_cleanable_is_a_pass_that_writes_nothing, CleanerPath) {
  const std::string topic = create_compacted_topic();
  produce(topic, {{"a", "1"}});  // the only segment is the active one
  Status st = clean(topic);
  BOOST_REQUIRE(st.ok());
  BOOST_TEST(cleaner->stats().passes_committed == 0u);
  BOOST_TEST(cleaner->status()[0].generation == 0);
  BOOST_TEST((read_all(topic) == std::map<int64_t, std::string>{{0, "a=1"}}));
}

BOOST_FIXTURE_TEST_CASE(a_restart_undoes_an_interrupted_pass_and_deletes_orphan_generations, CleanerPath) {
  const std::string topic = create_compacted_topic();
  produce(topic, {{"a", "1"}, {"a", "2"}});
  produce(topic, {{"a", "3"}});
  const TopicMetadata* t = catalog->find(topic);
  BOOST_REQUIRE(t);
  // A pass a crash stopped while it wrote generation 1, and a generation topic nothing names.
  const std::string half = compaction::generation_topic_name(t->topic_id, 0, 1);
  const std::string orphan = compaction::generation_topic_name(t->topic_id, 0, 7);
  (void)ctx.await<iggy::StreamInfo>([&](auto cb) { ctx.client().create_stream(cfg.compaction.stream, cb); });
  for (const std::string& name : {half, orphan}) {
    iggy::TopicConfig c;
    c.name = name;
    BOOST_REQUIRE(ctx.await<iggy::TopicInfo>([&](auto cb) {
                     ctx.client().create_topic(iggy::Identifier::named(cfg.compaction.stream), c, cb);
                   }).ok());
  }
  state::CompactionPassRow row;
  row.topic = topic;
  row.partition = 0;
  row.generation = 1;
  row.generation_topic = half;
  row.from_offset = 0;
  row.to_offset = 2;
  row.started_at = 1;
  BOOST_REQUIRE(state->run_blocking([&](SQLite::Database& db) { state::begin_compaction_pass(db, row); }).ok());

  restart_log();
  BOOST_TEST(!generation_exists(half));
  BOOST_TEST(!generation_exists(orphan));
  std::vector<state::CompactionPassRow> left;
  BOOST_REQUIRE(state->run_blocking([&](SQLite::Database& db) { left = state::load_unfinished_compaction_passes(db); }).ok());
  BOOST_TEST(left.empty());
  BOOST_TEST(cleaner->stats().passes_recovered == 1u);
  BOOST_TEST(cleaner->stats().orphans_deleted == 1u);
  // The pass is redone from the start. The virtual active segment is not kept across a restart:
  // with no append since, everything up to the high watermark is cleanable.
  Status st = clean(topic);
  BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message));
  BOOST_TEST((read_all(topic) == std::map<int64_t, std::string>{{2, "a=3"}}));
  BOOST_TEST(cleaner->status()[0].generation == 1);
}

// DeleteTopics takes the topic's generation topics along (docs/compaction.md, "Where the state
// lives"); a topic created again under the name starts uncleaned.
BOOST_FIXTURE_TEST_CASE(deleting_a_compacted_topic_deletes_its_generations, CleanerPath) {
  const std::string topic = create_compacted_topic();
  produce(topic, {{"a", "1"}, {"a", "2"}});
  produce(topic, {{"b", "1"}});
  Status st = clean(topic);
  BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message));
  const std::string generation = cleaner->status()[0].generation_topic;
  BOOST_REQUIRE(generation_exists(generation));
  std::optional<Result<RemovedTopic>> removed;
  catalog->remove(topic, [&](Result<RemovedTopic> r) { removed.emplace(std::move(r)); });
  BOOST_REQUIRE(ctx.run_until([&] { return removed.has_value(); }, 30s));
  BOOST_REQUIRE(removed->ok());
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !generation_exists(generation);
    if (!gone) ctx.run_until([] { return false; }, 100ms);  // the loop runs the delete meanwhile
  }
  BOOST_TEST(gone);
  BOOST_TEST(cleaner->status().empty());
}

// ListOffsets by timestamp below the cleaner point answers the first kept record at or after
// the time (from the generation), not a removed one the live log still holds.
BOOST_FIXTURE_TEST_CASE(list_offsets_by_time_below_the_cleaner_point_finds_kept_records, CleanerPath) {
  const std::string topic = create_compacted_topic();
  produce(topic, {{"a", "1", 1000}, {"b", "1", 2000}});
  produce(topic, {{"a", "2", 3000}, {"c", "1", 4000}});
  produce(topic, {{"d", "1", 5000}});  // the active segment
  BOOST_TEST(list_offsets(topic, 500).offset() == 0);  // before the pass: a@0
  Status st = clean(topic);
  BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message));
  BOOST_REQUIRE(cleaner->status()[0].cleaner_point == 4);
  BOOST_TEST((read_all(topic) == std::map<int64_t, std::string>{{1, "b=1"}, {2, "a=2"}, {3, "c=1"}, {4, "d=1"}}));
  const OffsetLookup first = list_offsets(topic, 500);
  BOOST_TEST(first.offset() == 1);
  BOOST_TEST(first.timestamp() == 2000);
  BOOST_TEST(list_offsets(topic, 2500).offset() == 2);
  BOOST_TEST(list_offsets(topic, 4000).offset() == 3);
  BOOST_TEST(list_offsets(topic, 4500).offset() == 4);  // past the generation: the live log
  BOOST_TEST(list_offsets(topic, 9999).offset() == -1);
}

BOOST_AUTO_TEST_SUITE_END()
