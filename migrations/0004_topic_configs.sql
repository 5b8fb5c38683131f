-- Kafka topic config overrides (DYNAMIC_TOPIC_CONFIG): what CreateTopics, AlterConfigs and
-- IncrementalAlterConfigs set explicitly, values as canonicalised by the bridge. The topics
-- columns of 0002 stay: they are the typed effective settings load_topics reads.
CREATE TABLE topic_configs (
  topic  TEXT NOT NULL,
  name   TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (topic, name)
) WITHOUT ROWID;

-- Dynamic broker configs: scope '' = the cluster default (DYNAMIC_DEFAULT_BROKER_CONFIG),
-- '<node id>' = this broker (DYNAMIC_BROKER_CONFIG).
CREATE TABLE broker_configs (
  scope  TEXT NOT NULL,
  name   TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (scope, name)
) WITHOUT ROWID;

-- Kafka 4 writes min.insync.replicas=1 as a cluster default when the storage is formatted
-- (kafka-configs --describe --entity-default shows it); so does the bridge.
INSERT INTO broker_configs(scope, name, value) VALUES ('', 'min.insync.replicas', '1');

-- Existing topics: their non-default 0002 settings become explicit overrides.
INSERT INTO topic_configs SELECT name, 'retention.ms', CAST(retention_ms AS TEXT) FROM topics WHERE retention_ms <> -1;
INSERT INTO topic_configs SELECT name, 'retention.bytes', CAST(retention_bytes AS TEXT) FROM topics WHERE retention_bytes <> -1;
INSERT INTO topic_configs SELECT name, 'max.message.bytes', CAST(max_message_bytes AS TEXT) FROM topics WHERE max_message_bytes <> 1048588;
INSERT INTO topic_configs SELECT name, 'segment.bytes', CAST(segment_bytes AS TEXT) FROM topics WHERE segment_bytes <> -1;
