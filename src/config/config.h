// The bridge's configuration: one TOML file (etc/kafka-iggy-bridge.toml documents every key),
// parsed strictly: unknown keys and invalid values are errors that name the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kib::config {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string str() const { return host + ":" + std::to_string(port); }
};

Result<HostPort> parse_host_port(const std::string& s);

// Kafka's security protocols (a listener's, docs/security.md "Listeners").
enum class SecurityProtocol { kPlaintext, kSsl, kSaslPlaintext, kSaslSsl };
std::string_view security_protocol_name(SecurityProtocol p);  // "SASL_SSL"
std::optional<SecurityProtocol> parse_security_protocol(std::string_view name);
inline bool uses_tls(SecurityProtocol p) { return p == SecurityProtocol::kSsl || p == SecurityProtocol::kSaslSsl; }
inline bool uses_sasl(SecurityProtocol p) {
  return p == SecurityProtocol::kSaslPlaintext || p == SecurityProtocol::kSaslSsl;
}

// One entry of [kafka] listeners: Kafka's "NAME://host:port" (a bare "host:port" is a PLAINTEXT
// listener named PLAINTEXT, the form earlier versions took).
struct ListenerConfig {
  std::string name = "PLAINTEXT";
  SecurityProtocol protocol = SecurityProtocol::kPlaintext;
  HostPort address;
  std::optional<HostPort> advertised;  // [kafka] advertised_listeners, by name
  std::string str() const { return name + "://" + address.str(); }
};

struct KafkaConfig {
  std::vector<ListenerConfig> listeners{{"PLAINTEXT", SecurityProtocol::kPlaintext, {"127.0.0.1", 9092}, std::nullopt}};
  std::string advertised_host;
  uint16_t advertised_port = 0;
  int32_t node_id = 1;
  std::string cluster_id;
  bool auto_create_topics = true;
  int32_t default_partitions = 1;
};

// Iggy options for topics the bridge creates (per-topic Kafka configs override them).
struct TopicDefaultsConfig {
  // Durability of acknowledged produces: with fsync enforced and one message required to save,
  // Iggy writes every send to disk, so acks=all means on disk (see docs/durability.md).
  bool enforce_fsync = true;
  uint32_t messages_required_to_save = 1;
  // Iggy segment size in bytes for new topics; 0 = Iggy's default (1 GiB). Retention deletes
  // whole segments, so smaller segments give finer retention.
  uint64_t segment_bytes = 0;
  // The broker's log.retention.ms and log.retention.bytes (STATIC_BROKER_CONFIG): what topics
  // without their own retention.ms / retention.bytes get. -1 = keep forever / no size limit
  // (the bridge's behaviour since it began; Kafka's own default is 7 days).
  int64_t retention_ms = -1;
  int64_t retention_bytes = -1;
};

