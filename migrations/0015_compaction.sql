-- Compaction of cleanup.policy=compact topics (docs/compaction.md). Each compacted partition has
-- a cleaned head, its current generation: a one-partition Iggy topic in the [compaction] stream
-- holding the kept records below the cleaner point, each with its Kafka offset (kib.offset).
--
-- compaction_state: one row per partition that has been cleaned at least once.
--   generation        the current generation (1, 2, ...)
--   generation_topic  its Iggy topic's name: <topic id hex>-<partition>-<generation>
--   cleaner_point     C: Kafka offsets below it are read from the generation, from it on from the
--                     live log (the Kafka topic's own Iggy partition)
--   log_start         the log start as Kafka keeps it: unchanged by cleaning, raised by
--                     DeleteRecords floors and compact,delete retention
--   kept_records, kept_bytes   the generation's records and their bytes
--   last_pass_at      when the pass that wrote it committed (ms since epoch); last_pass_ms its length
CREATE TABLE compaction_state (
  topic             TEXT NOT NULL,
  partition         INTEGER NOT NULL,
  generation        INTEGER NOT NULL CHECK (generation >= 1),
  generation_topic  TEXT NOT NULL,
  cleaner_point     INTEGER NOT NULL CHECK (cleaner_point >= 0),
  log_start         INTEGER NOT NULL CHECK (log_start >= 0),
  kept_records      INTEGER NOT NULL,
  kept_bytes        INTEGER NOT NULL,
  last_pass_at      INTEGER NOT NULL,
  last_pass_ms      INTEGER NOT NULL,
  PRIMARY KEY (topic, partition)
) WITHOUT ROWID;

-- The sparse index of each current generation: every 1,024 kept records, the Kafka offset and the
-- generation offset of the block's first record and the largest timestamp in the block (ms).
CREATE TABLE compaction_index (
  topic              TEXT NOT NULL,
  partition          INTEGER NOT NULL,
  generation         INTEGER NOT NULL,
  kafka_offset       INTEGER NOT NULL,
  generation_offset  INTEGER NOT NULL,
  max_timestamp      INTEGER NOT NULL,
  PRIMARY KEY (topic, partition, generation, kafka_offset)
) WITHOUT ROWID;

-- A pass in progress, for recovery after a crash (docs/compaction.md, "Crashes, at every step"):
--   state  writing    the next generation is being written: recovery deletes its topic and the row
--          committed  compaction_state names it: recovery stores the barrier, deletes the live
--                     log's segments below to_offset and the previous generation's topic
--          done       nothing left (rows are deleted when done; the state is kept for sqlite3 readers
--                     of a pass that is finishing)
CREATE TABLE compaction_passes (
  topic             TEXT NOT NULL,
  partition         INTEGER NOT NULL,
  generation        INTEGER NOT NULL,
  generation_topic  TEXT NOT NULL,
  previous_topic    TEXT,              -- the generation it replaces; NULL for the first
  from_offset       INTEGER NOT NULL,  -- the cleaner point before the pass
  to_offset         INTEGER NOT NULL,  -- the cleaner point after it
  state             TEXT NOT NULL CHECK (state IN ('writing', 'committed', 'done')),
  started_at        INTEGER NOT NULL,  -- ms since epoch
  PRIMARY KEY (topic, partition, generation)
) WITHOUT ROWID;
