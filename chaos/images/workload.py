"""A user's job image, ready to run: built offline if asked, with the agent layered on.

* ``build:`` runs ``docker build`` on the context with ``pull=False`` (no
  registry is needed or reached), tagged by the context folder so a rebuild
  reuses Docker's layer cache.
* ``agent: auto`` layers the agent onto the image at /opt/tfchaos-agent (a
  ``sitecustomize`` plus the TF-free part of ``chaos``) and prepends it to
  PYTHONPATH, keeping the image's entrypoint, command, user and environment.
  The layer is cached by (source image id, agent files): made once, reused.

What comes out is an image id for every worker; the reference-run cache keys
on it, so a changed job image means a new reference run.
"""

from __future__ import annotations

import hashlib
import threading
import time

from chaos import LABEL_PROJECT, PROJECT
from chaos.agent import layer
from chaos.agent.layer import AGENT_DIR
from chaos.errors import InfrastructureError, ScenarioError
from chaos.images.versions import app_tag
from chaos.workload.spec import WorkloadSpec

LABEL_KIND = "io.tfchaos.kind"
LABEL_SOURCE = "io.tfchaos.source"
LABEL_INPUTS = "io.tfchaos.inputs"
_PREPARING = threading.Lock()  # scenarios side by side share one layer, made once


def _get(client, ref: str):
    from docker.errors import ImageNotFound

    try:
        return client.images.get(ref)
    except ImageNotFound:
        return None


def build_image(client, spec: WorkloadSpec, progress=None) -> str:
    """``docker build`` of the workload's context, offline; returns the tag."""
    context = spec.context_dir
    if context is None or not context.is_dir():
        raise ScenarioError(
            f"cluster.workload.build.context: {context} is not a folder",
            hint="give the folder with your Dockerfile, relative to the scenario (or workload) file",
        )
    dockerfile = context / spec.build.dockerfile
    if not dockerfile.is_file():
        raise ScenarioError(
            f"cluster.workload.build.dockerfile: {dockerfile} does not exist",
            hint="give the Dockerfile's path inside the build context",
        )
    tag = f"tfchaos-workload/{context.name.lower() or 'job'}-{hashlib.sha256(str(context).encode()).hexdigest()[:8]}:latest"
    if progress:
        progress(f"workload: docker build {context} ({spec.build.dockerfile}) -> {tag}")
    last_error, tail = None, []
    for chunk in client.api.build(
        path=str(context),
        dockerfile=spec.build.dockerfile,
        tag=tag,
        buildargs=spec.build.args or None,
        pull=False,
        rm=True,
        forcerm=True,
        decode=True,
        labels={LABEL_PROJECT: PROJECT, LABEL_KIND: "workload"},
    ):
        if "error" in chunk:
            last_error = chunk["error"].strip()
        elif "stream" in chunk and chunk["stream"].strip():
            tail = (tail + [chunk["stream"].strip()])[-8:]
    if last_error:
        raise InfrastructureError(
            f"building the workload image from {dockerfile} failed: {last_error}\n" + "\n".join(tail),
            hint="the build runs offline (no pull): FROM must name an image on the engine, e.g. tfchaos/worker-deps:tf2.21",
        )
    return tag


def require(client, image: str) -> None:
    if _get(client, image) is None:
        raise InfrastructureError(
            f"cluster.workload.image: image {image!r} does not exist on the Docker engine",
            hint=f"build or load it first (`docker build -t {image} .`, `docker load -i FILE`); "
            "or give `build: {context: ., dockerfile: Dockerfile}`",
        )


def with_agent(client, image: str, progress=None) -> str:
    """The image with the agent layered on (made once per source image and agent)."""
    source = _get(client, image)
    if source is None:
        require(client, image)
    archive = layer.tar_bytes()
    key = f"{source.id.split(':')[-1][:12]}-{hashlib.sha256(archive).hexdigest()[:12]}"
    tag = app_tag(f"tfchaos/agent-layer:{key}")
    if _get(client, tag) is not None:
        return tag
    if progress:
        progress(f"workload: layering the agent onto {image} -> {tag}")
    env = (source.attrs.get("Config") or {}).get("Env") or []
    pythonpath = next((e.split("=", 1)[1] for e in env if e.startswith("PYTHONPATH=")), "")
    container = client.api.create_container(
        source.id, labels={LABEL_PROJECT: PROJECT, LABEL_KIND: "build"}, network_disabled=True
    )
    try:
        client.api.put_archive(container["Id"], "/", archive)
        changes = [
            f"ENV PYTHONPATH={AGENT_DIR}" + (f":{pythonpath}" if pythonpath else ""),
            f"LABEL {LABEL_PROJECT}={PROJECT}",
            f"LABEL {LABEL_KIND}=agent-layer",
            f"LABEL {LABEL_SOURCE}={app_tag(image)}",  # one line of layers per source tree
            f"LABEL {LABEL_INPUTS}={key}",
        ]
        repository, _, name = tag.rpartition(":")
        result = client.api.commit(container["Id"], repository=repository, tag=name, changes=changes)
    finally:
        try:
            client.api.remove_container(container["Id"], force=True, v=True)
        except Exception:  # noqa: BLE001 - a leftover build container is removed by `chaos clean --all`
            pass
    _drop_older_layers(client, app_tag(image), keep=result["Id"])
    return tag


# An agent layer made in the last day may serve a run still going: two audits of one
# job next door each built the job's image (other ids under one tag) and layered
# the agent; the second dropped the first's layer between its runs, and the first's
# next run failed with "No such image" (seen in a CI rehearsal). Older ones are garbage.
LAYER_GRACE_S = 24 * 3600


def _drop_older_layers(client, image: str, keep: str, now: float | None = None) -> None:
    """Earlier agent layers of the same source tag, made more than LAYER_GRACE_S ago,
    are garbage once replaced."""
    now = time.time() if now is None else now
    for old in client.api.images(filters={"label": [f"{LABEL_KIND}=agent-layer", f"{LABEL_SOURCE}={image}"]}):
        if old["Id"] != keep and now - float(old.get("Created", now)) > LAYER_GRACE_S:
            try:
                client.api.remove_image(old["Id"], noprune=False)
            except Exception:  # noqa: BLE001 - in use by a live run: left for later
                pass


def prepare(client, spec: WorkloadSpec, progress=None) -> str:
    """The image every worker of this workload runs (tag)."""
    with _PREPARING:
        image = build_image(client, spec, progress) if spec.build is not None else spec.image
    return prepare_image(client, image, spec.agent == "auto", progress)


def prepare_image(client, image: str, agent: bool, progress=None) -> str:
    """``image`` as a worker runs it: with the agent layered on when ``agent``."""
    with _PREPARING:
        require(client, image)
        return with_agent(client, image, progress) if agent else image
