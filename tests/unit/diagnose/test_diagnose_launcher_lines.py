"""Issue 40: the root worker from what a launcher or a transport says of one task, in one stream
that names no worker (chaos/diagnose/attribution.py): YARN's container exit statuses as TonY's
ApplicationMaster logs them (-100 the root, -105 the master's teardown), Open MPI's lost remote
daemon (its node is the worker), one rank's NCCL error return chain among the others' plain lines;
and a TF 1.x session's wait for a worker alone, which is no confident blocked port. Synthetic logs
in the formats these tools print."""

from __future__ import annotations

import pytest

from chaos.diagnose.attribution import CASCADE, ROOT, TEARDOWN, attribute, blamed, first_failure
from chaos.diagnose.logs import split_dump
from chaos.diagnose.match import confident, rank, tied_first
from chaos.diagnose.observe import observe_all
from chaos.diagnose.shapes import shapes_in
from chaos.workload.grammar import YARN_EXIT_STATUS, ExitLine, exit_line


def first(text: str, name: str = "job"):
    return first_failure(attribute(observe_all(split_dump(text, f"{name}.log", name))))


# --- YARN's container exit statuses (TonY's ApplicationMaster) ------------------------------------

AM = "2020-09-17 12:{m}:{s} INFO  ApplicationMaster:1157 - Container container_e54_1_01_0000{c} for task {task} finished with exitStatus {code}.\n"
SESSION = "2020-09-17 12:{m}:{s} INFO  TonySession:252 - Job {task} exited with {code}\n"


def tony(lost: str | None, others: list[str], lost_code: int = -100) -> str:
    text = "2020-09-17 12:40:21 INFO  Utils:557 - Completed 0 out of 4 tracked tasks.\n"
    if lost is not None:
        text += AM.format(m=41, s=32, c=11, task=lost, code=lost_code)
        text += SESSION.format(m=41, s=32, task=lost, code=lost_code)
    for i, task in enumerate(others):
        text += AM.format(m=43, s=25, c=20 + i, task=task, code=-105)
    return text


def test_yarn_statuses_of_a_task_are_exits_with_their_meaning():
    line = "INFO ApplicationMaster:1157 - Container container_e54_1_01_000011 for task worker:5 finished with exitStatus -100."
    assert exit_line(line) == ExitLine(-100, False, YARN_EXIT_STATUS[-100])
    assert exit_line("INFO TonySession:252 - Job chief:0 exited with -105") == ExitLine(
        -105, False, "stopped by its application master"
    )
    assert exit_line("INFO TonySession:252 - Job worker:1 exited with 1") == ExitLine(1, False, "")
    # YARN's own line names the container, not the task: no worker's exit
    assert exit_line("ContainerID = container_e54_1_01_000011, state = COMPLETE, exitStatus = -100") is None


def test_the_task_yarn_took_away_is_the_root_and_the_masters_stops_are_teardown():
    a = first(tony("worker:2", ["worker:0", "worker:1", "chief:0"]))
    assert a.root is not None and a.root_worker == "worker-2" and not a.sure, a
    assert a.root.role == ROOT and "-100" in a.root.what and "lost with its node" in a.root.what
    assert len(a.teardown) == 3 and all(t.role == TEARDOWN and "-105" in t.what for t in a.teardown)
    assert "application master" in a.teardown[0].why


@pytest.mark.parametrize("code", [-102, -104, -106])
def test_a_container_yarn_preempted_or_killed_is_the_root_too(code):
    a = first(tony("worker:3", ["worker:0", "worker:1"], lost_code=code))
    assert a.root_worker == "worker-3" and YARN_EXIT_STATUS[code] in a.root.what
    assert {t.what for t in a.teardown} == {f"exit status -105 ({YARN_EXIT_STATUS[-105]})"}


def test_a_plain_failed_exit_says_nothing_of_why_but_the_masters_stops_stay_teardown():
    a = first(tony("worker:3", ["worker:0", "worker:1"], lost_code=1))
    assert a.root is None and len(a.teardown) == 2


def test_only_the_masters_stops_name_no_root():
    a = first(tony(None, ["worker:0", "worker:1", "chief:0"]))
    assert a.root is None and a.root_worker is None
    assert len(a.teardown) == 3


# --- Open MPI's lost remote daemon --------------------------------------------------------------

