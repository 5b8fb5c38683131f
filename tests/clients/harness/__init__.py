"""Process harness for the client test tier: a real Kafka broker, iggy-server and the bridge.
The other Python tiers (tests/system, tests/reliability, tests/migration, bench) use it too:
bridge.py is their one bridge launcher and kafka_wire their one Kafka wire helper.

Standard library only; pytest is used only for skips (see util.skip_loudly).
"""
