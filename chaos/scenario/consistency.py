"""What a scenario's fields say together: problems (errors) and warnings.

An error is a setting that cannot work as written: a worker the cluster does
not have, a trigger that can never fire, a heal before its fault, a check
that could only ever be ``unknown`` (it needs a restart the recovery policy
forbids) or pass without looking at anything (``workers: []``). A warning is
legal but has no effect or cannot matter (``max_restarts`` with ``restart:
none``, a ``for`` longer than the whole run, a ``lost_work`` limit no run can
exceed): the scenario still runs, and ``chaos validate`` says so.

Checks are described by what they declare (``Check.needs``, and fields named
``workers``, ``fault``, ``epoch``, ``step``), not by a list of their names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from chaos.backends.abilities import MOVES_WORKERS
from chaos.faults.cluster_config import NOT_JSON_MODES
from chaos.scenario.problems import Problem
from chaos.scenario.triggers import AtBringUp, AtEpoch, AtSeconds, AtStep, Trigger
from chaos.scenario.workload_fit import workload_problems, workload_warnings
from chaos.topology import MAX_WORKERS

if TYPE_CHECKING:
    from chaos.scenario.model import Scenario, TrainingSpec

NEEDS = {"restart": "a restart", "heal": "a fault healed during training"}


def _first_step(trigger: Trigger | None, training: TrainingSpec) -> int | None:
    """The global step (1-based) at which a step or epoch trigger is due."""
    if isinstance(trigger, AtStep):
        return trigger.step
    if isinstance(trigger, AtEpoch):
        return trigger.epoch * training.steps_per_epoch + 1
    return None


def _trigger_problems(scenario: Scenario) -> list[Problem]:
    problems: list[Problem] = []
    training = scenario.cluster.training
    # A user's job says its own length; the harness's training settings do not bound it.
    harness = scenario.cluster.workload is None
    total_s = scenario.timeouts.total
    started = False
    for i, step in enumerate(scenario.faults):
        at, until = step.at, step.until
        if harness and isinstance(at, AtStep) and at.step > training.total_steps:
            problems.append(
                Problem(("faults", i, "at", "step"), f"{at.step} is past the last step ({training.total_steps})")
            )
        if harness and isinstance(at, AtEpoch) and at.epoch >= training.epochs:
            problems.append(
                Problem(
                    ("faults", i, "at", "epoch"), f"{at.epoch} is past the last epoch ({training.epochs - 1}, 0-based)"
                )
            )
        if isinstance(at, AtSeconds) and at.seconds >= total_s:
            problems.append(
                Problem(
                    ("faults", i, "at", "seconds"),
                    f"{at.seconds:g} is not before timeouts.total ({total_s:g} s): the run is stopped before it fires",
                )
            )
        if harness and isinstance(until, AtStep) and until.step > training.total_steps:
            problems.append(
                Problem(
                    ("faults", i, "until", "step"),
                    f"{until.step} is past the last step ({training.total_steps}): it would never heal",
                )
            )
        if harness and isinstance(until, AtEpoch) and until.epoch >= training.epochs:
            problems.append(
                Problem(
                    ("faults", i, "until", "epoch"),
                    f"{until.epoch} is past the last epoch ({training.epochs - 1}, 0-based): it would never heal",
                )
            )
        if isinstance(until, AtSeconds) and until.seconds >= total_s:
            problems.append(
                Problem(
                    ("faults", i, "until", "seconds"),
                    f"{until.seconds:g} is not before timeouts.total ({total_s:g} s): it would never heal",
                )
            )
        problems += _heal_order(i, at, until, training if harness else None)
        if isinstance(at, AtBringUp) and started:
            problems.append(Problem(("faults", i, "at"), "bring_up must come before faults that fire during training"))
        started = started or not isinstance(at, AtBringUp)
    return problems


def _value(trigger: Trigger) -> str:
    return str(getattr(trigger, trigger.tag))


def _heal_order(i: int, at: Trigger, until: Trigger | None, training: TrainingSpec | None) -> list[Problem]:
    """``until`` due at or before ``at``: the fault would heal as it fires (units compared as global
    steps when the steps per epoch are known)."""
    if until is None:
        return []
    field = ("faults", i, "until", until.tag)
    if isinstance(until, AtStep) and isinstance(at, AtStep) and until.step <= at.step:
        return [Problem(field, f"{until.step} is not after at.step {at.step}: the fault would heal as it fires")]
    if isinstance(until, AtEpoch) and isinstance(at, AtEpoch) and until.epoch <= at.epoch:
        return [Problem(field, f"{until.epoch} is not after at.epoch {at.epoch}: the fault would heal as it fires")]
    if isinstance(until, AtSeconds) and isinstance(at, AtSeconds) and until.seconds <= at.seconds:
        return [
            Problem(
                field, f"{until.seconds:g} is not after at.seconds {at.seconds:g}: the fault would heal as it fires"
            )
        ]
    if training is None:
        return []
    heal, fire = _first_step(until, training), _first_step(at, training)
    if heal is not None and fire is not None and type(until) is not type(at) and heal <= fire:
        return [
            Problem(
                field,
                f"{_value(until)} (step {heal}) is not after at.{at.tag} {_value(at)} (step {fire}; "
                f"{training.steps_per_epoch} steps per epoch): the fault would heal as it fires",
            )
        ]
    return []


def _what_recovery_can_happen(scenario: Scenario) -> tuple[set[str], list[str]]:
    """(what can happen during training: 'restart', 'heal'; why the others cannot)."""
    recovery = scenario.cluster.recovery
    possible: set[str] = set()
    why: list[str] = []
    # A fault that changes how workers are created redeploys them all when it
    # fires or heals mid-training, whatever the recovery policy says.
    redeploys = any(s.fault.applies_at_create and (s.timed or not s.at.before_start) for s in scenario.faults)
    if recovery.restart == "none" and not redeploys:
        why.append("cluster.recovery.restart is none")
    elif recovery.max_restarts == 0 and not redeploys:
        why.append("cluster.recovery.max_restarts is 0")
    else:
        possible.add("restart")
    if any(step.timed for step in scenario.faults):
        possible.add("heal")
    else:
        why.append("no fault has 'for' or 'until'" if scenario.faults else "there are no faults")
    return possible, why


def _check_problems(scenario: Scenario) -> list[Problem]:
    problems: list[Problem] = []
    training = scenario.cluster.training
    possible, why = _what_recovery_can_happen(scenario)
    for role, checks in (("expect", scenario.expect), ("recover", scenario.recover)):
        for i, check in enumerate(checks):
            here = (role, i, check.name)
            listed = getattr(check, "workers", None)
            if listed == []:
                problems.append(
                    Problem(
                        (*here, "workers"),
                        "must list at least one worker: with none the check would pass without looking",
                    )
                )
            problems += _workers_problems(scenario, (*here, "workers"), listed or [])
            index = getattr(check, "fault", None)
            if index is not None and scenario.faults and index >= len(scenario.faults):
                problems.append(
                    Problem((*here, "fault"), f"{index} is out of range; valid: 0..{len(scenario.faults) - 1}")
                )
            epoch, step = getattr(check, "epoch", None), getattr(check, "step", None)
            if scenario.cluster.workload is not None:
                epoch = step = None  # a user's job says its own length
            if epoch is not None and epoch >= training.epochs:
                problems.append(
                    Problem(
                        (*here, "epoch"),
                        f"{epoch} is past the last epoch ({training.epochs - 1}, 0-based): it can never pass",
                    )
                )
            if step is not None and step > training.total_steps:
                problems.append(
                    Problem(
                        (*here, "step"), f"{step} is past the last step ({training.total_steps}): it can never pass"
                    )
                )
            needs = check.needs
            if needs and not needs & possible:
                wanted = " or ".join(NEEDS[n] for n in sorted(needs))
                problems.append(
                    Problem(here, f"needs {wanted} to be judged, but {' and '.join(why)}: it could only be unknown")
                )
    return problems


def _poison_problems(scenario: Scenario) -> list[Problem]:
    """A poisoned step the harness never reaches, or reaches only after the fault healed."""
    if scenario.cluster.workload is not None:
        return []  # poison_input needs the harness; workload_fit says so
    training = scenario.cluster.training
    problems: list[Problem] = []
    for i, step in enumerate(scenario.faults):
        if step.name != "poison_input":
            continue
        here = ("faults", i, step.name, "step")
        poison = step.fault.step
        if poison > training.total_steps:
            problems.append(
                Problem(here, f"{poison} is past the last step ({training.total_steps}): nothing is poisoned")
            )
        heal = _first_step(step.until, training)
        if heal is not None and heal <= poison:
            problems.append(
                Problem(
                    here,
                    f"{poison} is not before until (step {heal}): the workers are redeployed without the "
                    "poison before they reach it",
                )
            )
    return problems


def _strategy_problems(training, workers: int) -> list[Problem]:
    here = ("cluster", "training")
    if training.strategy == "mirrored":
        out = []
        if workers != 1:
            out.append(
                Problem(
                    (*here, "strategy"),
                    f"mirrored runs in one container: cluster.workers must be 1 (got {workers}); "
                    "valid with several workers: multi_worker_mirrored",
                )
            )
        if training.replicas < 2:
            out.append(
                Problem(
                    (*here, "replicas"), f"mirrored needs replicas 2..8 to mirror anything (got {training.replicas})"
                )
            )
        elif training.global_batch % training.replicas:
            out.append(
                Problem(
                    (*here, "global_batch"), f"{training.global_batch} is not divisible by {training.replicas} replicas"
                )
            )
        return out
    if training.replicas != 1:
        return [
            Problem(
                (*here, "replicas"),
                f"{training.replicas} replicas need strategy: mirrored; "
                "multi_worker_mirrored runs one replica a worker (valid: 1)",
            )
        ]
    return []


def _restarted_by_problems(scenario: Scenario) -> list[Problem]:
    """``recovery.by: orchestrator``: the platform restarts only workers that exit with a failure
    (Swarm's on-failure, Kubernetes' OnFailure), and a worker stays on its node."""
    recovery = scenario.cluster.recovery
    if recovery.by != "orchestrator":
        return []
    problems = []
    if recovery.restart != "failed":
        problems.append(
            Problem(
                ("cluster", "recovery", "restart"),
                f"{recovery.restart} cannot go with by: orchestrator: the orchestrator's restart policy restarts "
                "only the workers that exit with a failure; valid with it: failed (or by: runner)",
            )
        )
    for i, step in enumerate(scenario.faults):
        if set(step.fault.uses_abilities) & set(MOVES_WORKERS):
            problems.append(
                Problem(
                    ("faults", i, step.name),
                    "cannot go with cluster.recovery.by: orchestrator yet: moving the worker off a lost or "
                    "drained node is the runner's restart; set by: runner",
                )
            )
    return problems


def _traffic_problems(scenario: Scenario) -> list[Problem]:
    """A fault that acts on the proxy's links needs the workers' traffic through the proxy, and
    one on the links between nodes (node_link) needs it direct (cluster.traffic)."""
    traffic = scenario.cluster.traffic
    problems = []
    for i, step in enumerate(scenario.faults):
        needs = step.fault.needs_traffic
        if needs is None or needs == traffic:
            continue
        if needs == "direct":
            why = (
                "acts on the link between two nodes, and with cluster.traffic: proxy every byte between "
                "the workers crosses the proxy's node instead; set cluster.traffic: direct"
            )
        else:
            why = (
                "acts on the proxy's link to the worker, which cluster.traffic: direct bypasses (the workers "
                "reach each other directly); set cluster.traffic: proxy, or use a packet fault "
                "(packet_loss, silent_drop, ...), which acts in the worker's own namespace"
            )
        problems.append(Problem(("faults", i, step.name), why))
    return problems


def _not_a_worker(scenario: Scenario, index: int, *, besides: int | None = None) -> str | None:
    """Why ``index`` is no worker of the scenario's cluster (or is ``besides``, the fault's own
    worker): the valid indices and how to reach it; None if it is one. Indices are containers'
    slots: with parameter servers, chief + workers + ps (chaos.topology)."""
    c = scenario.cluster
    slots = c.containers
    if 0 <= index < slots and index != besides:
        return None
    valid = f"0..{slots - 1}" if besides is None else f"0..{slots - 1} except {besides}"
    if slots != c.workers:
        valid += f" ({', '.join(c.topology().task_names())})"
    else:
        valid += f" (cluster.workers is {c.workers})"
    if index == besides:
        return f"{index} is the fault's own worker; valid: another worker, {valid}"
    said = f"{index} is out of range; valid: {valid}"
    if slots != c.workers or index < slots:
        return said
    if index < MAX_WORKERS:
        return f"{said}: to reach worker {index}, set cluster.workers to {index + 1} or more"
    return f"{said}; a scenario has at most {MAX_WORKERS} workers"


def _workers_problems(
    scenario: Scenario, field: tuple, indices: Iterable[int], besides: int | None = None
) -> list[Problem]:
    """A problem for each of ``indices`` that is no worker of the scenario's cluster, at ``field``."""
    return [Problem(field, why) for i in indices if (why := _not_a_worker(scenario, i, besides=besides))]


