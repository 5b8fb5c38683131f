// What the compaction design (docs/compaction.md, "What Iggy can do") relies on, against the real
// iggy-server: DeleteSegments never deletes a record above the minimum stored consumer offset of
// the partition (the consumer-offset barrier), deletes the sealed segments that end at or below
// it, and never the active segment.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "iggy/client.h"
#include "support/iggy_harness.h"

using namespace kib;
using namespace kib::iggy;
using kib::test::IggyTestContext;
namespace utf = boost::unit_test;

namespace {

struct BarrierFixture {
  IggyTestContext ctx;
  IggyClient& client = ctx.client();
  std::string stream_name = kib::test::unique_name("cb");
  Identifier stream = Identifier::named(stream_name);
  Identifier topic = Identifier::named("live");
  Consumer cleaner = Consumer::consumer(Identifier::numeric(2131230));

  BarrierFixture() {
    auto s = ctx.await<StreamInfo>([&](auto cb) { client.create_stream(stream_name, cb); });
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    TopicConfig c;
    c.name = "live";
    c.segment_size = 1u << 20;  // Iggy's smallest: a few segments from a few MiB
    auto t = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(stream, c, cb); });
    BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
  }
  ~BarrierFixture() { (void)ctx.await<Unit>([&](auto cb) { client.delete_stream(stream, cb); }); }

  // `count` messages of 1,000 bytes, 100 to a send.
  void send(uint32_t count) {
    const std::string payload(1000, 'x');
    for (uint32_t sent = 0; sent < count; sent += 100) {
      std::vector<OutgoingMessage> msgs(std::min<uint32_t>(100, count - sent));
      for (auto& m : msgs) m.payload = ByteSpan(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
      auto r = ctx.await<SendConfirmation>(
          [&](auto cb) { client.send_messages(stream, topic, Partitioning::partition(0), msgs, cb); });
      BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    }
  }

  PartitionInfo partition() {
    auto t = ctx.await<std::optional<TopicInfo>>([&](auto cb) { client.get_topic(stream, topic, cb); });
    BOOST_REQUIRE(t.ok() && t->has_value());
    BOOST_REQUIRE(!(*t)->partitions.empty());
    return (*t)->partitions.front();
  }

  // The first retained offset (Poll First), or -1 when nothing is retained.
  int64_t first_offset() {
    PollRequest q;
    q.consumer = Consumer::consumer(Identifier::numeric(1));
    q.stream = stream;
    q.topic = topic;
    q.partition_id = 0;
    q.strategy = PollingStrategy::first();
    q.count = 1;
    auto r = ctx.await<PolledMessages>([&](auto cb) { client.poll_messages(q, cb); });
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r->messages.empty() ? -1 : static_cast<int64_t>(r->messages.front().offset);
  }

  void store_barrier(uint64_t offset) {
    auto r = ctx.await<Unit>([&](auto cb) { client.store_consumer_offset(cleaner, stream, topic, 0u, offset, cb); });
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  }

  void delete_sealed() {
    const uint32_t segments = partition().segments_count;
    BOOST_REQUIRE(segments >= 2u);
    auto r = ctx.await<Unit>([&](auto cb) { client.delete_segments(stream, topic, 0, segments - 1, cb); });
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  }

  // Deletion is asynchronous: the first offset once it has stopped moving, or after `wait`.
  int64_t settled_first_offset(int64_t moved_past, std::chrono::seconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    int64_t first = first_offset();
    while (first <= moved_past && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      first = first_offset();
    }
    return first;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(compaction_barrier, *utf::precondition(kib::test::iggy_available))

BOOST_FIXTURE_TEST_CASE(delete_segments_stops_at_the_stored_consumer_offset, BarrierFixture) {
  send(4000);  // ~4 MiB: some four 1 MiB segments, the last one active
  const PartitionInfo before = partition();
  BOOST_TEST_MESSAGE("segments before: " << before.segments_count);
  BOOST_REQUIRE(before.segments_count >= 3u);
  BOOST_REQUIRE(first_offset() == 0);

  const uint64_t barrier = 2000;
  store_barrier(barrier);
  delete_sealed();  // asks for every sealed segment
  const int64_t first = settled_first_offset(0, std::chrono::seconds(20));
  // Segments ending at or below the barrier went; the one holding offset barrier + 1 stayed.
  BOOST_TEST(first > 0);
  BOOST_TEST(first <= static_cast<int64_t>(barrier));
  // Still so once Iggy's reconciler has had time to re-apply the delete it was asked for.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  BOOST_TEST(first_offset() == first);
  BOOST_TEST(partition().messages_count == 4000u - static_cast<uint64_t>(first));

  // Moving the barrier lets the sealed segments below it go, as far as it and no further.
  store_barrier(3500);
  delete_sealed();
  const int64_t later = settled_first_offset(first, std::chrono::seconds(20));
  BOOST_TEST(later > first);
  BOOST_TEST(later <= 3500);
  BOOST_TEST(partition().messages_count == 4000u - static_cast<uint64_t>(later));
  BOOST_TEST(partition().current_offset == 3999u);
}

BOOST_AUTO_TEST_SUITE_END()
