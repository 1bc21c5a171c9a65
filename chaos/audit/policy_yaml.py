"""A FailurePolicy (chaos.audit.policy) as manifests a user pastes: a batch/v1 Indexed Job with a
podFailurePolicy, a JobSet with its failurePolicy (every worker restarted together, as MWMS
needs), the TF_CONFIG a JobSet's pods build from their index, and Docker/Compose restart
settings that say the same. Plain dicts (validated by chaos.audit.policy_check) and their YAML.

Kubernetes' rules followed here (Job docs and the API server's validation): a podFailurePolicy
needs ``restartPolicy: Never``; ``0`` cannot be in an ``In`` rule; values sorted and unique; each
rule has exactly one of onExitCodes / onPodConditions; rules are evaluated in order, first match
wins. ``status: "True"`` is written out because inside a JobSet nothing defaults it (the API
server refuses an empty one), and JobSet defaults a template's restartPolicy to OnFailure, so it
is written out too.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

import yaml

from chaos.audit.policy import FailurePolicy, describe

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
REPLICATED_JOB = "worker"  # MWMS: one task type; worker 0 is the chief
PORT = 2222  # the port TF examples (and Kubeflow's TFJob) give every task


@dataclass(frozen=True)
class Target:
    """What the manifests run: names and the job's own command (placeholders where the audit
    does not know them)."""

    name: str = "tf-train"
    workers: int = 2
    image: str = "your-training-image:tag"
    command: tuple[str, ...] = ("python", "train.py")
    checkpoint_dir: str = "/checkpoints"
    container: str = "trainer"
    port: int = PORT


def dns_label(text: str, limit: int = 30) -> str:
    """A DNS-1035 label from a file name (a JobSet's pod names add ~20 characters to it, under 63)."""
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    label = re.sub(r"^[^a-z]+", "", label)[:limit].rstrip("-")
    return label or "tf-train"


def target_of(workload, label: str, workers: int) -> Target:
    """The Target for the audited workload (None: the built-in harness, placeholders)."""
    from pathlib import Path

    name = dns_label(Path(label).stem) if workload is not None else "tf-train"
    if workload is None:
        return Target(name=name, workers=workers)
    return Target(
        name=name,
        workers=workers,
        image=workload.image or "your-training-image:tag",
        command=tuple(workload.command or ("python", "train.py")),
        checkpoint_dir=workload.checkpoint_dir,
    )


def _exit_rule(action: str, codes: tuple[int, ...], target: Target) -> dict:
    return {
        "action": action,
        "onExitCodes": {
            "containerName": target.container,
            "operator": "In",
            "values": sorted(set(c for c in codes if c != 0)),
        },
    }


def pod_failure_policy(policy: FailurePolicy, target: Target) -> dict:
    """The rules, in order: a disruption (preemption, eviction, node drain) is Ignored first, so a
    preempted pod's own exit code never fails the job; then FailJob on the codes a restart did not
    fix; then Count on the retryable ones (what the default does too: written out so the file
    says which codes the audit saw recover)."""
    rules = [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
    if policy.not_fixed:
        rules.append(_exit_rule("FailJob", policy.not_fixed, target))
    if policy.retryable:
        rules.append(_exit_rule("Count", policy.retryable, target))
    return {"rules": rules}


JOBSET = "jobset"
JOB = "job"


def _host(target: Target, form: str, index: str) -> str:
    """A pod's DNS name. JobSet: <jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>, the
    subdomain defaulting to the JobSet's name (one Job of ``workers`` pods: jobIndex 0). A plain
    Indexed Job: <job>-<index> (its pods' hostname) under the headless Service ``job_service`` makes."""
    if form == JOBSET:
        return f"{target.name}-{REPLICATED_JOB}-0-{index}.{target.name}:{target.port}"
    return f"{target.name}-{index}.{target.name}:{target.port}"


def worker_hosts(target: Target, form: str = JOBSET) -> list[str]:
    return [_host(target, form, str(i)) for i in range(target.workers)]


def tf_config_snippet(target: Target, form: str = JOBSET) -> str:
    """POSIX sh: TF_CONFIG from the pod's JOB_COMPLETION_INDEX (the Job controller sets it in every
    pod of an Indexed Job), the cluster listed by the pods' headless-service names."""
    host = _host(target, form, "$i")
    kind = "JobSet" if form == JOBSET else "Job"
    return "\n".join(
        [
            f"# TF_CONFIG for the pods of {kind} {target.name}: worker i is {_host(target, form, 'i')}",
            f'N={target.workers}; W=""; i=0',
            f'while [ "$i" -lt "$N" ]; do W="$W${{W:+,}}\\"{host}\\""; i=$((i + 1)); done',
            'export TF_CONFIG="{\\"cluster\\": {\\"worker\\": [$W]}, '
            '\\"task\\": {\\"type\\": \\"worker\\", \\"index\\": ${JOB_COMPLETION_INDEX:?not an Indexed Job pod}}}"',
        ]
    )


def tf_config_for(target: Target, index: int, form: str = JOBSET) -> dict:
    """The TF_CONFIG the snippet gives pod ``index`` (for tests and the card's example line)."""
    return {"cluster": {"worker": worker_hosts(target, form)}, "task": {"type": "worker", "index": index}}


def _pod_spec(target: Target, command: list[str] | None = None) -> dict:
    container = {
        "name": target.container,
        "image": target.image,
        "ports": [{"containerPort": target.port, "name": "tf"}],
        "volumeMounts": [{"name": "checkpoints", "mountPath": target.checkpoint_dir}],
    }
    if command:
        container["command"] = command
    return {
        "restartPolicy": "Never",
        "containers": [container],
        # The backups on storage every worker shares (the audit's backup-not-shared criterion).
        "volumes": [{"name": "checkpoints", "persistentVolumeClaim": {"claimName": f"{target.name}-checkpoints"}}],
    }


def _start_command(target: Target, form: str) -> list[str]:
    return ["sh", "-c", tf_config_snippet(target, form) + "\nexec " + shlex.join(target.command)]


def job_service(target: Target) -> dict:
    """The headless Service a plain Indexed Job's pods need to reach each other by name (a JobSet
    makes its own): no cluster IP, every pod of the Job, addresses published before they are
    ready (MWMS workers connect while starting)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": target.name},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {"batch.kubernetes.io/job-name": target.name},
            "ports": [{"name": "tf", "port": target.port}],
        },
    }


def job(policy: FailurePolicy, target: Target) -> dict:
    """A batch/v1 Indexed Job: one pod per worker, named by its index under ``job_service``. The Job
    controller replaces a failed pod alone, and its MWMS peers then fail too (their collectives
    abort), so one failure costs up to ``workers`` pod failures: backoffLimit allows ``retries``
    such rounds."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": target.name},
        "spec": {
            "completionMode": "Indexed",
            "completions": target.workers,
            "parallelism": target.workers,
            "backoffLimit": target.workers * policy.retries,
            "podFailurePolicy": pod_failure_policy(policy, target),
            "template": {"spec": {**_pod_spec(target, _start_command(target, JOB)), "subdomain": target.name}},
        },
    }


