"""Failures known from the field that this machine cannot reproduce: GPU
memory, NCCL, a cloud's preemption and a kubelet's eviction, parameter-server
jobs at scale... Each entry is marked "from the field, not reproduced here",
with the public threads it was read from, its signatures (the line shapes of
``chaos.diagnose.shapes``), and its explanation and fix, next to the entries
measured by the scenario files.

Weights (what each matched signature adds to the entry's score):

* 5-6: a line that names the cause itself (a gRPC size limit, a Horovod/TF
  version mismatch, a parameter server's OOM, a TF_CONFIG that is wrong);
* 4: a line specific to the failure (the CUDA driver's OOM, ``NCCL WARN``,
  ``Evicted``, a heartbeat timeout, a corrupt checkpoint);
* 2-3: a line that is part of it but also of others (``Killed``, exit 137,
  the BFC allocator's statistics, a stalled collective);
* 1: a consequence many failures share (``Deadline Exceeded``).

An entry needs 1.5 to be shown, so no weak line alone names a failure. A
line that is absent is no evidence against an entry (users post excerpts):
field entries are judged only on what they find. Where a scenario of the same
family matches too, it is ranked first (``match.rank``): it was measured here,
with evidence from this framework's own runs.
"""

from __future__ import annotations

import functools

from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.signatures import FieldExitSignature, ShapeSignature
from chaos.diagnose.tfconfig import SingleHostClusterSignature, TfConfigMistakeSignature
from chaos.diagnose.trends import BringUpShapeSignature, LossExplodesSignature

NOT_REPRODUCED = "from the field, not reproduced here"


def S(shapes: str, weight: float, why: str) -> ShapeSignature:
    return ShapeSignature(tuple(shapes.split()), weight, why)


def B(shapes: str, weight: float, why: str) -> BringUpShapeSignature:
    """A shape that counts only before the worker trained (``trends.BringUpShapeSignature``)."""
    return BringUpShapeSignature(tuple(shapes.split()), weight, why)


def _entry(name, family, description, symptom, cause, fix, signatures, sources, reproduced_by="") -> KnownFailure:
    return KnownFailure(
        name=name,
        file="",
        description=description,
        symptom=symptom,
        cause=cause,
        fix=fix,
        signatures=tuple(signatures),
        measured=(),
        family=family,
        origin="field",
        sources=tuple(sources),
        reproduced_by=reproduced_by,
    )


