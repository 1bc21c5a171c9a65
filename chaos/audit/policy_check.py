"""Offline validation of the failure-policy manifests (chaos.audit.policy_yaml); no cluster.

Two layers, because the schema alone cannot refuse what a cluster refuses:

* **The Kubernetes schema**, from the ``kubernetes-validate`` package (PyPI; the OpenAPI schemas of
  each Kubernetes release as JSON Schema, strict: unknown fields refused). It checks structure and
  types; it does not know that a podFailurePolicy needs ``restartPolicy: Never`` or that ``0`` is
  refused in an ``In`` rule.
* **The API server's podFailurePolicy rules**, written out here from Kubernetes'
  ``pkg/apis/batch/validation`` (restartPolicy Never, at most 20 rules, a known action, exactly one
  of onExitCodes / onPodConditions, operator In / NotIn, 1-255 values sorted and unique, no 0 for
  In, a status True / False / Unknown, a containerName of the pod).

A JobSet is a custom resource: its schema is not in the package. Its Job template is checked as a
batch/v1 Job (both layers), its failurePolicy against JobSet's API types (``v1alpha2``): known
fields, actions, reasons, rule names. The Compose snippet is checked against the Compose
specification's schema that ``check-jsonschema`` ships, and its restart values against the
specification's text (the schema types them as any string).
"""

from __future__ import annotations

import json
import re
from importlib import resources

K8S_VERSION = "1.37"  # the newest schema kubernetes-validate 1.37 carries
MAX_RULES = 20
MAX_VALUES = 255
MAX_PATTERNS = 20
ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
OPERATORS = ("In", "NotIn")
STATUSES = ("False", "True", "Unknown")
QUALIFIED = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
# JobSet v1alpha2 (api/jobset/v1alpha2/jobset_types.go and its failure-policy docs).
JOBSET_ACTIONS = ("FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts")
JOBSET_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
JOBSET_RULE_FIELDS = ("name", "action", "onJobFailureReasons", "onJobFailureMessagePatterns", "targetReplicatedJobs")
JOBSET_POLICY_FIELDS = ("maxRestarts", "restartStrategy", "rules")
RULE_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")


class SchemaUnavailable(RuntimeError):
    """The schema package is not installed (it comes with the ``test`` extra)."""


def schema_problems(doc: dict) -> list[str]:
    """The Kubernetes schema's complaint about a built-in resource (strict), or []."""
    try:
        import kubernetes_validate
        from kubernetes_validate.utils import SchemaNotFoundError, VersionNotSupportedError
    except ImportError as exc:  # an optional package: said, never a traceback
        raise SchemaUnavailable("kubernetes-validate is not installed (pip install 'tfchaos[test]')") from exc
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(str(p) for p in exc.path) or "(top)"
        return [f"schema (Kubernetes {exc.version}): {where}: {exc.message}"]
    except (SchemaNotFoundError, VersionNotSupportedError) as exc:
        raise SchemaUnavailable(f"kubernetes-validate has no schema for it: {exc.message}") from exc
    return []


def _exit_codes(req: dict, path: str, containers: set[str]) -> list[str]:
    out = []
    op = req.get("operator")
    if op not in OPERATORS:
        out.append(f"{path}.operator: Unsupported value: {op!r}: supported values: {', '.join(OPERATORS)}")
    name = req.get("containerName")
    if name is not None and name not in containers:
        out.append(
            f"{path}.containerName: Invalid value: {name!r}: must be one of the container or "
            "initContainer names in the pod template"
        )
    values = req.get("values") or []
    if not values:
        out.append(f"{path}.values: Invalid value: []: at least one value is required")
    elif len(values) > MAX_VALUES:
        out.append(f"{path}.values: Too many: {len(values)}: must have at most {MAX_VALUES} items")
    seen = set()
    for j, v in enumerate(values):
        if op == "In" and v == 0:
            out.append(f"{path}.values[{j}]: Invalid value: 0: must not be 0 for the In operator")
        if v in seen:
            out.append(f"{path}.values[{j}]: Duplicate value: {v}")
        seen.add(v)
    if list(values) != sorted(values):
        out.append(f"{path}.values: Invalid value: {list(values)}: must be ordered")
    return out


