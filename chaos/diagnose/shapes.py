"""The shapes of failure lines that carry no TF status and no Python
exception, as users' logs show them: the CUDA driver's and the BFC
allocator's out-of-memory, NCCL's own WARN/INFO lines, the kernel's and the
orchestrator's words for a worker taken away, the coordination service's and
Horovod's reports of a task that stopped answering, gRPC/protobuf limits,
checkpoint, NaN and sharding messages, printed TF_CONFIGs...

The reader (``observe``) tags each line with the shapes it has; the
field catalogue (``field``) and the "who is missing" answer (``missing``)
read the tags. Each shape has guard words (a plain substring test, cheap)
before its regular expression: a 100 MB log has millions of lines and only a
few of them are failures. Every pattern is case-sensitive, written in the
casings the tools print (``re.IGNORECASE`` costs ten times more on long lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TASK = r"/job:\w+/replica:\d+/task:\d+"
_TOKEN = re.compile(r"[a-z]+")
# Tokens too common in ordinary log lines to say anything: a shape is never looked
# for because of one of them (each shape has a rarer token among its words).
STOP_TOKENS = frozenset(
    "a an the of to in on at by for from with is was be as and or not no it its this that job task replica device "
    "tensorflow tf core cc h py python line file info i w e f loss step steps epoch status message grpc code node "
    "worker workers type index s ms us so version out when ran use size tensor initialized had low condition back off "
    "data end all address check init local model op function target but another group member are each ask rom ocket "
    "os response still service many too stream removed peer pipe occurred max than spec dynamic "
    "object shared files matching left space record noticed seems host pinned".split()
)


def tokens(text: str) -> set[str]:
    """The lower-case words of a line (split at every non-letter): the reader's cheap first look."""
    return set(_TOKEN.findall(text.lower()))


@dataclass(frozen=True)
class Shape:
    name: str
    words: tuple[str, ...]  # one of them must be in the line (cheap) before the pattern is tried
    pattern: re.Pattern
    error_class: str | None = None  # read as an error of this class ("": of no class); None: a hint only
    unless: tuple[str, ...] = ()  # shapes that, on the same line, say it better (this one is dropped)

    def search(self, text: str) -> re.Match | None:
        if any(word in text for word in self.words):
            return self.pattern.search(text)
        return None

    @property
    def keys(self) -> frozenset[str]:
        """The tokens of its guard words that are not stop tokens: a line has this
        shape only if it has one of them, or a guard word made of stop tokens only
        (``ALWAYS_WORDS``)."""
        return frozenset(t for word in self.words for t in word_keys(word))


def _shape(name, words, pattern, error_class=None, unless=()) -> Shape:
    return Shape(name, tuple(words), re.compile(pattern), error_class, tuple(unless))


