// Writes response bodies encoded by the generated protocol types, for tools/capture-golden
// --responses: ApiVersions v0-4, Metadata v0-12, InitProducerId v0-4 and Produce v0-9, all
// describing one broker (node 1 at 127.0.0.1:PORT) with topic "golden-topic", partition 0.
// Not part of the build; see tests/golden/README.md:
//   g++ -std=c++20 -Isrc tools/golden/encode_responses.cc build/proto/libbridge.a -o /tmp/encode-responses
//   /tmp/encode-responses /tmp/responses PORT
#include <cstdio>
#include <fstream>
#include <string>

#include "kafka/protocol/generated/all.h"

using namespace kib;
using namespace kib::kafka::msg;

namespace {

void save(const std::string& dir, const char* api, int16_t version, const ByteWriter& w) {
  std::string path = dir + "/" + api + "-v" + std::to_string(version) + ".bin";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(w.buffer().data()),
                                               static_cast<std::streamsize>(w.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR PORT\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int32_t port = std::stoi(argv[2]);

  ApiVersionsResponse av;
  const int16_t ranges[][3] = {{0, 0, 9}, {1, 4, 12}, {3, 0, 12}, {10, 0, 4}, {18, 0, 4}, {22, 0, 4}};
  for (const auto& r : ranges) av.api_keys.push_back({r[0], r[1], r[2]});
  for (int16_t v = ApiVersionsResponse::kMinVersion; v <= ApiVersionsResponse::kMaxVersion; ++v) {
    ByteWriter w;
    av.encode(w, v);
    save(dir, "api_versions", v, w);
  }

  MetadataResponse md;
  md.brokers.push_back({1, "127.0.0.1", port, std::nullopt});
  md.cluster_id = "golden-cluster";
  md.controller_id = 1;
  MetadataResponse::MetadataResponseTopic topic;
  topic.name = "golden-topic";
  topic.topic_id = Uuid{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  MetadataResponse::MetadataResponsePartition partition;
  partition.partition_index = 0;
  partition.leader_id = 1;
  partition.leader_epoch = 0;
  partition.replica_nodes = {1};
  partition.isr_nodes = {1};
  topic.partitions.push_back(partition);
  md.topics.push_back(topic);
  for (int16_t v = MetadataResponse::kMinVersion; v <= MetadataResponse::kMaxVersion; ++v) {
    ByteWriter w;
    md.encode(w, v);
    save(dir, "metadata", v, w);
  }

  InitProducerIdResponse ip;
  ip.producer_id = 4242;
  ip.producer_epoch = 0;
  for (int16_t v = 0; v <= 4; ++v) {
    ByteWriter w;
    ip.encode(w, v);
    save(dir, "init_producer_id", v, w);
  }

  ProduceResponse pr;
  ProduceResponse::TopicProduceResponse tp;
  tp.name = "golden-topic";
  ProduceResponse::PartitionProduceResponse pp;
  pp.index = 0;
  pp.base_offset = 0;
  pp.log_start_offset = 0;
  tp.partition_responses.push_back(pp);
  pr.responses.push_back(tp);
  for (int16_t v = 0; v <= 9; ++v) {
    ByteWriter w;
    pr.encode(w, v);
    save(dir, "produce", v, w);
  }
  return 0;
}
