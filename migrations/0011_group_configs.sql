-- A group's own configs (Kafka's GROUP config resources: kafka-configs --entity-type groups),
-- e.g. ('orders-app', 'consumer.session.timeout.ms', '60000'). As on Kafka they belong to the
-- group id, not to the group's state: they may exist for a group that never ran and stay when
-- the group is deleted. Values are stored as Kafka reports them (validated, canonical).
CREATE TABLE group_configs (
  group_id  TEXT NOT NULL,
  name      TEXT NOT NULL,
  value     TEXT NOT NULL,
  PRIMARY KEY (group_id, name)
) WITHOUT ROWID;
