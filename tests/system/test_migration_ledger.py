"""The migration rehearsal's checker (tests/migration/ledger.py): what it calls lost, which reads
twice it explains by a move of the group and which it does not, and the per-key order check."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "migration"))
import ledger as L  # noqa: E402

T = "orders"


def produced(led, n, partition=0, key="k"):
    for i in range(n):
        led.on_produced(L.Produced(f"r{i}", "kafka", T, partition, i, key, i))


def read(led, stage, offsets, group="g", partition=0, key="k"):
    for o in offsets:
        led.on_consumed(L.Consumed(f"r{o}", group, stage, T, partition, o, key, o))


def report(led):
    return led.report({"g": {T}})["groups"]["g"]


def test_nothing_lost_and_no_rereads_when_the_group_resumes_at_its_commit():
    led = L.Ledger()
    produced(led, 10)
    read(led, "kafka", range(6))
    led.on_handover(L.Handover("g", "kafka", "bridge", {(T, 0): 6}, {(T, 0): 6}))
    read(led, "bridge", range(6, 10))
    r = report(led)
    assert (r["expected"], r["lost"], r["duplicates"], r["duplicate_bound"], r["order_violations"]) == (10, 0, 0, 0, 0)
    assert r["read_by_stage"] == {"kafka": 6, "bridge": 4}


def test_a_record_never_read_is_lost():
    led = L.Ledger()
    produced(led, 5)
    read(led, "kafka", [0, 1, 3, 4])
    r = report(led)
    assert r["lost"] == 1 and r["lost_examples"] == ["r2"]


def test_rereads_before_the_commit_are_translation_after_it_uncommitted_and_bounded():
    led = L.Ledger()
    produced(led, 10)
    read(led, "kafka", range(8))  # committed 6, read 6 and 7 after the last commit
    led.on_handover(L.Handover("g", "kafka", "bridge", {(T, 0): 6}, {(T, 0): 4}))  # resumed at 4
    read(led, "bridge", range(4, 10))
    r = report(led)
    assert (r["duplicates_translation"], r["duplicates_uncommitted"], r["duplicates_unexplained"]) == (2, 2, 0)
    assert r["duplicate_bound"] == 4 and r["lost"] == 0 and r["order_violations"] == 0


def test_a_reread_no_move_explains_is_unexplained():
    led = L.Ledger()
    produced(led, 4)
    read(led, "kafka", [0, 1, 2, 1, 3])  # the same stage returned record 1 twice
    r = report(led)
    assert r["duplicates_unexplained"] == 1 and "r1 read on kafka" in r["unexplained_examples"][0]
    # Before the position a move resumed from: not explained by it either.
    led2 = L.Ledger()
    produced(led2, 6)
    read(led2, "kafka", range(4))
    led2.on_handover(L.Handover("g", "kafka", "bridge", {(T, 0): 4}, {(T, 0): 3}))
    read(led2, "bridge", [1, 3, 4, 5])
    r2 = report(led2)
    assert (r2["duplicates_translation"], r2["duplicates_unexplained"]) == (1, 1)


def test_a_key_read_out_of_its_production_order_is_counted_once_per_inversion():
    led = L.Ledger()
    produced(led, 4)
    read(led, "kafka", [0, 2, 1, 3])
    assert report(led)["order_violations"] == 1


def test_records_of_other_topics_and_groups_do_not_count():
    led = L.Ledger()
    produced(led, 3)
    led.on_produced(L.Produced("x", "kafka", "payments", 0, 0, "k", 0))
    read(led, "kafka", range(3))
    read(led, "kafka", range(3), group="other")
    r = report(led)
    assert (r["expected"], r["read"], r["lost"], r["duplicates"]) == (3, 3, 0, 0)
    # Read but never acknowledged (a delivery report lost to a timeout): counted apart, not lost.
    led.on_consumed(L.Consumed("ghost", "g", "kafka", T, 0, 9, "k", 9))
    assert report(led)["unacknowledged_read"] == 1
