"""docker_api.pause: the cgroup freezer that does not settle at once under load
(``OCI runtime pause failed: unable to freeze``) is tried again; any other
error, or a freezer that never settles, is raised as it came."""

from __future__ import annotations

import pytest
from docker.errors import APIError

from chaos.backends.docker import api as docker_api

UNSETTLED = "Cannot pause container abc: OCI runtime pause failed: unable to freeze: unknown"


class Container:
    def __init__(self, errors):
        self.errors = list(errors)
        self.calls = 0

    def pause(self):
        self.calls += 1
        if self.errors:
            raise APIError(self.errors.pop(0))


def test_a_freezer_that_settles_on_a_later_try_pauses_the_container():
    container = Container([UNSETTLED, UNSETTLED])
    docker_api.pause(container, retry_s=0)
    assert container.calls == 3


def test_a_freezer_that_never_settles_is_raised_after_the_last_try():
    container = Container([UNSETTLED] * 10)
    with pytest.raises(APIError, match="unable to freeze"):
        docker_api.pause(container, tries=4, retry_s=0)
    assert container.calls == 4


def test_any_other_error_is_raised_at_once():
    container = Container(["Container abc is not running"])
    with pytest.raises(APIError, match="not running"):
        docker_api.pause(container, retry_s=0)
    assert container.calls == 1
