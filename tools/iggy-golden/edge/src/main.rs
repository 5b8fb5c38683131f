//! Golden wire vectors from iggy_binary_protocol =0.11.0-edge.4 (the server the bridge's integration tier runs).
#[path = "../../src/golden.rs"]
mod golden;

const PROFILE: golden::Profile = golden::Profile {
    name: "edge",
    crate_version: "0.11.0-edge.4", // the = pin in Cargo.toml
    topic_durability: golden::TopicDurability::EnforceFsync,
    // iggy_common 0.11.0-edge.4, types/options/mod.rs, topic_option_keys (data, not linked)
    topic_option_keys: &[
        "compression_algorithm",
        "message_expiry",
        "max_topic_size",
        "segment_size",
        "enforce_fsync",
        "messages_required_to_save",
        "size_of_messages_required_to_save",
        "preallocate_segments",
    ],
};

fn main() {
    golden::main(&PROFILE);
}
