// Throughput of the bridge's Iggy client (src/iggy) for 1 KiB messages: sends N messages in
// batches to one partition, then polls them all back, with `--inflight` requests in flight over
// a pool of that many connections. Prints one JSON line. Used by bench/run beside the same
// workload through Iggy's own SDK; figures are only comparable within one run.
//   iggy-client-bench --address 127.0.0.1:8090 --topic t [--messages 200000] [--batch 100]
//                     [--size 1024] [--inflight 4] [--create-only]
#include <uv.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "config/config.h"
#include "iggy/client.h"
#include "iggy/pool.h"

using namespace kib;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string address = "127.0.0.1:8090", stream = "bench", topic = "client";
  uint64_t messages = 200000;
  uint32_t batch = 100, size = 1024, inflight = 4;
  bool create_only = false;
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

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (k == "--address") a.address = next();
    else if (k == "--stream") a.stream = next();
    else if (k == "--topic") a.topic = next();
    else if (k == "--messages") a.messages = std::stoull(next());
    else if (k == "--batch") a.batch = static_cast<uint32_t>(std::stoul(next()));
    else if (k == "--size") a.size = static_cast<uint32_t>(std::stoul(next()));
    else if (k == "--inflight") a.inflight = static_cast<uint32_t>(std::stoul(next()));
    else if (k == "--create-only") a.create_only = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", k.c_str());
      return 2;
    }
  }
  auto hp = config::parse_host_port(a.address);
  if (!hp) return fail("--address", hp.error());

  uv_loop_t loop;
  uv_loop_init(&loop);
  iggy::PoolConfig pc;
  pc.connection.host = hp->host;
  pc.connection.port = hp->port;
  pc.connections = a.inflight;
  iggy::IggyPool pool(&loop, pc);
  pool.start();
  iggy::IggyClient client(pool);
  const auto stream = iggy::Identifier::named(a.stream);
  const auto topic = iggy::Identifier::named(a.topic);

  auto s = await<iggy::StreamInfo>(&loop, [&](auto cb) { client.create_stream(a.stream, cb); });
  if (!s && !(s.error().domain == ErrorDomain::kIggy && s.error().code == 1012)) return fail("create stream", s.error());
  iggy::TopicConfig tc;
  tc.name = a.topic;
  tc.partitions_count = 1;
  auto t = await<iggy::TopicInfo>(&loop, [&](auto cb) { client.create_topic(stream, tc, cb); });
  if (!t && !(t.error().domain == ErrorDomain::kIggy && t.error().code == 2013)) return fail("create topic", t.error());
  if (a.create_only) {
    bool closed = false;
    pool.close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
    return 0;
  }

  Bytes payload(a.size, 0x61);
  std::vector<iggy::OutgoingMessage> batch(a.batch);
  for (auto& m : batch) m.payload = payload;
  const uint64_t batches = (a.messages + a.batch - 1) / a.batch;

  // Send: keep `inflight` sends outstanding.
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
  while (done_batches < sent_batches || (sent_batches < batches && !error)) uv_run(&loop, UV_RUN_ONCE);
  double send_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (error) return fail("send", *error);
  const uint64_t total = batches * a.batch;

  // Poll: each request reads the next `batch` offsets.
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
  while (outstanding > 0) uv_run(&loop, UV_RUN_ONCE);
  double poll_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (error) return fail("poll", *error);
  if (polled != total) std::fprintf(stderr, "polled %llu of %llu messages\n", (unsigned long long)polled, (unsigned long long)total);

  const double mb = static_cast<double>(total) * a.size / 1e6;
  std::printf("{\"client\": \"kafka-iggy-bridge src/iggy\", \"messages\": %llu, \"size\": %u, \"batch\": %u, "
              "\"inflight\": %u, \"send_msgs_per_s\": %.0f, \"send_mb_per_s\": %.1f, \"poll_msgs_per_s\": %.0f, "
              "\"poll_mb_per_s\": %.1f, \"polled\": %llu}\n",
              (unsigned long long)total, a.size, a.batch, a.inflight, total / send_s, mb / send_s, polled / poll_s,
              static_cast<double>(polled) * a.size / 1e6 / poll_s, (unsigned long long)polled);
  bool closed = false;
  pool.close([&] { closed = true; });
  while (!closed) uv_run(&loop, UV_RUN_ONCE);
  return polled == total ? 0 : 1;
}
