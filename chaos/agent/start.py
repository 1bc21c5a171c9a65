"""The ``start`` event: sent once, when the job has imported TensorFlow.

The Keras version is the installed distribution TensorFlow will use for
``tf.keras`` (tf-keras when TF_USE_LEGACY_KERAS is set as TF reads it, else
keras), read from package metadata so nothing is imported for it; it equals
``keras.__version__`` of that package.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata

from chaos.agent import errors
from chaos.agent.runtime import emitter, guarded
from chaos.events import STEPS_UNOBSERVED, NoticeEvent, StartEvent
from chaos.worker.fingerprint import start_fields

_started = False


def keras_distribution(environ: dict[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    # TensorFlow's own test (tensorflow/__init__.py).
    return "tf-keras" if environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1") else "keras"


def keras_version() -> str:
    try:
        return metadata.version(keras_distribution())
    except metadata.PackageNotFoundError:
        return ""


@guarded("the start event")
def on_tensorflow(module) -> None:
    global _started
    errors.install()  # again: the job may have set its own hook since start-up
    if _started:
        return
    _started = True
    version = str(getattr(module, "__version__", ""))
    emitter().emit(StartEvent, **start_fields(version, keras_version()))
    for topic, text in unobserved(tf_version=version):
        emitter().emit(NoticeEvent, topic=topic, text=text)


NO_STEPS = "the agent cannot hook this TensorFlow's tf.function"


def unobserved(modules=None, tf_version: str = "") -> list[tuple[str, str]]:
    """What the agent cannot see of this job, as (notice topic, text), said once at start (the job
    runs as it would without it). No steps at all is STEPS_UNOBSERVED: the runner then judges the
    run as agent: none; what else it misses is "agent"."""
    from chaos.agent import tf_patches

    modules = sys.modules if modules is None else modules
    out = []
    function = getattr(modules.get(tf_patches.FUNCTION_MODULE), "Function", None)
    if function is None or not hasattr(function.__dict__.get("__call__"), tf_patches.ORIGINAL):
        where = f" {tf_version}" if tf_version else ""
        out.append(
            (
                STEPS_UNOBSERVED,
                f"{NO_STEPS} (TensorFlow{where}, no {tf_patches.FUNCTION_MODULE}.Function): a custom loop's "
                "steps, and so its done event and final weights digest, are not observed; the run is judged "
                "from logs and exits as agent: none would (steps from the workload's progress pattern, if any)",
            )
        )
    return out


def ensure_started() -> None:
    """For the report calls: the start event, if TensorFlow is imported and none went out."""
    module = sys.modules.get("tensorflow")
    if not _started and module is not None and hasattr(module, "__version__"):
        on_tensorflow(module)