SHAPES: tuple[Shape, ...] = (
    # --- device memory
    _shape(
        "cuda_oom",
        [
            "CUDA_ERROR_OUT_OF_MEMORY",
            "CUDA out of memory",
            "failed to allocate",
            "pinned host memory",
            "CUDA error: out of memory",
            ": out of memory",
            "cudaErrorMemoryAllocation",
            "_STATUS_ALLOC_FAILED",
            "Cuda failure",
        ],
        r"CUDA_ERROR_OUT_OF_MEMORY|CUDA out of memory|failed to allocate [\d.]+\s*[KMGT]?i?B? \(\d+ bytes\) from device|"
        r"could not allocate pinned host memory|CUDA error: out of memory|cudaErrorMemoryAllocation|"
        r"(?:CUBLAS|CUDNN)_STATUS_ALLOC_FAILED|GpuLaunchKernel.*status: (?:Internal|INTERNAL): out of memory|"
        r"Cuda failure '?out of memory|initialization on GPU:\d+ failed\. Status: out of memory",
        "ResourceExhaustedError",
    ),
    # XLA's own allocator (jit_compile) says "Out of memory while trying to allocate N bytes."
    _shape(
        "tf_oom_device",
        ["OOM when allocating", "Ran out of memory", "Out of memory while"],
        r"OOM when allocating tensor.*(?:GPU|gpu|_bfc)|Ran out of memory trying to allocate|"
        r"Out of memory while trying to allocate \d+ bytes",
        "ResourceExhaustedError",
    ),
    _shape(
        "tf_oom_cpu",
        ["OOM when allocating"],
        r"OOM when allocating tensor.*(?:by allocator cpu|device:CPU|cpu:\d)",
        "ResourceExhaustedError",
        unless=("ps_oom",),
    ),
    _shape(
        "tf_oom",
        ["OOM when allocating"],
        r"OOM when allocating tensor",
        "ResourceExhaustedError",
        unless=("tf_oom_device", "tf_oom_cpu", "ps_oom"),
    ),
    _shape(
        "bfc_stats",
        ["bfc_allocator", "InUse:", "Limit:", "MaxInUse", "in-use chunks", "Chunks of size"],
        r"bfc_allocator\.cc|^\s*(?:Limit|InUse|MaxInUse|NumAllocs|MaxAllocSize):\s+\d+\s*$|"
        r"Sum Total of in-use chunks|Chunks of size \d+ totalling",
    ),
    _shape("dst_tensor", ["Dst tensor is not initialized"], r"Dst tensor is not initialized"),
    _shape("gpu_memory_full", ["MiB /"], r"\|\s+\d{4,}MiB /\s+\d{4,}MiB\s+\|"),
    # --- host memory
    _shape(
        "oom_killer",
        ["oom-kill", "oom_kill", "Out of memory", "OOM-kill", "memory: Kill"],
        r"invoked oom-killer|oom_kill_process|[Oo]ut of memory: Kill(?:ed)? process|OOM-killed|oom-kill",
    ),
    # Slurm's job accounting kills a step over its memory request; srun reports "task 0: Out Of Memory"
    _shape(
        "slurm_memory",
        ["Exceeded job memory", "Exceeded step memory", "exceeded memory limit", "Out Of Memory"],
        r"Exceeded (?:job|step) memory limit|[Ss]tep [\d.]+ exceeded memory limit|task \d+: Out Of Memory",
    ),
    _shape("oomkilled", ["OOMKilled"], r"\bOOMKilled\b"),
    _shape(
        "bad_alloc",
        ["bad_alloc", "Cannot allocate memory", "MemoryError"],
        r"std::bad_alloc|Cannot allocate memory|\bMemoryError\b",
        "",
    ),
    _shape("system_memory_warning", ["exceeds 10% of"], r"Allocation of \d+ exceeds 10% of (?:free )?system memory"),
    # YARN's node manager (Spark executors, TonY, TFoS): "Container killed by YARN for exceeding memory
    # limits", "Container [pid=..] is running beyond 'PHYSICAL' memory limits ... Killing container",
    # exit status -104 / -103 (KILLED_EXCEEDED_PMEM / _VMEM); the same message's usage part,
    # "15.8 GB of 14.7 GB virtual memory used. Killing container.", is often a line of its own
    _shape(
        "yarn_memory_kill",
        ["killed by YARN", "beyond", "-104", "-103", "KILLED_EXCEEDED", "Killing container"],
        r"[Cc]ontainer killed by YARN for exceeding memory limits|"
        r"is running (?:\d+B )?beyond (?:the )?'?(?:physical|virtual|PHYSICAL|VIRTUAL)'? memory limits?|"
        r"[Ee]xit ?[Ss]tatus:? ?-10[34]\b|KILLED_EXCEEDED_[PV]MEM|"
        r"[\d.]+ [KMGT]?B of [\d.]+ [KMGT]?B (?:physical|virtual) memory used\. Killing container",
    ),
    # Cloud ML Engine / AI Platform Training's job message for a replica the platform killed for its memory
    _shape(
        "cloud_replica_oom",
        ["ran out-of-memory"],
        r"[Rr]eplica \w+ \d+ ran out-of-memory and exited|ran out-of-memory and exited with a non-zero status of 9",
    ),
    _shape("shell_killed", ["Killed", "killed"], r"(?<![A-Za-z])[Kk]illed\s*$|\b\d+\s+Killed\s+\S"),
    _shape(
        "exit_137",
        ["exit", "Exit", "exited", "exit_code"],
        r"(?:[Ee]xit(?:ed)?(?: with)?(?: error| status)? (?:[Cc]ode|[Ss]tatus)|exit_code|Exit Code)[:= ]\s*(?:137|247)\b",
    ),
    # --- a worker taken away by its orchestrator or cloud
    _shape(
        "evicted",
        ["Evicted", "low on resource", "had condition", "Pressure"],
        r"\bEvicted\b|The node was low on resource|The node had condition",
    ),
    _shape(
        "preempted",
        [
            "preempt",
            "Preempt",
            "preempted",
            "preemption",
            "PREEMPTED",
            "PreemptionByScheduler",
            "lame workers",
            "DisruptionTarget",
            "-102",
            "termination",
        ],
        r"\b[Pp]reempted\b|PREEMPTED|lame workers found|PreemptionByScheduler|DisruptionTarget|[Pp]reemption notice|"
        r"[Ee]xit ?[Ss]tatus:? ?-102\b|has received termination (?:notice|signal)",
        # the coordination service's heartbeat timeout names preemption as one possible cause only
        unless=("heartbeat",),
    ),
    # Slurm ends a job step: "slurmstepd: error: *** JOB 123 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***"
    _shape(
        "slurm_cancelled",
        ["CANCELLED AT", "Node failure on"],
        r"\*\*\* (?:JOB|STEP) [\d.]+ (?:ON \S+ )?CANCELLED AT \S+(?: DUE TO (?:TIME LIMIT|PREEMPTION|NODE FAILURE))? |"
        r"srun: error: Node failure on",
    ),
    # the kubelet ends a pod for a node shutdown, its activeDeadlineSeconds, or a failed liveness probe
    _shape(
        "pod_terminated",
        ["to imminent node", "specified deadline", "liveness probe"],
        r"terminated in response to imminent node shutdown|active on the node longer than the specified deadline|"
        r"failed liveness probe, will be restarted",
    ),
    # `kubectl get pods`: a pod row whose RESTARTS count is not 0 (NAME READY STATUS RESTARTS AGE); a parameter
    # server's pod (named ps, ps-0, tf-ps4-x7z) is told apart, its restart loses the variables it held
    _shape(
        "ps_pod_restarted",
        ["Running", "Error", "CrashLoopBackOff", "OOMKilled", "Completed"],
        r"^\s*(?:\S+[-_])?ps\d*(?:[-_]\S+)?\s+\d+/\d+\s+[A-Za-z]+\s+[1-9]\d*(?: \([^)]*\))?\s+\d+[smhd]",
    ),
    _shape(
        "pod_restarted",
        ["Running", "Error", "CrashLoopBackOff", "OOMKilled", "Completed"],
        r"^\s*\S+\s+\d+/\d+\s+[A-Za-z]+\s+[1-9]\d*(?: \([^)]*\))?\s+\d+[smhd]",
        unless=("ps_pod_restarted",),
    ),
    _shape(
        "backoff",
        ["BackOff", "CrashLoopBackOff", "Back-off restarting"],
        r"CrashLoopBackOff|Back-off restarting failed container",
    ),
    _shape("replica_failed", ["replica(s) failed"], r"has failed because \d+ \w+ replica\(s\) failed"),
    # ... and TF's other words for a peer that came back (a new incarnation, a lost session or context)
    _shape(
        "restarted",
        ["incarnation", "restarted", "Incarnation"],
        r"current incarnation doesn't match|worker has restarted|[Pp]ossibly, this worker just restarted|"
        r"Incarnation ID mismatch|was probably restarted|Perhaps the worker was restarted|this master has restarted",
    ),
    _shape("rank_signal", ["mpirun noticed"], r"mpirun noticed that process rank \d+ .*exited on signal \d+"),
    _shape("signal_9", ["signal 9", "SIGKILL", "signal: killed"], r"exited on signal 9\b|\bSIGKILL\b|signal: killed"),
    # --- NCCL
    # NCCL's warning about a CUDA failure says what failed: out of memory is the GPU's, a driver error the versions'
    # NCCL up to 2.3 printed its lines without the "NCCL" word: "host:pid:tid [dev] include/socket.h:371 WARN ..."
    # and "host:pid:tid [dev] INFO bootstrap.cu:45 -> 2 [Net]" (a source file and line, then WARN or an error code)
    _shape(
        "nccl_warn",
        ["NCCL WARN", " WARN "],
        r"\bNCCL WARN\b|(?<![\w.-])[\w.-]+:\d+:\d+ \[\d+\] (?:\w+/)*\w+\.(?:h|cu|cc):\d+ WARN ",
        "",
        unless=("cuda_oom", "driver_insufficient", "nccl_version", "cuda_arch_mismatch"),
    ),
    _shape(
        "nccl_failed",
        ["ncclCommInitRank", "nccl", "NCCL", "unhandled", "process exited or", "ncclRemoteError"],
        r"ncclCommInitRank failed|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|unhandled (?:system|cuda) error|"
        r"ncclRemoteError|remote process exited or there was a network error|"
        r"NCCL (?:error|communication aborted)|nccl_\w+\.cc:\d+ ?: ?(?:Internal|Unknown)",
        "",
    ),
    # NCCL's error return chain (``init.cc:950 -> 2``: a call returned ncclSystemError up the stack), an
    # error of no class of the rank that prints it: among the others' plain INFO lines, its rank is the root
    _shape(
        "nccl_error_chain",
        ["NCCL INFO", "] INFO "],
        # a source file and line returning a code (not a ring's "Ring 00 : 3 -> 0 [send]": its ranks)
        r"NCCL INFO \S*\.(?:h|c|cu|cc|cpp):\d+ -> [1-9]\d*\b|"
        r"(?<![\w.-])[\w.-]+:\d+:\d+ \[\d+\] INFO (?:\w+/)*\w+\.(?:h|c|cu|cc):\d+ -> [1-9]\d*\b",
        "",
    ),
    _shape("ibv_failed", ["ibv_"], r"\bibv_\w+ failed", ""),
    # --- Open MPI's TCP transport (mpirun under Horovod): the btl connects on an interface the peer
    # cannot route (docker0, a bridge, a second NIC) -- Horovod's "hangs due to non-routed interfaces"
    _shape(
        "mpi_btl_tcp",
        ["btl_tcp", "btl: tcp"],
        r"btl_tcp\w*\.c:\d+:\w+\] connect\(\) to \S+ failed|btl: tcp: Match incoming connection from .* failed|"
        r"mca_btl_tcp_endpoint_\w+\] received unexpected process identifier",
        "",
    ),
    # --- gRPC and protobuf
    _shape(
        "grpc_limit",
        ["larger than max", "protobuf", "protocol message"],
        r"(?:Received|Sent) message larger than max|exceeded maximum protobuf size|protocol message was rejected because it was too big|"
        r"Reading dangerously large protocol message",
        "ResourceExhaustedError",
    ),
    _shape(
        "connection_reset",
        ["reset by peer", "Broken pipe", 'errno":104'],
        r"[Cc]onnection reset by peer|[Bb]roken pipe|errno\"?:104\b",
    ),
    _shape("socket_closed", ["Socket closed", "socket closed", "Stream removed"], r"[Ss]ocket closed|Stream removed"),
    _shape("os_error", ["OS Error"], r"\bOS Error\b"),
    # gRPC's transport closed under the call: the peer or a proxy sent GOAWAY, keep-alive pings went unanswered
    _shape(
        "grpc_transport_closed",
        ["GOAWAY", "keepalive watchdog", "Transport closed"],
        r"GOAWAY received|keepalive watchdog timeout|Transport closed",
    ),
    _shape("too_many_pings", ["Too many pings"], r"Too many pings"),
    # --- a peer's port that cannot be reached
    _shape(
        "connection_refused",
        ["refused", 'errno":111'],
        r"[Cc]onnection refused|errno\"?:111\b|ECONNREFUSED",
        unless=("nccl_warn", "mpi_btl_tcp"),
    ),
    _shape(
        "connect_timeout",
        ["timeout occurred", "timed out", "No route", 'errno":11', "is unreachable"],
        r"failed to connect to '?ipv4:\S+ timeout occurred|[Cc]onnection timed out|No route to host|errno\"?:11[03]\b|"
        r"Network is unreachable",
        unless=("nccl_warn", "mpi_btl_tcp"),
    ),
    # Open MPI's daemons cannot connect back to mpirun: "A process or daemon was unable to complete a TCP
    # connection to another process ... usually caused by a firewall on the remote host"
    _shape("mpi_tcp_daemon", ["unable to complete a TCP connection"], r"unable to complete a TCP connection", ""),
    # mpirun lost the daemon of another node: "ORTE has lost communication with a remote daemon." (PRTE's
    # since Open MPI 5), the daemon's node named below it; a peer's failure (attribution: its node is blamed)
    _shape(
        "orte_lost_daemon",
        ["lost communication with a remote daemon"],
        r"(?:ORTE|PRTE) has lost communication with a remote daemon",
        "",
    ),
    _shape(
        "orte_daemons",
        ["ORTE was unable", "ORTE does not know"],
        r"ORTE was unable to reliably start one or more daemons|ORTE does not know how to route",
    ),
    # horovodrun's launcher could not reach its task services on the other hosts
    _shape(
        "horovodrun_start_timeout",
        ["Timed out waiting for tasks", "check connectivity between servers"],
        r"Timed out waiting for tasks to (?:start|update task-to-task addresses)|Please check connectivity between servers",
    ),
    # horovodrun's (or Horovod on Spark's) tasks could not reach the driver's or a peer task's service on any
    # address it announced: "NoValidAddressesFound: Horovod was unable to connect to task service #1 on any of ..."
    _shape(
        "horovod_no_valid_addresses",
        ["NoValidAddressesFound", "was unable to connect to"],
        r"NoValidAddressesFound|Horovod(?:run)? was unable to connect to (?:the )?(?:task|driver) servic",
    ),
    # A task's own server cannot bind its port: another task or process holds it
    _shape("port_in_use", ["Address already in use", "EADDRINUSE"], r"Address already in use|EADDRINUSE", ""),
    _shape(
        "server_start_failed",
        ["Could not start gRPC server", "Failed to add port", "No address added"],
        r"Could not start gRPC server|Failed to add port to server|No address added out of total \d+ resolved",
    ),
    _shape(
        "failed_connect_address",
        ["failed to connect to '", "failed to connect to 'ipv4", "Connect failed"],
        r"failed to connect to '?ipv4:[\d.]+:\d+|Connect failed:.*target_address",
    ),
    _shape(
        "failed_connect_all",
        ["failed to connect to all addresses", "Failed to pick subchannel"],
        r"[Ff]ailed to connect to all addresses|Failed to pick subchannel",
    ),
    # gRPC (c-ares or getaddrinfo) cannot resolve a peer's host name
    _shape(
        "dns_failed",
        ["resolution", "is not ARES_SUCCESS", "service not known"],
        r"DNS resolution failed|C-ares status is not ARES_SUCCESS|Name or service not known|"
        r"Temporary failure in name resolution",
    ),
    _shape(
        "waiting_for_worker",
        ["still waiting for response"],
        r"still waiting for response from worker: /job:(?!ps\b)\w+/",
    ),
    # --- timeouts
    _shape(
        "heartbeat",
        ["heartbeat", "heartbeats", "Heartbeat"],
        r"[Hh]eartbeat timeout|stopped sending heartbeats|[Hh]eartbeats? (?:timed out|missed)",
    ),
    _shape(
        "coordination_error",
        ["coordination service", "CoordinationServiceError"],
        r"has been set to ERROR in coordination service|Coordination service agent in error status|"
        r"CoordinationServiceError|Stopping coordination service",
    ),
    _shape(
        "barrier_timeout",
        ["Barrier", "register", "WaitForAllTasks"],
        r"Barrier timed out|Wait_for_all_tasks_to_register|cluster registration failed|WaitForAllTasks.*(?:timed out|DEADLINE)",
    ),
    _shape(
        "deadline",
        ["deadline", "Deadline", "DEADLINE", "DeadlineExceededError", "grpc_status"],
        r"DEADLINE_EXCEEDED|[Dd]eadline [Ee]xceeded|DeadlineExceededError|grpc_status\"?:4\b",
    ),
    _shape(
        "task_down",
        ["seems down", "is down", "Cluster check"],
        _TASK + r" (?:seems down|is down)|Cluster check alive failed",
    ),
    _shape(
        "gloo_timeout",
        ["Wait timeout", "Timed out waiting", "GLOO_TIMEOUT"],
        r"Wait timeout (?:after \d+ seconds )?for key\(s\)|Timed out waiting \d+ms for (?:recv|send) operation|"
        r"increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS",
    ),
    _shape(
        "collective_timeout",
        ["timed out", "timeout"],
        r"[Cc]ollective (?:ops? )?(?:timed out|timeout)|CollectiveOps? timed out",
    ),
    # --- waits for ranks or tasks that never come
    _shape(
        "horovod_stall",
        ["subset of ranks", "Stalled", "is stalled for"],
        r"submitted to be reduced, gathered or broadcasted by subset of ranks|Stalled ops|Stalled ranks|"
        r"is stalled for longer than \d+ seconds",
        "",
    ),
    # Horovod's coordinator (controller.cc) finds the ranks submitted different collectives under one name (not
    # its "CPU/GPU device selection" mismatch: that one follows each host's build and devices, not the code)
    _shape(
        "horovod_mismatch",
        ["Mismatched"],
        r"Mismatched (?:\w+ )?(?:tensor shapes|operations|data types|root ranks|prescale and/or postscale factors)",
        "",
    ),
    _shape("horovod_ranks", ["ranks: ", ": [horovod_"], r"\[(?:missing|ready) ranks: [\d, ]+\]|^\s*\d+: \[horovod_"),
    _shape(
        "model_not_ready",
        ["model to be ready", "Ready_for_local_init_op"],
        r"Waiting for model to be ready|Ready_for_local_init_op",
    ),
    _shape("server_started", ["Started server"], r"Started server with target:"),
    _shape(
        "waiting_for_cluster",
        ["Waiting for", "stragglers"],
        r"Waiting for \d+/\d+ tasks to connect|Example stragglers:|Waiting for the cluster",
    ),
    _shape(
        "remote_target",
        ["remote target /job:", "Remote function on worker"],
        r"remote target /job:\w+/|Remote function on worker /job:",
    ),
    # --- versions and environments that do not match
    _shape(
        "driver_insufficient",
        ["insufficient", "cudaGetDevice", "cuInit", "CUDA_ERROR_NO_DEVICE", "version mismatch", "DSO version"],
        r"CUDA driver version is insufficient|cudaGetDevice\(\) failed|failed call to cuInit|CUDA_ERROR_NO_DEVICE|"
        r"[Dd]river/library version mismatch|does not match DSO version|Possibly insufficient driver version",
        "",
    ),
    # a binary with no code for this GPU's architecture (built for other compute capabilities, or an older PTX)
    _shape(
        "cuda_arch_mismatch",
        ["kernel image is", "NO_BINARY_FOR_GPU", "UNSUPPORTED_PTX_VERSION", "NoKernelImage", "Cuda capability is"],
        r"no kernel image is available for execution|CUDA_ERROR_NO_BINARY_FOR_GPU|"
        r"CUDA_ERROR_UNSUPPORTED_PTX_VERSION|cudaErrorNoKernelImageForDevice|The minimum required Cuda capability is",
        "",
    ),
    # --- Keras 2 code on Keras 3 (TF >= 2.16's tf.keras without TF_USE_LEGACY_KERAS=1); the texts from
    # Keras 3.15's own raise sites (keras/src/...), the first measured here (docs/findings.md)
    _shape("keras3_perreplica", ["PerReplica:"], r"Attempt to convert a value \(PerReplica:", "ValueError"),
    _shape(
        "keras3_removed_api",
        ["has no attribute"],
        r"object has no attribute '(?:reset_states|get_updates|_get_hyper|lr)'|"
        r"module 'keras(?:\._tf_keras\.keras)?(?:\.\w+)*' has no attribute 'Reduction'",
        "AttributeError",
    ),
    _shape(
        "keras3_saving_format",
        ["Invalid filepath extension", "must end in `.weights.h5`", "must end in `.keras`"],
        r"Invalid filepath extension for saving|must end in `\.weights\.h5`|must end in `\.keras`",
        "ValueError",
    ),
    _shape("keras3_optimizer_args", ["Argument(s) not recognized"], r"Argument\(s\) not recognized: \{", "ValueError"),
    # NCCL's init compares the ranks' NCCL versions
    _shape("nccl_version", ["Mismatched NCCL version"], r"Mismatched NCCL version detected", ""),
    # Horovod's framework extension was never built (pip install without the framework present)
    _shape("horovod_not_built", ["been built:"], r"Extension horovod\.\w+ has not been built", ""),
    _shape(
        "horovod_version",
        ["HorovodVersionMismatchError", "VersionMismatch", "but found version"],
        r"HorovodVersionMismatchError|installed with version [\w.]+ but found version",
        "",
    ),
    # ... and at build time, a generated header of TF's that does not fit the protobuf headers found (building
    # Horovod or a custom op): "#error This file was generated by an older version of protoc which is"
    _shape(
        "protobuf_version",
        [
            "Protocol Buffer runtime",
            "Descriptors cannot be created",
            "protobuf package",
            "Protobuf Gencode",
            "version of protoc",
            "Protocol Buffer headers",
        ],
        r"compiled against version [\d.]+ of the Protocol Buffer runtime library|Descriptors cannot be created directly|"
        r"[Dd]owngrade the protobuf package to|Detected (?:incompatible|mismatched) Protobuf Gencode/Runtime|"
        r"generated by an? (?:older|newer) version of protoc|incompatible with your Protocol Buffer headers",
        "",
    ),
    # TF's check of the cuDNN it loads against the one it was built with
    _shape(
        "cudnn_mismatch",
        ["Loaded runtime CuDNN"],
        r"Loaded runtime CuDNN library:? [\d.]+.* but source was compiled with:? [\d.]+",
        "",
    ),
    # a TensorFlow C++ symbol, or a CUDA runtime one (a library built against another CUDA: cudaLaunch,
    # __cudaPopCallConfiguration), missing when Horovod's or another extension's library loads
    _shape(
        "undefined_symbol",
        ["undefined symbol", "Symbol not found"],
        r"undefined symbol: _+ZN|Symbol not found: _+ZN|undefined symbol: .*tensorflow|undefined symbol: \W*_*cuda[A-Z]\w*",
        "",
    ),
    _shape(
        "collective_mismatch",
        ["collective instance", "Collective instance", "group expected", "joining a group"],
        r"Shape mismatch in the collective instance|[Cc]ollective instance \d+ expected type|"
        r"another member in the group expected|is joining a group with size",
    ),
    # a CPU without an instruction the TensorFlow build uses (AVX in the stock wheels): the kernel stops the
    # process with SIGILL, "Illegal instruction (core dumped)", an exit code of 132 (128 + 4)
    _shape(
        "illegal_instruction",
        ["Illegal instruction", "SIGILL", "exit", "Exit", "signal 4"],
        r"Illegal instruction|\bSIGILL\b|exited on signal 4\b|"
        r"(?:[Ee]xit(?:ed)?(?: with)?(?: error| status)? (?:[Cc]ode|[Ss]tatus)|exit_code|Exit Code)[:= ]\s*132\b",
        "",
    ),
    _shape(
        "library_missing",
        ["dynamic library", "cannot open shared", "libcud", "dlopen"],
        r"Could not load dynamic library|cannot open shared object file|libcud\w*\.so[\w.]*.*not found|"
        r"Cannot dlopen some GPU libraries",
    ),
    # --- checkpoints
    _shape(
        "checkpoint_corrupt",
        ["Checksum", "sstable", "corrupted record", "Data loss", "DataLoss", "DataLossError", "truncated record"],
        r"Checksum does not match|too short to be an sstable|not an sstable|corrupted record|Data loss:|DataLossError|"
        r"truncated record",
    ),
    _shape(
        "checkpoint_missing",
        [
            "TensorSliceReader",
            "matching files",
            "MergeV2",
            "_temp",
            "No such file",
            "not found",
            "does not exist",
            "Restoring from",
            "match files for checkpoint",
            "not a valid checkpoint",
        ],
        r"Unsuccessful TensorSliceReader constructor|Failed to find any matching files for|MergeV2Checkpoints|"
        r"\.ckpt\S*_temp\S*(?:; No such file|\.index|\.data-\d+-of-\d+)|[Cc]heckpoint\S* (?:not found|does not exist)|"
        r"Restoring from checkpoint failed|(?:\.ckpt|checkpoint)\S*; No such file|"
        # TF 1.x's saver, when the files a `checkpoint` state file names are not where it looks
        r"Couldn't match files for checkpoint|The passed save_path is not a valid checkpoint",
    ),
    # ... and RestoreV2's and Keras' .h5 loader's own checks of the stored shapes, dtypes and layer counts
    _shape(
        "checkpoint_shape",
        [
            "requires shapes",
            "incompatible tensor",
            "not found in checkpoint",
            "are incompatible",
            "shape stored in checkpoint",
            "not equal original dtype",
            "file containing ",
            "Layer count mismatch when",
        ],
        r"Assign requires shapes of both tensors to match|[Rr]eceived incompatible tensor with shape .* when attempting to restore|"
        r"\bKey .* not found in checkpoint|Shapes \([\d, ]*\) and \([\d, ]*\) are incompatible|"
        r"does not match the shape stored in checkpoint|expected dtype \w+ does not equal original dtype|"
        r"load a weight file containing \d+ layers into a model with|Layer count mismatch when loading weights",
    ),
    _shape(
        "checkpoint_write",
        [
            "No space left",
            "Failed to rename",
            "checkpoint.tmp",
            "tempstate",
            "Input/output error",
            "doesn't exist, can't save",
        ],
        r"No space left on device|Failed to rename|checkpoint\.tmp[0-9a-f]{6,}|\.tempstate\d+|"
        r"(?:\.ckpt|checkpoint)[^;\s]*; (?:Input/output error|Permission denied|Read-only file system|Operation not supported)|"
        # TF 1.x's saver, before it writes
        r"Parent directory of \S+ doesn't exist, can't save",
    ),
    # HDF5's own I/O errors (h5py, Keras' .h5 weights and ModelCheckpoint): in a training job the .h5 file
    # written or read is the model's, e.g. "RuntimeError: Can't decrement id ref count (file write failed: ...
    # errno = 95, error message = 'Operation not supported'" or "OSError: Unable to create file"
    _shape(
        "hdf5_io",
        [
            "file write failed",
            "file read failed",
            "Unable to create file",
            "Unable to open file",
            "Unable to lock file",
            "decrement id ref count",
        ],
        r"\bfile (?:write|read) failed\b|[Uu]nable to (?:create|open|lock|flush|truncate) file|"
        r"Can't decrement id ref count",
    ),
    # a traceback frame in the code that saves or restores a checkpoint or model: the error raised there is
    # the save's or the restore's (a weak sign alone: a peer that dies during a save also fails in it)
    _shape(
        "checkpoint_frame",
        ["saver.py", "checkpoint_management.py", "tracking/util.py", "hdf5_format.py", "_save_model"],
        r"File \"[^\"]*/(?:training/saver|training/checkpoint_management|training/tracking/util|checkpoint/checkpoint|"
        r"saving/(?:legacy/)?hdf5_format|saved_model/save)\.py\", line \d+|"
        r"File \"[^\"]*/callbacks\.py\", line \d+, in _save_model",
    ),
    _shape(
        "save_op_failed",
        ["node save", "Node: save"],
        r"\[\[\{\{node save(?:_\d+)?/(?:SaveV2|RestoreV2|MergeV2Checkpoints)\}\}|\[\[Node: save(?:_\d+)?/(?:SaveV2|RestoreV2)",
    ),
    # --- NaN
    _shape(
        "nan_loss",
        ["nan", "NaN", "Inf", "= inf", "=inf", ": inf", "-inf"],
        r"Model diverged with loss = NaN|NanLossDuringTrainingError|Tensor had (?:NaN|Inf) values|"
        r"[Ll]oss(?:Tensor)? is (?:inf or nan|nan|NaN)|Found Inf or NaN|Invalid loss, terminating training|"
        r"\b[Ll]oss\b\"?\s*[:=]\s*0*(?:nan|NaN|-?inf)\b|averaged_loss = nan|"
        # tf.debugging.enable_check_numerics
        r"Detected Infinity or NaN in output",
    ),
    _shape("check_numerics", ["check_numerics", "CheckNumerics"], r"check_numerics|CheckNumerics"),
    # --- input sharding
    _shape(
        "autoshard",
        ["shard", "sharding", "Auto-shard", "Autoshard", "autoshard", "unshardable", "shardable"],
        r"auto_shard\.cc|AUTO sharding policy|DATA-based sharding|FILE-based sharding|unshardable source dataset|"
        r"Did not find a shardable source|"
        r"[Aa]uto-?shard(?:ing)? policy",
    ),
    _shape(
        "too_few_shards",
        ["each shard", "Cannot shard the pipeline"],
        r"enough elements in this dataset for each shard|Cannot shard the pipeline with given `?input_context",
    ),
    _shape(
        "end_of_sequence_collective",
        ["End of sequence"],
        r"(?:Aborting RingReduce|StartAbort|Collective ops is aborted).*(?:Out of range|OUT_OF_RANGE).*End of sequence|"
        r"(?:Out of range|OUT_OF_RANGE):\s*\[_Derived_\]\s*End of sequence",
    ),
    _shape(
        "end_of_sequence",
        ["End of sequence", "ran out of data", "OutOfRange"],
        r"End of sequence|ran out of data|OutOfRangeError",
        unless=("end_of_sequence_collective",),
    ),
    # --- parameter servers
    _shape(
        "ps_unreachable",
        [
            "waiting for response from worker: /job:ps",
            "remote target /job:ps",
            "ask /job:ps",
            "rom /job:ps",
            "seems down",
            "is down",
            "Unavailable",
            "UNAVAILABLE",
            "ocket closed",
            "failed to connect",
            "OS Error",
        ],
        r"(?:remote target |[Tt]ask |from )/job:ps/|"
        r"/job:ps/replica:\d+/task:\d+.*(?:Unavailable|UNAVAILABLE|[Ss]ocket closed|failed to connect|OS Error|is down|seems down)",
    ),
    # a worker's session waits at bring-up for a parameter server that does not answer: the ps is down, or
    # up and unreachable (a pod network, DNS, a firewall), or not where the cluster says (the corpus has all
    # three): by itself it does not tell which
    _shape("ps_waited", ["still waiting for response"], r"still waiting for response from worker: /job:ps/"),
    _shape("ps_oom", ["/job:ps"], r"OOM when allocating tensor.*/job:ps/", "ResourceExhaustedError"),
    _shape("master_init", ["Master init"], r"Master init: Unavailable"),
    _shape(
        "session_preemption_retry",
        ["due to a preemption"],
        r"This may be due to a preemption in a connected worker or parameter server",
    ),
    _shape("ps_recv_failed", ['send_device="/job:ps', "send_device=/job:ps"], r"send_device=\"?/job:ps/"),
    _shape("graph_handle", ["Graph handle"], r"Graph handle is not found"),
    _shape(
        "closure_error",
        # "closures" too: the index keys a line by its whole words, and "Start cancelling closures" has no "closure"
        ["closure", "closures"],
        r"encountered the following error when processing closure|Start cancelling closures",
    ),
    # --- TF_CONFIG
    _shape(
        "tf_config_error",
        [
            "valid task_type",
            "TF_CONFIG",
            "not defined in job",
            "No worker known",
            '"chief" node',
            "Unrecognized task_type",
            "No such job in cluster",
            "not found in cluster_spec",
            " exceeds the maximum id of",
            "at most one '",
            "No task with index",
            "task registered with",
        ],
        r"is not a valid task_type in the cluster_spec|If \"cluster\" is (?:not )?set in TF_CONFIG|must have one \"chief\" node|"
        r"Task \d+ was not defined in job|No worker known as /job:|Unrecognized task_type|[Ii]nvalid TF_CONFIG|"
        # ClusterSpec's lookup of a task type the cluster does not list
        r"No such job in cluster|No task with index \d+ in job|"
        # multi_worker_util's checks of the cluster against the task
        r"`task_type` \S+ not found in cluster_spec|The `task_id` \d+ exceeds the maximum id of|"
        r"There must be at most one '(?:chief|evaluator)' job|"
        # the coordination service: a task the cluster it was given does not list
        r"Unexpected task registered with task_name=|"
        r"TF_CONFIG.*(?:JSONDecodeError|Expecting)",
        "",
    ),
    _shape(
        "tf_config_print",
        ["TF_CONFIG", "cluster_spec", "ClusterSpec", '"cluster"', "'cluster'"],
        r"TF_CONFIG.*\{|cluster_spec ?= ?\{|ClusterSpec\(\{|[\"']cluster[\"']\s*:\s*\{",
    ),
)

