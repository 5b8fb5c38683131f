-- Security (docs/security.md): SASL credentials, ACL bindings, and the Kafka principal -> Iggy
-- user mapping. Secrets: SCRAM and PLAIN rows hold salted keys, never a password; an Iggy
-- user's password or token is kept (the bridge must log in as it), so state.db stays 0600.

-- RFC 5802 salted credentials, one per user and mechanism (Kafka's SCRAM credentials).
CREATE TABLE scram_credentials (
  username     TEXT NOT NULL,
  mechanism    TEXT NOT NULL CHECK (mechanism IN ('SCRAM-SHA-256', 'SCRAM-SHA-512')),
  salt         BLOB NOT NULL,
  stored_key   BLOB NOT NULL,
  server_key   BLOB NOT NULL,
  iterations   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,   -- ms since epoch
  PRIMARY KEY (username, mechanism)
) WITHOUT ROWID;

-- SASL/PLAIN users: PBKDF2-HMAC-SHA-512 of the password.
CREATE TABLE plain_credentials (
  username     TEXT PRIMARY KEY,
  salt         BLOB NOT NULL,
  hash         BLOB NOT NULL,
  iterations   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL    -- ms since epoch
) WITHOUT ROWID;

-- ACL bindings (CreateAcls), Kafka's names: resource_type TOPIC, GROUP, CLUSTER,
-- TRANSACTIONAL_ID; pattern_type LITERAL or PREFIXED; operation READ, WRITE, ...; permission
-- ALLOW or DENY; principal "User:alice" or "User:*"; host an address or "*".
CREATE TABLE acls (
  resource_type  TEXT NOT NULL,
  resource_name  TEXT NOT NULL,
  pattern_type   TEXT NOT NULL,
  principal      TEXT NOT NULL,
  host           TEXT NOT NULL,
  operation      TEXT NOT NULL,
  permission     TEXT NOT NULL,
  created_at     INTEGER NOT NULL,  -- ms since epoch
  PRIMARY KEY (resource_type, resource_name, pattern_type, principal, host, operation, permission)
) WITHOUT ROWID;

-- [principals] iggy_identity = "per_principal": the Iggy user a Kafka principal's data
-- operations log in as (a password or a personal access token).
CREATE TABLE principal_iggy_users (
  principal              TEXT PRIMARY KEY,   -- "User:alice"
  iggy_username          TEXT NOT NULL,
  iggy_password          TEXT,
  personal_access_token  TEXT,
  created_by_bridge      INTEGER NOT NULL DEFAULT 0,  -- [principals] unmapped = "create"
  updated_at             INTEGER NOT NULL,   -- ms since epoch
  CHECK ((iggy_password IS NULL) <> (personal_access_token IS NULL))
) WITHOUT ROWID;
