"""The reader's vocabulary from the sources (docs/diagnose-sources.md): messages
that TF, NCCL, Horovod, gRPC, CUDA, Slurm, Kubernetes and the kernel print,
written as the code prints them (the source file in the comment above each),
each read through the whole reader and named with its family first; and lines
close to them that are not those failures. None is taken from the field corpus."""

from __future__ import annotations

import pytest

from chaos.diagnose.match import confident
from chaos.diagnose.shapes import shapes_in


def _tf(level: str, where: str, message: str) -> str:
    """A TF C++ log line: ``2023-01-01 00:00:00.000000: E tensorflow/...cc:123] message``."""
    return f"2023-01-01 00:00:00.000000: {level} {where}] {message}"


def _py(cls: str, message: str) -> str:
    """The last line of a Python traceback of a TF status error."""
    return f"tensorflow.python.framework.errors_impl.{cls}: {message}"


def _nccl(where: str, message: str) -> str:
    """NCCL's WARN line (NCCL_DEBUG=INFO), after an INFO line of the same rank."""
    return f"node-1:1234:1300 [0] NCCL INFO bootstrap\nnode-1:1234:1300 [0] {where} NCCL WARN {message}"


SOURCE_MESSAGES = [
    # tensorflow/core/distributed_runtime/coordination/coordination_service.cc
    pytest.param(
        "timeout",
        _py(
            "UnavailableError",
            "Task /job:worker/replica:0/task:1 heartbeat timeout. This indicates that the remote task has "
            "failed, got preempted, or crashed unexpectedly.",
        ),
        id="cs-heartbeat",
    ),
    # tensorflow/core/distributed_runtime/coordination/coordination_service.cc
    pytest.param(
        "killed",
        _py(
            "AbortedError",
            "Incarnation ID mismatch: expecting 123 but got 456. This means the remote task has restarted.",
        ),
        id="cs-incarnation",
    ),
    # tensorflow/core/distributed_runtime/coordination/coordination_service.cc
    pytest.param(
        "tf_config",
        _py("InvalidArgumentError", "Unexpected task registered with task_name=/job:worker/replica:0/task:3"),
        id="cs-unexpected-task",
    ),
    # horovod/common/controller.cc
    pytest.param(
        "hang",
        _py(
            "FailedPreconditionError",
            "Mismatched ALLREDUCE tensor shapes: One rank sent a tensor of shape [10,3], but another rank "
            "sent a tensor of shape [12,3].",
        ),
        id="hvd-mismatch-shapes",
    ),
    # horovod/common/controller.cc
    pytest.param(
        "hang",
        _py(
            "FailedPreconditionError",
            "Mismatched operations: One rank did an ALLREDUCE, but another rank did an ALLGATHER.",
        ),
        id="hvd-mismatch-ops",
    ),
    # horovod/common/controller.cc
    pytest.param(
        "hang",
        _py(
            "FailedPreconditionError",
            "Mismatched data types: One rank had type float32, but another rank had type float64.",
        ),
        id="hvd-mismatch-dtype",
    ),
    # horovod/common/controller.cc
    pytest.param(
        "hang",
        _py(
            "FailedPreconditionError",
            "Mismatched BROADCAST root ranks: One rank specified root rank 0, but another rank specified root rank 1.",
        ),
        id="hvd-mismatch-root",
    ),
    # horovod/common/operations.cc (<=0.15)
    pytest.param(
        "hang",
        _py(
            "FailedPreconditionError",
            "Mismatched allreduce tensor shapes: One rank reduced a tensor of shape [3], but another rank "
            "sent a tensor of shape [4].",
        ),
        id="hvd-mismatch-old",
    ),
    # horovod/common/stall_inspector.cc
    pytest.param(
        "hang",
        "[2023-01-01 00:00:00.000000: E /tmp/pip/horovod/common/stall_inspector.cc:107] One or more rank "
        '(marked by "!") is stalled for longer than 600 seconds. Will shutdown.',
        id="hvd-stall-shutdown",
    ),
    # nccl src/init.cc
    pytest.param(
        "version_skew",
        _nccl("init.cc:600", "Mismatched NCCL version detected : rank 1 version 2708 rank 0 version 2604"),
        id="nccl-version",
    ),
    # nccl src/include/checks.h
    pytest.param(
        "version_skew",
        _nccl("enqueue.cc:300", "Cuda failure 'no kernel image is available for execution on the device'"),
        id="nccl-no-kernel-image",
    ),
    # tensorflow/core/distributed_runtime/rpc/grpc_worker_service.cc
    pytest.param(
        "killed",
        _py(
            "AbortedError",
            "RecvTensor expects a different device incarnation: 11288349594494262162 vs. "
            '11542130100054943552. Your worker job ("/job:worker/replica:0/task:1") was probably restarted. '
            "Check your worker job for the reason why it was restarted.",
        ),
        id="tf-recv-incarnation",
    ),
    # tensorflow/core/distributed_runtime/eager/eager_service_impl.cc
    pytest.param(
        "killed",
        _py(
            "AbortedError",
            "Unable to find a context_id matching the specified one (12345). Perhaps the worker was "
            "restarted, or the context was GC'd?",
        ),
        id="tf-context-id",
    ),
    # tensorflow/core/distributed_runtime/master.cc
    pytest.param(
        "killed",
        _py("AbortedError", "Session 4b1a2c is not found. Possibly, this master has restarted."),
        id="tf-session-not-found",
    ),
    # grpc src/core/ext/filters/message_size
    pytest.param(
        "transport", _py("ResourceExhaustedError", "Sent message larger than max (2217 vs. 15)"), id="grpc-sent-larger"
    ),
    # grpc src/core/resolver/dns
    pytest.param(
        "port_blocked",
        _py(
            "UnavailableError",
            "failed to connect to all addresses; last error: UNKNOWN: DNS resolution failed for service: "
            "worker-1.default.svc:2222",
        ),
        id="grpc-dns",
    ),
    # grpc c-ares resolver
    pytest.param(
        "port_blocked",
        _tf(
            "E",
            "tensorflow/core/distributed_runtime/rpc/grpc_channel.cc:123",
            "C-ares status is not ARES_SUCCESS qtype=A name=worker-1 is_balancer=0: Domain name not found",
        ),
        id="grpc-dns-cares",
    ),
    # errno ENETUNREACH
    pytest.param(
        "port_blocked",
        _py(
            "UnavailableError",
            "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.5:2222: Failed to connect "
            "to remote host: Network is unreachable",
        ),
        id="grpc-net-unreachable",
    ),
    # grpc chttp2 transport
    pytest.param(
        "transport", _py("UnavailableError", 'GOAWAY received; Error code: 0; Debug data: "max_age"'), id="grpc-goaway"
    ),
    # grpc chttp2 transport
    pytest.param("transport", _py("UnavailableError", "keepalive watchdog timeout"), id="grpc-keepalive"),
    # tensorflow/core/kernels/save_restore_v2_ops.cc
    pytest.param(
        "checkpoint",
        _py(
            "InvalidArgumentError",
            "tensor_name = dnn/hiddenlayer_1/bias/t_0/Adagrad; shape in shape_and_slice spec [10] does not "
            "match the shape stored in checkpoint: [20]",
        ),
        id="ckpt-shape-spec",
    ),
    # tensorflow/python/training/saver.py
    pytest.param(
        "checkpoint",
        "ValueError: The passed save_path is not a valid checkpoint: /mnt/model/model.ckpt-1000",
        id="ckpt-not-valid",
    ),
    # tensorflow/python/training/saver.py
    pytest.param(
        "checkpoint",
        "ValueError: Parent directory of /mnt/model/model.ckpt doesn't exist, can't save.",
        id="ckpt-parent-dir",
    ),
    # tensorflow/core/util/tensor_bundle/tensor_bundle.cc
    pytest.param(
        "checkpoint",
        _py(
            "InvalidArgumentError",
            "tensor_name = global_step; expected dtype int64 does not equal original dtype int32",
        ),
        id="ckpt-dtype",
    ),
    # keras/saving/hdf5_format.py
    pytest.param(
        "checkpoint",
        "ValueError: You are trying to load a weight file containing 12 layers into a model with 10 layers.",
        id="keras-layer-count",
    ),
    # keras/saving/legacy/hdf5_format.py
    pytest.param(
        "checkpoint",
        "ValueError: Layer count mismatch when loading weights from file. Model expected 10 layers, "
        "found 12 saved layers.",
        id="keras-layer-count2",
    ),
    # tensorflow/python/debug/lib/check_numerics_callback.py
    pytest.param(
        "nan",
        _py(
            "InvalidArgumentError",
            '\n\n!!! Detected Infinity or NaN in output 0 of graph op "Log" (# of outputs: 1) !!!\n  dtype: '
            "<dtype: 'float32'>\n  shape: (32, 10)",
        ),
        id="nan-enable-check-numerics",
    ),
    # tensorflow/core/grappler/optimizers/data/auto_shard.cc
    pytest.param(
        "data_sharding",
        _py(
            "NotFoundError",
            "Did not find a shardable source, walked to a node which is not a dataset: name: "
            '"FlatMapDataset/_2". Consider either turning off auto-sharding or switching the '
            "auto_shard_policy to DATA to shard this dataset.",
        ),
        id="shard-not-dataset",
    ),
    # tensorflow/core/data/service/auto_shard_rewriter.cc
    pytest.param(
        "data_sharding",
        _py("NotFoundError", 'Found an unshardable source dataset: name: "RangeDataset/_1"'),
        id="shard-unshardable-data-service",
    ),
    # tensorflow/stream_executor/cuda/cuda_diagnostics.cc
    pytest.param(
        "version_skew",
        _tf(
            "E",
            "tensorflow/stream_executor/cuda/cuda_diagnostics.cc:313",
            "kernel version 470.182.3 does not match DSO version 470.223.2 -- cannot find working devices in "
            "this configuration",
        ),
        id="cuda-dso-mismatch",
    ),
    # tensorflow/stream_executor/cuda/cuda_driver.cc / CUDA driver API
    pytest.param(
        "version_skew",
        _py(
            "InternalError",
            "Failed to load PTX text as a module: CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was "
            "compiled with an unsupported toolchain.",
        ),
        id="cuda-ptx",
    ),
    # CUDA runtime cudaErrorNoKernelImageForDevice
    pytest.param(
        "version_skew",
        _py(
            "InternalError",
            "CUDA runtime implicit initialization on GPU:0 failed. Status: no kernel image is available for "
            "execution on the device",
        ),
        id="cuda-no-kernel-image",
    ),
    # CUDA driver CUDA_ERROR_NO_BINARY_FOR_GPU
    pytest.param(
        "version_skew",
        _py(
            "InternalError",
            "Failed to load in-memory CUBIN: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for "
            "execution on the device",
        ),
        id="cuda-no-binary",
    ),
    # tensorflow/core/common_runtime/gpu/gpu_device.cc
    pytest.param(
        "version_skew",
        _tf(
            "I",
            "tensorflow/core/common_runtime/gpu/gpu_device.cc:1700",
            "Ignoring visible gpu device (device: 0, name: Tesla K10.G1.8GB, pci bus id: 0000:07:00.0, "
            "compute capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda capability "
            "is 3.5.",
        ),
        id="tf-min-capability",
    ),
    # tensorflow/core/common_runtime/gpu/gpu_device.cc
    pytest.param(
        "version_skew",
        _tf(
            "W",
            "tensorflow/core/common_runtime/gpu/gpu_device.cc:1850",
            "Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are "
            "installed properly if you would like to use GPU. Follow the guide at "
            "https://www.tensorflow.org/install/gpu for how to download and setup the required libraries for "
            "your platform.",
        ),
        id="tf-dlopen",
    ),
    # tensorflow/stream_executor/cuda/cuda_dnn.cc
    pytest.param(
        "version_skew",
        _tf("E", "tensorflow/stream_executor/cuda/cuda_dnn.cc:336", "Possibly insufficient driver version: 418.67.0"),
        id="tf-cudnn-driver",
    ),
    # horovod/common/util.py check_extension
    pytest.param(
        "version_skew",
        "ImportError: Extension horovod.tensorflow has not been built: "
        "/usr/local/lib/python3.8/dist-packages/horovod/tensorflow/mpi_lib.cpython-38-x86_64-linux-gnu.so "
        "not found\nIf this is not expected, reinstall Horovod with HOROVOD_WITH_TENSORFLOW=1 to debug "
        "the build error.",
        id="hvd-not-built",
    ),
    # slurm src/slurmd/slurmstepd (jobacct_gather)
    pytest.param("host_oom", "slurmstepd: error: Exceeded job memory limit at some point.", id="slurm-exceeded-mem"),
    # slurm src/srun
    pytest.param("host_oom", "srun: error: node12: task 0: Out Of Memory", id="srun-oom"),
    # linux mm/oom_kill.c
    pytest.param(
        "host_oom",
        "[12345.678901] Memory cgroup out of memory: Killed process 4321 (python) total-vm:64000000kB, "
        "anon-rss:60000000kB",
        id="kernel-memcg",
    ),
    # slurm src/slurmd/slurmstepd/req.c
    pytest.param(
        "killed",
        "slurmstepd: error: *** STEP 123456.0 ON node12 CANCELLED AT 2024-01-01T00:00:00 ***",
        id="slurm-cancelled",
    ),
    # slurm src/srun
    pytest.param("killed", "srun: error: Node failure on node12", id="slurm-node-fail"),
    # kubernetes pkg/kubelet/nodeshutdown
    pytest.param(
        "killed",
        "Status:  Failed\nReason:  Terminated\nMessage: Pod was terminated in response to imminent node shutdown.",
        id="k8s-node-shutdown",
    ),
    # kubernetes pkg/kubelet (activeDeadlineSeconds)
    pytest.param(
        "killed",
        "Status:  Failed\nReason:  DeadlineExceeded\nMessage: Pod was active on the node longer than the "
        "specified deadline",
        id="k8s-deadline",
    ),
    # kubernetes pkg/kubelet/prober
    pytest.param(
        "killed",
        "  Normal   Killing    1m    kubelet  Container tensorflow failed liveness probe, will be restarted",
        id="k8s-liveness",
    ),
    # tensorflow/python/distribute/failure_handling/failure_handling.py
    pytest.param("killed", "INFO:tensorflow:Member 1 has received termination notice.", id="gce-preempt"),
    # tensorflow/python/distribute/failure_handling/failure_handling.py
    pytest.param("killed", "INFO:tensorflow:Member 1 has received termination signal.", id="tf-sigterm"),
    # tensorflow/core/common_runtime/gpu/gpu_device.cc
    pytest.param(
        "gpu_oom",
        _py("InternalError", "CUDA runtime implicit initialization on GPU:0 failed. Status: out of memory"),
        id="gpu-implicit-init",
    ),
    # xla/stream_executor/tf_allocator_adapter / xla service
    pytest.param(
        "gpu_oom",
        _py("ResourceExhaustedError", "Out of memory while trying to allocate 8589934592 bytes."),
        id="gpu-xla-oom",
    ),
    # tensorflow/python/distribute/multi_worker_util.py
    pytest.param("tf_config", "ValueError: `task_type` 'worker' not found in cluster_spec.", id="tfc-task-type"),
    # tensorflow/python/distribute/multi_worker_util.py
    pytest.param("tf_config", "ValueError: The `task_id` 2 exceeds the maximum id of worker.", id="tfc-task-id"),
    # tensorflow/python/distribute/multi_worker_util.py
    pytest.param("tf_config", "ValueError: There must be at most one 'chief' job.", id="tfc-two-chiefs"),
    # tensorflow/python/training/server_lib.py
    pytest.param("tf_config", "ValueError: No task with index 3 in job 'worker'", id="tfc-no-task-index"),
]


