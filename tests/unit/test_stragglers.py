"""Who a hung bring-up waits for, read from TF's coordination-service log lines."""

from chaos.events import LogLine
from chaos.stragglers import StragglerWatch, describe_stragglers, waiting_for


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


def test_a_task_that_connected_after_the_report_is_not_missing():
    # TF 2.20's routine start-up, from a run's chief log: the straggler comes a fraction of a second later.
    one = ("/job:worker/replica:0/task:1 has connected to coordination service. Incarnation: 9487491635142606774",)
    assert waiting_for(lines("worker-0", *CHIEF_WAITING, *one))[1] == ["worker-2"]
    everyone = ("I coordination_service.cc:506] Waiting for 0/3 tasks to connect.",)
    assert waiting_for(lines("worker-0", *CHIEF_WAITING, *everyone)) is None
    # ... and a later report of its own still counts
    again = ("Example stragglers:", "/job:worker/replica:0/task:2")
    assert waiting_for(lines("worker-0", *CHIEF_WAITING, *everyone, *again))[1] == ["worker-2"]


def test_a_task_that_came_only_after_a_long_wait_was_missing():
    # listed at t=101, connected at t=130: the wait (a blocked port) was the symptom
    waited = lines("worker-0", *CHIEF_WAITING) + lines(
        "worker-0", "I coordination_service.cc:506] Waiting for 0/3 tasks to connect.", t0=130.0
    )
    assert waiting_for(waited)[1] == ["worker-1", "worker-2"]
    # without times nothing clears a report
    untimed = lines("worker-0", *CHIEF_WAITING, "Waiting for 0/3 tasks to connect.", t0=0.0)
    assert waiting_for([LogLine(t=0.0, source=e.source, text=e.text) for e in untimed])[1] == ["worker-1", "worker-2"]


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
    said = [
        watch.feed(line)
        for line in lines("worker-1", "The following tasks are unhealthy:", "/job:worker/replica:0/task:0")
    ]
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

    server = LogLine(
        t=1.0,
        source="worker-1",
        text="I0000 grpc_server_lib.cc:466] Started server with target: grpc://localhost:23601",
    )
    assert why_missing("worker-1", [server]) == (
        "running, its server at grpc://localhost:23601: it has not reached the chief",
        server,
    )
    gone = ExitEvent(t=2.0, source="worker-1", exit_code=1)
    assert why_missing("worker-1", [server, gone]) == ("it exited 1", gone)
    assert why_missing("worker-2", [server])[0] == "nothing from it: listed in the cluster, but no such worker ran"
    chief = [
        LogLine(t=0.5, source="worker-0", text="Example stragglers:"),
        LogLine(t=0.5, source="worker-0", text="/job:worker/replica:0/task:1"),
    ]
    said, proof = describe_stragglers(chief, [*chief, server])
    assert said == (
        "worker-0's coordination service was still waiting for worker-1 "
        "(running, its server at grpc://localhost:23601: it has not reached the chief)"
    )
    assert server in proof


# --- what the proxy saw of a missing task's links -------------------------------


def _proxy(t: float, text: str) -> LogLine:
    return LogLine(t=t, source="proxy", text=f"2026-11-25 12:00:00,000 chaos.proxy {text}")


def _listening(t: float, i: int) -> LogLine:
    return _proxy(t, f"proxy worker-{i}: listening on 0.0.0.0:2360{i}, upstream worker-{i}:2360{i}")


def _client(t: float, i: int, host: str) -> LogLine:
    return _proxy(
        t, f"proxy worker-{i}: first client from {host} accepted (port 40000; later ones from it are not logged)"
    )


def _at(task: str, address: str):
    from chaos.events import RUNNER, AddressEvent

    return AddressEvent(t=1.5, source=RUNNER, task=task, address=address)


REFUSED_1 = (
    "proxy worker-1: cannot reach upstream worker-1:23601: [Errno 111] Connect call failed ('172.18.0.4', 23601)"
)


def test_after_a_restart_the_previous_containers_exit_is_not_why_a_task_is_missing():
    from chaos.events import ExitEvent, RestartEvent
    from chaos.stragglers import why_missing

    gone = ExitEvent(t=2.0, source="worker-0", exit_code=1)
    back = RestartEvent(t=3.0, source="worker-0", reason="worker-0, worker-1 failed")
    assert why_missing("worker-0", [gone, back]) == ("restarted, nothing from it since", None)
    server = LogLine(
        t=4.0, source="worker-0", text="I0000 grpc_server_lib.cc:466] Started server with target: grpc://proxy:23600"
    )
    assert why_missing("worker-0", [gone, back, server])[0].startswith("running, its server at grpc://proxy:23600")
    again = ExitEvent(t=5.0, source="worker-0", exit_code=137)
    assert why_missing("worker-0", [gone, back, server, again]) == ("it exited 137", again)


