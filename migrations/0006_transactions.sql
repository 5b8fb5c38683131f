-- Kafka transactions (docs/transactions.md): the coordinator's state per transactional id, and
-- what an open transaction holds until EndTxn: its partitions, groups, buffered record batches
-- (never in Iggy before the commit) and pending offsets.
CREATE TABLE transactions (
  transactional_id   TEXT PRIMARY KEY,
  producer_id        INTEGER NOT NULL,
  producer_epoch     INTEGER NOT NULL,
  last_producer_id   INTEGER NOT NULL DEFAULT -1,  -- before the last epoch bump (KIP-360 retries)
  last_epoch         INTEGER NOT NULL DEFAULT -1,
  timeout_ms         INTEGER NOT NULL,
  state              TEXT NOT NULL,                -- Empty, Ongoing, PrepareCommit, CompleteCommit, CompleteAbort
  started_at         INTEGER NOT NULL DEFAULT -1,  -- ms since epoch when the open transaction began
  updated_at         INTEGER NOT NULL              -- ms since epoch (transactional.id.expiration.ms)
) WITHOUT ROWID;

CREATE TABLE transaction_partitions (
  transactional_id  TEXT NOT NULL REFERENCES transactions(transactional_id) ON DELETE CASCADE,
  topic             TEXT NOT NULL,
  partition         INTEGER NOT NULL,
  start_offset      INTEGER NOT NULL DEFAULT -1,  -- high watermark when its first batch was buffered
  append_from       INTEGER NOT NULL DEFAULT -1,  -- PrepareCommit: its appends start at or after this offset
  PRIMARY KEY (transactional_id, topic, partition)
) WITHOUT ROWID;

CREATE TABLE transaction_groups (
  transactional_id  TEXT NOT NULL REFERENCES transactions(transactional_id) ON DELETE CASCADE,
  group_id          TEXT NOT NULL,
  PRIMARY KEY (transactional_id, group_id)
) WITHOUT ROWID;

-- Batches as the producer sent them (compressed, CRC and all), appended in `seq` order.
CREATE TABLE transaction_batches (
  transactional_id  TEXT NOT NULL REFERENCES transactions(transactional_id) ON DELETE CASCADE,
  seq               INTEGER NOT NULL,
  topic             TEXT NOT NULL,
  partition         INTEGER NOT NULL,
  base_sequence     INTEGER NOT NULL,
  record_count      INTEGER NOT NULL,
  batch             BLOB NOT NULL,
  PRIMARY KEY (transactional_id, seq)
) WITHOUT ROWID;

CREATE TABLE transaction_offsets (
  transactional_id  TEXT NOT NULL REFERENCES transactions(transactional_id) ON DELETE CASCADE,
  group_id          TEXT NOT NULL,
  topic             TEXT NOT NULL,
  partition         INTEGER NOT NULL,
  committed_offset  INTEGER NOT NULL,
  leader_epoch      INTEGER NOT NULL DEFAULT -1,
  metadata          TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (transactional_id, group_id, topic, partition)
) WITHOUT ROWID;
