"""The worker harness: the only code of the project that imports TensorFlow.

``python -m chaos.worker`` trains with MultiWorkerMirroredStrategy from
TF_CONFIG and reports what it does as JSON-line events (chaos.events). The
callback in ``chaos.worker.callback`` works in a user's own training script too.
"""
