-- A holding partition's batches (docs/transactions.md, "Real offsets at produce time"): while a
-- transaction with records in a partition is undecided, every batch to the partition, the
-- transaction's own and any other producer's, is kept here with the offsets it was answered with
-- until it is appended to Iggy in offset order. One row per batch; the row goes once Iggy has it.
--   txn              the coordinator's number of the transaction the batch belongs to (0: a plain
--                    batch, decided when it arrived)
--   transactional_id the transaction's id (NULL for a plain batch)
--   outcome          0 undecided, 1 committed (or plain), 2 aborted (appended as placeholders)
-- Rows of transaction_batches (transactions buffered by an older bridge) stay where they are:
-- recovery completes their commits the old way and aborts their open transactions.
CREATE TABLE held_batches (
  topic            TEXT NOT NULL,
  partition        INTEGER NOT NULL,
  base_offset      INTEGER NOT NULL,
  record_count     INTEGER NOT NULL,
  txn              INTEGER NOT NULL,
  transactional_id TEXT,
  producer_id      INTEGER NOT NULL,
  producer_epoch   INTEGER NOT NULL,
  base_sequence    INTEGER NOT NULL,
  outcome          INTEGER NOT NULL CHECK (outcome IN (0, 1, 2)),
  batch            BLOB NOT NULL,
  PRIMARY KEY (topic, partition, base_offset)
) WITHOUT ROWID;
CREATE INDEX held_batches_by_txn ON held_batches(txn);
