"""rescheduled: after the restart a lost node's worker runs on another node, as the
runner's address events say."""

from timeline_builder import TimelineBuilder

from chaos.checks import Rescheduled, Status, run_check
from chaos.events import RUNNER, AddressEvent


def placed(b, **nodes):
    for task, node in nodes.items():
        b._add(AddressEvent(t=b.t, source=RUNNER, task=task.replace("_", "-"), address="10.0.0.1", node=node))
    return b


def node_lost(after_worker_1: str, nodes_named: bool = True):
    b = TimelineBuilder().start()
    placed(b, worker_0="node-2" if nodes_named else "", worker_1="node-3" if nodes_named else "")
    b.steps(1, 15).inject("node_lost").exit(0, 1).exit(1, 137).restart().wait(3)
    placed(b, worker_0="node-2" if nodes_named else "", worker_1=after_worker_1 if nodes_named else "")
    return b.restored(0, 1, 10).restored(1, 1, 10).steps(11, 30).build()


def test_a_worker_on_another_node_after_the_restart_passes_and_names_both_nodes():
    verdict = run_check(Rescheduled(workers=[1]), node_lost("node-1"))
    assert verdict.status is Status.PASS, verdict.reason
    assert verdict.reason == "worker-1 node-3 -> node-1" and len(verdict.evidence) == 2


def test_a_worker_back_on_its_node_fails_and_says_so():
    verdict = run_check(Rescheduled(workers=[1]), node_lost("node-3"))
    assert (
        verdict.status is Status.FAIL
        and verdict.reason == "worker-1 came back on the same node (worker-1 node-3 -> node-3)"
    )
    assert run_check(Rescheduled(workers=[0, 1]), node_lost("node-1")).status is Status.FAIL  # worker-0 stayed


def test_one_host_names_no_node_so_it_cannot_be_judged():
    verdict = run_check(Rescheduled(workers=[1]), node_lost("", nodes_named=False))
    assert verdict.status is Status.UNKNOWN and "names a node" in verdict.reason


def test_without_a_restart_it_cannot_be_judged():
    b = placed(TimelineBuilder().start(), worker_0="node-2", worker_1="node-3").steps(1, 30)
    assert run_check(Rescheduled(workers=[1]), b.build()).status is Status.UNKNOWN
