//! Golden wire vectors for the bridge's Iggy client, produced by the PUBLISHED
//! `iggy_binary_protocol` crate (renamed to `bp` by the package that includes this file).
//!
//! Two packages include this one file, each pinning one crate version with `=` (Cargo resolves
//! at most one semver-compatible version of a crate per lockfile, and 0.11.0-edge.4 and 0.11.0
//! are both "0.11", so one package cannot depend on both):
//!   edge/     iggy_binary_protocol =0.11.0-edge.4   (the server the integration tier runs)
//!   release/  iggy_binary_protocol =0.11.0          (the crates.io release)
//!
//! Every byte string here comes from the crate's own encoders (`WireEncode`,
//! `SendMessagesEncoder`, `encode_user_headers`, `BatchHeader::encode_into`, the `#[repr(C)]`
//! consensus headers through `bytemuck`). Where the crate has no encoder for something, a comment
//! says so and the vector is either left out or its bytes are a plain test input whose meaning
//! the crate's own decoder states (`result_code`, `result_section_len`, `PollMessagesResponse`).
//! Output: one JSON object on stdout (or into the file named by the first argument). The C++
//! side (tests/iggy_golden/) reads it and compares the bridge's encoders and decoders.

use std::fmt::Write as _;

use bp::batch::{BATCH_HEADER_SIZE, BatchHeader, calculate_batch_checksum};
use bp::codec::WireEncode;
use bp::consensus::{
    Command, EvictionHeader, EvictionReason, Operation, ReplyHeader, RequestHeader, result_code,
    result_section_len,
};
use bp::primitives::ack_level::AckLevel;
use bp::primitives::consumer::WireConsumer;
use bp::primitives::identifier::{WireIdentifier, WireName};
use bp::primitives::options::WireOptions;
use bp::primitives::partitioning::WirePartitioning;
use bp::primitives::polling_strategy::WirePollingStrategy;
use bp::primitives::user_headers::encode_user_headers;
use bp::requests::consumer_offsets::{GetConsumerOffsetRequest, StoreConsumerOffsetRequest};
use bp::requests::messages::{PollMessagesRequest, RawMessage, SendMessagesEncoder};
use bp::requests::topics::CreateTopicRequest;
use bp::requests::users::{LoginRegisterRequest, LoginRegisterWithPatRequest};
use bp::responses::consumer_offsets::ConsumerOffsetResponse;
use bp::responses::messages::{
    PollMessagesResponse, PollMessagesResponseHeader, SendMessagesConfirmationResponse,
    SendMessagesResponse,
};
use bp::responses::users::LoginRegisterResponse;
use bp::version::{ClientVersionInfo, IGGY_PROTOCOL_VERSION, IGGY_PROTOCOL_VERSION_MIN};
use bytes::BytesMut;
use secrecy::SecretString;

/// How a topic asks for "every write durable before it is acknowledged". Each profile uses one
/// variant.
#[allow(dead_code)]
pub enum TopicDurability {
    /// 0.11.0-edge.4 catalog: `enforce_fsync` (Bool).
    EnforceFsync,
    /// 0.11.0 catalog: `durability` (String, `replicated` | `persisted`); `enforce_fsync` is
    /// refused with UnsupportedOptionKey.
    DurabilityString,
}

pub struct Profile {
    pub name: &'static str,
    /// Must equal the `=` pin in this profile's Cargo.toml.
    pub crate_version: &'static str,
    pub topic_durability: TopicDurability,
    /// The keys `CreateTopic` accepts in this version. NOT part of iggy_binary_protocol (the
    /// catalog is `iggy_common::types::options::topic_option_keys`, which this tool does not
    /// link: it drags tokio, ring, clap and more); copied here as data from that crate's source
    /// of the same version, so the C++ test can check every key the bridge can emit.
    pub topic_option_keys: &'static [&'static str],
}

// ---- a minimal JSON writer (no serde: keeps the build to the crate's own dependencies) --------

enum J {
    Bool(bool),
    Num(u64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
    Null,
}

fn s(v: impl Into<String>) -> J {
    J::Str(v.into())
}
fn n(v: impl Into<u64>) -> J {
    J::Num(v.into())
}
fn hex(bytes: &[u8]) -> J {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        write!(out, "{b:02x}").unwrap();
    }
    J::Str(out)
}
fn obj(fields: Vec<(&str, J)>) -> J {
    J::Obj(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn write_json(j: &J, out: &mut String, indent: usize) {
    let pad = |out: &mut String, i: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(i));
    };
    match j {
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(v) => write!(out, "{v}").unwrap(),
        J::Null => out.push_str("null"),
        J::Str(v) => {
            out.push('"');
            for c in v.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, indent + 2);
                write_json(item, out, indent + 2);
            }
            if !items.is_empty() {
                pad(out, indent);
            }
            out.push(']');
        }
        J::Obj(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, indent + 2);
                write_json(&J::Str(k.clone()), out, indent + 2);
                out.push_str(": ");
                write_json(v, out, indent + 2);
            }
            if !fields.is_empty() {
                pad(out, indent);
            }
            out.push('}');
        }
    }
}

// ---- fixed inputs -----------------------------------------------------------------------------

const SDK_NAME: &str = "kafka-iggy-bridge";
const SDK_VERSION: &str = "0.1";
const USERNAME: &str = "iggy";
const PASSWORD: &str = "iggy-secret";
const TOKEN: &str = "pat-0123456789abcdef0123456789abcdef";
const CLIENT_ID: u128 = 0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0101;
const SESSION: u64 = 42;
const REQUEST: u64 = 7;

