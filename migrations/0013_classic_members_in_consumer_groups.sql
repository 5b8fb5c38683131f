-- KIP-848's online migration (docs/groups.md, "Online migration between classic and consumer
-- groups"): a consumer group may hold members that still speak the classic protocol (JoinGroup,
-- SyncGroup, Heartbeat). Such a member keeps what its JoinGroup sent, Kafka's ClassicMemberMetadata;
-- both columns are NULL for a member using the consumer protocol.
--   classic_session_timeout_ms  the member's own session timeout
--   classic_protocols           its supported protocols, in its order of preference, as JSON:
--                               [{"name":"range","metadata":"0003000000010006..."}] (metadata in hex:
--                               its ConsumerProtocolSubscription)
ALTER TABLE consumer_group_members ADD COLUMN classic_session_timeout_ms INTEGER;
ALTER TABLE consumer_group_members ADD COLUMN classic_protocols TEXT;
