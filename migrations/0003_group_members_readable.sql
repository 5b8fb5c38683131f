-- Consumer groups: operator-readable member assignments and subscriptions (the assignment blob
-- is the consumer protocol's binary form), and the explicit expiry of offsets committed with a
-- retention time (OffsetCommit v2-v4 retention_time_ms).
ALTER TABLE group_members ADD COLUMN assigned_partitions TEXT NOT NULL DEFAULT '';  -- 'orders:0,1;payments:2'
ALTER TABLE group_members ADD COLUMN subscribed_topics TEXT NOT NULL DEFAULT '';    -- 'orders,payments'
ALTER TABLE committed_offsets ADD COLUMN expire_time INTEGER;                       -- ms since epoch; NULL = group retention