// Iggy's user-header kinds (WireHeaderKind codes). The crate names only the numbers' range
// (`WireHeaderKind::KNOWN_MAX`); the names are iggy_common's `HeaderKind`.
const KIND_RAW: u8 = 1;
const KIND_STRING: u8 = 2;
const KIND_BOOL: u8 = 3;
const KIND_INT64: u8 = 7;
const KIND_UINT32: u8 = 11;

fn name(v: &str) -> WireName {
    WireName::new(v).expect("fixed name is 1..255 bytes")
}

fn ident_json(id: &WireIdentifier) -> J {
    match id {
        WireIdentifier::Numeric(v) => obj(vec![("numeric", n(*v))]),
        WireIdentifier::String(v) => obj(vec![("named", s(v.as_str()))]),
    }
}

fn named(v: &str) -> WireIdentifier {
    WireIdentifier::named(v).expect("fixed name is 1..255 bytes")
}

fn consumer_json(c: &WireConsumer) -> J {
    obj(vec![("kind", n(c.kind)), ("id", ident_json(&c.id))])
}

fn opt_u32(v: Option<u32>) -> J {
    v.map_or(J::Null, |v| n(v))
}

/// A (key_kind, key, value_kind, value) TLV list as JSON inputs plus the crate's encoding.
fn tlv(entries: &[(u8, &[u8], u8, &[u8])]) -> (Vec<u8>, J) {
    let mut buf = BytesMut::new();
    encode_user_headers(entries, &mut buf);
    let listed = entries
        .iter()
        .map(|(kk, k, vk, v)| {
            obj(vec![
                ("key_kind", n(*kk)),
                ("key", s(String::from_utf8_lossy(k))),
                ("value_kind", n(*vk)),
                ("value_hex", hex(v)),
            ])
        })
        .collect();
    (buf.to_vec(), J::Arr(listed))
}

fn version_info() -> ClientVersionInfo {
    ClientVersionInfo {
        protocol_version: IGGY_PROTOCOL_VERSION,
        sdk_name: name(SDK_NAME),
        sdk_version: name(SDK_VERSION),
    }
}

// ---- request headers --------------------------------------------------------------------------

/// The crate has `RequestHeader` (the `#[repr(C)]` layout) but no function that fills one for a
/// client request: that is the SDK's `encode_request_header` (core/sdk/src/vsr.rs of the same
/// release). The three rules it applies are restated here, the header bytes come from the
/// crate's struct:
///   1. LoginRegister / LoginRegisterWithPat -> Operation::Register; LogoutUser -> Logout;
///      every other code -> the crate's dispatch table, NonReplicated when it has none.
///   2. request_checksum = XXH3-64(body) for every op but NonReplicated and partition ops.
///   3. NonReplicated carries the command code in reserved[0..4].
fn sdk_operation_for_code(code: u32) -> Operation {
    match code {
        bp::codes::LOGIN_REGISTER_CODE | bp::codes::LOGIN_REGISTER_WITH_PAT_CODE => {
            Operation::Register
        }
        bp::codes::LOGOUT_USER_CODE => Operation::Logout,
        _ => Operation::from_command_code(code).unwrap_or(Operation::NonReplicated),
    }
}

fn request_header(code: u32, body: &[u8], session: u64, request: u64) -> (Vec<u8>, J) {
    let operation = sdk_operation_for_code(code);
    let request_checksum = if operation.is_partition() || operation == Operation::NonReplicated {
        0
    } else {
        u128::from(twox_hash::XxHash3_64::oneshot(body))
    };
    let mut reserved = [0u8; 60];
    if operation == Operation::NonReplicated {
        reserved[0..4].copy_from_slice(&code.to_le_bytes());
    }
    let header = RequestHeader {
        command: Command::Request,
        operation,
        size: u32::try_from(bp::HEADER_SIZE + body.len()).unwrap(),
        client: CLIENT_ID,
        request,
        session,
        request_checksum,
        timestamp: 0,
        reserved,
        ..Default::default()
    };
    let bytes = bytemuck::bytes_of(&header).to_vec();
    let inputs = obj(vec![
        ("code", n(code)),
        ("operation", n(operation as u8)),
        ("client_lo", n(CLIENT_ID as u64)),
        ("client_hi", n((CLIENT_ID >> 64) as u64)),
        ("session", n(session)),
        ("request", n(request)),
    ]);
    (bytes, inputs)
}

// ---- cases ------------------------------------------------------------------------------------

struct Out {
    cases: Vec<(String, J)>,
}

impl Out {
    fn case(&mut self, key: &str, fields: Vec<(&str, J)>) {
        self.cases.push((key.to_string(), obj(fields)));
    }

    /// A request body plus the full 256-byte header the SDK would put in front of it.
    fn request(
        &mut self,
        key: &str,
        code: u32,
        body: &[u8],
        session: u64,
        request: u64,
        inputs: J,
        note: &str,
    ) {
        let (header, header_inputs) = request_header(code, body, session, request);
        self.case(
            key,
            vec![
                ("code", n(code)),
                ("inputs", inputs),
                ("body_hex", hex(body)),
                ("header_hex", hex(&header)),
                ("header_inputs", header_inputs),
                ("note", s(note)),
            ],
        );
    }
}

