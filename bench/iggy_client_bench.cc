// Native Iggy load through the bridge's own Iggy client (src/iggy): the "native Iggy" column of
// bench/run, and (without --mode) the client-vs-SDK comparison. Prints one JSON line per run.
//
//   iggy-client-bench [--address A] [--stream S] --topic T ...
//     (no --mode)      N messages in batches to partition 0 with --inflight sends, then polled
//                      back (the workload bench/iggy_sdk_bench.py repeats through Iggy's SDK)
//     --create-only    creates the stream and topic (--partitions, --fsync, --save) and exits
//     --delete         deletes the topic and exits
//     --mode produce   for --seconds, batches of --batch messages of --size bytes round-robin over
//                      --partitions, --inflight sends outstanding (one per pool connection)
//     --mode consume   polls every partition from offset 0 to its end, --batch per poll
//     --mode latency   one message at a time at --rate msg/s to partition 0 (send -> reply
//                      latency) while a poller re-polls the partition's next offset
//                      (send -> polled latency); p50/p99/p999 after a one-second warm-up
//     --mode commit    --inflight consumers store consumer offsets in a loop for --seconds
//
// Topics are created with --fsync (enforce_fsync) and --save (messages_required_to_save) so
// native runs use the same durability options as the bridge's topics (docs/durability.md).
#include <CLI/CLI.hpp>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "iggy/client.h"
#include "iggy/pool.h"

using namespace kib;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string address = "127.0.0.1:8090", stream = "bench", topic = "client", mode;
  uint64_t messages = 200000;
  uint32_t batch = 100, size = 1024, inflight = 4, partitions = 1;
  double seconds = 3, rate = 1000;
  std::optional<bool> fsync;
  std::optional<uint32_t> save;
  bool create_only = false, remove = false;
};

template <typename T>
Result<T> await(uv_loop_t* loop, std::function<void(iggy::Callback<T>)> start) {
  std::optional<Result<T>> out;
  start([&](Result<T> r) { out.emplace(std::move(r)); });
  while (!out) uv_run(loop, UV_RUN_ONCE);
  return std::move(*out);
}

int fail(const char* what, const Error& e) {
  std::fprintf(stderr, "%s: %s\n", what, e.message.c_str());
  return 1;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Random capital letters, as kafka-load's and kafka-producer-perf-test's payloads.
Bytes letters(size_t n) {
  Bytes b(n);
  unsigned s = 12345;
  for (auto& c : b) {
    s = s * 1103515245u + 12345u;
    c = static_cast<uint8_t>('A' + (s >> 16) % 26);
  }
  return b;
}

double pct_ms(std::vector<int64_t>& v, double q) {
  if (v.empty()) return -1;
  return static_cast<double>(v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]) / 1e6;
}

struct Bench {
  Args a;
  uv_loop_t* loop;
  iggy::IggyClient& client;
  iggy::Identifier stream, topic;

  void run_until(const std::function<bool()>& done) {
    while (!done()) uv_run(loop, UV_RUN_ONCE);
  }

