"""`chaos compose --inject 'FAULT: {params}' [--for S]`: one fault, by hand, on
the running docker-compose cluster, written as in a scenario's ``faults:``.

The fault is healed when ``--for`` runs out or on Ctrl-C, whichever comes
first (a rollback that always runs, as in Chaos Toolkit); a kill needs no heal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from chaos.compose.control import ComposeControl, unsupported_here
from chaos.compose.watch import COMPOSE_PROJECT
from chaos.errors import ScenarioError
from chaos.events import Event
from chaos.events_text import live_line
from chaos.faults import FAULTS, Fault
from chaos.faults.undo import Undo
from chaos.scenario.loader import parse_yaml
from chaos.scenario.problems import ScenarioProblems, problems_of
from chaos.topology import PROXY_ALIAS, PROXY_API_PORT

SOURCE = "--inject"
EXAMPLE = "--inject 'latency: {worker: 1, latency_ms: 100}' --for 30"


def parse_fault(text: str) -> Fault:
    """One fault from ``NAME: {params}`` (or a bare ``NAME``); ScenarioError naming what is wrong."""
    data = parse_yaml(text, SOURCE)
    if isinstance(data, str):
        data = {data: {}}
    if not isinstance(data, dict) or len(data) != 1:
        raise ScenarioError(
            f"{SOURCE} takes one fault as `NAME: {{params}}`; got {text!r}",
            hint=f"e.g. {EXAMPLE}; `chaos list` shows every fault",
        )
    ((name, params),) = data.items()
    cls = FAULTS.get(str(name))
    if cls.applies_at_create:
        raise ScenarioError(
            f"fault {name!r} changes how workers are created; `--inject` acts on running workers",
            hint="run it as a scenario (`chaos run`), or edit docker-compose.yml and `docker-compose up -d`",
        )
    try:
        return cls.model_validate(params or {}, strict=True)
    except ValidationError as exc:
        problems, more = problems_of(exc, cls)
        raise ScenarioProblems(
            problems, more=more, source=f"{SOURCE} {name}", hint="`chaos list` shows every fault with its parameters"
        ) from None


def inject_for(
    fault: Fault,
    cluster: ComposeControl,
    for_s: float | None,
    say: Callable[[str], None],
    stop: threading.Event | None = None,
) -> None:
    """Inject, wait ``for_s`` seconds (None: until Ctrl-C or ``stop``), heal in any case; a fault
    needing an ability the cluster lacks is refused before it acts."""
    refused = unsupported_here(fault, cluster)
    if refused is not None:
        raise refused
    stop = stop or threading.Event()
    undo = Undo()  # filled as the inject acts: a half-done one is undone too
    try:
        fault.inject(cluster, undo)
        say(live_line(fault.inject_event(time.time())) or fault.name)
        if for_s is None:
            say("Ctrl-C heals it")
        stop.wait(for_s)
    except KeyboardInterrupt:
        pass
    finally:
        undo(cluster)
        say(live_line(fault.heal_event(time.time())) or fault.name)


def say_event(say: Callable[[str], None]) -> Callable[[Event], None]:
    def show(event: Event) -> None:
        text = live_line(event)
        if text:
            say(text)

    return show


def proxy_api(proxy_container: Any) -> tuple[str, int]:
    """Where the compose project's proxy API is published on this host."""
    if proxy_container is None:
        raise ScenarioError(
            "the compose cluster has no proxy container", hint="start the whole cluster: `docker-compose up -d`"
        )
    proxy_container.reload()
    bound = (proxy_container.attrs["NetworkSettings"].get("Ports") or {}).get(f"{PROXY_API_PORT}/tcp") or []
    if not bound:
        raise ScenarioError(
            f"the compose cluster's proxy publishes no port for its API ({PROXY_API_PORT}/tcp)",
            hint="is the proxy running? `docker-compose ps`",
        )
    return bound[0].get("HostIp") or "127.0.0.1", int(bound[0]["HostPort"])


def run_inject(
    client: Any, text: str, project: str | None, for_s: float | None, say: Callable[[str], None] = print
) -> int:
    from chaos.compose.watch import compose_containers

    fault = parse_fault(text)
    containers = compose_containers(client, project)
    workers = {name: c for name, c in containers.items() if name.startswith("worker-")}
    if not workers:
        raise ScenarioError(
            "no docker-compose cluster of tfchaos is running" + (f" in project {project!r}" if project else ""),
            hint="start one with `docker-compose up -d` in the folder of docker-compose.yml",
        )
    projects = {c.labels.get(COMPOSE_PROJECT) for c in containers.values()}
    if len(projects) > 1:
        raise ScenarioError(
            f"several compose clusters of tfchaos are running: {', '.join(sorted(map(str, projects)))}",
            hint="pick one with --project NAME",
        )
    host, port = proxy_api(containers.get(PROXY_ALIAS))
    inject_for(fault, ComposeControl(workers, say_event(say), host, port), for_s, say)
    return 0