fn login_cases(out: &mut Out) {
    let login = LoginRegisterRequest {
        version_info: version_info(),
        username: name(USERNAME),
        password: SecretString::from(PASSWORD),
        client_context: None,
    };
    let inputs = obj(vec![
        ("protocol_version", n(IGGY_PROTOCOL_VERSION)),
        ("sdk_name", s(SDK_NAME)),
        ("sdk_version", s(SDK_VERSION)),
        ("username", s(USERNAME)),
        ("password", s(PASSWORD)),
        ("client_context", J::Null),
    ]);
    out.request(
        "login_register_request",
        bp::codes::LOGIN_REGISTER_CODE,
        &login.to_bytes(),
        0,
        0,
        inputs,
        "LoginRegisterRequest: ClientVersionInfo prefix, username, u8-prefixed password, u32 client_context length 0",
    );

    let pat = LoginRegisterWithPatRequest {
        version_info: version_info(),
        token: SecretString::from(TOKEN),
        client_context: None,
    };
    let inputs = obj(vec![
        ("protocol_version", n(IGGY_PROTOCOL_VERSION)),
        ("sdk_name", s(SDK_NAME)),
        ("sdk_version", s(SDK_VERSION)),
        ("token", s(TOKEN)),
        ("client_context", J::Null),
    ]);
    out.request(
        "login_register_with_pat_request",
        bp::codes::LOGIN_REGISTER_WITH_PAT_CODE,
        &pat.to_bytes(),
        0,
        0,
        inputs,
        "LoginRegisterWithPatRequest: ClientVersionInfo prefix, u8-prefixed token, u32 client_context length 0",
    );

    let server_version = format!("{}", bp::version::ProtocolVersion(IGGY_PROTOCOL_VERSION));
    let reply = LoginRegisterResponse {
        user_id: 1,
        session: 0x0102_0304_0506_0708,
        server_protocol_version: IGGY_PROTOCOL_VERSION,
        server_version: name(&server_version),
    };
    let payload = reply.to_bytes();
    let decoded = <LoginRegisterResponse as bp::codec::WireDecode>::decode_from(&payload).unwrap();
    out.case(
        "login_register_reply",
        vec![
            ("payload_hex", hex(&payload)),
            (
                "expect",
                obj(vec![
                    ("user_id", n(decoded.user_id)),
                    ("session", n(decoded.session)),
                    ("server_protocol_version", n(decoded.server_protocol_version)),
                    ("server_version", s(decoded.server_version.as_str())),
                ]),
            ),
            ("note", s("LoginRegisterResponse payload (what follows the result section of a Register reply)")),
        ],
    );
}

fn create_topic_case(out: &mut Out, profile: &Profile) {
    let one = 1u32.to_le_bytes();
    // The TLV layout is the crate's (`encode_user_headers`, validated by `WireOptions`); the keys
    // and value kinds are the catalog's canonical ones (iggy_common `TopicCreateOptions::to_wire`
    // writes a Bool / Uint32 / String; keys land in BTreeMap order, which these two already are).
    let (entries, bridge_equivalent): (Vec<(u8, &[u8], u8, &[u8])>, J) =
        match profile.topic_durability {
            TopicDurability::EnforceFsync => (
                vec![
                    (KIND_STRING, b"enforce_fsync", KIND_BOOL, &[1]),
                    (KIND_STRING, b"messages_required_to_save", KIND_UINT32, &one),
                ],
                obj(vec![
                    ("enforce_fsync", J::Bool(true)),
                    ("messages_required_to_save", n(1u32)),
                ]),
            ),
            TopicDurability::DurabilityString => (
                vec![
                    (KIND_STRING, b"durability", KIND_STRING, b"persisted"),
                    (KIND_STRING, b"messages_required_to_save", KIND_UINT32, &one),
                ],
                obj(vec![
                    ("enforce_fsync", J::Bool(true)),
                    ("messages_required_to_save", n(1u32)),
                ]),
            ),
        };
    let (options_bytes, options_json) = tlv(&entries);
    let options = WireOptions::from_slice(&options_bytes).expect("crate accepts the options block");
    let stream_id = named("kafka");
    let req = CreateTopicRequest {
        stream_id: stream_id.clone(),
        partitions_count: 3,
        name: name("orders"),
        options,
    };
    let body = req.to_bytes();
    let (header, header_inputs) =
        request_header(bp::codes::CREATE_TOPIC_CODE, &body, SESSION, REQUEST);
    out.case(
        "create_topic_request",
        vec![
            ("code", n(bp::codes::CREATE_TOPIC_CODE)),
            (
                "inputs",
                obj(vec![
                    ("stream", ident_json(&stream_id)),
                    ("partitions_count", n(3u32)),
                    ("name", s("orders")),
                    ("options", options_json),
                ]),
            ),
            ("options_hex", hex(&options_bytes)),
            ("bridge_topic_config", bridge_equivalent),
            (
                "topic_option_keys",
                J::Arr(profile.topic_option_keys.iter().map(|k| s(*k)).collect()),
            ),
            ("body_hex", hex(&body)),
            ("header_hex", hex(&header)),
            ("header_inputs", header_inputs),
            (
                "note",
                s(match profile.topic_durability {
                    TopicDurability::EnforceFsync => "CreateTopicRequest with options enforce_fsync=true (Bool), messages_required_to_save=1 (Uint32); options run to the end of the body",
                    TopicDurability::DurabilityString => "CreateTopicRequest with options durability=\"persisted\" (String), messages_required_to_save=1 (Uint32); 0.11.0 refuses enforce_fsync (UnsupportedOptionKey)",
                }),
            ),
        ],
    );
}