// The consumer-group coordinator (Kafka's group.* and offsets.* broker settings).
struct GroupsConfig {
  uint32_t initial_rebalance_delay_ms = 3000;  // group.initial.rebalance.delay.ms
  uint32_t min_session_timeout_ms = 6000;      // group.min.session.timeout.ms
  uint32_t max_session_timeout_ms = 1800000;   // group.max.session.timeout.ms
  uint32_t max_size = 1000;                    // group.max.size
  uint64_t offsets_retention_minutes = 10080;  // offsets.retention.minutes (7 days)
  uint32_t offset_metadata_max_bytes = 4096;   // offset.metadata.max.bytes
  uint32_t offsets_topic_partitions = 50;      // offsets.topic.num.partitions (__consumer_offsets as reported)
  // KIP-848 consumer groups (ConsumerGroupHeartbeat).
  uint32_t consumer_session_timeout_ms = 45000;    // group.consumer.session.timeout.ms
  uint32_t consumer_heartbeat_interval_ms = 5000;  // group.consumer.heartbeat.interval.ms
  // The bounds of those two, for the broker's values and for a group's own (kafka-configs
  // --entity-type groups): group.consumer.{min,max}.{session.timeout,heartbeat.interval}.ms.
  uint32_t consumer_min_session_timeout_ms = 45000;
  uint32_t consumer_max_session_timeout_ms = 60000;
  uint32_t consumer_min_heartbeat_interval_ms = 5000;
  uint32_t consumer_max_heartbeat_interval_ms = 15000;
  // The longest SubscribedTopicRegex a consumer group member may send (INVALID_REGULAR_EXPRESSION beyond).
  uint32_t consumer_max_regex_bytes = 1024;
  // Topic names one consumer group member may subscribe to (INVALID_REQUEST beyond).
  uint32_t consumer_max_subscribed_topics = 10000;
  // group.consumer.migration.policy: whether a live classic group becomes a consumer group when a
  // member using the consumer protocol joins it (upgrade) and back when the last such member
  // leaves (downgrade): "bidirectional" (Kafka's default), "upgrade", "downgrade" or "disabled".
  std::string consumer_migration_policy = "bidirectional";
  // The finalized level of Kafka's group.version feature ApiVersions advertises: 1 serves the
  // consumer group protocol (KIP-848) and advertises ConsumerGroupHeartbeat/Describe; 0 hides them.
  uint32_t group_version = 1;
  // KIP-1071 streams groups (StreamsGroupHeartbeat): Kafka's group.streams.* broker settings.
  uint32_t streams_session_timeout_ms = 45000;         // group.streams.session.timeout.ms
  uint32_t streams_heartbeat_interval_ms = 5000;       // group.streams.heartbeat.interval.ms
  // The bounds of those two, for the broker's values and for a group's own (kafka-configs
  // --entity-type groups): group.streams.{min,max}.{session.timeout,heartbeat.interval}.ms.
  uint32_t streams_min_session_timeout_ms = 45000;
  uint32_t streams_max_session_timeout_ms = 60000;
  uint32_t streams_min_heartbeat_interval_ms = 5000;
  uint32_t streams_max_heartbeat_interval_ms = 15000;
  uint32_t streams_num_standby_replicas = 0;           // group.streams.num.standby.replicas
  uint32_t streams_max_standby_replicas = 2;           // group.streams.max.standby.replicas
  uint32_t streams_max_size = 1000;                    // group.streams.max.size (Kafka: unbounded)
  uint32_t streams_initial_rebalance_delay_ms = 3000;  // group.streams.initial.rebalance.delay.ms
  uint32_t streams_assignment_interval_ms = 1000;      // group.streams.assignment.interval.ms
  // The finalized level of Kafka's streams.version feature: 1 serves the streams group protocol
  // (KIP-1071) and advertises StreamsGroupHeartbeat/Describe; 0 hides them.
  uint32_t streams_version = 1;
};

// The transaction coordinator (Kafka's transaction.* broker settings, plus the bridge's buffer
// bounds: transactional records wait in SQLite until EndTxn, docs/transactions.md).
struct TransactionsConfig {
  uint32_t max_timeout_ms = 900000;  // transaction.max.timeout.ms: longer transaction.timeout.ms gets INVALID_TRANSACTION_TIMEOUT
  uint64_t id_expiration_ms = 604800000;  // transactional.id.expiration.ms (7 days)
  uint32_t abort_timed_out_interval_ms = 10000;  // transaction.abort.timed.out.transaction.cleanup.interval.ms
  uint32_t max_open = 1000;  // transactions open (Ongoing) at once; more get POLICY_VIOLATION on AddPartitionsToTxn
  uint64_t max_buffered_bytes = 64u << 20;  // record bytes one transaction may buffer; more get POLICY_VIOLATION
  uint32_t max_id_pattern_bytes = 1024;  // ListTransactions v2's transactional id pattern; longer: INVALID_REGULAR_EXPRESSION
  // Bytes a partition may hold behind an open transaction (docs/transactions.md, "Real offsets at
  // produce time"); a batch beyond it gets NOT_ENOUGH_REPLICAS, which producers retry.
  uint64_t max_held_bytes_per_partition = 256u << 20;
  // Messages a decided commit's recovery may read per partition to find what reached Iggy before a crash.
  uint64_t max_recovery_scan_messages = 1'000'000;
  // The finalized level of Kafka's transaction.version feature ApiVersions advertises: 2 lets
  // clients use transaction version 2 (KIP-890: no AddPartitionsToTxn or AddOffsetsToTxn, an
  // epoch bump at every EndTxn); 1 keeps them on version 1. Both are served whatever it says.
  // 2, as Kafka 4.x finalizes on a new cluster.
  uint32_t transaction_version = 2;
};

