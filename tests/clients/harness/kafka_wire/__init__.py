"""The Kafka wire as the tests speak it: one hand-written helper for every Python tier, written
from Kafka's protocol guide and deliberately independent of the bridge's C++ codecs, so that a
codec bug cannot hide itself by agreeing with its own test.

    codec.py        primitives (varints, classic and compact strings, bytes and arrays), the
                    request frame (header v1 / v2), and Reader for answers
    conn.py         connect, recv_frame, is_closed, and Conn (numbered requests, plain or TLS)
    records.py      CRC-32C and record batches v2: building one, decoding a Fetch's
    client_apis.py  ApiVersions, Metadata, Produce, Fetch, ListOffsets, OffsetCommit/Fetch,
                    InitProducerId
    errors.py       error codes by name
    admin.py        AdminConn: DeleteTopics, CreatePartitions, DescribeTopicPartitions,
                    Metadata by topic id
    acl.py          CreateAcls, DescribeAcls, DeleteAcls
    sasl.py         SaslConn, SaslHandshake / SaslAuthenticate bodies, PLAIN and SCRAM

The first five are importable from the package itself (`from harness.kafka_wire import
request, recv_frame`); the API groups from their module (`from harness.kafka_wire.acl import
create_acls`)."""
from .client_apis import *  # noqa: F401,F403
from .codec import *  # noqa: F401,F403
from .conn import *  # noqa: F401,F403
from .errors import *  # noqa: F401,F403
from .records import *  # noqa: F401,F403
