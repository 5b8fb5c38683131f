"""franz-go's own consumer group test, TestGroupETL (pkg/kgo/group_test.go of the franz-go
version tests/clients/go pins, built by harness/franz_go_suite.py), against Kafka and the
bridge: a producer writes the records, then chained groups of consumers copy them from topic to
topic while members join and leave (each quits after a few polls and a new one takes its
place), and every record must arrive once in order per partition. Its subtests cover the
classic protocol (range, cooperative-sticky, cooperative-sticky with static members) and the
consumer protocol of KIP-848 (franz-go's ServerSideBalancer: range/848, sticky/848,
sticky/848/static), which skipped on the bridge before it served ConsumerGroupHeartbeat."""
from __future__ import annotations

import json
import time

from conftest import TIMINGS
from harness import util

KGO_GROUP_ETL = "^TestGroupETL$"
EXPECTED = {"TestGroupETL": "PASS", **{f"TestGroupETL/{n}": "PASS" for n in (
    "range", "cooperative-sticky", "range/848", "sticky/848", "cooperative-sticky/static", "sticky/848/static")}}
RECORDS = 20000
PARTITIONS = 3


def test_franz_go_own_group_etl_test(target):
    from harness import franz_go_suite

    t = time.monotonic()
    res = franz_go_suite.run(target.bootstrap, KGO_GROUP_ETL, f"kgo-group-etl-{target.name}.log", RECORDS, PARTITIONS)
    TIMINGS[f"kgo_group_etl_{target.name}_s"] = round(time.monotonic() - t, 1)
    (util.log_dir() / f"kgo-group-etl-{target.name}.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    assert res["rc"] == 0 and res["verdicts"] == EXPECTED, (
        f"franz-go TestGroupETL on {target.name}: exit {res['rc']}, {res['verdicts']}, log {res['log']}\n"
        f"{franz_go_suite.failures(res['log'])}")
