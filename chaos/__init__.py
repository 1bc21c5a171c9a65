"""Chaos testing for distributed TensorFlow training (MultiWorkerMirroredStrategy)."""

__version__ = "0.1.0"

# Every Docker object a run creates carries these labels, so cleanup can find them.
LABEL_PROJECT = "io.tfchaos.project"
LABEL_RUN = "io.tfchaos.run"
PROJECT = "tfchaos"
# The process tree of one run or test session shares an id through this variable
# (chaos.backends.docker.ownership.session_id sets it on first use).
SESSION_ENV = "TFCHAOS_SESSION"