struct Msg {
    id: u128,
    origin_timestamp: u64,
    payload: &'static [u8],
    headers: Vec<(u8, &'static [u8], u8, &'static [u8])>,
}

fn messages() -> Vec<Msg> {
    const TS_MS: [u8; 8] = 1_700_000_000_123u64.to_le_bytes();
    vec![
        Msg {
            id: 0x1111_2222_3333_4444_5555_6666_7777_8888,
            origin_timestamp: 1_700_000_000_123_000,
            payload: b"hello, iggy",
            headers: vec![
                (KIND_STRING, b"kafka.key", KIND_RAW, b"k-1"),
                (KIND_STRING, b"kafka.ts", KIND_INT64, &TS_MS),
                (KIND_STRING, b"kafka.v", KIND_RAW, &[1]),
            ],
        },
        Msg {
            id: 0,
            origin_timestamp: 1_700_000_000_124_500,
            payload: b"second",
            headers: vec![
                (KIND_STRING, b"kafka.h.trace", KIND_RAW, b"abc"),
                (KIND_STRING, b"kafka.v", KIND_RAW, &[1]),
            ],
        },
    ]
}

/// Returns the encoded message frames (the batch blob) for the poll reply.
fn send_messages_case(out: &mut Out) -> (Vec<u8>, u64) {
    let msgs = messages();
    let header_blobs: Vec<(Vec<u8>, J)> = msgs.iter().map(|m| tlv(&m.headers)).collect();
    let raw: Vec<RawMessage<'_>> = msgs
        .iter()
        .zip(&header_blobs)
        .map(|(m, (h, _))| RawMessage {
            id: m.id,
            origin_timestamp: m.origin_timestamp,
            headers: Some(h.as_slice()),
            payload: m.payload,
        })
        .collect();
    let stream = named("kafka");
    let topic = named("orders");
    let partitioning = WirePartitioning::PartitionId(3);
    let mut buf = BytesMut::new();
    SendMessagesEncoder::encode(&mut buf, &stream, &topic, &partitioning, &raw).expect("encodes");
    let body = buf.to_vec();
    assert_eq!(
        body.len(),
        SendMessagesEncoder::encoded_size(&stream, &topic, &partitioning, &raw)
    );

    // Where the checksums sit, read back from the crate's own bytes.
    let metadata_len = u32::from_le_bytes(body[0..4].try_into().unwrap()) as usize;
    let batch_start = 4 + metadata_len;
    let batch = BatchHeader::decode(&body[batch_start..]).expect("crate decodes its batch");
    let blob = body[batch_start + BATCH_HEADER_SIZE..].to_vec();
    let mut frame_checksums = Vec::new();
    let mut pos = 0;
    while pos < blob.len() {
        let h = bp::batch::BatchMessageHeader::decode(&blob[pos..]).unwrap();
        frame_checksums.push(n(h.checksum));
        pos += h.total_size();
    }
    let inputs = obj(vec![
        ("stream", ident_json(&stream)),
        ("topic", ident_json(&topic)),
        ("partitioning", obj(vec![("partition_id", n(3u32))])),
        (
            "messages",
            J::Arr(
                msgs.iter()
                    .zip(header_blobs)
                    .map(|(m, (h, listed))| {
                        obj(vec![
                            ("id_lo", n(m.id as u64)),
                            ("id_hi", n((m.id >> 64) as u64)),
                            ("origin_timestamp", n(m.origin_timestamp)),
                            ("payload_hex", hex(m.payload)),
                            ("headers", listed),
                            ("headers_hex", hex(&h)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ]);
    let (header, header_inputs) =
        request_header(bp::codes::SEND_MESSAGES_CODE, &body, SESSION, REQUEST);
    out.case(
        "send_messages_request",
        vec![
            ("code", n(bp::codes::SEND_MESSAGES_CODE)),
            ("inputs", inputs),
            ("body_hex", hex(&body)),
            ("header_hex", hex(&header)),
            ("header_inputs", header_inputs),
            (
                "checksums",
                obj(vec![
                    ("batch_offset_in_body", n(batch_start as u64)),
                    ("batch_checksum", n(batch.batch_checksum)),
                    ("batch_length", n(batch.batch_length)),
                    ("origin_timestamp", n(batch.origin_timestamp)),
                    ("message_checksums", J::Arr(frame_checksums)),
                ]),
            ),
            (
                "note",
                s("SendMessagesEncoder: metadata section, 256-byte batch header (checksum = XXH3-64 over header fields and frame checksums), 48-byte frames with XXH3-64 over frame[8..]"),
            ),
        ],
    );
    (blob, batch.origin_timestamp)
}

fn poll_cases(out: &mut Out, blob: &[u8], origin_timestamp: u64) {
    let variants = [
        (
            "poll_messages_request",
            PollMessagesRequest {
                consumer: WireConsumer::consumer(named("kafka-iggy-bridge")),
                stream_id: named("kafka"),
                topic_id: named("orders"),
                partition_id: Some(3),
                strategy: WirePollingStrategy::offset(100),
                count: 500,
                auto_commit: false,
            },
            "offset",
        ),
        (
            "poll_messages_request_group_next",
            PollMessagesRequest {
                consumer: WireConsumer::consumer_group(WireIdentifier::numeric(5)),
                stream_id: WireIdentifier::numeric(1),
                topic_id: WireIdentifier::numeric(2),
                partition_id: None,
                strategy: WirePollingStrategy::next(),
                count: 1,
                auto_commit: true,
            },
            "next",
        ),
    ];
    for (key, req, strategy) in variants {
        let inputs = obj(vec![
            ("consumer", consumer_json(&req.consumer)),
            ("stream", ident_json(&req.stream_id)),
            ("topic", ident_json(&req.topic_id)),
            ("partition_id", opt_u32(req.partition_id)),
            ("strategy", s(strategy)),
            ("strategy_kind", n(req.strategy.kind)),
            ("strategy_value", n(req.strategy.value)),
            ("count", n(req.count)),
            ("auto_commit", J::Bool(req.auto_commit)),
        ]);
        out.request(
            key,
            bp::codes::POLL_MESSAGES_CODE,
            &req.to_bytes(),
            SESSION,
            REQUEST,
            inputs,
            "PollMessagesRequest",
        );
    }

    // The reply: PollMessagesResponseHeader (crate encoder) + one batch as the server stores it:
    // the frames the SendMessages encoder produced, under a BatchHeader the server stamped with
    // partition, base offset and append time (crate `BatchHeader::encode_into`, checksum from
    // `calculate_batch_checksum`). The crate has no encoder for a whole poll reply.
    let base_offset = 100u64;
    let base_timestamp = 1_700_000_001_000_000u64;
    let mut header = BatchHeader::new(
        3,
        origin_timestamp,
        (BATCH_HEADER_SIZE + blob.len()) as u64,
        2,
    );
    header.base_offset = base_offset;
    header.base_timestamp = base_timestamp;
    header.batch_checksum = calculate_batch_checksum(&header, blob);
    let mut batch = vec![0u8; BATCH_HEADER_SIZE];
    header.encode_into(&mut batch);
    batch.extend_from_slice(blob);
    let reply_header = PollMessagesResponseHeader {
        partition_id: 3,
        current_offset: 101,
        messages_count: 2,
    };
    let mut payload = reply_header.to_bytes().to_vec();
    payload.extend_from_slice(&batch);

    // Expected values from the crate's own decoder.
    let decoded = PollMessagesResponse::decode(&payload).unwrap();
    let mut expected = Vec::new();
    for m in decoded.messages {
        let m = m.expect("crate decodes its own poll reply");
        expected.push(obj(vec![
            ("offset", n(m.offset)),
            ("timestamp", n(m.timestamp)),
            ("origin_timestamp", n(m.origin_timestamp)),
            ("id_lo", n(m.id as u64)),
            ("id_hi", n((m.id >> 64) as u64)),
            ("checksum", n(m.checksum)),
            ("payload_hex", hex(m.payload)),
            ("user_headers_hex", hex(m.user_headers)),
        ]));
    }
    out.case(
        "poll_messages_reply",
        vec![
            ("payload_hex", hex(&payload)),
            (
                "expect",
                obj(vec![
                    ("partition_id", n(decoded.header.partition_id)),
                    ("current_offset", n(decoded.header.current_offset)),
                    ("messages_count", n(decoded.header.messages_count)),
                    ("messages", J::Arr(expected)),
                ]),
            ),
            ("note", s("PollMessagesResponseHeader + one stored batch; expected values from PollMessagesResponse::decode")),
        ],
    );
}

fn offset_cases(out: &mut Out) {
    let consumer = WireConsumer::consumer_group(named("kafka-group"));
    let store = StoreConsumerOffsetRequest {
        consumer: consumer.clone(),
        stream_id: named("kafka"),
        topic_id: named("orders"),
        partition_id: Some(2),
        offset: 4242,
        ack: AckLevel::Quorum,
    };
    let inputs = obj(vec![
        ("consumer", consumer_json(&store.consumer)),
        ("stream", ident_json(&store.stream_id)),
        ("topic", ident_json(&store.topic_id)),
        ("partition_id", opt_u32(store.partition_id)),
        ("offset", n(store.offset)),
        ("ack", n(store.ack.as_u8())),
    ]);
    out.request(
        "store_consumer_offset_request",
        bp::codes::STORE_CONSUMER_OFFSET_CODE,
        &store.to_bytes(),
        SESSION,
        REQUEST,
        inputs,
        "StoreConsumerOffsetRequest with AckLevel::Quorum (the crate's default)",
    );

    let get = GetConsumerOffsetRequest {
        consumer,
        stream_id: named("kafka"),
        topic_id: named("orders"),
        partition_id: Some(2),
    };
    let inputs = obj(vec![
        ("consumer", consumer_json(&get.consumer)),
        ("stream", ident_json(&get.stream_id)),
        ("topic", ident_json(&get.topic_id)),
        ("partition_id", opt_u32(get.partition_id)),
    ]);
    out.request(
        "get_consumer_offset_request",
        bp::codes::GET_CONSUMER_OFFSET_CODE,
        &get.to_bytes(),
        SESSION,
        REQUEST,
        inputs,
        "GetConsumerOffsetRequest",
    );

    let reply = ConsumerOffsetResponse {
        partition_id: 2,
        current_offset: 5000,
        stored_offset: 4242,
    };
    out.case(
        "get_consumer_offset_reply",
        vec![
            ("payload_hex", hex(&reply.to_bytes())),
            (
                "expect",
                obj(vec![
                    ("partition_id", n(reply.partition_id)),
                    ("current_offset", n(reply.current_offset)),
                    ("stored_offset", n(reply.stored_offset)),
                ]),
            ),
            ("note", s("ConsumerOffsetResponse")),
        ],
    );
}

/// The other requests the bridge's IggyClient sends, each from the crate's request type.
fn other_requests(out: &mut Out) {
    use bp::requests::consumer_groups::{
        CreateConsumerGroupRequest, GetConsumerGroupRequest, JoinConsumerGroupRequest,
        LeaveConsumerGroupRequest, SyncConsumerGroupRequest,
    };
    use bp::requests::consumer_offsets::DeleteConsumerOffsetRequest;
    use bp::requests::partitions::CreatePartitionsRequest;
    use bp::requests::segments::DeleteSegmentsRequest;
    use bp::requests::streams::{CreateStreamRequest, DeleteStreamRequest, GetStreamRequest};
    use bp::requests::system::{GetMeRequest, PingRequest};
    use bp::requests::topics::{DeleteTopicRequest, GetTopicRequest, UpdateTopicRequest};
    use bp::requests::users::LogoutUserRequest;

    let stream = named("kafka");
    let topic = named("orders");
    let group = named("kafka-group");
    let expiry = 60_000_000u64.to_le_bytes();
    let (update_options, update_options_json) =
        tlv(&[(KIND_STRING, b"message_expiry", 12, &expiry)]); // 12 = Uint64
    let group_consumer = WireConsumer::consumer_group(group.clone());

    let st = || ("stream", ident_json(&stream));
    let tp = || ("topic", ident_json(&topic));
    let gp = || ("group", ident_json(&group));
    let items: Vec<(&str, u32, Vec<u8>, Vec<(&str, J)>)> = vec![
        (
            "ping",
            bp::codes::PING_CODE,
            PingRequest.to_bytes().to_vec(),
            vec![],
        ),
        (
            "get_me",
            bp::codes::GET_ME_CODE,
            GetMeRequest.to_bytes().to_vec(),
            vec![],
        ),
        (
            "logout",
            bp::codes::LOGOUT_USER_CODE,
            LogoutUserRequest.to_bytes().to_vec(),
            vec![],
        ),
        (
            "create_stream",
            bp::codes::CREATE_STREAM_CODE,
            CreateStreamRequest {
                name: name("kafka"),
                options: WireOptions::empty(),
            }
            .to_bytes()
            .to_vec(),
            vec![("name", s("kafka"))],
        ),
        (
            "get_stream",
            bp::codes::GET_STREAM_CODE,
            GetStreamRequest {
                stream_id: stream.clone(),
            }
            .to_bytes()
            .to_vec(),
            vec![st()],
        ),
        (
            "delete_stream",
            bp::codes::DELETE_STREAM_CODE,
            DeleteStreamRequest {
                stream_id: WireIdentifier::numeric(1),
            }
            .to_bytes()
            .to_vec(),
            vec![("stream", ident_json(&WireIdentifier::numeric(1)))],
        ),
        (
            "get_topic",
            bp::codes::GET_TOPIC_CODE,
            GetTopicRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp()],
        ),
        (
            "update_topic",
            bp::codes::UPDATE_TOPIC_CODE,
            UpdateTopicRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                name: name("orders"),
                options: WireOptions::from_slice(&update_options).unwrap(),
            }
            .to_bytes()
            .to_vec(),
            vec![
                st(),
                tp(),
                ("name", s("orders")),
                ("message_expiry_us", n(60_000_000u64)),
                ("options", update_options_json),
            ],
        ),
        (
            "delete_topic",
            bp::codes::DELETE_TOPIC_CODE,
            DeleteTopicRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp()],
        ),
        (
            "create_partitions",
            bp::codes::CREATE_PARTITIONS_CODE,
            CreatePartitionsRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                partitions_count: 2,
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp(), ("count", n(2u32))],
        ),
        (
            "delete_segments",
            bp::codes::DELETE_SEGMENTS_CODE,
            DeleteSegmentsRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                partition_id: 1,
                segments_count: 3,
            }
            .to_bytes()
            .to_vec(),
            vec![
                st(),
                tp(),
                ("partition_id", n(1u32)),
                ("segments_count", n(3u32)),
            ],
        ),
        (
            "delete_consumer_offset",
            bp::codes::DELETE_CONSUMER_OFFSET_CODE,
            DeleteConsumerOffsetRequest {
                consumer: group_consumer.clone(),
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                partition_id: Some(2),
                ack: AckLevel::Quorum,
            }
            .to_bytes()
            .to_vec(),
            vec![
                ("consumer", consumer_json(&group_consumer)),
                st(),
                tp(),
                ("partition_id", n(2u32)),
                ("ack", n(AckLevel::Quorum.as_u8())),
            ],
        ),
        (
            "create_consumer_group",
            bp::codes::CREATE_CONSUMER_GROUP_CODE,
            CreateConsumerGroupRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                name: name("kafka-group"),
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp(), ("name", s("kafka-group"))],
        ),
        (
            "get_consumer_group",
            bp::codes::GET_CONSUMER_GROUP_CODE,
            GetConsumerGroupRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                group_id: group.clone(),
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp(), gp()],
        ),
        (
            "join_consumer_group",
            bp::codes::JOIN_CONSUMER_GROUP_CODE,
            JoinConsumerGroupRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                group_id: group.clone(),
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp(), gp()],
        ),
        (
            "leave_consumer_group",
            bp::codes::LEAVE_CONSUMER_GROUP_CODE,
            LeaveConsumerGroupRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                group_id: group.clone(),
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp(), gp()],
        ),
        (
            "sync_consumer_group",
            bp::codes::SYNC_CONSUMER_GROUP_CODE,
            SyncConsumerGroupRequest {
                stream_id: stream.clone(),
                topic_id: topic.clone(),
                group_id: group.clone(),
            }
            .to_bytes()
            .to_vec(),
            vec![st(), tp(), gp()],
        ),
    ];
    let mut listed = Vec::new();
    for (label, code, body, inputs) in items {
        let (header, header_inputs) = request_header(code, &body, SESSION, REQUEST);
        listed.push(obj(vec![
            ("name", s(label)),
            ("code", n(code)),
            ("inputs", obj(inputs)),
            ("body_hex", hex(&body)),
            ("header_hex", hex(&header)),
            ("header_inputs", header_inputs),
        ]));
    }
    out.case(
        "other_requests",
        vec![
            ("items", J::Arr(listed)),
            (
                "note",
                s("the remaining requests IggyClient sends, from the crate's request types"),
            ),
        ],
    );
}

