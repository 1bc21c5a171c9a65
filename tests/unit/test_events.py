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


def test_a_line_template_prints_what_the_event_would_for_every_kind_of_value():
    """The agent prints a custom loop's step events from a template: the line must be the event's own."""
    import math

    import numpy as np

    from chaos.events import LineTemplate

    varying = ("t", "epoch", "step", "loss", "local_loss", "loss_reported")
    template = LineTemplate(StepEvent, varying, source='worker-"3"')
    for loss in (0.5, 0.1 + 0.2, -0.0, 1e-300, 1.5e300, 12345678901234.5, math.nan, math.inf, -math.inf):
        for value in (loss, np.float64(loss)):  # a NumPy float is a float whose repr names NumPy
            fields = {"t": 1796490215.8572574, "epoch": 3, "step": 10**12, "loss": value, "local_loss": -value}
            fields["loss_reported"] = bool(value == value)
            assert template.line(fields) == StepEvent(source='worker-"3"', **fields).to_json()


def test_a_line_template_takes_fixed_fields_and_refuses_a_field_it_cannot_default():
    from chaos.events import LineTemplate

    template = LineTemplate(
        StepEvent, ("t", "step"), source="worker-0", weights_finite=True, replica_local_losses=[1.0]
    )
    assert (
        template.line({"t": 2.0, "step": 4})
        == StepEvent(t=2.0, source="worker-0", step=4, weights_finite=True, replica_local_losses=[1.0]).to_json()
    )
    try:
        LineTemplate(StepEvent, ("step",))
    except TypeError as error:
        assert "field t has no default" in str(error)
    else:
        raise AssertionError("a template without t was built")
