"""The containerized MWMS cluster: identical weights on every worker, repeatable,
and an interrupted run resumed from the shared backup ends where an
uninterrupted run ends."""

from __future__ import annotations

import pytest

from chaos.backends.docker.backend import DockerBackend
from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.spec import Deployment
from chaos.eventlog import EventLog
from chaos.events import CheckpointEvent, DoneEvent, ExitEvent, RestoredEvent, StepEvent
from chaos.runner.training import run_training
from chaos.worker.settings import WorkerSettings

# Beside the scenarios under --chaos-scenarios (chaos.pytest_plugin): judged on digests, not on time.
pytestmark = [pytest.mark.integration, pytest.mark.chaos_beside_scenarios]

SETTINGS = WorkerSettings(epochs=5, steps_per_epoch=20, seed=42)


def spec(images, settings=SETTINGS, workers=2) -> Deployment:
    return Deployment(images=(images["worker"],) * workers, proxy_image=images["proxy"], settings=settings)


@pytest.fixture(scope="module")
def reference(images):
    """One uninterrupted run: the digest every other run is compared with."""
    return run_training(spec(images), DockerBackend())


def test_fault_free_run_gives_identical_weights_on_every_worker(reference):
    assert set(reference.digests) == {"worker-0", "worker-1"}
    assert reference.identical, reference.digests
    steps = [e for e in reference.events if isinstance(e, StepEvent)]
    assert {e.step for e in steps} == set(range(1, SETTINGS.total_steps + 1))
    # Each worker trained on its own shard: batch digests differ between workers.
    by_worker = {w: {e.batch_digest for e in steps if e.source == w} for w in reference.digests}
    assert not by_worker["worker-0"] & by_worker["worker-1"]


def test_second_run_with_same_seed_gives_same_digest(images, reference):
    again = run_training(spec(images), DockerBackend())
    assert again.digests == reference.digests


def test_another_seed_gives_another_digest(images, reference):
    # Guards the two tests above against a digest that ignores the weights.
    other = run_training(spec(images, WorkerSettings(epochs=5, steps_per_epoch=20, seed=7)), DockerBackend())
    assert other.identical
    assert set(other.digests.values()).isdisjoint(reference.digests.values())


def test_interrupted_and_resumed_run_ends_with_the_uninterrupted_digest(images, reference):
    events = EventLog()
    with DockerCluster(spec(images), events=events) as cluster:
        cluster.start_workers()
        # Both workers listen on the port of their own TF_CONFIG entry (proxy:P_i).
        assert events.wait_for(lambda evs: any(isinstance(e, StepEvent) for e in evs), 90)
        for i in range(2):
            listening = cluster.container(i).exec_run(["ss", "-ltnH"]).output.decode()
            assert f":{cluster.topology.port(i)} " in listening, listening

        assert events.wait_for(lambda evs: any(isinstance(e, CheckpointEvent) and e.step >= 40 for e in evs), 120), (
            "no checkpoint at step >= 40"
        )
        for i in range(2):
            cluster.signal(i, "SIGKILL")
        assert events.wait_for(lambda evs: sum(isinstance(e, ExitEvent) for e in evs) >= 2, 30)
        killed_at = max(e.step for e in events.snapshot() if isinstance(e, StepEvent))
        assert killed_at < SETTINGS.total_steps, "training finished before the kill"

        cluster.restart([0, 1], reason="test: resume after kill")

        # (finished() would see the kill's exits at once: wait for both done events.)
        def both_done(evs):
            return len({e.source for e in evs if isinstance(e, DoneEvent)}) == 2

        assert events.wait_for(both_done, 180), "the restarted workers did not finish"
        history = events.snapshot()

    restored = [e for e in history if isinstance(e, RestoredEvent)]
    assert {e.source for e in restored} == {"worker-0", "worker-1"}
    assert len({(e.checkpoint, e.step, e.weights_digest) for e in restored}) == 1, restored
    assert 40 <= restored[0].step <= killed_at
    done = [e for e in history if isinstance(e, DoneEvent)]
    assert {e.weights_digest for e in done} == set(reference.digests.values())


def test_silent_fault_checks_fail_on_a_real_healthy_cluster(reference):
    """identical_batches and environment_skew must not pass on healthy training:
    judged over the whole fault-free run (a window opened before it started)."""
    from chaos.checks import EnvironmentSkew, IdenticalBatches, NoError, run_check
    from chaos.checks.verdict import Status
    from chaos.events import RUNNER, InjectEvent
    from chaos.timeline import RunInfo, Timeline

    start = min(e.t for e in reference.events) - 1
    window = InjectEvent(t=start, source=RUNNER, fault="none", target="cluster")
    info = RunInfo(num_workers=2, steps_per_epoch=20, epochs=5, save_interval_steps=20)
    timeline = Timeline.from_events(info, [window, *reference.events])
    identical = run_check(IdenticalBatches(), timeline)
    assert identical.status == Status.FAIL and "different data" in identical.reason, identical.reason
    skew = run_check(EnvironmentSkew(workers=[1]), timeline)
    assert skew.status == Status.FAIL and "same environment" in skew.reason, skew.reason
    assert run_check(NoError(), timeline).status == Status.PASS