@pytest.mark.parametrize("family, text", SOURCE_MESSAGES)
def test_a_message_from_the_sources_names_its_family_first(family, text, rank_log):
    ranked = rank_log(text)
    assert ranked and confident(ranked), [m.entry.name for m in ranked[:3]]
    assert ranked[0].entry.family == family, [(m.entry.name, m.entry.family) for m in ranked[:3]]


@pytest.mark.parametrize(
    "line, not_shapes",
    [
        # NCCL's version check is the versions', not the ranks' collectives (horovod_mismatch)
        (
            "node-1:1:1 [0] init.cc:600 NCCL WARN Mismatched NCCL version detected : rank 1 version 2708 rank 0 version 2604",
            {"horovod_mismatch", "nccl_warn"},
        ),
        # Horovod's device-selection mismatch follows each host's build and devices, not the code
        (
            "Mismatched ALLREDUCE CPU/GPU device selection: One rank specified device CPU, but another rank specified "
            "device GPU.",
            {"horovod_mismatch"},
        ),
        (
            "Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, "
            "allgather or broadcast a tensor after one of the ranks finished execution.",
            {"horovod_stall", "horovod_mismatch"},
        ),
        # a GPU TF uses, and the driver version it reports, are not a mismatch
        (
            _tf(
                "I",
                "tensorflow/core/common_runtime/gpu/gpu_device.cc:1510",
                "Created device /job:localhost/replica:0/task:0/"
                "device:GPU:0 with 14648 MB memory:  -> device: 0, name: Tesla V100, compute capability: 7.0",
            ),
            {"cuda_arch_mismatch", "driver_insufficient"},
        ),
        (
            _tf(
                "I", "tensorflow/stream_executor/cuda/cuda_diagnostics.cc:204", "kernel reported version is: 470.182.3"
            ),
            {"driver_insufficient", "cuda_arch_mismatch"},
        ),
        # a readiness probe does not restart the container; a started container is no kill
        (
            "  Warning  Unhealthy  1m  kubelet  Readiness probe failed: HTTP probe failed with statuscode: 503",
            {"pod_terminated"},
        ),
        ("  Normal   Started    1m  kubelet  Started container tensorflow", {"pod_terminated", "restarted"}),
        # Slurm aborting a step after another failure, and TF's host-memory warning, are not Slurm's memory kill
        (
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
            {"slurm_cancelled", "slurm_memory"},
        ),
        (
            "W tensorflow/core/framework/cpu_allocator_impl.cc:80] Allocation of 400000000 exceeds 10% of free system memory.",
            {"slurm_memory", "oom_killer"},
        ),
        # a channel set up with host names, a worker that recovered
        (
            _tf(
                "I",
                "tensorflow/core/distributed_runtime/rpc/grpc_channel.cc:272",
                "Initialize GrpcChannelCache for job worker -> {0 -> worker-0.svc:2222, 1 -> worker-1.svc:2222}",
            ),
            {"dns_failed", "connect_timeout"},
        ),
        ("INFO:tensorflow:Worker /job:worker/replica:0/task:1 has been recovered.", {"restarted", "preempted"}),
        # a traceback's first line, a restore that worked, a small message sent
        ("Traceback (most recent call last):", {"tf_config_error"}),
        (
            "INFO:tensorflow:Restoring parameters from /tmp/model/model.ckpt-1000",
            {"checkpoint_shape", "checkpoint_missing", "checkpoint_write"},
        ),
        ("Sent 1024 bytes to worker-1", {"grpc_limit"}),
    ],
)
def test_near_misses_of_the_source_shapes(line, not_shapes):
    assert not not_shapes & set(shapes_in(line))


def test_a_heartbeat_timeout_that_names_preemption_among_its_causes_is_a_timeout(rank_log):
    """The coordination service's message lists "got preempted" as one possible
    cause: the heartbeat says it better (it was tied with killed before)."""
    line = _py(
        "UnavailableError",
        "Task /job:worker/replica:0/task:1 heartbeat timeout. This indicates that the "
        "remote task has failed, got preempted, or crashed unexpectedly.",
    )
    assert "preempted" not in shapes_in(line)
    ranked = rank_log(line)
    assert confident(ranked) and ranked[0].entry.family == "timeout"