SHAPE_NAMES = frozenset(shape.name for shape in SHAPES)
_BY_NAME = {shape.name: shape for shape in SHAPES}
_ORDER = {shape.name: i for i, shape in enumerate(SHAPES)}
_INDEX: dict[str, list[Shape]] = {}  # key token -> the shapes a line with it may have
_ALWAYS: dict[str, list[Shape]] = {}  # a guard word of stop tokens only -> its shapes (a substring test)


def word_keys(word: str) -> set[str]:
    """The tokens a line holding ``word`` surely has, as few as will do: one
    the word bounds on both sides (a longer token could not swallow it), else
    every token of it; stop tokens never (empty: look for the word itself)."""
    low = word.lower()
    found = [
        (m.group(), m.start() > 0 and not low[m.start() - 1].isalpha(), m.end() < len(low))
        for m in _TOKEN.finditer(low)
        if m.group() not in STOP_TOKENS
    ]
    inner = [token for token, left, right in found if left and right]
    return {max(inner, key=len)} if inner else {token for token, _, _ in found}


for _shape_ in SHAPES:
    for _word in _shape_.words:
        _keys = word_keys(_word)
        if not _keys:
            _ALWAYS.setdefault(_word, []).append(_shape_)
        for _key in _keys:
            _INDEX.setdefault(_key, [])
            if _shape_ not in _INDEX[_key]:
                _INDEX[_key].append(_shape_)
KEY_TOKENS = frozenset(_INDEX)
ALWAYS_WORDS = tuple(_ALWAYS)  # the reader's gate looks for these as they are


def shapes_in(text: str, words: set[str] | None = None) -> tuple[str, ...]:
    """The names of the shapes this line has (one line may have several).
    ``words``: the line's ``tokens``, when the caller has them already."""
    words = tokens(text) if words is None else words
    candidates = {shape.name: shape for key in words.intersection(KEY_TOKENS) for shape in _INDEX[key]}
    for word, shapes in _ALWAYS.items():
        if word in text:
            candidates.update((shape.name, shape) for shape in shapes)
    if not candidates:
        return ()
    found = [
        shape for name, shape in sorted(candidates.items(), key=lambda item: _ORDER[item[0]]) if shape.search(text)
    ]
    names = {shape.name for shape in found}
    return tuple(shape.name for shape in found if not any(better in names for better in shape.unless))


def error_class(names: tuple[str, ...]) -> str | None:
    """The class of the error a line with these shapes is read as (first shape that makes one)."""
    for name in names:
        shape = _BY_NAME.get(name)
        if shape is not None and shape.error_class is not None:
            return shape.error_class
    return None
