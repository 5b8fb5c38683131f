-- Static members of KIP-1071 streams groups (docs/groups.md, "Streams groups"): a member with a
-- group.instance.id that leaves with epoch -2 keeps its place and its tasks until its session
-- ends, and a new incarnation with the same instance id takes them over without a rebalance.
--   instance_id   the member's group.instance.id; NULL for a dynamic member
ALTER TABLE streams_group_members ADD COLUMN instance_id TEXT;
