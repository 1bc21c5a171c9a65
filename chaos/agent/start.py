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
from chaos.events import NoticeEvent, StartEvent
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
    emitter().emit(StartEvent, **start_fields(str(getattr(module, "__version__", "")), keras_version()))
    for text in unobserved(keras_distribution(), keras_version()):
        emitter().emit(NoticeEvent, topic="agent", text=text)


def unobserved(distribution: str, version: str, modules=None) -> list[str]:
    """What the agent cannot see of this job, said once at start (the job runs as it would without it)."""
    from chaos.agent import tf_patches

    modules = sys.modules if modules is None else modules
    out = []
    function = getattr(modules.get(tf_patches.FUNCTION_MODULE), "Function", None)
    if function is None or not hasattr(function.__dict__.get("__call__"), tf_patches.ORIGINAL):
        out.append(
            "this TensorFlow has no tf.function the agent can hook: a custom loop's steps are not observed "
            "(judged from logs and exits, as agent: none)"
        )
    if distribution == "keras" and version.startswith("3."):
        out.append(
            f"tf.keras is Keras {version} (no TF_USE_LEGACY_KERAS=1): Keras 3's fit is seen through its "
            "optimizer's steps only, not its epochs, BackupAndRestore backups or restores"
        )
    return out


def ensure_started() -> None:
    """For the report calls: the start event, if TensorFlow is imported and none went out."""
    module = sys.modules.get("tensorflow")
    if not _started and module is not None and hasattr(module, "__version__"):
        on_tensorflow(module)
