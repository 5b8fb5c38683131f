-- KIP-848 consumer groups (docs/groups.md, "Consumer groups (KIP-848)"). A consumer group keeps
-- its consumer_groups row (protocol_type 'consumer', state Kafka's ConsumerGroupState name) with
-- its epochs, and its members here: unlike a classic group's, they survive a restart with their
-- epochs and assignments, so a restart costs no rebalance.
--   group_type             'classic' or 'consumer'
--   group_epoch            bumped by every change of the members or their subscriptions
--   assignment_epoch       the group epoch the target assignment was computed for
--   subscribed_partitions  the subscribed topics' partition counts the target was computed from,
--                          "orders:3;payments:6"
ALTER TABLE consumer_groups ADD COLUMN group_type TEXT NOT NULL DEFAULT 'classic'
  CHECK (group_type IN ('classic', 'consumer'));
ALTER TABLE consumer_groups ADD COLUMN group_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE consumer_groups ADD COLUMN assignment_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE consumer_groups ADD COLUMN subscribed_partitions TEXT NOT NULL DEFAULT '';

-- A consumer group's members. Partition lists are readable, by topic:
--   assigned_partitions, pending_revocation   "orders:0@3,1@3;payments:2@5" (partition@the epoch
--                                              it was assigned at)
--   target_partitions                          "orders:0,1;payments:2"
--   state                                      Kafka's MemberState: stable, unrevoked_partitions,
--                                              unreleased_partitions
CREATE TABLE consumer_group_members (
  group_id               TEXT NOT NULL REFERENCES consumer_groups(group_id) ON DELETE CASCADE,
  member_id              TEXT NOT NULL,
  instance_id            TEXT,
  rack_id                TEXT,
  client_id              TEXT NOT NULL DEFAULT '',
  client_host            TEXT NOT NULL DEFAULT '',
  rebalance_timeout_ms   INTEGER NOT NULL,
  subscribed_topics      TEXT NOT NULL DEFAULT '',
  subscribed_regex       TEXT NOT NULL DEFAULT '',
  server_assignor        TEXT,
  member_epoch           INTEGER NOT NULL,
  previous_member_epoch  INTEGER NOT NULL,
  state                  TEXT NOT NULL
    CHECK (state IN ('stable', 'unrevoked_partitions', 'unreleased_partitions')),
  assigned_partitions    TEXT NOT NULL DEFAULT '',
  pending_revocation     TEXT NOT NULL DEFAULT '',
  target_partitions      TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (group_id, member_id)
) WITHOUT ROWID;
