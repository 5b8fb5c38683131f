// The bridge's produce and fetch CPU paths without sockets, on fixed inputs, so they can be
// profiled (perf, valgrind --tool=callgrind) and compared before/after a change with repeatable
// instruction counts. Prints one JSON line per path.
//
//   produce: Produce v9 request frame (one partition, one v2 batch of --records records of
//            --size bytes, --compression) -> ProduceRequest decode -> decode_record_batches ->
//            map_batch_to_iggy -> encode_send_messages (the Iggy frame)
//   fetch:   an Iggy PollMessages reply holding those messages -> decode_polled_messages ->
//            map_polled_messages -> encode_fetched_records -> FetchResponse v12 encode
//
//   hot-path-bench [--records 1000] [--size 1024] [--compression none|lz4|zstd|gzip|snappy]
//                  [--iterations N] [--path produce|fetch|both] [--no-reserve]
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bridge/log/fetch_records.h"
#include "bridge/mapping/record_mapping.h"
#include "iggy/protocol.h"
#include "kafka/protocol/generated/fetch.h"
#include "kafka/protocol/generated/produce.h"
#include "kafka/records/record_batch.h"
#include "server/context/request.h"

using namespace kib;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  size_t records = 1000, size = 1024, iterations = 200;
  kafka::Compression compression = kafka::Compression::kNone;
  std::string path = "both";
  bool reserve_response = true;  // as handlers/fetch.cc does; --no-reserve: as it did before
};

Bytes letters(size_t n, unsigned seed) {
  Bytes b(n);
  for (auto& c : b) {
    seed = seed * 1103515245u + 12345u;
    c = static_cast<uint8_t>('A' + (seed >> 16) % 26);
  }
  return b;
}

// The body of a Produce v9 request, as a client would send it.
Bytes produce_body(const Args& a) {
  std::vector<Bytes> values;
  for (size_t i = 0; i < a.records; ++i) values.push_back(letters(a.size, static_cast<unsigned>(i)));
  std::vector<kafka::RecordToEncode> recs;
  for (size_t i = 0; i < a.records; ++i) recs.push_back({1700000000000 + static_cast<int64_t>(i), std::nullopt, values[i], {}});
  ByteWriter batch;
  kafka::BatchSettings s;
  s.compression = a.compression;
  kafka::encode_record_batch(batch, s, recs);
  kafka::msg::ProduceRequest req;
  req.acks = 1;
  req.timeout_ms = 30000;
  auto& t = req.topic_data.emplace_back();
  t.name = "bench";
  auto& p = t.partition_data.emplace_back();
  p.index = 0;
  p.records = batch.take();
  ByteWriter w;
  req.encode(w, 9);
  return w.take();
}

struct ProduceOut {
  size_t frame_bytes = 0;
  Bytes poll_reply;  // what Iggy would answer to a poll of these messages
};

// `body` is shared, as the bridge's request frames are: the decoded records view it (no copy).
ProduceOut produce_once(const std::shared_ptr<const Bytes>& body, bool keep_reply) {
  ByteReader r(*body);
  const std::shared_ptr<const void> owner = body;
  r.set_owner(&owner);
  kafka::msg::ProduceRequest req;
  req.decode(r, 9);
  kafka::DecompressionBudget budget{256u << 20};
  const auto& records = *req.topic_data[0].partition_data[0].records;
  auto batches = kafka::decode_record_batches(records.span(), budget);
  if (!batches) throw std::runtime_error(batches.error().message);
  auto mapped = bridge::map_batch_to_iggy(batches->front());
  if (!mapped) throw std::runtime_error(mapped.error().message);
  auto frame = iggy::wire::encode_send_messages(iggy::Identifier::named("kafka"), iggy::Identifier::named("bench"),
                                                iggy::Partitioning::partition(0), mapped->messages, 1700000000000000);
  if (!frame) throw std::runtime_error(frame.error().message);
  ProduceOut out;
  out.frame_bytes = frame->bytes.size();
  if (keep_reply) {
    // A poll reply: [partition_id u32][current_offset u64][count u32] + the batch as stored.
    const size_t batch_at = iggy::wire::kHeaderSize;  // the body starts after the VSR header
    ByteReader br(ByteSpan(frame->bytes).subspan(batch_at));
    const uint32_t metadata_len = br.le<uint32_t>();
    const size_t batch_start = batch_at + 4 + metadata_len;
    ByteWriter w;
    w.le<uint32_t>(0);
    w.le<uint64_t>(mapped->messages.size() - 1);
    w.le<uint32_t>(static_cast<uint32_t>(mapped->messages.size()));
    w.bytes(ByteSpan(frame->bytes).subspan(batch_start));
    out.poll_reply = w.take();
  }
  return out;
}

