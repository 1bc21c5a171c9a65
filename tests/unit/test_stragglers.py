"""Who a hung bring-up waits for, read from TF's coordination-service log lines."""

from chaos.stragglers import StragglerWatch, describe_stragglers, waiting_for
from chaos.events import LogLine


def lines(source, *texts, t0=100.0):
    return [LogLine(t=t0 + i, source=source, text=text) for i, text in enumerate(texts)]


CHIEF_WAITING = (
    "I coordination_service.cc:506] Waiting for 1/3 tasks to connect.",
    "I coordination_service.cc:509] Example stragglers:",
    "/job:worker/replica:0/task:1",
    "/job:worker/replica:0/task:2",
    "I grpc_server_lib.cc:466] Started server with target: grpc://proxy:23600",
)


def test_the_missing_tasks_follow_the_stragglers_line():
    found = waiting_for(lines("worker-0", *CHIEF_WAITING))
    assert found is not None
    header, missing = found
    assert missing == ["worker-1", "worker-2"] and "Example stragglers" in header.text


def test_the_last_report_wins():
    later = ("Example stragglers:", "/job:worker/replica:0/task:2")
    assert waiting_for(lines("worker-0", *CHIEF_WAITING, *later))[1] == ["worker-2"]


def test_no_report_no_answer():
    assert waiting_for(lines("worker-0", "Started server with target: grpc://proxy:23600")) is None
    assert waiting_for(lines("worker-0", "Example stragglers:", "something else")) is None


def test_described_per_reporting_worker_with_proof():
    text, proof = describe_stragglers(lines("worker-0", *CHIEF_WAITING) + lines("worker-1", "nothing"))
    assert text == "worker-0's coordination service was still waiting for worker-1, worker-2"
    assert [p.source for p in proof] == ["worker-0"]


def test_the_live_watch_names_each_missing_task_as_it_is_logged():
    watch = StragglerWatch()
    said = [watch.feed(line) for line in lines("worker-0", *CHIEF_WAITING)]
    assert said == [None, None, "worker-1", "worker-2", None]


def test_the_live_watch_ignores_task_lines_outside_a_stragglers_list():
    # TF names tasks in errors too ("tasks are unhealthy"): not a "waiting for".
    watch = StragglerWatch()
    said = [watch.feed(line) for line in lines("worker-1", "The following tasks are unhealthy:", "/job:worker/replica:0/task:0")]
    assert said == [None, None]


def test_the_live_watch_keeps_each_worker_apart():
    watch = StragglerWatch()
    assert watch.feed(lines("worker-0", "Example stragglers:")[0]) is None
    assert watch.feed(lines("worker-1", "/job:worker/replica:0/task:1")[0]) is None
    assert watch.feed(lines("worker-0", "/job:worker/replica:0/task:1")[0]) == "worker-1"


# --- why a missing task is missing, from what the run shows -------------------------


def test_why_missing_says_never_started_exited_or_where_its_own_log_stopped():
    from chaos.events import ExitEvent
    from chaos.stragglers import describe_stragglers, why_missing

    server = LogLine(t=1.0, source="worker-1", text="I0000 grpc_server_lib.cc:466] Started server with target: grpc://localhost:23601")
    assert why_missing("worker-1", [server]) == ("running, its server at grpc://localhost:23601: it cannot reach the chief", server)
    gone = ExitEvent(t=2.0, source="worker-1", exit_code=1)
    assert why_missing("worker-1", [server, gone]) == ("it exited 1", gone)
    assert why_missing("worker-2", [server])[0] == "nothing from it: listed in the cluster, but no such worker ran"
    chief = [LogLine(t=0.5, source="worker-0", text="Example stragglers:"),
             LogLine(t=0.5, source="worker-0", text="/job:worker/replica:0/task:1")]
    said, proof = describe_stragglers(chief, [*chief, server])
    assert said == ("worker-0's coordination service was still waiting for worker-1 "
                    "(running, its server at grpc://localhost:23601: it cannot reach the chief)")
    assert server in proof