fn send_reply_cases(out: &mut Out) {
    let one = SendMessagesResponse {
        confirmations: vec![SendMessagesConfirmationResponse {
            stream_id: 1,
            topic_id: 2,
            partition_id: 3,
            base_offset: 100,
        }],
    };
    out.case(
        "send_messages_reply_one",
        vec![
            ("payload_hex", hex(&one.to_bytes())),
            ("message_count", n(2u32)),
            (
                "expect",
                obj(vec![
                    ("reported", J::Bool(true)),
                    ("stream_id", n(1u32)),
                    ("topic_id", n(2u32)),
                    ("partition_id", n(3u32)),
                    ("base_offset", n(100u64)),
                ]),
            ),
            ("note", s("SendMessagesResponse with one confirmation")),
        ],
    );
    let none = SendMessagesResponse {
        confirmations: vec![],
    };
    out.case(
        "send_messages_reply_empty",
        vec![
            ("payload_hex", hex(&none.to_bytes())),
            ("message_count", n(2u32)),
            ("expect", obj(vec![("reported", J::Bool(false))])),
            ("note", s("SendMessagesResponse with confirmations_count = 0 (committed, no offset to report)")),
        ],
    );
}

fn header_cases(out: &mut Out) {
    let max = bp::version::pack_protocol_version(0, 12, 3);
    let min = bp::version::pack_protocol_version(0, 12, 0);
    let eviction = EvictionHeader::incompatible_protocol(0, 0, 0, CLIENT_ID, max, min);
    out.case(
        "eviction_incompatible_protocol",
        vec![
            ("header_hex", hex(bytemuck::bytes_of(&eviction))),
            (
                "expect",
                obj(vec![
                    ("command", n(Command::Eviction as u8)),
                    ("size", n(eviction.size)),
                    ("reason", n(EvictionReason::IncompatibleProtocol as u8)),
                    ("server_protocol_version", n(max)),
                    ("server_protocol_version_min", n(min)),
                ]),
            ),
            ("note", s("EvictionHeader::incompatible_protocol: window at offsets 144 (max) / 148 (min), reason at 255")),
        ],
    );

    // A pre-commit denial: status set, empty body (ReplyHeader contract).
    let denied = ReplyHeader {
        command: Command::Reply,
        size: bp::HEADER_SIZE as u32,
        client: CLIENT_ID,
        request: REQUEST,
        operation: Operation::CreateTopic,
        status: 4041,
        ..Default::default()
    };
    out.case(
        "reply_header_error_status",
        vec![
            ("header_hex", hex(bytemuck::bytes_of(&denied))),
            (
                "expect",
                obj(vec![
                    ("command", n(Command::Reply as u8)),
                    ("size", n(denied.size)),
                    ("request", n(denied.request)),
                    ("operation", n(denied.operation as u8)),
                    ("status", n(denied.status)),
                ]),
            ),
            (
                "note",
                s("ReplyHeader with a nonzero status and no body (pre-commit denial)"),
            ),
        ],
    );

    let ok = ReplyHeader {
        command: Command::Reply,
        size: (bp::HEADER_SIZE + register_ok_body().len()) as u32,
        client: CLIENT_ID,
        request: 0,
        operation: Operation::Register,
        op: 9,
        commit: 9,
        status: 0,
        ..Default::default()
    };
    out.case(
        "reply_header_ok",
        vec![
            ("header_hex", hex(bytemuck::bytes_of(&ok))),
            (
                "expect",
                obj(vec![
                    ("command", n(Command::Reply as u8)),
                    ("size", n(ok.size)),
                    ("request", n(ok.request)),
                    ("operation", n(ok.operation as u8)),
                    ("status", n(ok.status)),
                ]),
            ),
            ("note", s("ReplyHeader of a successful Register reply")),
        ],
    );
}

