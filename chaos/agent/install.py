"""Turn the agent on: import hooks first (sitecustomize runs them before the
sitecustomize it shadows), the exception hooks after that one ran, so a hook
it installs (Debian's apport) is wrapped rather than wrapping ours away.

Only the import hook machinery and the exception hooks load at interpreter
start-up (standard library, a few ms); the rest loads when TensorFlow or Keras
is imported, so a Python process of the job that never imports them pays
next to nothing.
"""

from __future__ import annotations

from chaos.agent import errors, importhook

# Modules that define a Keras fit; their import patches it (chaos.agent.fit.fit_hook says which class's).
TRAINING_MODULES = (
    "tf_keras.src.engine.training",  # tf-keras (TF >= 2.16 with TF_USE_LEGACY_KERAS=1)
    "keras.src.engine.training",  # Keras 2.13 - 2.15 (TF 2.15's tf.keras)
    "keras.engine.training",  # Keras <= 2.12
    "keras.src.backend.tensorflow.trainer",  # Keras 3 (tf.keras of TF >= 2.16): TensorFlowTrainer, Model's base
)

_installed = False


def _on_tensorflow(module) -> None:
    from chaos.agent import start

    start.on_tensorflow(module)


def _on_training_module(module) -> None:
    from chaos.agent import fit

    fit.patch_training_module(module)


def _on_loop_module(module) -> None:
    """A TF or Keras module a custom loop uses (chaos.agent.tf_patches)."""
    from chaos.agent import tf_patches

    patch = {
        tf_patches.FUNCTION_MODULE: tf_patches.patch_function_module,
        tf_patches.CHECKPOINT_MODULE: tf_patches.patch_checkpoint_module,
        tf_patches.MANAGER_MODULE: tf_patches.patch_manager_module,
        tf_patches.VARIABLE_MODULE: tf_patches.patch_variable_module,
    }.get(module.__name__, tf_patches.patch_optimizer_module)
    patch(module)


def loop_modules() -> tuple[str, ...]:
    # The names, without importing tf_patches (and so the loop observer) at start-up.
    return (
        "tensorflow.python.eager.polymorphic_function.polymorphic_function",
        "tensorflow.python.checkpoint.checkpoint",
        "tensorflow.python.checkpoint.checkpoint_management",
        "tensorflow.python.ops.resource_variable_ops",
        "tf_keras.src.optimizers.optimizer",
        "tf_keras.src.optimizers.legacy.optimizer_v2",
        "keras.src.optimizers.optimizer",
        "keras.src.optimizers.legacy.optimizer_v2",
        "keras.src.optimizers.base_optimizer",
    )


def install_import_hooks() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    importhook.when_imported("tensorflow", _on_tensorflow)
    for name in TRAINING_MODULES:
        importhook.when_imported(name, _on_training_module)
    for name in loop_modules():
        importhook.when_imported(name, _on_loop_module)


def install_excepthooks() -> None:
    errors.install()