struct LimitsConfig {
  uint64_t max_frame_bytes = 64u << 20;
  uint32_t max_connections = 10000;
  uint64_t idle_timeout_ms = 600000;
  // Answers not yet taken by the client, per connection, counted at what they cost in memory
  // (buffers, vectors, write requests), not only their bytes: past it the connection is not
  // read. A connection with nothing unanswered may always take one request, so one answer
  // larger than the bound (a Fetch) still goes out.
  uint64_t max_pending_response_bytes = 4u << 20;
  // The same summed over every connection: past it, no connection that already has answers
  // waiting is read (one that has none still gets one request at a time).
  uint64_t max_pending_response_bytes_total = 64u << 20;
  // What one answer of a request that fans out per entry (DescribeConfigs, ListOffsets,
  // OffsetFetch, DescribeProducers, DescribeTopicPartitions, DescribeGroups, ListTransactions,
  // DescribeAcls) may take, estimated while it is built: past it the request is refused.
  uint64_t max_response_bytes = 64u << 20;
  uint32_t max_inflight_requests = 1000;
  // Reading pauses past it (a frame larger than it completes once nothing else is unanswered):
  // what a client pipelining Produce requests makes the bridge hold, the bulk of its peak RSS.
  uint64_t max_inflight_request_bytes = 16u << 20;
  uint64_t max_decompressed_bytes_per_request = 256u << 20;
  uint64_t shutdown_deadline_ms = 10000;
  uint64_t frame_read_timeout_ms = 30000;  // a started frame must be complete within it
  uint32_t max_connections_per_ip = 1000;  // Kafka's max.connections.per.ip
  // Amplification bounds (issue 12): what one request may make the bridge read, hold or queue.
  uint64_t fetch_max_bytes = 55u << 20;        // Kafka's fetch.max.bytes: caps a Fetch's max_bytes
  uint64_t fetch_max_wait_ms = 30000;          // caps a Fetch's max_wait_ms (the long poll)
  uint64_t max_iggy_queue_per_connection = 10000;  // Iggy requests one connection may have queued
  // Connections on SSL and SASL listeners until they are authenticated (docs/security.md): closed
  // if not authenticated this long after accept (TLS handshake and SASL together); frames
  // larger than max_unauthenticated_frame_bytes close them (Kafka's sasl.server.max.receive.size).
  uint64_t authentication_timeout_ms = 10000;
  uint64_t max_unauthenticated_frame_bytes = 524288;
  // A connection closed for a failed authentication closes this long after its last answer was
  // written (Kafka's connection.failed.authentication.delay.ms); 0 closes at once.
  uint64_t failed_authentication_delay_ms = 100;
  // Memory for the produced-batch cache (bridge/log/batch_cache.h): recent batches as producers
  // sent them, answered to Fetch without polling Iggy; 0 turns it off.
  uint64_t produced_batch_cache_bytes = 32u << 20;
  // Freed heap memory goes back to the OS once the bridge is idle (app/memory_release.h): checked
  // every memory_trim_interval_ms (0 = never), trimmed when at least memory_trim_min_free_bytes
  // are free in the heap.
  uint64_t memory_trim_interval_ms = 1000;
  uint64_t memory_trim_min_free_bytes = 16u << 20;
};

// [tls]: Kafka's ssl.* for the SSL and SASL_SSL listeners (docs/security.md "TLS").
struct TlsConfig {
  enum class ClientAuth { kNone, kRequested, kRequired };  // ssl.client.auth
  std::string certificate_file;  // PEM: the server certificate, then its chain
  std::string key_file;          // PEM private key, encrypted with key_password if that is set
  std::string key_password;      // never logged or rendered
  std::string ca_file;           // PEM: the CAs client certificates are verified against
  ClientAuth client_auth = ClientAuth::kNone;
  std::vector<std::string> protocols{"TLSv1.2", "TLSv1.3"};  // ssl.enabled.protocols
  std::string cipher_list;   // TLS 1.2 ciphers, OpenSSL syntax; "" = OpenSSL's default
  std::string ciphersuites;  // TLS 1.3 suites; "" = OpenSSL's default
  std::string principal_mapping_rules = "DEFAULT";  // ssl.principal.mapping.rules
};
std::string_view client_auth_name(TlsConfig::ClientAuth a);  // "required"
// [sasl] (docs/security.md "SASL"): Kafka's sasl.enabled.mechanisms and
// connections.max.reauth.ms, and the iterations of credentials `users add` makes.
struct SaslConfig {
  static constexpr int32_t kMinIterations = 4096;   // Kafka's SCRAM bounds
  static constexpr int32_t kMaxIterations = 16384;
  std::vector<std::string> enabled_mechanisms{"SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"};
  uint64_t connections_max_reauth_ms = 0;  // 0: sessions do not expire (KIP-368)
  int32_t scram_iterations = 8192;
  // PLAIN passwords waiting to be hashed or being hashed on the thread pool, over every
  // connection (each connection has at most one); past it an attempt fails at once.
  uint32_t max_pending_password_checks = 16;
};

// [authorization]: Kafka's StandardAuthorizer (docs/security.md "Authorization").
struct AuthorizationConfig {
  bool enabled = false;                   // authorizer.class.name set
  std::vector<std::string> super_users;   // super.users: "User:admin"
  bool allow_everyone_if_no_acl_found = false;  // allow.everyone.if.no.acl.found
  uint32_t max_acls = 100000;             // ACL bindings held; CreateAcls beyond: POLICY_VIOLATION
  uint32_t max_acl_filters_per_request = 1000;  // DeleteAcls filters per request; more: POLICY_VIOLATION
};