/// Result sections. The crate READS them (`result_code`, `result_section_len`) but has no
/// encoder; the server writes them. So the bytes below are test inputs built here and the
/// verdict is the crate's.
fn register_ok_body() -> Vec<u8> {
    let login = LoginRegisterResponse {
        user_id: 1,
        session: 5,
        server_protocol_version: IGGY_PROTOCOL_VERSION,
        server_version: name("0.11.0"),
    }
    .to_bytes();
    let mut ok = 0u32.to_le_bytes().to_vec(); // result section: count 0
    ok.extend_from_slice(&login);
    ok
}

fn result_section_cases(out: &mut Out) {
    let ok = register_ok_body();
    let mut rejected = 1u32.to_le_bytes().to_vec();
    rejected.extend_from_slice(&0u32.to_le_bytes()); // index
    rejected.extend_from_slice(&57u32.to_le_bytes()); // result: TransientNotCommitted
    let truncated = 1u32.to_le_bytes().to_vec();
    // Shapes no server writes (ApplyReply::write_reply_body emits count 0 + payload or exactly
    // one {0, code != 0} entry), to show how each side reads them.
    let mut entry_code_zero = 1u32.to_le_bytes().to_vec();
    entry_code_zero.extend_from_slice(&[0; 8]);
    let mut count_two_one_entry = 2u32.to_le_bytes().to_vec();
    count_two_one_entry.extend_from_slice(&0u32.to_le_bytes());
    count_two_one_entry.extend_from_slice(&4041u32.to_le_bytes());
    let mut items = Vec::new();
    for (label, operation, body) in [
        ("register_ok", Operation::Register, ok),
        ("create_topic_rejected", Operation::CreateTopic, rejected),
        (
            "store_offset_truncated",
            Operation::StoreConsumerOffset,
            truncated,
        ),
        (
            "entry_with_code_zero",
            Operation::CreateStream,
            entry_code_zero,
        ),
        (
            "count_two_one_entry",
            Operation::CreateTopic,
            count_two_one_entry,
        ),
    ] {
        let code = result_code(&body);
        let len = result_section_len(&body);
        items.push(obj(vec![
            ("label", s(label)),
            ("operation", n(operation as u8)),
            ("body_hex", hex(&body)),
            ("result_code", code.map_or(J::Null, |c| n(c))),
            ("result_section_len", len.map_or(J::Null, |l| n(l as u64))),
        ]));
    }
    out.case(
        "result_sections",
        vec![
            ("items", J::Arr(items)),
            ("note", s("result_code: Some(0) = success, Some(c) = error c, None = corrupt; result_section_len: where the payload starts")),
        ],
    );
}