def jobset(policy: FailurePolicy, target: Target) -> dict:
    """A JobSet: its Job fails at the first counted pod failure (backoffLimit 0, as JobSet's own
    examples), and the JobSet then recreates every worker (RestartJobSet), the restart the battery
    measured; a FailJob match fails the Job with reason PodFailurePolicy, which fails the JobSet."""
    rules = []
    if policy.not_fixed:
        rules.append({"name": "NotRetryable", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]})
    rules.append({"name": "Retryable", "action": "RestartJobSet", "onJobFailureReasons": ["BackoffLimitExceeded"]})
    return {
        "apiVersion": JOBSET_API,
        "kind": "JobSet",
        "metadata": {"name": target.name},
        "spec": {
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "failurePolicy": {"maxRestarts": policy.retries, "rules": rules},
            "replicatedJobs": [
                {
                    "name": REPLICATED_JOB,
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "completionMode": "Indexed",
                            "completions": target.workers,
                            "parallelism": target.workers,
                            "backoffLimit": 0,
                            "podFailurePolicy": pod_failure_policy(policy, target),
                            "template": {"spec": _pod_spec(target, _start_command(target, JOBSET))},
                        }
                    },
                }
            ],
        },
    }


def compose(policy: FailurePolicy, target: Target) -> dict:
    """Docker's restart settings for one worker service (every worker the same): ``restart`` for
    docker compose, ``deploy.restart_policy`` for a Swarm stack, both ``retries`` attempts."""
    return {
        "services": {
            "worker-0": {
                "image": target.image,
                "restart": f"on-failure:{policy.retries}",
                "deploy": {"restart_policy": {"condition": "on-failure", "max_attempts": policy.retries}},
            }
        }
    }


def compose_note(policy: FailurePolicy) -> str:
    base = (
        "Docker restarts a container on any non-zero exit and only that container; the MWMS peers "
        "then fail and are restarted too."
    )
    if policy.not_fixed:
        return (
            base + f" It cannot leave out exit codes: {', '.join(describe(c) for c in policy.not_fixed)}, which "
            f"a restart did not fix, is retried {policy.retries} times too before the container stays down."
        )
    return base


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the start command) as literal blocks: the script reads as written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


def _list(dumper: yaml.SafeDumper, value: list) -> yaml.SequenceNode:
    """Exit codes on one line, as Kubernetes' own examples write them: ``values: [1, 137]``."""
    flow = bool(value) and all(isinstance(v, int) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(list, _list)


def yaml_text(doc: dict) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=200)


def documents(policy: FailurePolicy, target: Target) -> dict[str, str]:
    """Every snippet by name, as the card prints them."""
    return {
        "job": yaml_text(job_service(target)) + "---\n" + yaml_text(job(policy, target)),
        "jobset": yaml_text(jobset(policy, target)),
        "tf_config": tf_config_snippet(target),
        "compose": yaml_text(compose(policy, target)),
    }


def example_tf_config(target: Target, index: int = 1, form: str = JOBSET) -> str:
    """What pod ``index`` gets, the worker list cut to its ends past three entries."""
    text = json.dumps(tf_config_for(target, index, form))
    hosts = worker_hosts(target, form)
    if len(hosts) > 3:
        text = text.replace(", ".join(json.dumps(h) for h in hosts[1:-1]), "...")
    return text
