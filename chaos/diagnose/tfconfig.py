"""The mistakes a printed TF_CONFIG shows by itself.

Jobs print their TF_CONFIG (``print(os.environ["TF_CONFIG"])``, the
estimator's ``TF_CONFIG environment variable: {...}``, a launcher's ``export
TF_CONFIG='{...}'``) and TF prints its cluster spec (``MultiWorkerMirroredStrategy
with cluster_spec = {...}``, ``ClusterSpec({...})``), as JSON or as a Python
dict. Read from any worker's lines, together they can show the mistake with no
error at all: a task type the cluster does not have, an index past the end, a
job name TF does not know (``ps_hosts``), an empty or malformed address, two
tasks at one address, two workers claiming one task, every task on one host
while the peers cannot reach each other.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from chaos.checks.verdict import Verdict
from chaos.diagnose.history import LogHistory
from chaos.diagnose.observations import Evidence, WorkerObservations
from chaos.diagnose.signatures import MAX_EVIDENCE, Signature

JOBS = {"chief", "worker", "ps", "evaluator", "master", "local", "controller"}
_ADDRESS = re.compile(r"^\[?[\w.:-]+\]?:\d{1,5}$")
_TASK_ARGS = re.compile(r"task_type\s*=\s*'?(?P<type>\w+)'?,\s*task_id\s*=\s*(?P<index>\d+)")
_SINGLE_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0"}
# A launcher's line that *sets* TF_CONFIG for a process (``export TF_CONFIG='{..}'``,
# ``TF_CONFIG='{..}' python train.py``): each such line starts a process of its own,
# even when several are in one log (a script's trace, the commands pasted together).
_ASSIGNED = re.compile(r"\bTF_CONFIG=['\"]?\{")
_CONNECTIVITY = (
    "socket_closed",
    "connection_refused",
    "connect_timeout",
    "failed_connect_all",
    "failed_connect_address",
    "waiting_for_worker",
    "waiting_for_cluster",
    "task_down",
    "heartbeat",
    "connection_reset",
    "os_error",
)


@dataclass(frozen=True)
class PrintedConfig:
    cluster: dict[str, list[str]]
    task_type: str | None
    task_index: int | None
    evidence: Evidence


def _balanced(text: str, start: int) -> str | None:
    depth = 0
    quote = None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _load(blob: str):
    for loader in (json.loads, ast.literal_eval):
        try:
            return loader(blob)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def parse(evidence: Evidence) -> PrintedConfig | None:
    """The cluster and task one printed line states, if it parses."""
    text = evidence.text
    start = text.find("{")
    while start != -1:
        blob = _balanced(text, start)
        data = _load(blob) if blob else None
        if isinstance(data, dict):
            break
        start = text.find("{", start + 1)
    else:
        return None
    if "cluster" in data and isinstance(data["cluster"], dict):
        cluster, task = data["cluster"], data.get("task") or {}
    elif all(isinstance(v, (list, dict)) for v in data.values()) and data:
        cluster, task = data, {}  # a bare cluster spec
    else:
        return None
    spec: dict[str, list[str]] = {}
    for job, tasks in cluster.items():
        if isinstance(tasks, dict):  # sparse: {"1": "host:port"}
            tasks = [tasks[k] for k in sorted(tasks, key=lambda k: int(k) if str(k).isdigit() else 0)]
        if isinstance(tasks, list):
            spec[str(job)] = [str(t) for t in tasks]
    task_type = task.get("type") if isinstance(task, dict) else None
    index = task.get("index") if isinstance(task, dict) else None
    args = _TASK_ARGS.search(text)
    if task_type is None and args:
        task_type, index = args["type"], args["index"]
    try:
        index = int(index) if index is not None else None
    except (TypeError, ValueError):
        index = None
    return PrintedConfig(spec, str(task_type) if task_type is not None else None, index, evidence)


def _host(address: str) -> str:
    return address.rsplit(":", 1)[0].strip("[]")


def mistakes(configs: list[tuple[str, PrintedConfig]]) -> list[tuple[str, Evidence]]:
    """(what is wrong, the line that shows it) for printed configs, each with the worker that printed it."""
    found: list[tuple[str, Evidence]] = []
    claimed: dict[tuple[str, int], tuple[str, Evidence]] = {}
    for worker, config in configs:
        ev = config.evidence
        if _ASSIGNED.search(ev.text):
            worker = f"the launch at {ev.where}"
        for job, tasks in config.cluster.items():
            if job not in JOBS:
                found.append((f"the cluster names a job {job!r}: TensorFlow knows chief, worker, ps and evaluator", ev))
            for address in tasks:
                if not address.strip():
                    found.append((f"an empty address in job {job!r}", ev))
                elif "@" in address or "://" in address or not _ADDRESS.match(address.strip()):
                    found.append((f"{address!r} in job {job!r} is not host:port", ev))
        addresses = [a for tasks in config.cluster.values() for a in tasks if a.strip()]
        for address in {a for a in addresses if addresses.count(a) > 1}:
            found.append((f"two tasks at one address, {address}", ev))
        if config.cluster.get("evaluator") and config.cluster.get("ps") and config.task_type != "evaluator":
            found.append(
                (
                    "the training cluster lists an 'evaluator' next to 'ps': the evaluator is not part of the "
                    "training cluster (ParameterServerStrategy waits for it; RunConfig expects it outside)",
                    ev,
                )
            )
        if "master" in config.cluster and "chief" not in config.cluster:
            found.append(("the cluster has a 'master' job: TF 2's strategies and Keras expect 'chief'", ev))
        if config.task_type is not None and config.cluster:
            tasks = config.cluster.get(config.task_type)
            if tasks is None and config.task_type != "evaluator":
                found.append((f"this task is a {config.task_type!r}, which the cluster does not list", ev))
            elif tasks is not None and config.task_index is not None and not 0 <= config.task_index < len(tasks):
                found.append(
                    (f"task index {config.task_index} is past the {len(tasks)} {config.task_type!r} task(s) listed", ev)
                )
            if config.task_index is not None:
                key = (config.task_type, config.task_index)
                if key in claimed and claimed[key][0] != worker:
                    found.append(
                        (
                            f"two workers both claim {config.task_type} {config.task_index} "
                            f"({claimed[key][0]} and {worker})",
                            ev,
                        )
                    )
                claimed.setdefault(key, (worker, ev))
    return found


def single_host(configs: list[tuple[str, PrintedConfig]]) -> list[Evidence]:
    """The printed configs whose tasks all share one host that only that host reaches
    (localhost, a Docker bridge 172.17.x.x): fine on one machine, wrong across machines."""
    out = []
    for _, config in configs:
        hosts = {_host(a) for tasks in config.cluster.values() for a in tasks if a.strip()}
        count = sum(len(tasks) for tasks in config.cluster.values())
        if count > 1 and len(hosts) == 1 and (hosts <= _SINGLE_HOSTS or next(iter(hosts)).startswith("172.17.")):
            out.append(config.evidence)
    return out


def printed(workers: list[WorkerObservations]) -> list[tuple[str, PrintedConfig]]:
    out = []
    for w in workers:
        for evidence in w.shaped(("tf_config_print",)):
            config = parse(evidence)
            if config is not None and config.cluster:
                out.append((w.name, config))
    return out


@dataclass(frozen=True)
class TfConfigMistakeSignature(Signature):
    """A printed TF_CONFIG or cluster spec that shows its own mistake."""

    weight: float = 5.0

    def label(self) -> str:
        return "a printed TF_CONFIG or cluster spec that is wrong by itself"

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        found = mistakes(printed(workers))
        if not found:
            return self.cannot_tell("no printed TF_CONFIG or cluster spec shows a mistake of its own")
        seen, evidence = set(), []
        for what, ev in found:
            if what not in seen:
                seen.add(what)
                evidence.append(Evidence(ev.where, ev.log, f"{what}: {ev.text.strip()}"))
        return self.seen(evidence[:MAX_EVIDENCE])


@dataclass(frozen=True)
class SingleHostClusterSignature(Signature):
    """Every task of a printed cluster on one host only it reaches, while the
    peers cannot reach each other (a connection fails, or the job waits for peers)."""

    weight: float = 4.0

    def label(self) -> str:
        return (
            "a printed cluster with every task on localhost or a Docker bridge address, and peers that cannot connect"
        )

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        lines = single_host(printed(workers))
        if not lines:
            return self.cannot_tell("no printed cluster puts every task on one host")
        failing = [e for w in workers for e in w.shaped(_CONNECTIVITY)]
        if not failing:
            return self.cannot_tell("no line says the peers cannot connect")
        return self.seen((lines[:2] + failing[:2])[:MAX_EVIDENCE])
