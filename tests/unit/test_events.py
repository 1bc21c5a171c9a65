"""The event contract's wire form (chaos.events): what a worker prints is what the runner reads."""

from __future__ import annotations

import json

from chaos.events import EVENT_TYPES, CheckpointEvent, StartEvent, StepEvent, event_from_dict, parse_line


def test_a_step_event_prints_the_same_json_line_as_before_the_flat_to_dict():
    """The line a worker prints is the wire contract: key for key what dataclasses.asdict gave."""
    step = StepEvent(t=1.5, source="worker-1", epoch=2, step=7, loss=0.25, replica_batch_digests=["a", "b"])
    assert step.to_json() == (
        '{"batch_digest":"","dropout_mask":"","epoch":2,"event":"step","local_loss":0.0,"logged":false,'
        '"loss":0.25,"loss_reported":true,"replica_batch_digests":["a","b"],"replica_local_losses":[],'
        '"source":"worker-1","step":7,"t":1.5,"weights_digest":"","weights_finite":null}'
    )


def test_every_event_kind_reads_back_from_its_line_as_it_was():
    for cls in EVENT_TYPES.values():
        event = cls(t=3.0, source="worker-0")
        assert parse_line(event.to_json(), "worker-9") == event, cls.kind


def test_to_dict_copies_lists_and_dicts_so_a_reader_cannot_change_the_event():
    start = StartEvent(t=1.0, source="worker-0", fingerprint={"tf": "2.21"})
    saved = CheckpointEvent(t=1.0, source="worker-0", job_counters={"positives": 3})
    start.to_dict()["fingerprint"]["tf"] = "2.15"
    saved.to_dict()["job_counters"].clear()
    assert start.fingerprint == {"tf": "2.21"} and saved.job_counters == {"positives": 3}
    assert event_from_dict(json.loads(saved.to_json())) == saved