@functools.lru_cache(maxsize=1)
def _entries() -> tuple[KnownFailure, ...]:
    return (
        _entry(
            "field-gpu-out-of-memory",
            "gpu_oom",
            "A worker's GPU runs out of memory: the CUDA driver or TF's BFC allocator cannot allocate",
            "`failed to allocate ... from device: CUDA_ERROR_OUT_OF_MEMORY` (the CUDA driver, often at start-up, "
            "often logged at level I), or `ResourceExhaustedError: OOM when allocating tensor with shape[...] ... "
            "by allocator GPU_0_bfc` with the allocator's `Limit:`/`InUse:` statistics; peers then abort their "
            "collective (`UnavailableError`, `Horovod has been shut down`).",
            "A step needs more device memory than is free: a larger batch or model, several processes on one GPU "
            "(each TF process maps nearly all of every visible GPU unless told not to), or no pinning of one "
            "process per GPU, so every worker allocates on GPU 0.",
            "Give each process its own GPU (CUDA_VISIBLE_DEVICES, or hvd.local_rank()), enable memory growth or set "
            "a per-process memory limit (tf.config.experimental.set_memory_growth / "
            "set_logical_device_configuration), lower the per-replica batch, use mixed precision; check nvidia-smi "
            "for other processes on the device.",
            [
                S("cuda_oom", 4, "the CUDA driver's out-of-memory (CUDA_ERROR_OUT_OF_MEMORY)"),
                S(
                    "tf_oom_device",
                    4,
                    "TF's allocator out of memory on a GPU (OOM when allocating tensor ... GPU / _bfc)",
                ),
                S("dst_tensor", 3, "Dst tensor is not initialized (TF 1.x's way of saying the GPU is full)"),
                S("bfc_stats", 2, "the BFC allocator's memory statistics, printed when an allocation fails"),
                S("tf_oom", 2, "OOM when allocating tensor (no device named)"),
                S("gpu_memory_full", 1, "nvidia-smi's memory column"),
            ],
            [
                "https://github.com/cortexlabs/cortex/pull/853",
                "https://github.com/keras-team/keras/issues/9643",
                "https://github.com/horovod/horovod/issues/552",
            ],
        ),
        _entry(
            "field-host-out-of-memory",
            "host_oom",
            "A worker runs out of host memory: the kernel's OOM killer or a container memory limit kills it",
            "The process ends with `Killed` (the shell), exit code 137, `OOMKilled` (Kubernetes), the kernel's "
            "`invoked oom-killer`, or YARN's `Container killed by YARN for exceeding memory limits` / `is running "
            "beyond 'PHYSICAL' memory limits ... Killing container` (Spark, TonY), often after TF's `Allocation of N "
            "exceeds 10% of system memory` warnings; or `std::bad_alloc`. Its peers then fail their collective.",
            "The input pipeline (large shuffle buffers, whole datasets loaded in memory, many loader processes), "
            "a model or embedding too big for the host, or a container limit lower than the job's peak.",
            "Raise the container's memory limit and request to the job's measured peak (on YARN: the executor's "
            "memoryOverhead, or yarn.nodemanager.vmem-check-enabled=false for a virtual-memory kill), stream the data "
            "(tf.data from files instead of in-memory arrays), shrink shuffle buffers and prefetch, and restart "
            "from the last checkpoint (BackupAndRestore).",
            [
                S("oom_killer oomkilled", 4, "the kernel's OOM killer or Kubernetes' OOMKilled"),
                S("yarn_memory_kill", 5, "YARN's node manager killed the container for exceeding its memory limit"),
                S(
                    "cloud_replica_oom",
                    5,
                    "the cloud training service: a replica ran out of memory and was killed (SIGKILL)",
                ),
                S("bad_alloc", 3, "std::bad_alloc / Cannot allocate memory"),
                S("tf_oom_cpu", 3, "TF's allocator out of memory on the host (by allocator cpu)"),
                S("shell_killed", 3, "the shell's `Killed` (SIGKILL: on one host, most often the kernel's OOM killer)"),
                S("exit_137", 2, "exit code 137 (SIGKILL)"),
                S("system_memory_warning", 1, "TF: Allocation of N exceeds 10% of system memory"),
                S("slurm_memory", 4, "Slurm killed the step for exceeding its memory request"),
                FieldExitSignature(137),
                FieldExitSignature("nonzero", True),
                FieldExitSignature(134),
            ],
            [
                "https://github.com/tensorflow/tensorflow/issues/9419",
                "https://github.com/keras-team/keras/issues/3476",
                "https://github.com/IBM/FfDL/issues/127",
                "https://github.com/tensorflow/tensorflow/issues/59383",
                "https://github.com/yahoo/TensorFlowOnSpark/issues/426",
                "https://github.com/tensorflow/models/issues/5591",
            ],
        ),
        _entry(
            "field-worker-evicted-or-preempted",
            "killed",
            "A worker is evicted, preempted or restarted by its orchestrator or cloud",
            "`kubectl` shows the pod `Evicted` (`The node was low on resource: memory`), a preempted node, a "
            "`CrashLoopBackOff`, or the TFJob `has failed because 1 Worker replica(s) failed`; mpirun says a rank "
            "`exited on signal 9`; a TPU job finds `lame workers`; a restarted task no longer matches the "
            "collective group (`current incarnation doesn't match`).",
            "The node was short of memory or disk and the kubelet evicted the pod (pods with no requests go "
            "first), a spot/preemptible VM was reclaimed, or the orchestrator restarted one task while the "
            "others kept running.",
            "Set memory requests equal to limits so the pod is not first to be evicted, handle preemption "
            "(tf.distribute.experimental.PreemptionCheckpointHandler, BackupAndRestore) and restart every worker "
            "together from the last checkpoint (restartPolicy for the whole job, not one replica).",
            [
                S("evicted", 4, "the pod was evicted"),
                S("preempted", 4, "the node or VM was preempted"),
                S("restarted", 3, "a task restarted while the others ran on"),
                S("replica_failed", 3, "the TFJob failed because a replica failed"),
                S("rank_signal", 3, "mpirun: a rank exited on a signal"),
                S("backoff", 2, "the container is restarting in a loop"),
                S("pod_restarted", 2, "kubectl shows a pod restarted"),
                S("slurm_cancelled", 4, "Slurm cancelled the job step (time limit, preemption, node failure)"),
                S(
                    "pod_terminated",
                    3,
                    "the kubelet ended the pod (node shutdown, active deadline, failed liveness probe)",
                ),
                S("signal_9", 1, "SIGKILL"),
                FieldExitSignature(137),
                FieldExitSignature(143),
            ],
            [
                "https://github.com/kubeflow/trainer/issues/301",
                "https://github.com/kubeflow/pipelines/issues/4275",
                "https://github.com/kubeflow/trainer/issues/999",
            ],
        ),
        _entry(
            "field-nccl-setup-or-transport-fails",
            "transport",
            "NCCL cannot set up or keep its transport between GPUs or hosts",
            "NCCL's own `NCCL WARN` lines (`Call to connect failed`, `Socket creation failed`, `Call to ibv_create_qp "
            "failed`, `socket progress error`) followed by `NCCL INFO ... -> 2` chains, then `ncclCommInitRank "
            "failed: unhandled system error` or `Internal: unhandled system error` from TF's NCCL ops; or a silent hang.",
            "NCCL picked an interface or transport the hosts cannot use (a docker bridge, IPv6, InfiniBand "
            "without its resources under srun/containers), a firewall between the hosts, or NCCL/CUDA/driver "
            "versions that do not work together.",
            "Rerun with NCCL_DEBUG=INFO and read the first WARN; set NCCL_SOCKET_IFNAME to the hosts' real "
            "interface, NCCL_IB_DISABLE=1 to test without InfiniBand, open the ports between hosts, and check "
            "the NCCL build matches the CUDA runtime.",
            [
                S("nccl_warn", 4, "NCCL's own warning"),
                S(
                    "nccl_failed",
                    4,
                    "NCCL failed to initialise or aborted (ncclCommInitRank failed, unhandled system error)",
                ),
                S("ibv_failed", 3, "an InfiniBand verbs call failed"),
                S("nccl_error_chain", 2, "NCCL INFO lines returning an error code"),
            ],
            [
                "https://github.com/horovod/horovod/issues/110",
                "https://github.com/NVIDIA/nccl/issues/224",
                "https://github.com/tensorflow/tensorflow/issues/51760",
                "https://github.com/horovod/horovod/issues/3611",
            ],
        ),
        _entry(
            "field-mpi-tcp-on-unroutable-interface",
            "transport",
            "Open MPI's TCP transport connects on an interface the peer cannot route (a Docker bridge, a second NIC)",
            "mpirun's ranks print `btl_tcp_endpoint.c:...] connect() to 172.17.0.1 failed: Connection refused (111)` / "
            "`No route to host (113)`, `btl: tcp: Match incoming connection from ... failed`, or `received unexpected "
            "process identifier`; hvd.init() or the first allreduce hangs.",
            "Open MPI uses every interface it finds; an address that exists on every host (docker0's 172.17.0.1, "
            "virbr0, a NIC not routed between the hosts) makes a rank connect to itself or to nothing.",
            "Tell Open MPI and NCCL which interface to use: `-mca btl_tcp_if_include eth0` (or `btl_tcp_if_exclude "
            "lo,docker0`) and `-x NCCL_SOCKET_IFNAME=eth0`; horovodrun picks a common routable interface itself.",
            [S("mpi_btl_tcp", 4, "Open MPI's TCP transport could not connect to or identify a peer")],
            ["https://github.com/horovod/horovod/issues/397", "https://github.com/horovod/horovod/issues/281"],
        ),
        _entry(
            "field-grpc-message-limit",
            "transport",
            "A message between tasks is larger than gRPC's or protobuf's limit",
            "`Received message larger than max (N vs. 4194304)`, `exceeded maximum protobuf size of 2GB`, or "
            "`A protocol message was rejected because it was too big`; the peer that should receive it then "
            "looks down (`seems down`, `Deadline Exceeded`).",
            "A tensor sent between tasks (a large embedding on a parameter server, a gathered batch, a whole "
            "model) exceeds gRPC's default 4 MB receive limit or protobuf's 64 MB/2 GB limits.",
            "Partition large variables (tf.fixed_size_partitioner / more parameter servers), send smaller "
            "pieces, or raise the channel's max message size where the framework lets you.",
            [S("grpc_limit", 6, "a gRPC/protobuf message size limit was hit")],
            [
                "https://github.com/tensorflow/tensorflow/issues/2233",
                "https://github.com/tensorflow/recommenders/issues/274",
            ],
        ),
        _entry(
            "field-connection-to-a-peer-breaks",
            "transport",
            "A gRPC connection between tasks breaks in the middle of training",
            "`UnavailableError: Socket closed`, `Connection reset by peer` or `OS Error` on the survivors, "
            "aborting the all-reduce (`Aborting RingReduce with Unavailable: Socket closed`).",
            "A peer's process died or restarted, a proxy or load balancer cut an idle connection, or the "
            "network dropped; the line says a connection broke, not why.",
            "Look at the peer named in `remote target /job:.../task:N`: its own log says why it went away. "
            "Restart all workers from the last checkpoint; keep connections alive across idle periods.",
            [
                S("connection_reset", 2, "a connection reset by the peer"),
                S("socket_closed", 2, "a socket closed"),
                S("os_error", 2, "gRPC's OS Error"),
                S("too_many_pings", 3, "gRPC closed the connection for too many keep-alive pings"),
                S("grpc_transport_closed", 2, "gRPC's transport closed under the call (GOAWAY, keep-alive timeout)"),
            ],
            [
                "https://github.com/mlcommons/training/issues/272",
                "https://github.com/tensorflow/tensorflow/issues/12080",
            ],
        ),
        _entry(
            "field-peer-port-unreachable",
            "port_blocked",
            "A task cannot reach a peer's port: refused, timed out, or no route",
            "`failed to connect to 'ipv4:10.0.0.5:2222': socket error: connection refused` / `timeout occurred`, "
            "`Connect failed ... Connection refused`, `failed to connect to all addresses`; the job waits at "
            "start (`CreateSession still waiting for response from worker`). Under mpirun: `A process or daemon was "
            "unable to complete a TCP connection to another process ... usually caused by a firewall`; Horovod: "
            "`NoValidAddressesFound: Horovod was unable to connect to task service #1 on any of the following "
            "addresses`. A task whose own port another process holds (`Address already in use`) never listens.",
            "A firewall or security group blocks the port, the address is not reachable from where the task "
            "runs (outside the cluster's network), nothing listens there yet, or the address/port is wrong.",
            "From the waiting task's host, connect to the peer's host:port (nc -zv HOST PORT); open the port "
            "between all tasks, run every task inside the same network, start every task.",
            [
                B("connection_refused", 3, "a connection refused before training began"),
                B("connect_timeout", 3, "a connection that timed out / no route to host before training began"),
                B("failed_connect_address", 3, "gRPC could not connect to a peer's address before training began"),
                B("failed_connect_all", 2, "gRPC: failed to connect to all addresses before training began"),
                S("waiting_for_worker", 1, "a task waits for a peer that never answers"),
                S("ps_waited", 3, "a worker waits at bring-up for a parameter server that does not answer"),
                S("mpi_tcp_daemon", 5, "Open MPI: a daemon could not complete a TCP connection (a firewall, it says)"),
                S("orte_daemons", 1, "Open MPI could not start its daemons on every host"),
                S("horovodrun_start_timeout", 3, "horovodrun timed out reaching its task services on the other hosts"),
                S(
                    "horovod_no_valid_addresses",
                    4,
                    "Horovod's tasks could not reach its driver or task service on any address",
                ),
                # as likely as a TF_CONFIG that gives two tasks one port (field-task-port-already-in-use): tied
                # across families unless a printed cluster shows the duplicate, so "no confident match" with both
                S("port_in_use", 4, "a task's own port is held by another process: it never listens for its peers"),
                S("server_start_failed", 1.5, "gRPC could not start the task's server"),
                B("dns_failed", 3, "a peer's host name did not resolve before training began"),
            ],
            [
                "https://github.com/caicloud/tensorflow-demo/issues/13",
                "https://github.com/tensorflow/tensorflow/issues/12745",
                "https://github.com/open-mpi/ompi/issues/12103",
                "https://github.com/horovod/horovod/issues/2547",
            ],
        ),
        _entry(
            "field-heartbeat-or-collective-timeout",
            "timeout",
            "A heartbeat, collective or coordination-service deadline fires: a task stopped answering",
            "`Task /job:worker/replica:0/task:N heartbeat timeout` / `has been set to ERROR in coordination "
            "service`, `Barrier timed out ... Wait_for_all_tasks_to_register`, `/job:worker/replica:0/task:1 "
            "seems down` then `Cluster check alive failed ... is down, aborting collectives`, `DEADLINE_EXCEEDED`.",
            "One task stopped answering (it hung, was paused, crashed without its peers noticing, or the network "
            "between them froze), or some tasks registered later than the deadline allows (a slow scheduler).",
            "Find the task named in the timeout and read its own log; lengthen the registration/heartbeat "
            "timeouts when tasks start slowly; restart all workers from the last checkpoint.",
            [
                S("heartbeat", 4, "a heartbeat timeout"),
                S("barrier_timeout", 4, "the coordination service's barrier timed out"),
                S("coordination_error", 3, "the coordination service set a task to ERROR"),
                S("task_down", 3, "a task declared down"),
                S("collective_timeout", 3, "a collective timed out"),
                S("gloo_timeout", 4, "Gloo (Horovod's controller) timed out waiting for a peer or a rendezvous key"),
                S("deadline", 1, "DEADLINE_EXCEEDED"),
            ],
            [
                "https://github.com/EleutherAI/architecture-objective/issues/26",
                "https://github.com/AI-Hypercomputer/gpu-recipes/issues/2",
                "https://github.com/ray-project/ray/issues/25866",
            ],
        ),
        _entry(
            "field-ranks-stall-in-a-collective",
            "hang",
            "A collective or a session waits for ranks that never come, with no peer dead",
            "Horovod: `One or more tensors were submitted to be reduced, gathered or broadcasted by subset of "
            "ranks` with `[missing ranks: N]` or `Stalled ranks:`; TF 1.x: `Waiting for model to be ready`; no "
            "error, no exit.",
            "The ranks do not run the same collectives in the same order: one rank restored a checkpoint or "
            "took another branch, ran out of data first, or never reached its init (an exception on it). "
            "`Waiting for model to be ready` means the session is up and the chief has not initialised the "
            "variables: a chief that failed or never started, variables the chief's init does not cover, or a "
            "cluster with no `chief` (a TF_CONFIG naming it `master`).",
            "Make every rank run the same steps (same data length per rank, broadcast after restore on all "
            "ranks, hvd.join / drop_remainder), and read the stalled rank's own log; for a model that is "
            "never ready, read the chief's log and check that TF_CONFIG names a `chief`.",
            [
                S("horovod_stall", 4, "Horovod: a collective submitted by a subset of ranks"),
                S("horovod_ranks", 3, "the ranks Horovod waits for"),
                S("horovod_mismatch", 4, "Horovod: the ranks submitted different collectives under one name"),
                S("model_not_ready", 3, "TF 1.x: the session waits for the model to be initialised"),
            ],
            [
                "https://github.com/horovod/horovod/issues/534",
                "https://github.com/horovod/horovod/issues/1442",
                "https://github.com/tensorflow/tensorflow/issues/20585",
            ],
        ),
        _entry(
            "field-keras2-code-on-keras3",
            "keras_api",
            "Keras 2 code run on Keras 3: tf.keras of TF >= 2.16 is Keras 3 unless TF_USE_LEGACY_KERAS=1",
            "Under MultiWorkerMirroredStrategy, Keras 3's fit fails before its first step with `ValueError: Attempt "
            "to convert a value (PerReplica:{...}) with an unsupported type` (measured here: the scenario "
            "keras3-fit-under-mwms-...); a custom loop fails on a removed Keras 2 API: `'Mean' object has no "
            "attribute 'reset_states'` (Keras 3: reset_state), `module 'keras...losses' has no attribute 'Reduction'`, "
            "an optimizer's `lr`, `Argument(s) not recognized: {'lr': ...}`, or saving: `Invalid filepath extension "
            "for saving`, `The filepath provided must end in `.keras``, `must end in `.weights.h5``.",
            "From TF 2.16 on, `tf.keras` is the `keras` package, Keras 3, unless tf-keras is installed and "
            "TF_USE_LEGACY_KERAS=1 is set before TensorFlow is imported. Code written for Keras 2 (TF <= 2.15) "
            "calls APIs Keras 3 renamed or removed; Keras 3's fit does not take MWMS's distributed datasets.",
            "Keep Keras 2: `pip install tf-keras~=<TF's minor>` and set TF_USE_LEGACY_KERAS=1 on every worker "
            "(or import tf_keras), and check tf.keras.__version__ at start; or port the code to Keras 3 "
            "(metric.reset_state(), reduction='none', learning_rate=, model.save('x.keras'), "
            "save_weights('x.weights.h5')) and train multi-worker with a custom loop.",
            [
                S("keras3_perreplica", 5, "Keras 3's fit handed MWMS's per-replica values it cannot convert"),
                S("keras3_removed_api", 5, "a Keras 2 API Keras 3 removed (reset_states, losses.Reduction, lr)"),
                S("keras3_saving_format", 4, "Keras 3's saving wants .keras / .weights.h5 file names"),
                S("keras3_optimizer_args", 4, "a Keras 2 optimizer argument (lr=, ...) Keras 3 does not take"),
            ],
            [
                "https://www.tensorflow.org/guide/keras",
                "https://keras.io/getting_started/#tensorflow--keras-2-backwards-compatibility",
            ],
            reproduced_by="chaos run examples/keras-mwms/chaos_suite/keras3-*.yaml (the example job, fit and custom loop)",
        ),
        _entry(
            "field-version-or-environment-mismatch",
            "version_skew",
            "Versions or environments do not match: TF vs. Horovod's build, the driver vs. CUDA, worker vs. worker",
            "`HorovodVersionMismatchError: Framework tensorflow installed with version X but found version Y`, "
            "`undefined symbol: _ZN10tensorflow...` (or a CUDA runtime symbol: `cudaLaunch`), `CUDA driver version is insufficient for CUDA runtime "
            "version`, protobuf's `This program was compiled against version X of the Protocol Buffer runtime "
            "library, which is not compatible with the installed version (Y)` / `Descriptors cannot be created "
            "directly`, or a collective whose members disagree (`Shape mismatch in the collective instance`).",
            "A library was built against another TensorFlow than the one installed, the NVIDIA driver is older "
            "than the CUDA runtime TF was built with, or the workers run different environments.",
            "Reinstall Horovod against the installed TensorFlow (pip install --no-cache-dir), use a driver that "
            "supports the CUDA runtime, and run every worker from one image; compare `pip freeze` and "
            "`nvidia-smi` across workers.",
            [
                S("horovod_version", 6, "Horovod built against another TensorFlow"),
                S(
                    "protobuf_version",
                    5,
                    "code generated for one protobuf version loaded with another protobuf runtime",
                ),
                S("undefined_symbol", 4, "a TensorFlow or CUDA runtime symbol missing when a library loads"),
                S("driver_insufficient", 4, "the CUDA driver is older than the runtime"),
                S("cudnn_mismatch", 5, "the cuDNN loaded at run time is not the one TensorFlow was built with"),
                S("collective_mismatch", 3, "the members of a collective disagree"),
                S("library_missing", 2, "a CUDA library could not be loaded"),
                S(
                    "illegal_instruction",
                    4,
                    "the CPU lacks an instruction the TensorFlow build uses (SIGILL, exit 132)",
                ),
                S("cuda_arch_mismatch", 4, "the binary has no kernel for this GPU's architecture"),
                S("nccl_version", 5, "the ranks run different NCCL versions"),
                S("horovod_not_built", 4, "Horovod's extension for the framework was not built"),
            ],
            [
                "https://github.com/horovod/horovod/issues/2619",
                "https://github.com/horovod/horovod/issues/939",
                "https://github.com/horovod/horovod/issues/2224",
                "https://github.com/tensorflow/tensorflow/issues/8526",
                "https://github.com/protocolbuffers/protobuf/issues/9086",
            ],
        ),
        _entry(
            "field-checkpoint-save-or-restore-fails",
            "checkpoint",
            "A checkpoint cannot be saved or restored: corrupt, partial, not shared, or of another model",
            "`DataLossError: Checksum does not match`, `file is too short to be an sstable`, `Unsuccessful "
            "TensorSliceReader constructor: Failed to find any matching files`, `MergeV2Checkpoints ... _temp_ "
            "... Not found`, `Assign requires shapes of both tensors to match`, `Received incompatible tensor "
            "with shape ... when attempting to restore`.",
            "Several tasks wrote one checkpoint at once, a reader loaded a file still being written, the "
            "checkpoint directory is local to one machine instead of shared by every task, the checkpoint "
            "was written by another model or worker count, or the filesystem (a FUSE mount of cloud storage, "
            "DBFS, a Drive folder) does not support the rename TF does from `checkpoint.tmp...`.",
            "Save from the chief only (or to per-worker temporary directories), put checkpoints on storage every "
            "task reaches, start a changed model in a new directory, and keep a verified copy of the last good "
            "checkpoint.",
            [
                S("checkpoint_corrupt", 4, "a checkpoint file is corrupt or partial"),
                S("checkpoint_missing", 4, "checkpoint files are missing where a task looks for them"),
                S("checkpoint_shape", 4, "the checkpoint does not fit the model"),
                S(
                    "checkpoint_write",
                    4,
                    "a checkpoint file could not be written or renamed (full, read-only or I/O error)",
                ),
                S("save_op_failed", 2, "the saver's SaveV2/RestoreV2 op failed"),
                S("hdf5_io", 3, "HDF5 could not create, open or write the model's .h5 file"),
                S("checkpoint_frame", 1.5, "the error was raised in the code that saves or restores a checkpoint"),
            ],
            [
                "https://github.com/tensorflow/tensorflow/issues/39033",
                "https://github.com/tensorflow/ecosystem/issues/28",
                "https://github.com/tensorflow/models/issues/803",
                "https://github.com/google-research/bert/issues/703",
                "https://github.com/Unity-Technologies/ml-agents/issues/799",
            ],
        ),
        _entry(
            "field-loss-becomes-nan",
            "nan",
            "The loss or the gradients become NaN or Inf",
            "`Model diverged with loss = NaN`, `NanLossDuringTrainingError`, `Loss is inf or nan : Tensor had NaN "
            "values` (CheckNumerics), `Found Inf or NaN global norm`, `loss = nan` in the step lines; or a loss "
            "that climbs by orders of magnitude over the logged steps before it overflows (or never does).",
            "A learning rate too high for the global batch (it grows with the number of workers), bad input "
            "on one worker, an unstable op in mixed precision, or a faulty device or link corrupting one "
            "replica's values.",
            "Scale the learning rate with the global batch and warm it up, clip gradients, check the input for "
            "NaN/Inf, use loss scaling in mixed precision; find the first non-finite step with "
            "tf.debugging.enable_check_numerics, and compare replicas.",
            [
                S("nan_loss", 4, "the loss is NaN/Inf"),
                S("check_numerics", 2, "a CheckNumerics op fired"),
                LossExplodesSignature(),
            ],
            [
                "https://github.com/tensorflow/tensor2tensor/issues/1074",
                "https://github.com/guanlinchao/bert-dst/issues/2",
                "https://github.com/tensorflow/tensorflow/issues/57893",
            ],
        ),
        _entry(
            "field-input-not-sharded-as-meant",
            "data_sharding",
            "The input is not split over the workers as meant",
            "`AUTO sharding policy will apply DATA sharding policy as it failed to apply FILE sharding`, `There "
            "aren't enough elements in this dataset for each shard`, or one worker's data running out first: "
            "`Aborting RingReduce with Out of range: [_Derived_]End of sequence`.",
            "Auto-sharding by files needs at least one file per worker; a dataset without a file reader falls "
            "back to DATA sharding (every worker reads everything); without repeat()/steps_per_epoch the "
            "workers' datasets end at different steps.",
            "Shard explicitly (dataset.shard(num_workers, index) or AutoShardPolicy.DATA/OFF on purpose), give "
            "every worker the same number of steps (repeat() with steps_per_epoch, drop_remainder), and split "
            "the data into at least as many files as workers.",
            [
                S("autoshard", 4, "tf.data's auto-sharding fell back or failed"),
                S("too_few_shards", 4, "too few elements or files for the shards"),
                S("end_of_sequence_collective", 4, "a worker's input ended inside a collective"),
                S("end_of_sequence", 2, "an input iterator ran out of data"),
            ],
            [
                "https://github.com/tensorflow/tensorflow/issues/42146",
                "https://github.com/tensorflow/tensorflow/issues/36846",
                "https://github.com/tensorflow/tensorflow/issues/25254",
            ],
        ),
        _entry(
            "field-parameter-server-down-or-unreachable",
            "parameter_server",
            "A parameter server is down, unreachable, restarted or out of memory",
            "Workers wait for it (`CreateSession still waiting for response from worker: /job:ps/replica:0/"
            "task:0`), or their calls to it fail (`remote target /job:ps/... Socket closed`, `Master init: "
            "Unavailable`, `failed to connect to all addresses`), or it runs out of memory (`OOM when allocating "
            "tensor ... on /job:ps/...`); after a restart, `Graph handle is not found`.",
            "The ps task was not started (or started after the workers), crashed or was restarted, is not "
            "reachable from the workers, or holds a variable too large for its memory.",
            "Start the parameter servers first and keep them up; restart the whole job from the last checkpoint "
            "after a ps failure; partition large variables over more parameter servers.",
            [
                S("ps_oom", 5, "a parameter server ran out of memory"),
                S(
                    "ps_pod_restarted",
                    4,
                    "kubectl shows a parameter server's pod restarted: the variables it held are gone",
                ),
                S("ps_unreachable", 4, "a parameter server fails its calls"),
                S("ps_waited", 3, "a worker waits at bring-up for a parameter server that does not answer"),
                S("master_init", 3, "TF 1.x's master cannot reach a task at init"),
                S("graph_handle", 3, "a task lost its graphs: it restarted"),
                S("closure_error", 2, "ParameterServerStrategy's coordinator cancels closures"),
                S(
                    "session_preemption_retry",
                    3,
                    "MonitoredTrainingSession recreates its session after a ps/worker failure",
                ),
                S("ps_recv_failed", 2, "a failed op was receiving from a parameter server"),
            ],
            [
                "https://github.com/yahoo/TensorFlowOnSpark/issues/240",
                "https://github.com/tensorflow/tensorflow/issues/57760",
                "https://github.com/tensorflow/tensorflow/issues/62880",
                "https://github.com/alibaba/euler/issues/98",
                "https://github.com/tensorflow/benchmarks/issues/380",
            ],
        ),
        _entry(
            "field-tf-config-mistake",
            "tf_config",
            "TF_CONFIG or the cluster spec is wrong",
            'TF\'s own validation (`worker is not a valid task_type in the cluster_spec`, `If "cluster" is set '
            'in TF_CONFIG, it must have one "chief" node`, `Task 2 was not defined in job "worker"`, `No '
            "worker known as /job:chief/...`), or a printed TF_CONFIG that shows the mistake: a task type the "
            "cluster lacks, an index past the end, a job name TF does not know, two tasks at one address, "
            "two workers claiming one task, every task on localhost while the peers cannot connect.",
            "TF_CONFIG was written by hand or by a launcher that got it wrong: the same index on two workers, "
            "'master' or 'ps_hosts' instead of 'chief' or 'ps', peers named localhost or a Docker bridge "
            "address on several machines, a task left out.",
            "Print TF_CONFIG on every worker and compare: one cluster for all, a distinct (type, index) per "
            "task, addresses every task can reach; set it before the strategy is created.",
            [
                S("tf_config_error", 5, "TF rejected the cluster or task in TF_CONFIG"),
                TfConfigMistakeSignature(),
                SingleHostClusterSignature(),
            ],
            [
                "https://github.com/yahoo/TensorFlowOnSpark/issues/386",
                "https://github.com/tensorflow/tensorflow/issues/17854",
                "https://github.com/tensorflow/models/issues/9109",
                "https://github.com/deepsense-ai/Distributed-BA3C/issues/2",
            ],
        ),
        _entry(
            "field-task-port-already-in-use",
            "tf_config",
            "A task's own gRPC server cannot bind its port: another task or process holds it",
            "`bind addr=[::]:2223: Address already in use`, `Failed to add port to server`, `No address added out of "
            "total 1 resolved`, `Could not start gRPC server`, as the task starts its server.",
            "The cluster spec gives two tasks on one host the same port, a server is started twice in one process, "
            "or an earlier run's process still holds the port.",
            "Give every task on a host its own port in TF_CONFIG / the cluster spec, start one server per process, "
            "and stop the old processes (`ss -ltnp | grep PORT`).",
            [
                S("port_in_use", 4, "the task's port is already in use"),
                S("server_start_failed", 1.5, "gRPC could not start the task's server"),
                # what tells it from another process holding the port (field-peer-port-unreachable): the printed
                # cluster itself is wrong (two tasks at one host:port)
                TfConfigMistakeSignature(weight=3.0),
            ],
            ["https://github.com/tensorflow/tensorflow/issues/3517"],
        ),
    )


def field_entries() -> list[KnownFailure]:
    """The field's entries, after the scenario files' in the catalogue."""
    return list(_entries())