  // ---- the client-vs-SDK workload
  int classic() {
    Bytes payload(a.size, 0x61);
    std::vector<iggy::OutgoingMessage> batch(a.batch);
    for (auto& m : batch) m.payload = payload;
    const uint64_t batches = (a.messages + a.batch - 1) / a.batch;
    uint64_t sent_batches = 0, done_batches = 0;
    std::optional<Error> error;
    std::function<void()> send_one = [&] {
      if (sent_batches >= batches || error) return;
      ++sent_batches;
      client.send_messages(stream, topic, iggy::Partitioning::partition(0), batch,
                           [&](Result<iggy::SendConfirmation> r) {
                             ++done_batches;
                             if (!r) error = r.error();
                             send_one();
                           });
    };
    auto t0 = Clock::now();
    for (uint32_t i = 0; i < a.inflight; ++i) send_one();
    run_until([&] { return done_batches >= sent_batches && (sent_batches >= batches || error); });
    double send_s = seconds_since(t0);
    if (error) return fail("send", *error);
    const uint64_t total = batches * a.batch;

    uint64_t next_offset = 0, polled = 0, outstanding = 0;
    std::function<void()> poll_one = [&] {
      if (next_offset >= total || error) return;
      iggy::PollRequest q;
      q.consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(1));
      q.stream = stream;
      q.topic = topic;
      q.partition_id = 0;
      q.strategy = iggy::PollingStrategy::offset(next_offset);
      q.count = a.batch;
      next_offset += a.batch;
      ++outstanding;
      client.poll_messages(q, [&](Result<iggy::PolledMessages> r) {
        --outstanding;
        if (!r) error = r.error();
        else polled += r->messages.size();
        poll_one();
      });
    };
    t0 = Clock::now();
    for (uint32_t i = 0; i < a.inflight; ++i) poll_one();
    run_until([&] { return outstanding == 0; });
    double poll_s = seconds_since(t0);
    if (error) return fail("poll", *error);
    const double mb = static_cast<double>(total) * a.size / 1e6;
    std::printf("{\"client\": \"kafka-iggy-bridge src/iggy\", \"messages\": %llu, \"size\": %u, \"batch\": %u, "
                "\"inflight\": %u, \"send_msgs_per_s\": %.0f, \"send_mb_per_s\": %.1f, \"poll_msgs_per_s\": %.0f, "
                "\"poll_mb_per_s\": %.1f, \"polled\": %llu}\n",
                (unsigned long long)total, a.size, a.batch, a.inflight, total / send_s, mb / send_s, polled / poll_s,
                static_cast<double>(polled) * a.size / 1e6 / poll_s, (unsigned long long)polled);
    return polled == total ? 0 : 1;
  }

  // ---- produce for a duration
  int produce() {
    const size_t distinct = 1024;
    Bytes payloads = letters(static_cast<size_t>(a.size) * distinct);
    std::vector<iggy::OutgoingMessage> batch(a.batch);
    for (size_t i = 0; i < batch.size(); ++i)
      batch[i].payload = ByteSpan(payloads.data() + (i % distinct) * a.size, a.size);
    uint64_t sent = 0, acked = 0, outstanding = 0;
    uint32_t next_partition = 0;
    std::optional<Error> error;
    const auto t0 = Clock::now();
    const auto stop = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.seconds));
    Clock::time_point last_ack = t0;
    std::function<void()> send_one = [&] {
      if (error || Clock::now() >= stop) return;
      ++outstanding;
      sent += batch.size();
      const uint32_t p = next_partition++ % a.partitions;
      client.send_messages(stream, topic, iggy::Partitioning::partition(p), batch,
                           [&](Result<iggy::SendConfirmation> r) {
                             --outstanding;
                             if (!r) error = r.error();
                             else acked += batch.size();
                             last_ack = Clock::now();
                             send_one();
                           });
    };
    for (uint32_t i = 0; i < a.inflight; ++i) send_one();
    run_until([&] { return outstanding == 0; });
    if (error) return fail("send", *error);
    const double s = std::chrono::duration<double>(last_ack - t0).count();
    std::printf("{\"tool\": \"iggy-client-bench\", \"mode\": \"produce\", \"topic\": \"%s\", \"size\": %u, "
                "\"batch\": %u, \"inflight\": %u, \"partitions\": %u, \"messages\": %llu, \"seconds\": %.3f, "
                "\"msgs_per_s\": %.1f, \"mb_per_s\": %.3f}\n",
                a.topic.c_str(), a.size, a.batch, a.inflight, a.partitions, (unsigned long long)acked, s, acked / s,
                static_cast<double>(acked) * a.size / 1e6 / s);
    return 0;
  }

  // ---- read every partition to its end
  int consume() {
    std::vector<uint64_t> next(a.partitions, 0);
    std::vector<bool> finished(a.partitions, false);
    uint64_t polled = 0, bytes = 0, outstanding = 0;
    uint32_t rr = 0;
    std::optional<Error> error;
    std::vector<bool> busy(a.partitions, false);
    std::function<void()> poll_one = [&] {
      // One poll per partition at a time (offsets follow each reply), up to --inflight in all.
      for (uint32_t k = 0; k < a.partitions; ++k) {
        const uint32_t p = (rr + k) % a.partitions;
        if (finished[p] || busy[p]) continue;
        rr = p + 1;
        busy[p] = true;
        ++outstanding;
        iggy::PollRequest q;
        q.consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(1));
        q.stream = stream;
        q.topic = topic;
        q.partition_id = p;
        q.strategy = iggy::PollingStrategy::offset(next[p]);
        q.count = a.batch;
        client.poll_messages(q, [&, p](Result<iggy::PolledMessages> r) {
          --outstanding;
          busy[p] = false;
          if (!r) {
            error = r.error();
            return;
          }
          if (r->messages.empty()) finished[p] = true;
          for (const auto& m : r->messages) bytes += m.payload.size();
          polled += r->messages.size();
          if (!r->messages.empty()) next[p] = r->messages.back().offset + 1;
          if (!error) poll_one();
        });
        return;
      }
    };
    const auto t0 = Clock::now();
    for (uint32_t i = 0; i < std::min(a.inflight, a.partitions); ++i) poll_one();
    run_until([&] { return outstanding == 0; });
    const double s = seconds_since(t0);
    if (error) return fail("poll", *error);
    std::printf("{\"tool\": \"iggy-client-bench\", \"mode\": \"consume\", \"topic\": \"%s\", \"partitions\": %u, "
                "\"batch\": %u, \"messages\": %llu, \"seconds\": %.3f, \"msgs_per_s\": %.1f, \"mb_per_s\": %.3f}\n",
                a.topic.c_str(), a.partitions, a.batch, (unsigned long long)polled, s, polled / s,
                static_cast<double>(bytes) / 1e6 / s);
    return 0;
  }

  // ---- fixed-rate latency
  int latency() {
    iggy::IggyClient sender = client.pinned(0), poller = client.pinned(1);
    Bytes payload = letters(a.size);
    const uint64_t total = static_cast<uint64_t>(a.rate * (a.seconds + 1));
    std::vector<int64_t> produce_lat, e2e_lat;
    produce_lat.reserve(total);
    e2e_lat.reserve(total);
    const int64_t start = now_ns(), warm_until = start + 1000000000LL;
    const double interval_ns = 1e9 / a.rate;
    uint64_t issued = 0, acked = 0, received = 0;
    std::optional<Error> error;

    // The next offset to read: the partition's end when the run starts.
    uint64_t next_offset = 0;
    auto t = await<std::optional<iggy::TopicInfo>>(loop, [&](auto cb) { client.get_topic(stream, topic, cb); });
    if (!t) return fail("get topic", t.error());
    if (*t && !(*t)->partitions.empty() && (*t)->partitions[0].messages_count > 0)
      next_offset = (*t)->partitions[0].current_offset + 1;

    std::function<void()> poll_next = [&] {
      if (error || received >= total) return;
      iggy::PollRequest q;
      q.consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(2));
      q.stream = stream;
      q.topic = topic;
      q.partition_id = 0;
      q.strategy = iggy::PollingStrategy::offset(next_offset);
      q.count = 100;
      poller.poll_messages(q, [&](Result<iggy::PolledMessages> r) {
        if (!r) {
          error = r.error();
          return;
        }
        const int64_t now = now_ns();
        for (const auto& m : r->messages) {
          int64_t sent;
          std::memcpy(&sent, m.payload.data(), sizeof sent);
          if (sent >= warm_until) e2e_lat.push_back(now - sent);
          ++received;
          next_offset = m.offset + 1;
        }
        poll_next();
      });
    };
    poll_next();

    uv_timer_t timer;
    uv_timer_init(loop, &timer);
    std::function<void()> tick = [&] {
      const int64_t now = now_ns();
      while (issued < total && start + static_cast<int64_t>(static_cast<double>(issued) * interval_ns) <= now) {
        ++issued;
        iggy::OutgoingMessage m;
        const int64_t sent = now_ns();
        std::memcpy(payload.data(), &sent, sizeof sent);
        m.payload = payload;  // copied into the frame by send_messages
        sender.send_messages(stream, topic, iggy::Partitioning::partition(0), std::span(&m, 1),
                             [&, sent](Result<iggy::SendConfirmation> r) {
                               ++acked;
                               if (!r) error = r.error();
                               else if (sent >= warm_until) produce_lat.push_back(now_ns() - sent);
                             });
      }
      if (issued >= total) uv_timer_stop(&timer);
    };
    timer.data = &tick;
    uv_timer_start(&timer, [](uv_timer_t* h) { (*static_cast<std::function<void()>*>(h->data))(); }, 0, 1);
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(a.seconds + 15));
    run_until([&] { return error || (acked >= total && received >= total) || Clock::now() > deadline; });
    uv_timer_stop(&timer);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer), nullptr);
    uv_run(loop, UV_RUN_NOWAIT);  // the timer lives on this stack frame: let libuv finish with it
    if (error) return fail("latency", *error);
    std::sort(produce_lat.begin(), produce_lat.end());
    std::sort(e2e_lat.begin(), e2e_lat.end());
    std::printf("{\"tool\": \"iggy-client-bench\", \"mode\": \"latency\", \"topic\": \"%s\", \"size\": %u, "
                "\"rate\": %.0f, \"samples\": %zu, \"e2e_samples\": %zu, "
                "\"produce_p50_ms\": %.3f, \"produce_p99_ms\": %.3f, \"produce_p999_ms\": %.3f, "
                "\"e2e_p50_ms\": %.3f, \"e2e_p99_ms\": %.3f, \"e2e_p999_ms\": %.3f}\n",
                a.topic.c_str(), a.size, a.rate, produce_lat.size(), e2e_lat.size(), pct_ms(produce_lat, 0.5),
                pct_ms(produce_lat, 0.99), pct_ms(produce_lat, 0.999), pct_ms(e2e_lat, 0.5), pct_ms(e2e_lat, 0.99),
                pct_ms(e2e_lat, 0.999));
    return 0;
  }

  // ---- consumer offset stores
  int commit() {
    // Iggy refuses an offset beyond the partition's end (4100 InvalidOffset): give it some.
    constexpr uint64_t kMessages = 1000;
    Bytes payload(16, 0x61);
    std::vector<iggy::OutgoingMessage> batch(kMessages);
    for (auto& m : batch) m.payload = payload;
    auto sent = await<iggy::SendConfirmation>(
        loop, [&](auto cb) { client.send_messages(stream, topic, iggy::Partitioning::partition(0), batch, cb); });
    if (!sent) return fail("send", sent.error());
    uint64_t commits = 0, outstanding = 0;
    std::optional<Error> error;
    const auto t0 = Clock::now();
    const auto stop = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.seconds));
    std::vector<uint64_t> offsets(a.inflight, 0);
    std::function<void(uint32_t)> store = [&](uint32_t i) {
      if (error || Clock::now() >= stop) return;
      ++outstanding;
      client.store_consumer_offset(iggy::Consumer::consumer(iggy::Identifier::numeric(100 + i)), stream, topic, 0,
                                   offsets[i]++ % kMessages, [&, i](Result<Unit> r) {
                                     --outstanding;
                                     if (!r) error = r.error();
                                     else ++commits;
                                     store(i);
                                   });
    };
    for (uint32_t i = 0; i < a.inflight; ++i) store(i);
    run_until([&] { return outstanding == 0; });
    const double s = seconds_since(t0);
    if (error) return fail("store offset", *error);
    std::printf("{\"tool\": \"iggy-client-bench\", \"mode\": \"commit\", \"topic\": \"%s\", \"threads\": %u, "
                "\"commits\": %llu, \"seconds\": %.3f, \"commits_per_s\": %.1f}\n",
                a.topic.c_str(), a.inflight, (unsigned long long)commits, s, commits / s);
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"iggy-client-bench: iggy-server driven natively through the bridge's Iggy client"};
  app.add_option("--address", a.address, "iggy-server TCP address");
  app.add_option("--stream", a.stream);
  app.add_option("--topic", a.topic);
  app.add_option("--mode", a.mode, "workload (none: the classic send/poll run)")
      ->check(CLI::IsMember({"produce", "consume", "latency", "commit"}));
  app.add_option("--messages", a.messages)->check(CLI::PositiveNumber);
  app.add_option("--batch", a.batch, "messages per SendMessages")->check(CLI::PositiveNumber);
  app.add_option("--size", a.size, "payload bytes (at least 8)");
  app.add_option("--inflight", a.inflight, "requests in flight (connections)")->check(CLI::PositiveNumber);
  app.add_option("--partitions", a.partitions)->check(CLI::PositiveNumber);
  app.add_option("--seconds", a.seconds, "latency run length")->check(CLI::PositiveNumber);
  app.add_option("--rate", a.rate, "latency run messages per second")->check(CLI::PositiveNumber);
  app.add_option("--fsync", a.fsync, "topic enforce_fsync (0 or 1; default: the server's)");
  app.add_option("--save", a.save, "topic messages_required_to_save");
  app.add_flag("--create-only", a.create_only, "create the stream and topic, then exit");
  app.add_flag("--delete", a.remove, "delete the topic, then exit");
  CLI11_PARSE(app, argc, argv);
  if (a.size < sizeof(int64_t)) a.size = sizeof(int64_t);
  if (a.partitions < 1) a.partitions = 1;
  if (a.inflight < 1) a.inflight = 1;
  auto hp = config::parse_host_port(a.address);
  if (!hp) return fail("--address", hp.error());

  uv_loop_t loop;
  uv_loop_init(&loop);
  iggy::PoolConfig pc;
  pc.connection.host = hp->host;
  pc.connection.port = hp->port;
  pc.connections = a.mode == "latency" ? 2 : a.inflight;
  iggy::IggyPool pool(&loop, pc);
  pool.start();
  iggy::IggyClient client(pool);
  Bench b{a, &loop, client, iggy::Identifier::named(a.stream), iggy::Identifier::named(a.topic)};

  auto finish = [&](int rc) {
    bool closed = false;
    pool.close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
    uv_run(&loop, UV_RUN_NOWAIT);
    return rc;
  };
  if (a.remove) {
    auto d = await<Unit>(&loop, [&](auto cb) { client.delete_topic(b.stream, b.topic, cb); });
    return finish(d ? 0 : fail("delete topic", d.error()));
  }
  auto s = await<iggy::StreamInfo>(&loop, [&](auto cb) { client.create_stream(a.stream, cb); });
  if (!s && !(s.error().domain == ErrorDomain::kIggy && s.error().code == 1012)) return fail("create stream", s.error());
  iggy::TopicConfig tc;
  tc.name = a.topic;
  tc.partitions_count = a.partitions;
  tc.enforce_fsync = a.fsync;
  tc.messages_required_to_save = a.save;
  auto t = await<iggy::TopicInfo>(&loop, [&](auto cb) { client.create_topic(b.stream, tc, cb); });
  if (!t && !(t.error().domain == ErrorDomain::kIggy && t.error().code == 2013)) return fail("create topic", t.error());

  int rc = 0;
  if (a.create_only) rc = 0;
  else if (a.mode.empty()) rc = b.classic();
  else if (a.mode == "produce") rc = b.produce();
  else if (a.mode == "consume") rc = b.consume();
  else if (a.mode == "latency") rc = b.latency();
  else if (a.mode == "commit") rc = b.commit();
  else {
    std::fprintf(stderr, "--mode must be produce, consume, latency or commit\n");
    rc = 2;
  }
  return finish(rc);
}
