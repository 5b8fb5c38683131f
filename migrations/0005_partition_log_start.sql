-- DeleteRecords: the log start offset the bridge enforces per partition (Iggy cannot truncate at an
-- offset, docs/mapping.md "DeleteRecords"). Clients see max(Iggy's first offset, log_start_offset).
CREATE TABLE partition_log_start (
  topic             TEXT NOT NULL,
  partition         INTEGER NOT NULL,
  log_start_offset  INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL,   -- ms since epoch
  PRIMARY KEY (topic, partition)
) WITHOUT ROWID;