def test_a_task_that_reached_no_peers_link_and_whose_link_nobody_reached_is_named():
    from chaos.proxy_links import describe_links

    events = [
        _listening(1.0, 0),
        _listening(1.0, 1),
        _at("worker-0", "172.18.0.3"),
        _at("worker-1", "172.18.0.4"),
        _client(5.0, 0, "172.18.0.9"),
    ]  # someone else reached the chief's link, not worker-1
    said, proof = describe_links("worker-1", events, now=61.0)
    assert said == (
        "it reached no peer's proxy link (nothing from 172.18.0.4 on worker-0); "
        "no peer reached its own link worker-1 (listening for 60 s)"
    )
    assert events[0] in proof and events[1] in proof


def test_a_task_that_reached_the_chiefs_link_says_so_with_the_line():
    from chaos.proxy_links import describe_links

    events = [
        _listening(1.0, 0),
        _listening(1.0, 1),
        _at("worker-1", "172.18.0.4"),
        _client(5.0, 0, "172.18.0.4"),
        _client(6.0, 1, "172.18.0.3"),
    ]
    said, proof = describe_links("worker-1", events, now=20.0)
    assert said == "it reached the proxy link of worker-0"
    assert proof == [events[3]]


def test_refusals_on_its_own_link_are_counted_with_the_last_reason_and_when():
    from chaos.proxy_links import describe_links

    events = [_listening(1.0, 1), _proxy(3.0, REFUSED_1), _proxy(10.0, REFUSED_1)]
    said, proof = describe_links("worker-1", events, now=12.0)
    assert said == (
        "its own link could not reach worker-1:23601 (2 times, the last 2 s before: "
        "[Errno 111] Connect call failed ('172.18.0.4', 23601))"
    )
    assert proof == [events[-1]]


def test_a_new_listener_forgets_the_links_earlier_life_and_later_lines_are_not_seen():
    from chaos.proxy_links import describe_links

    events = [
        _listening(1.0, 1),
        _proxy(2.0, REFUSED_1),
        _listening(20.0, 1),  # re-enabled after a partition
        _client(40.0, 1, "172.18.0.3"),
    ]
    assert (
        describe_links("worker-1", events, now=30.0)[0] == "no peer reached its own link worker-1 (listening for 10 s)"
    )
    assert describe_links("worker-1", events, now=50.0) is None  # reached, and nothing else to say
    # A proxy that never spoke of the task, or lines of another source, say nothing.
    assert describe_links("worker-2", events, now=50.0) is None
    assert describe_links("worker-1", [LogLine(t=1.0, source="worker-0", text=REFUSED_1)], now=5.0) is None


def test_the_missing_task_description_adds_what_the_proxy_saw():
    from chaos.stragglers import describe_stragglers

    chief = [
        LogLine(t=61.0, source="worker-0", text="Example stragglers:"),
        LogLine(t=61.0, source="worker-0", text="/job:worker/replica:0/task:1"),
    ]
    server = LogLine(t=2.0, source="worker-1", text="Started server with target: grpc://localhost:23601")
    history = [_listening(1.0, 0), _listening(1.0, 1), _at("worker-1", "172.18.0.4"), server, *chief]
    said, proof = describe_stragglers(chief, [server, *chief], history)
    assert said == (
        "worker-0's coordination service was still waiting for worker-1 (running, its server at "
        "grpc://localhost:23601: it has not reached the chief; proxy: it reached no peer's proxy link "
        "(nothing from 172.18.0.4 on worker-0); no peer reached its own link worker-1 (listening for 60 s))"
    )
    assert history[0] in proof and server in proof


def test_the_progress_line_says_who_is_missing_and_why_and_forgets_the_previous_run():
    import io

    from chaos.live.progress import ProgressPrinter

    out = io.StringIO()
    show = ProgressPrinter(out)
    show.expect("first", 100)
    stragglers = [
        LogLine(t=61.0, source="worker-0", text="Example stragglers:"),
        LogLine(t=61.0, source="worker-0", text="/job:worker/replica:0/task:1"),
    ]
    for e in [_listening(1.0, 1), _proxy(3.0, REFUSED_1), *stragglers]:
        show.event(e)
    assert (
        "worker-0: coordination service waiting for worker-1 (not connected yet: nothing from it yet; proxy: "
        "its own link could not reach worker-1:23601 (1 time, the last 58 s before: [Errno 111] Connect call "
        "failed ('172.18.0.4', 23601)))"
    ) in out.getvalue()
    show.expect("second", 100)
    out.truncate(0)
    for e in stragglers:
        show.event(e)
    assert "not connected yet: nothing from it yet)" in out.getvalue()