fn tables(out: &mut Out) {
    let mut ops = Vec::new();
    for code in 0..=u8::MAX {
        let Ok(op) = bytemuck::checked::try_cast::<u8, Operation>(code) else {
            continue;
        };
        ops.push(obj(vec![
            ("value", n(code)),
            ("name", s(format!("{op:?}"))),
            ("is_result_framed", J::Bool(op.is_result_framed())),
            ("is_partition", J::Bool(op.is_partition())),
            (
                "command_code",
                op.to_command_code().map_or(J::Null, |c| n(c)),
            ),
        ]));
    }
    out.case(
        "operations",
        vec![
            ("items", J::Arr(ops)),
            ("note", s("every Operation discriminant the crate defines; Register is result-framed when its body is non-empty (an SDK rule, not in the crate's is_result_framed)")),
        ],
    );

    let commands = bp::dispatch::COMMAND_TABLE
        .iter()
        .map(|m| {
            obj(vec![
                ("code", n(m.code)),
                ("name", s(m.name)),
                ("operation", m.operation.map_or(J::Null, |o| n(o as u8))),
                ("sdk_operation", n(sdk_operation_for_code(m.code) as u8)),
            ])
        })
        .collect();
    out.case(
        "commands",
        vec![
            ("items", J::Arr(commands)),
            ("note", s("the crate's COMMAND_TABLE; sdk_operation applies the SDK's Register/Logout overrides")),
        ],
    );

    let mut reasons = Vec::new();
    for code in 0..=u8::MAX {
        let Ok(r) = bytemuck::checked::try_cast::<u8, EvictionReason>(code) else {
            continue;
        };
        reasons.push(obj(vec![("value", n(code)), ("name", s(format!("{r:?}")))]));
    }
    out.case("eviction_reasons", vec![("items", J::Arr(reasons))]);

    let compat = |v: u32| J::Bool(bp::version::is_protocol_compatible(v));
    out.case(
        "protocol_window",
        vec![
            ("version", n(IGGY_PROTOCOL_VERSION)),
            ("version_min", n(IGGY_PROTOCOL_VERSION_MIN)),
            ("compatible_11264", compat(11264)),
            ("note", s("the crate's IGGY_PROTOCOL_VERSION{,_MIN}: a client is accepted when min <= v and v's major.minor <= the server's")),
        ],
    );
}

pub fn main(profile: &Profile) {
    let mut out = Out { cases: Vec::new() };
    login_cases(&mut out);
    create_topic_case(&mut out, profile);
    let (blob, origin) = send_messages_case(&mut out);
    poll_cases(&mut out, &blob, origin);
    offset_cases(&mut out);
    other_requests(&mut out);
    send_reply_cases(&mut out);
    header_cases(&mut out);
    result_section_cases(&mut out);
    tables(&mut out);

    let doc = J::Obj(vec![
        ("generator".to_string(), s("tools/iggy-golden")),
        ("profile".to_string(), s(profile.name)),
        ("crate".to_string(), s("iggy_binary_protocol")),
        ("crate_version".to_string(), s(profile.crate_version)),
        ("protocol_version".to_string(), n(IGGY_PROTOCOL_VERSION)),
        ("cases".to_string(), J::Obj(out.cases)),
    ]);
    let mut text = String::new();
    write_json(&doc, &mut text, 0);
    text.push('\n');
    match std::env::args().nth(1) {
        Some(path) => std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {path}: {e}")),
        None => print!("{text}"),
    }
}