ORTE = """ORTE has lost communication with a remote daemon.

  HNP daemon   : [[43015,0],0] on node bert-1572827779-launcher-gdqv7
  Remote daemon: [[43015,0],20] on node {node}

This is usually due to either a failure of the TCP network
connection to the node, or possibly an internal failure of
the daemon itself. We cannot recover from this failure, and
therefore will terminate the job.
"""


@pytest.mark.parametrize(
    "node, root", [("bert-1572827779-worker-19", "worker-19"), ("anode127", "anode127"), ("gpu-worker-3", "worker-3")]
)
def test_a_lost_remote_daemon_names_its_node_as_the_likely_root(node, root):
    a = first(ORTE.format(node=node))
    assert a.root is None and a.root_worker == root and not a.sure, a
    assert [c.role for c in a.cascade] == [CASCADE] and "remote daemon" in a.cascade[0].what


def test_prrte_says_the_same_in_its_own_words():
    text = ORTE.replace("ORTE has", "PRTE has").replace("[[43015,0],20] on node", "[prterun-master-0-34@0,1] on node")
    assert first(text.format(node="job-worker-2")).root_worker == "worker-2"


def test_the_hnp_is_not_blamed():
    assert blamed("Remote daemon: [[1,0],3] on node job-worker-7", None) == ("worker-7",)
    assert blamed("HNP daemon   : [[1,0],0] on node job-launcher-x", None) == ()


# --- one rank's NCCL error return chain ------------------------------------------------------------

CHAIN = (
    "[1,3]<stdout>:host-b:1259:1489 [1] NCCL INFO include/net.h:29 -> 2\n"
    "[1,3]<stdout>:host-b:1259:1489 [1] NCCL INFO transport/net.cc:360 -> 2\n"
    "[1,3]<stdout>:host-b:1259:1489 [1] NCCL INFO init.cc:950 -> 2\n"
)
RINGS = (
    "[1,0]<stdout>:host-a:1248:1476 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0\n"
    "[1,2]<stdout>:host-b:1258:1486 [0] NCCL INFO Ring 00 : 2[5] -> 3[6] via P2P/IPC\n"
    "[1,1]<stdout>:host-a:1249:1479 [1] NCCL INFO Setting affinity for GPU 1 to 03ff,f0003fff\n"
)


def test_a_rings_ranks_are_no_error_chain():
    assert "nccl_error_chain" in shapes_in(CHAIN.splitlines()[0])
    assert "nccl_error_chain" in shapes_in("host:376586:377442 [3] NCCL INFO ib_plugin.c:174 -> 2")
    assert not any("nccl_error_chain" in shapes_in(line) for line in RINGS.splitlines())


@pytest.mark.parametrize("text", [RINGS + CHAIN, CHAIN + RINGS])
def test_the_rank_whose_lines_carry_the_error_chain_is_the_root(text):
    a = first(text)
    assert a.root is not None and a.root_worker == "rank 3" and not a.sure, a
    assert len(a.cascade) == 2  # the rest of its own chain: no ring line is an error


def test_a_warning_that_says_what_failed_outranks_an_earlier_bare_return_code():
    # nccl-224's shape: rank 0's init returns the error first; rank 4 says what failed, then its chain
    text = (
        "[1,0]<stdout>:gpu6:1407:1595 [0] NCCL INFO init.cu:915 -> 2\n"
        "[1,4]<stdout>:gpu7:4105:4372 [0] include/socket.h:318 NCCL WARN Net : Socket creation failed\n"
        "[1,4]<stdout>:gpu7:4105:4372 [0] NCCL INFO transport/net_ib.cu:407 -> 2\n"
    )
    a = first(text)
    assert a.root_worker == "rank 4" and "WARN" in a.root.what, a
    assert any("passed up the stack" in c.why for c in a.cascade)


# --- a TF 1.x session's wait for a worker alone -----------------------------------------------------

WAIT = (
    "2018-01-10 10:00:{s}.000000: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still "
    "waiting for response from worker: /job:worker/replica:0/task:0\n"
)


def test_a_wait_for_a_worker_alone_is_no_confident_blocked_port(catalogue):
    workers = observe_all(split_dump(WAIT.format(s=10) + WAIT.format(s=20), "master.log", "master"))
    ranked = rank(catalogue, workers)
    assert not confident(ranked)
    families = {m.entry.family for m in tied_first(ranked)}
    assert {"port_blocked", "hang"} <= families, [(m.entry.name, m.score) for m in ranked[:4]]