def _pod_conditions(patterns: list, path: str) -> list[str]:
    out = []
    if len(patterns) > MAX_PATTERNS:
        out.append(f"{path}: Too many: {len(patterns)}: must have at most {MAX_PATTERNS} items")
    for j, p in enumerate(patterns):
        if not QUALIFIED.match(str(p.get("type", ""))):
            out.append(f"{path}[{j}].type: Invalid value: {p.get('type')!r}: must be a qualified name")
        status = p.get("status", "")
        if status == "":
            out.append(
                f"{path}[{j}].status: Required value: valid values: {', '.join(STATUSES)} "
                "(inside a JobSet nothing defaults it)"
            )
        elif status not in STATUSES:
            out.append(f"{path}[{j}].status: Unsupported value: {status!r}: supported values: {', '.join(STATUSES)}")
    return out


def api_problems(spec: dict, path: str = "spec") -> list[str]:
    """The API server's podFailurePolicy rules on a JobSpec, worded as it words them; [] when none
    is broken (or the spec has no podFailurePolicy)."""
    policy = spec.get("podFailurePolicy")
    if policy is None:
        return []
    out = []
    pod = spec.get("template", {}).get("spec", {})
    restart = pod.get("restartPolicy", "")
    if restart != "Never":
        out.append(
            f'{path}.template.spec.restartPolicy: Invalid value: {restart!r}: only "Never" is supported '
            "when podFailurePolicy is specified"
        )
    containers = {c.get("name") for c in [*pod.get("containers", []), *pod.get("initContainers", [])]}
    rules = policy.get("rules") or []
    rules_path = f"{path}.podFailurePolicy.rules"
    if len(rules) > MAX_RULES:
        out.append(f"{rules_path}: Too many: {len(rules)}: must have at most {MAX_RULES} items")
    for i, rule in enumerate(rules):
        rp = f"{rules_path}[{i}]"
        action = rule.get("action", "")
        if action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                out.append(f"{rp}.action: Invalid value: 'FailIndex': requires the backoffLimitPerIndex to be set")
        elif action not in ACTIONS:
            out.append(f"{rp}.action: Unsupported value: {action!r}: supported values: {', '.join(ACTIONS)}")
        codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions") or []
        if codes is not None:
            out += _exit_codes(codes, f"{rp}.onExitCodes", containers)
        if conditions:
            out += _pod_conditions(conditions, f"{rp}.onPodConditions")
        if codes is not None and conditions:
            out.append(f"{rp}: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported")
        if codes is None and not conditions:
            out.append(f"{rp}: Invalid value: specifying one of OnExitCodes and OnPodConditions is required")
    return out


def job_problems(doc: dict) -> list[str]:
    """A batch/v1 Job: the schema, then the API server's rules."""
    return schema_problems(doc) + api_problems(doc.get("spec", {}))


def _failure_policy(policy: dict, names: set[str]) -> list[str]:
    path = "spec.failurePolicy"
    out = [f"{path}.{k}: unknown field" for k in policy if k not in JOBSET_POLICY_FIELDS]
    if not isinstance(policy.get("maxRestarts", 0), int) or policy.get("maxRestarts", 0) < 0:
        out.append(f"{path}.maxRestarts: must be a whole number >= 0")
    for i, rule in enumerate(policy.get("rules") or []):
        rp = f"{path}.rules[{i}]"
        out += [f"{rp}.{k}: unknown field" for k in rule if k not in JOBSET_RULE_FIELDS]
        if not RULE_NAME.match(str(rule.get("name", ""))):
            out.append(f"{rp}.name: {rule.get('name')!r} must match {RULE_NAME.pattern}")
        if rule.get("action") not in JOBSET_ACTIONS:
            out.append(f"{rp}.action: {rule.get('action')!r}: supported values: {', '.join(JOBSET_ACTIONS)}")
        reasons = rule.get("onJobFailureReasons") or []
        out += [
            f"{rp}.onJobFailureReasons: {r!r}: valid reasons: {', '.join(JOBSET_REASONS)}"
            for r in reasons
            if r not in JOBSET_REASONS
        ]
        if len(set(reasons)) != len(reasons):
            out.append(f"{rp}.onJobFailureReasons: duplicate reasons")
        out += [
            f"{rp}.targetReplicatedJobs: {t!r} is not a replicatedJob of this JobSet"
            for t in rule.get("targetReplicatedJobs") or []
            if t not in names
        ]
    return out