size_t fetch_once(const std::shared_ptr<const Bytes>& reply, bool reserve_response) {
  auto polled = iggy::wire::decode_polled_messages(reply, *reply);
  if (!polled) throw std::runtime_error(polled.error().message);
  bridge::PolledRecords recs = bridge::map_polled_messages(polled->messages, 0);
  if (recs.unmappable) throw std::runtime_error(recs.unmappable->message);
  bridge::EncodedRecords enc = bridge::encode_fetched_records(recs.records, 50u << 20, true);
  kafka::msg::FetchResponse resp;
  auto& t = resp.responses.emplace_back();
  t.topic = "bench";
  auto& p = t.partitions.emplace_back();
  p.high_watermark = static_cast<int64_t>(recs.records.size());
  p.records = std::move(enc.bytes);
  // As the Responder writes it: the rebuilt batch is referenced by the frame, not copied into it.
  ByteWriter w(reserve_response ? 1024 + 64 : 256);
  w.collect_shared(kafka::Responder::kMinSharedSpanBytes);
  resp.encode(w, 12);
  return w.total_size();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  std::map<std::string, kafka::Compression> codecs;
  std::vector<std::string> codec_names;
  for (int id = 0; id <= 4; ++id) {
    const auto c = static_cast<kafka::Compression>(id);
    codecs.emplace(kafka::compression_name(c), c);
    codec_names.emplace_back(kafka::compression_name(c));
  }
  std::string codec = "none";
  bool no_reserve = false;
  CLI::App app{"hot-path-bench: the bridge's Produce and Fetch mapping in process, no sockets"};
  app.add_option("--records", a.records, "records per request")->check(CLI::PositiveNumber);
  app.add_option("--size", a.size, "bytes per record value")->check(CLI::PositiveNumber);
  app.add_option("--iterations", a.iterations, "requests to time")->check(CLI::PositiveNumber);
  app.add_option("--path", a.path, "which path to time")->check(CLI::IsMember({"produce", "fetch", "both"}));
  app.add_option("--compression", codec, "codec of the produced batch")->check(CLI::IsMember(codec_names));
  app.add_flag("--no-reserve", no_reserve, "encode Fetch responses without reserving their size first");
  CLI11_PARSE(app, argc, argv);
  a.reserve_response = !no_reserve;
  a.compression = codecs.at(codec);
  const auto body = std::make_shared<const Bytes>(produce_body(a));
  auto reply = std::make_shared<const Bytes>(produce_once(body, true).poll_reply);
  if (a.path != "fetch") {
    size_t sink = 0;
    auto t0 = Clock::now();
    for (size_t i = 0; i < a.iterations; ++i) sink += produce_once(body, false).frame_bytes;
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("{\"path\": \"produce\", \"records\": %zu, \"size\": %zu, \"iterations\": %zu, \"ns_per_record\": %.1f, "
                "\"mb_per_s\": %.1f, \"sink\": %zu}\n",
                a.records, a.size, a.iterations, s * 1e9 / static_cast<double>(a.iterations * a.records),
                static_cast<double>(a.iterations * a.records * a.size) / 1e6 / s, sink);
  }
  if (a.path != "produce") {
    size_t sink = 0;
    auto t0 = Clock::now();
    for (size_t i = 0; i < a.iterations; ++i) sink += fetch_once(reply, a.reserve_response);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("{\"path\": \"fetch\", \"records\": %zu, \"size\": %zu, \"iterations\": %zu, \"ns_per_record\": %.1f, "
                "\"mb_per_s\": %.1f, \"sink\": %zu}\n",
                a.records, a.size, a.iterations, s * 1e9 / static_cast<double>(a.iterations * a.records),
                static_cast<double>(a.iterations * a.records * a.size) / 1e6 / s, sink);
  }
  return 0;
}
