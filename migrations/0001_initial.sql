-- Initial schema: cluster identity, Kafka topic ids, producer ids with their recent batch
-- sequences, consumer groups with members, and committed offsets.

CREATE TABLE bridge_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- Kafka topic ids (UUIDs) must stay stable across restarts; Iggy has no such id and
-- reuses its numeric ids after deletes, so the bridge keeps them here, keyed by name.
CREATE TABLE topics (
  name        TEXT PRIMARY KEY,
  topic_id    TEXT NOT NULL UNIQUE,   -- canonical UUID text, e.g. 'f3a1...'
  created_at  INTEGER NOT NULL        -- ms since epoch
) WITHOUT ROWID;

-- Producer ids are never reused, even across restarts: the allocator only moves forward.
CREATE TABLE producers (
  producer_id       INTEGER PRIMARY KEY,
  producer_epoch    INTEGER NOT NULL,
  transactional_id  TEXT UNIQUE,
  updated_at        INTEGER NOT NULL
);

-- The last batches (Kafka keeps five) of each producer and partition, to answer retries
-- with their original offsets.
CREATE TABLE producer_batches (
  producer_id     INTEGER NOT NULL,
  topic           TEXT NOT NULL,
  partition       INTEGER NOT NULL,
  producer_epoch  INTEGER NOT NULL,
  first_sequence  INTEGER NOT NULL,
  last_sequence   INTEGER NOT NULL,
  base_offset     INTEGER NOT NULL,
  appended_at     INTEGER NOT NULL,
  PRIMARY KEY (producer_id, topic, partition, first_sequence)
) WITHOUT ROWID;

CREATE TABLE consumer_groups (
  group_id       TEXT PRIMARY KEY,
  protocol_type  TEXT NOT NULL DEFAULT '',
  protocol_name  TEXT NOT NULL DEFAULT '',
  generation     INTEGER NOT NULL DEFAULT 0,
  state          TEXT NOT NULL DEFAULT 'Empty',
  leader_id      TEXT NOT NULL DEFAULT '',
  updated_at     INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE group_members (
  group_id              TEXT NOT NULL REFERENCES consumer_groups(group_id) ON DELETE CASCADE,
  member_id             TEXT NOT NULL,
  group_instance_id     TEXT,
  client_id             TEXT NOT NULL DEFAULT '',
  client_host           TEXT NOT NULL DEFAULT '',
  session_timeout_ms    INTEGER NOT NULL,
  rebalance_timeout_ms  INTEGER NOT NULL,
  assignment            BLOB,
  PRIMARY KEY (group_id, member_id)
) WITHOUT ROWID;

-- Kafka semantics: committed_offset is the next offset the group will read.
CREATE TABLE committed_offsets (
  group_id          TEXT NOT NULL,
  topic             TEXT NOT NULL,
  partition         INTEGER NOT NULL,
  committed_offset  INTEGER NOT NULL,
  leader_epoch      INTEGER NOT NULL DEFAULT -1,
  metadata          TEXT,
  commit_time       INTEGER NOT NULL,   -- ms since epoch
  PRIMARY KEY (group_id, topic, partition)
) WITHOUT ROWID;