def reference_problems(scenario: Scenario) -> list[Problem]:
    """Problems that span fields, each with its path."""
    problems: list[Problem] = []
    workers = scenario.cluster.workers
    training = scenario.cluster.training
    tf_versions = scenario.cluster.tf_versions
    if tf_versions is not None and len(tf_versions) != workers:
        problems.append(Problem(("cluster", "tf_versions"), f"lists {len(tf_versions)} versions for {workers} workers"))
    if scenario.cluster.workload is None and training.global_batch % workers:
        problems.append(
            Problem(
                ("cluster", "training", "global_batch"),
                f"{training.global_batch} is not divisible by {workers} workers",
            )
        )
    problems.extend(_strategy_problems(training, workers))
    for i, step in enumerate(scenario.faults):
        here = ("faults", i, step.name)
        worker = getattr(step.fault, "worker", None)
        problems += _workers_problems(scenario, (*here, "worker"), [] if worker is None else [worker])
        peer = getattr(step.fault, "peer", None)  # a packet fault's: the other end of the connections
        problems += _workers_problems(scenario, (*here, "peer"), [] if peer is None else [peer], besides=worker)
        listed = getattr(step.fault, "workers", None)
        if listed == []:
            problems.append(Problem((*here, "workers"), "must list at least one worker"))
        problems += _workers_problems(scenario, (*here, "workers"), listed or [])
        mode = getattr(step.fault, "mode", None)
        if step.name == "tf_config" and mode in NOT_JSON_MODES and training.cluster_resolver != "tf_config":
            problems.append(
                Problem(
                    (*here, "mode"),
                    f"{mode} is TF_CONFIG text that is not JSON, but cluster.training.cluster_resolver is "
                    f"{training.cluster_resolver} (workers get an address list); valid with it: every other mode",
                )
            )
    problems += _restarted_by_problems(scenario)
    problems += _traffic_problems(scenario)
    problems += _poison_problems(scenario)
    problems += _trigger_problems(scenario)
    if scenario.expect and not scenario.faults:
        problems.append(Problem(("expect",), "symptom checks are judged over a fault's window, but faults is empty"))
    problems += _check_problems(scenario)
    problems += workload_problems(scenario)
    return problems


