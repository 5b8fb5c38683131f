// What the Kafka handlers use. Handlers decode, call one service, encode; the domain logic lives
// in the services under src/bridge/. The composition root (app/bridge.cc) sets every member;
// each handler's registration (kafka/handlers/registry.h) hands its handler the ones it uses,
// by reference. Everything here lives as long as the KafkaServer and is used on the loop
// thread only.
#pragma once

#include <string>

#include "config/config.h"

namespace kib::bridge {
class TopicCatalog;
class ProducerRegistry;
class PartitionLog;
class GroupCoordinator;
}  // namespace kib::bridge

namespace kib::kafka {

struct Services {
  const config::Config* config = nullptr;   // FindCoordinator, Metadata, Produce, Fetch
  bridge::TopicCatalog* catalog = nullptr;  // Metadata, CreateTopics
  bridge::ProducerRegistry* producers = nullptr;  // InitProducerId
  bridge::PartitionLog* log = nullptr;            // Produce, Fetch, ListOffsets
  bridge::GroupCoordinator* groups = nullptr;     // the group APIs
  std::string cluster_id;  // Metadata; stable: from config or generated once and kept in SQLite
};

}  // namespace kib::kafka
