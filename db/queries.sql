-- Ready queries for operators: sqlite3 -header -column /var/lib/kafka-iggy-bridge/state.db < db/queries.sql
-- or paste one. The database is in WAL mode: reading it while the bridge runs is safe.
-- Times are ms since the epoch; datetime(x / 1000, 'unixepoch') shows them in UTC.

-- Consumer groups. `state` and the members are those of the last completed rebalance
-- (Stable) or of the moment the group became Empty; after a restart every group is Empty until
-- its members rejoin. `protocol_type` '' = a group that only stores offsets (no group management).
SELECT group_id,
       state,
       protocol_type,
       protocol_name,
       generation,
       leader_id,
       (SELECT count(*) FROM group_members m WHERE m.group_id = g.group_id) AS members,
       (SELECT count(*) FROM committed_offsets o WHERE o.group_id = g.group_id) AS offsets,
       datetime(updated_at / 1000, 'unixepoch') AS state_since_utc
FROM consumer_groups g
ORDER BY group_id;

-- Members and what they own (consumer protocol groups).
SELECT group_id,
       member_id,
       coalesce(group_instance_id, '') AS group_instance_id,
       client_id,
       client_host,
       session_timeout_ms,
       subscribed_topics,
       assigned_partitions
FROM group_members
ORDER BY group_id, member_id;

-- Committed offsets (the next offset each group will read), with their metadata string.
SELECT group_id,
       topic,
       partition,
       committed_offset,
       leader_epoch,
       metadata,
       datetime(commit_time / 1000, 'unixepoch') AS committed_utc,
       CASE WHEN expire_time IS NULL THEN '' ELSE datetime(expire_time / 1000, 'unixepoch') END AS expires_utc
FROM committed_offsets
ORDER BY group_id, topic, partition;

-- One group's offsets (replace 'my-group').
SELECT topic, partition, committed_offset, metadata
FROM committed_offsets
WHERE group_id = 'my-group'
ORDER BY topic, partition;

-- Groups whose newest commit is older than 7 days (retention candidates once they are empty).
SELECT group_id,
       datetime(max(commit_time) / 1000, 'unixepoch') AS last_commit_utc
FROM committed_offsets
GROUP BY group_id
HAVING max(commit_time) < (strftime('%s', 'now') - 7 * 24 * 3600) * 1000
ORDER BY last_commit_utc;

-- Batches a partition holds behind an open transaction (docs/transactions.md, "Real offsets at
-- produce time"): they reach Iggy in offset order once the transactions before them are decided.
SELECT topic, partition, count(*) AS batches, min(base_offset) AS first_offset,
       sum(record_count) AS records, sum(outcome = 0) AS undecided, sum(length(batch)) AS bytes
FROM held_batches GROUP BY topic, partition ORDER BY topic, partition;

-- Streams groups (Kafka Streams with group.protocol=streams) and their members' active tasks,
-- by subtopology ({"0":{"1":7}}: task 0_1, assigned at member epoch 7).
SELECT g.group_id,
       g.state,
       g.group_epoch,
       g.assignment_epoch,
       m.member_id,
       m.process_id,
       m.member_epoch,
       m.state AS member_state,
       m.active_tasks,
       m.pending_active
FROM streams_groups g
LEFT JOIN streams_group_members m ON m.group_id = g.group_id
ORDER BY g.group_id, m.member_id;

-- KIP-848 consumer groups and their members: epochs, the protocol each member speaks (classic
-- members joined through JoinGroup, KIP-848's online migration), what it owns and its target.
SELECT g.group_id, g.state, g.group_epoch, g.assignment_epoch,
       m.member_id, m.instance_id, m.member_epoch, m.state AS member_state,
       CASE WHEN m.classic_protocols IS NULL THEN 'consumer' ELSE 'classic' END AS protocol,
       m.assigned_partitions, m.target_partitions
FROM consumer_groups g
LEFT JOIN consumer_group_members m ON m.group_id = g.group_id
WHERE g.group_type = 'consumer'
ORDER BY g.group_id, m.member_id;
