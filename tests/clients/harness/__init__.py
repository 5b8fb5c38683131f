"""Process harness for the client test tier: a real Kafka broker, iggy-server and the bridge.

Standard library only; pytest is used only for skips (see util.skip_loudly).
"""
