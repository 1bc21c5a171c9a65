"""Chaos testing for distributed TensorFlow training (MultiWorkerMirroredStrategy)."""

__version__ = "0.1.0"

# Every Docker object a run creates carries these labels, so cleanup can find them.
LABEL_PROJECT = "io.tfchaos.project"
LABEL_RUN = "io.tfchaos.run"
PROJECT = "tfchaos"
