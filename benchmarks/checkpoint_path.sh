#!/usr/bin/env bash
# What BackupAndRestore does with a damaged backup, and how long a save takes on
# throttled storage: the single-worker measurements of docs/findings.md
# ("Faults in the checkpoint path"). Needs the tfchaos/worker:tf2.20 image.
#
#   benchmarks/checkpoint_path.sh damage [data|index] [truncate|zero|flip|delete] ...
#   benchmarks/checkpoint_path.sh save-time [docker run args, e.g. --device-write-iops /dev/vda:10]
#   benchmarks/checkpoint_path.sh manager [data|index] [truncate|zero|flip|delete]
#
# damage: train 5 epochs x 20 steps, docker kill after the 2nd backup, damage the
# newest backup with chaos/cluster/backup_files.py, start again; prints the error.
# save-time: gap from each epoch's last step event to its epoch_end (the save), ms.
# manager: a custom loop's tf.train.CheckpointManager(max_to_keep=2), 3 saves, the
# newest damaged, then restore_or_initialize(): does it fall back to the older one?
set -euo pipefail
IMAGE=${IMAGE:-tfchaos/worker:tf2.20}
HERE=$(cd "$(dirname "$0")/.." && pwd)
TAG=tfchaos-bench-$$
LABEL=io.tfchaos.bench=$TAG
TF_CONFIG='{"cluster":{"worker":["localhost:23600"]},"task":{"type":"worker","index":0}}'
SETTINGS='{"epochs":5,"steps_per_epoch":20}'
cleanup() {
  docker ps -aq --filter "label=$LABEL" | xargs -r docker rm -f >/dev/null
  docker volume rm -f "$TAG" >/dev/null 2>&1 || true
}
trap cleanup EXIT
worker() {  # worker NAME [docker run args]: runs the harness (this checkout's code) on the volume
  local name=$1; shift
  docker run --name "$TAG-$name" --label "$LABEL" -v "$TAG:/backup" -v "$HERE/chaos:/opt/tfchaos/chaos:ro" \
    -e TF_CONFIG="$TF_CONFIG" -e CHAOS_WORKER_SETTINGS="$SETTINGS" "$@" "$IMAGE"
}
case "${1:-}" in
  damage)
    file=${2:-data} mode=${3:-truncate}
    docker volume create --label "$LABEL" "$TAG" >/dev/null
    worker a -d >/dev/null
    until [ "$(docker logs "$TAG-a" 2>/dev/null | grep -c '"event":"checkpoint"')" -ge 2 ]; do sleep 0.1; done
    docker kill "$TAG-a" >/dev/null
    docker run --rm --label "$LABEL" -v "$TAG:/backup" -v "$HERE/chaos:/opt/tfchaos/chaos:ro" \
      --entrypoint python3 "$IMAGE" /opt/tfchaos/chaos/cluster/backup_files.py damage /backup "$file" "$mode"
    worker b 2>&1 | grep -E '"event":"(error|restored|done)"|unreadable' | cut -c1-400 || true
    echo "exit $(docker inspect -f '{{.State.ExitCode}}' "$TAG-b")"
    ;;
  save-time)
    shift
    docker volume create --label "$LABEL" "$TAG" >/dev/null
    worker a "$@" 2>/dev/null | python3 -c '
import json, sys
last, gaps = None, []
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    e = json.loads(line)
    if e.get("event") == "step":
        last = e["t"]
    elif e.get("event") == "epoch_end" and last:
        gaps.append(round((e["t"] - last) * 1000, 1))
print("save ms per epoch:", gaps)'
    ;;
  manager)
    docker run --rm --label "$LABEL" -v "$HERE/chaos:/opt/tfchaos/chaos:ro" --entrypoint python3 "$IMAGE" -c '
import json, sys
import tensorflow as tf
sys.path.insert(0, "/opt/tfchaos")
from chaos.cluster.backup_files import damage
def manager(step):
    return tf.train.CheckpointManager(tf.train.Checkpoint(step=step), "/tmp/cm", max_to_keep=2)
step = tf.Variable(0, dtype=tf.int64)
m = manager(step)
for i in (1, 2, 3):
    step.assign(i * 20)
    m.save()
print(json.dumps({"kept": m.checkpoints, "damaged": damage("/tmp/cm", sys.argv[1], sys.argv[2])}))
fresh = tf.Variable(0, dtype=tf.int64)
try:
    print(json.dumps({"restored": manager(fresh).restore_or_initialize(), "step": int(fresh.numpy())}))
except Exception as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc)[:300]}))
' "${2:-data}" "${3:-truncate}" 2>/dev/null | grep '^{'
    ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
