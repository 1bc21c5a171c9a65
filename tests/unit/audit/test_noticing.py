import pytest

from chaos.audit.noticing import CONNECTION, DEADLINE, EXITED, HEARTBEATS, how_noticed
from chaos.events import ErrorEvent, ExitEvent

UNAVAILABLE = "tensorflow.python.framework.errors_impl.UnavailableError"


@pytest.mark.parametrize(
    "message, way",
    [
        ("Collective ops is aborted by: Socket closed", CONNECTION),
        ("Collective ops is aborted by: Connection reset by peer", CONNECTION),
        ("failed to connect to all addresses", CONNECTION),
        (
            "Collective ops is aborted by: The following tasks are unhealthy (stopped sending heartbeats):\n"
            "/job:worker/replica:0/task:1",
            HEARTBEATS,
        ),
        ("Collective ops is aborted by: cluster check alive failed, /job:worker/replica:0/task:1 is down", HEARTBEATS),
        ("Collective ops is aborted by: Deadline Exceeded", DEADLINE),
        ("Failed to get status: DEADLINE_EXCEEDED", DEADLINE),
    ],
)
def test_the_way_a_worker_noticed_comes_from_its_error(message, way):
    assert how_noticed(ErrorEvent(t=1.0, source="worker-0", error_class=UNAVAILABLE, message=message)) == way


def test_an_exit_is_an_exit_and_an_unknown_error_is_told_by_its_class():
    assert how_noticed(ExitEvent(t=1.0, source="worker-1", exit_code=137)) == EXITED
    error = ErrorEvent(
        t=1.0,
        source="worker-0",
        error_class="tensorflow.python.framework.errors_impl.InternalError",
        message="something else",
    )
    assert how_noticed(error) == "InternalError"
