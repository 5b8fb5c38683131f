// What the Kafka handlers use. Handlers decode, call one service, encode; the domain logic lives
// in the services under src/bridge/. The composition root (app/bridge.cc) builds this once,
// with every member bound (references: no handler checks for a missing service); each
// handler's registration (server/handlers/registry.h) hands its handler the ones it uses, by
// reference. Everything here lives as long as the KafkaServer and is used on the loop thread
// only.
#pragma once

#include <string>

#include "config/config.h"

namespace kib::bridge {
class TopicCatalog;
class ProducerRegistry;
class PartitionLog;
class GroupCoordinator;
class CommittedOffsets;
class ConfigService;
class TransactionCoordinator;
class IggyIdentities;
class SaslAuthenticator;
class ScramCredentials;
class Authorizer;
}  // namespace kib::bridge

namespace kib::kafka {

struct Services {
  const config::Config& config;        // FindCoordinator, Metadata, Produce, Fetch
  bridge::TopicCatalog& catalog;       // Metadata, CreateTopics
  bridge::ProducerRegistry& producers;  // InitProducerId
  bridge::PartitionLog& log;           // Produce, Fetch, ListOffsets
  bridge::GroupCoordinator& groups;    // the group APIs, OffsetCommit and OffsetDelete
  bridge::CommittedOffsets& offsets;   // OffsetFetch
  bridge::ConfigService& configs;      // DescribeConfigs, AlterConfigs, IncrementalAlterConfigs
  bridge::TransactionCoordinator& transactions;  // the transaction APIs, transactional Produce, OffsetFetch
  bridge::IggyIdentities& identities;  // Produce, Fetch: the Iggy user a principal's data requests run as
  bridge::SaslAuthenticator& sasl;               // SaslHandshake, SaslAuthenticate
  bridge::ScramCredentials& scram_credentials;   // DescribeUserScramCredentials, AlterUserScramCredentials
  // Every handler's ACL checks and authorized operations; CreateAcls, DescribeAcls, DeleteAcls.
  bridge::Authorizer& authorizer;
  std::string cluster_id;  // Metadata; stable: from config or generated once and kept in SQLite
};

}  // namespace kib::kafka
