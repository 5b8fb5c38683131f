-- KIP-1071 streams groups (docs/groups.md, "Streams groups"): Kafka Streams applications with
-- group.protocol=streams. A streams group lives in these two tables (its committed offsets in
-- committed_offsets, as every group's); members, epochs, the topology and the assignments survive
-- a restart, so a restart costs no rebalance. Readable with sqlite3's JSON functions:
--   topology          the topology the first member sent, as JSON: {"epoch":0,"subtopologies":[{"id":"0",
--                     "source_topics":[...],"repartition_sink_topics":[...],"state_changelog_topics":[{"name":..,
--                     "partitions":0,"replication_factor":0,"configs":[[k,v],...]}],"repartition_source_topics":[...],
--                     "copartition_groups":[{"source_topics":[0],"repartition_source_topics":[0]}]}]}
--   input_partitions  the partition counts of the topics the topology reads and writes, as the
--                     group epoch was computed from them: {"words":3,"app-counts-changelog":3}
CREATE TABLE streams_groups (
  group_id                  TEXT PRIMARY KEY,
  state                     TEXT NOT NULL,   -- Kafka's StreamsGroupState name: Empty, NotReady, Assigning, ...
  group_epoch               INTEGER NOT NULL,
  assignment_epoch          INTEGER NOT NULL,
  validated_topology_epoch  INTEGER NOT NULL,
  last_standby_replicas     INTEGER NOT NULL,
  topology                  TEXT,
  input_partitions          TEXT NOT NULL DEFAULT '{}',
  updated_at                INTEGER NOT NULL
) WITHOUT ROWID;

-- A streams group's members. Task lists are JSON objects by subtopology id:
--   active_tasks, pending_active     {"0":{"1":3,"2":5}}  (partition: the epoch it was assigned at)
--   standby_tasks, warmup_tasks, pending_standby, pending_warmup, target_active, target_standby,
--   target_warmup                    {"0":[1,2],"1":[0]}
--   state                            Kafka's streams MemberState: stable, unrevoked_tasks, unreleased_tasks
CREATE TABLE streams_group_members (
  group_id               TEXT NOT NULL REFERENCES streams_groups(group_id) ON DELETE CASCADE,
  member_id              TEXT NOT NULL,
  process_id             TEXT NOT NULL,
  rack_id                TEXT,
  client_id              TEXT NOT NULL DEFAULT '',
  client_host            TEXT NOT NULL DEFAULT '',
  rebalance_timeout_ms   INTEGER NOT NULL,
  topology_epoch         INTEGER NOT NULL,
  user_endpoint          TEXT,            -- "host:port"
  client_tags            TEXT NOT NULL DEFAULT '{}',
  member_epoch           INTEGER NOT NULL,
  previous_member_epoch  INTEGER NOT NULL,
  state                  TEXT NOT NULL CHECK (state IN ('stable', 'unrevoked_tasks', 'unreleased_tasks')),
  active_tasks           TEXT NOT NULL DEFAULT '{}',
  standby_tasks          TEXT NOT NULL DEFAULT '{}',
  warmup_tasks           TEXT NOT NULL DEFAULT '{}',
  pending_active         TEXT NOT NULL DEFAULT '{}',
  pending_standby        TEXT NOT NULL DEFAULT '{}',
  pending_warmup         TEXT NOT NULL DEFAULT '{}',
  target_active          TEXT NOT NULL DEFAULT '{}',
  target_standby         TEXT NOT NULL DEFAULT '{}',
  target_warmup          TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (group_id, member_id)
) WITHOUT ROWID;