def scenario_warnings(scenario: Scenario) -> list[Problem]:
    """Legal settings that have no effect or cannot matter, each with its path."""
    warnings: list[Problem] = []
    recovery, timeouts = scenario.cluster.recovery, scenario.timeouts
    training = scenario.cluster.training
    if recovery.restart == "none" and recovery.max_restarts > 0:
        warnings.append(
            Problem(("cluster", "recovery", "max_restarts"), f"{recovery.max_restarts} has no effect: restart is none")
        )
    for name in ("bring_up", "symptom"):
        value = getattr(timeouts, name)
        if value >= timeouts.total:
            warnings.append(
                Problem(
                    ("timeouts", name),
                    f"{value:g} s is not less than timeouts.total ({timeouts.total:g} s): the run is stopped first",
                )
            )
    for i, step in enumerate(scenario.faults):
        if step.for_s is not None and step.for_s >= timeouts.total:
            warnings.append(
                Problem(
                    ("faults", i, "for"),
                    f"{step.for_s:g} s is not less than timeouts.total ({timeouts.total:g} s): "
                    "the run is stopped before the heal, so the fault is healed only at teardown",
                )
            )
    seen: dict[tuple, tuple] = {}
    for role, checks in (("expect", scenario.expect), ("recover", scenario.recover)):
        for i, check in enumerate(checks):
            here = (role, i, check.name)
            within = getattr(check, "within_s", None)
            if within is not None and within > timeouts.total:
                warnings.append(
                    Problem(
                        (*here, "within_s"),
                        f"{within:g} s is longer than timeouts.total ({timeouts.total:g} s): the run is stopped first",
                    )
                )
            max_steps = getattr(check, "max_steps", None)
            if scenario.cluster.workload is None and max_steps is not None and max_steps >= training.total_steps:
                warnings.append(
                    Problem(
                        (*here, "max_steps"),
                        f"{max_steps} is not less than the whole run ({training.total_steps} steps): the check can never fail",
                    )
                )
            if (
                check.name == "lost_work"
                and max_steps is None
                and scenario.cluster.workload is None
                and training.save_interval_steps >= training.total_steps
            ):
                warnings.append(
                    Problem(
                        here,
                        f"its limit defaults to the save interval ({training.save_interval_steps} steps, "
                        f"cluster.training.save_freq: {training.save_freq}), not less than the whole run "
                        f"({training.total_steps} steps): the check can never fail; give max_steps, or a save_freq "
                        f"below {training.total_steps}",
                    )
                )
            key = (role, check.name, repr(check.params()))  # noqa: E501
            if key in seen:
                warnings.append(Problem(here, f"the same check as {seen[key][0]}[{seen[key][1]}]"))
            else:
                seen[key] = (role, i)
    if not scenario.checks:
        what = "no faults and no checks" if not scenario.faults else "no checks"
        warnings.append(
            Problem(
                ("expect",),
                f"{what} (expect and recover are empty): the run judges nothing and its result is unknown. "
                "Is the file cut short? Add a check, e.g. recover: [{completed: {}}]",
            )
        )
    return warnings + workload_warnings(scenario)