def jobset_problems(doc: dict) -> list[str]:
    """A JobSet: each replicatedJob's template as a batch/v1 Job (schema and API rules), its
    failurePolicy against JobSet's API types."""
    out = []
    if doc.get("apiVersion") != "jobset.x-k8s.io/v1alpha2" or doc.get("kind") != "JobSet":
        out.append("apiVersion/kind: must be jobset.x-k8s.io/v1alpha2 JobSet")
    spec = doc.get("spec", {})
    names = {r.get("name") for r in spec.get("replicatedJobs", [])}
    for i, rjob in enumerate(spec.get("replicatedJobs", [])):
        template = rjob.get("template", {})
        wrapped = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"{doc.get('metadata', {}).get('name', 'jobset')}-{rjob.get('name')}-0"},
            "spec": template.get("spec", {}),
        }
        where = f"spec.replicatedJobs[{i}].template"
        out += [f"{where}: {p}" for p in schema_problems(wrapped)]
        out += api_problems(template.get("spec", {}), f"{where}.spec")
    out += _failure_policy(spec.get("failurePolicy") or {}, names)
    return out


# The Compose specification's values for the two settings (its schema says "string" only).
COMPOSE_RESTART = re.compile(r"^(no|always|unless-stopped|on-failure(:[0-9]+)?)$")
COMPOSE_CONDITIONS = ("none", "on-failure", "any")


def _compose_values(doc: dict) -> list[str]:
    out = []
    for name, service in (doc.get("services") or {}).items():
        restart = service.get("restart")
        if restart is not None and not COMPOSE_RESTART.match(str(restart)):
            out.append(f"services.{name}.restart: {restart!r}: no, always, unless-stopped or on-failure[:N]")
        condition = (service.get("deploy") or {}).get("restart_policy", {}).get("condition")
        if condition is not None and condition not in COMPOSE_CONDITIONS:
            out.append(
                f"services.{name}.deploy.restart_policy.condition: {condition!r}: one of "
                f"{', '.join(COMPOSE_CONDITIONS)}"
            )
    return out


def compose_problems(doc: dict) -> list[str]:
    """The Compose specification's schema (the copy check-jsonschema ships), then its values for
    ``restart`` and ``restart_policy.condition``."""
    try:
        import jsonschema

        schema_file = resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
        schema = json.loads(schema_file.read_text(encoding="utf-8"))
    except (ImportError, FileNotFoundError, ModuleNotFoundError) as exc:
        raise SchemaUnavailable("check-jsonschema is not installed (pip install 'tfchaos[test]')") from exc
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [
        f"compose schema: {'.'.join(str(p) for p in e.path) or '(top)'}: {e.message}"
        for e in validator.iter_errors(doc)
    ] + _compose_values(doc)


def check_all(docs: dict[str, dict]) -> dict[str, list[str]]:
    """``{"service": ..., "job": ..., "jobset": ..., "compose": ...}`` -> the problems of each."""
    checks = {"service": schema_problems, "job": job_problems, "jobset": jobset_problems, "compose": compose_problems}
    return {name: checks[name](doc) for name, doc in docs.items() if name in checks}


def summary(docs: dict[str, dict]) -> str:
    """One line for the card: what was validated, how, and the outcome."""
    try:
        problems = check_all(docs)
    except SchemaUnavailable as exc:
        return f"not validated: {exc}"
    bad = {k: v for k, v in problems.items() if v}
    how = (
        f"validated offline (no cluster): the Job, its Service and the JobSet's Job template against the Kubernetes "
        f"{K8S_VERSION} schema (kubernetes-validate, strict) and the API server's podFailurePolicy rules, the "
        "JobSet's failurePolicy against JobSet v1alpha2's fields, the Compose snippet against the Compose schema "
        "and its values"
    )
    if not bad:
        return f"{how}: valid"
    return f"{how}: INVALID: " + "; ".join(f"{k}: {v[0]}" for k, v in bad.items())
