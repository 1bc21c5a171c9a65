"""Round 7 of the field reader (issue 24), written on the training cases only
(`--split train-7`: every split but heldout-7): TF 1.x's saver when the files a
checkpoint state names are missing, HDF5's own I/O errors on a model's .h5
file, a traceback frame in the code that saves or restores a checkpoint, and
ClusterSpec's "No such job in cluster". The lines are as TF, Keras and h5py
print them."""

from __future__ import annotations

import pytest

from chaos.diagnose import watch_for
from chaos.diagnose.match import confident, rank
from chaos.diagnose.observe import observe_files
from chaos.diagnose.shapes import shapes_in


def _rank(tmp_path, catalogue, text: str):
    path = tmp_path / "job.log"
    path.write_text(text, encoding="utf-8")
    workers, _ = observe_files([path], watch_for(catalogue))
    return rank(catalogue, workers)


@pytest.mark.parametrize("line, shape", [
    ("E0712 18:25:49.778093 ProjectorPluginIsActiveThread saver.py:1817] Couldn't match files for checkpoint "
     "/workspace/model_dir/model.ckpt-25076", "checkpoint_missing"),
    ("RuntimeError: Can't decrement id ref count (file write failed: time = Mon Jul 13 23:24:31 2020", "hdf5_io"),
    ("OSError: Unable to create file (unable to open file: name = 'weights.h5', errno = 13, error message = "
     "'Permission denied', flags = 13, o_flags = 242)", "hdf5_io"),
    ('  File "/usr/lib/python2.7/site-packages/tensorflow/python/training/saver.py", line 361, in _AddShardedSaveOps',
     "checkpoint_frame"),
    ('  File "/env/lib/python3.7/site-packages/tensorflow_core/python/training/tracking/util.py", line 1168, in save',
     "checkpoint_frame"),
    ('  File "/env/lib/python3.7/site-packages/tensorflow_core/python/keras/callbacks.py", line 1038, in _save_model',
     "checkpoint_frame"),
    ("ValueError: No such job in cluster: u'evaluator'", "tf_config_error"),
])
def test_the_round_7_line_shapes(line, shape):
    assert shape in shapes_in(line)


@pytest.mark.parametrize("line", [
    '  File "/env/lib/python3.7/site-packages/tensorflow/python/keras/callbacks.py", line 977, in on_batch_end',
    '  File "/env/lib/python3.7/site-packages/tensorflow/python/training/server_lib.py", line 145, in __init__',
    "INFO:tensorflow:Saving checkpoints for 0 into /tmp/model/model.ckpt.",  # a save that went well
    "Epoch 1: saving model to /tmp/weights.h5",
    "ValueError: No such file or directory: 'data.csv'",
])
def test_lines_that_are_not_those_shapes(line):
    assert not {"checkpoint_frame", "hdf5_io", "tf_config_error", "checkpoint_missing"} & set(shapes_in(line))


SAVE_TRACEBACK = (
    "INFO:tensorflow:Saving checkpoints for 0 into train_dir/model.ckpt.\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/bin/trainer", line 83, in <module>\n'
    "    tf.app.run()\n"
    '  File "/usr/lib/python2.7/site-packages/tensorflow/python/training/saver.py", line 343, in _AddShardedSaveOpsForV2\n'
    "    sharded_prefixes, checkpoint_prefix, delete_old_dirs=True)\n"
)


def test_a_traceback_that_stops_in_the_saver_reads_as_a_checkpoint_failure(tmp_path, catalogue):
    ranked = _rank(tmp_path, catalogue, SAVE_TRACEBACK)
    assert confident(ranked) and ranked[0].entry.family == "checkpoint"


def test_a_peer_lost_during_a_save_is_not_taken_for_a_checkpoint_failure(tmp_path, catalogue):
    """The frame is a weak sign: the error the save raised says more."""
    text = SAVE_TRACEBACK + (
        "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\n"
        "Additional GRPC error information from remote target /job:worker/replica:0/task:1:\n"
        ":{\"created\":\"@1574320322.398\",\"description\":\"Error received from peer\",\"grpc_status\":14}\n"
    )
    ranked = _rank(tmp_path, catalogue, text)
    assert ranked and ranked[0].entry.family != "checkpoint"


MODEL_WAIT = (
    "2018-04-21 00:34:44.031831: I tensorflow/core/distributed_runtime/master_session.cc:1017] "
    "Start master session 76c3e3934cf937ae with config:\n"
    "INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  Variables not initialized: w, b\n"
    "2018-04-21 00:35:15.087387: I tensorflow/core/distributed_runtime/master_session.cc:1017] "
    "Start master session c4f0640d9b337f3b with config:\n"
    "INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  Variables not initialized: w, b\n"
)


def test_a_worker_waiting_for_the_model_is_not_waiting_for_its_peers(tmp_path, catalogue):
    """Its session is up (its peers answered): the chief has not initialised the
    variables. The bring-up hangs of a blocked port or a wrong TF_CONFIG (a wait
    for peers) do not explain it; it was tied with them before round 7."""
    ranked = _rank(tmp_path, catalogue, MODEL_WAIT)
    assert confident(ranked) and ranked[0].entry.family == "hang"
    assert not any(m.entry.family == "port_blocked" for m in ranked)


def test_a_worker_waiting_for_its_peers_still_hangs_at_bring_up(tmp_path, catalogue):
    text = (
        "2024-01-01 10:00:00.000000: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:457] "
        "Started server with target: grpc://worker-0:23600\n"
        "2024-01-01 10:00:40.000000: I tensorflow/core/distributed_runtime/master.cc:228] "
        "CreateSession still waiting for response from worker: /job:worker/replica:0/task:1\n"
    )
    ranked = _rank(tmp_path, catalogue, text)
    assert ranked and ranked[0].entry.family in ("port_blocked", "tf_config")
