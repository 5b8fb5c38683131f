-- Kafka-only topic settings the bridge enforces or maps to Iggy at creation time; Iggy has no
-- place for them. One row per topic, next to its Kafka topic id.
ALTER TABLE topics ADD COLUMN retention_ms INTEGER NOT NULL DEFAULT -1;
ALTER TABLE topics ADD COLUMN retention_bytes INTEGER NOT NULL DEFAULT -1;
ALTER TABLE topics ADD COLUMN max_message_bytes INTEGER NOT NULL DEFAULT 1048588;
ALTER TABLE topics ADD COLUMN segment_bytes INTEGER NOT NULL DEFAULT -1;
ALTER TABLE topics ADD COLUMN enforce_fsync INTEGER NOT NULL DEFAULT 1;
ALTER TABLE topics ADD COLUMN messages_required_to_save INTEGER NOT NULL DEFAULT 1;