// [compaction]: compacted topics' cleaned heads (docs/compaction.md).
struct CompactionConfig {
  // The Iggy stream of the generation topics, one per cleaned partition; never the [iggy] stream,
  // whose topics are Kafka topics. Unset in the file: "<[iggy] stream>-compacted".
  std::string stream = "kafka-compacted";
  // Whether the cleaner runs. Off: compacted topics keep every record (their cleaned heads, if
  // any, are still read).
  bool enabled = true;
  // Partitions cleaned at once; each pass's decoding and hashing run on libuv's thread pool.
  uint32_t threads = 1;
  // What passes read from and write to Iggy, together, per second (Kafka's
  // log.cleaner.io.max.bytes.per.second); 0: unlimited.
  uint64_t io_bytes_per_second = 0;  // unlimited, as Kafka's log.cleaner.io.max.bytes.per.second
  // The key -> offset maps of the passes running at once share it (Kafka's
  // log.cleaner.dedupe.buffer.size); 24 bytes a key.
  uint64_t dedupe_buffer_bytes = 128ull << 20;
  // How often compacted partitions are checked for a pass (Kafka's log.cleaner.backoff.ms).
  uint64_t backoff_ms = 15000;
  // The Iggy consumer whose stored offset on a compacted partition is the barrier below which
  // Iggy may delete the live log's segments (docs/compaction.md, "A pass", step 6).
  uint32_t iggy_consumer_id = 2131230;
  // Compacted partitions that get per-partition /metrics series; more are summed only.
  uint32_t max_metric_partitions = 1000;
};

struct IggyConfig {
  HostPort address{"127.0.0.1", 8090};
  std::string username = "iggy";
  std::string password = "iggy";
  std::string personal_access_token;
  uint32_t pool_size = 4;
  uint64_t request_timeout_ms = 30000;
  std::string stream = "kafka";
};

// Which Iggy user a Kafka principal's data operations (Produce, Fetch) run as (docs/security.md
// "Principals -> Iggy identities").
struct PrincipalsConfig {
  enum class Identity { kShared, kPerPrincipal };
  enum class Unmapped { kRefuse, kCreate, kShared };
  Identity iggy_identity = Identity::kShared;
  Unmapped unmapped = Unmapped::kRefuse;  // per_principal: a principal without a mapping
  uint32_t pool_size = 2;                 // Iggy connections per mapped identity
  bool sync_iggy_permissions = true;      // ACLs written onto the mapped Iggy users' permissions
};

struct StateConfig {
  std::string path = "/var/lib/kafka-iggy-bridge/state.db";
};

struct LogConfig {
  std::string level = "info";
};

struct HttpConfig {
  // Connections the HTTP listener takes in all (not a key; max_connections_per_ip is bounded
  // by it).
  static constexpr uint32_t kMaxConnections = 64;
  std::string listen = "127.0.0.1:9644";
  uint32_t max_connections_per_ip = 8;  // of the listener's kMaxConnections
  // Whether /metrics names groups, topics and transactional ids in its labels: kFull names
  // them, kRedacted drops those labels (samples summed), kAuto names them only where the
  // listener is a loopback address or a bearer token is required.
  enum class MetricsLabels { kAuto, kFull, kRedacted };
  MetricsLabels metrics_labels = MetricsLabels::kAuto;
  // A file holding the token /metrics requires as "Authorization: Bearer <token>"; "" = none.
  // /healthz and /readyz never ask for it.
  std::string metrics_bearer_token_file;
};
std::string_view metrics_labels_name(HttpConfig::MetricsLabels m);  // "auto"

struct Config {
  KafkaConfig kafka;
  TopicDefaultsConfig topics;
  GroupsConfig groups;
  TransactionsConfig transactions;
  LimitsConfig limits;
  TlsConfig tls;
  SaslConfig sasl;
  AuthorizationConfig authorization;
  IggyConfig iggy;
  CompactionConfig compaction;
  PrincipalsConfig principals;
  StateConfig state;
  LogConfig log;
  HttpConfig http;

  // The host and port clients that came in on listener `listener` (an index into
  // kafka.listeners) are told to connect to: its advertised_listeners entry; else, for the first
  // listener, its address with advertised_host/advertised_port applied; else its address.
  HostPort advertised(size_t listener = 0) const;
};

// Parses TOML text; `origin` names the file in error messages.
Result<Config> parse_config(const std::string& toml_text, const std::string& origin);
Result<Config> load_config(const std::string& path);

// The effective configuration as TOML (for `check-config`); never prints secrets.
std::string render_config(const Config& c);

}  // namespace kib::config
