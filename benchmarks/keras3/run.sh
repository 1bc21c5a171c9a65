#!/usr/bin/env bash
# Keras 3 / tf-keras and counter-variable measurements under MultiWorkerMirroredStrategy
# (docs/findings.md: "Keras 3 under MultiWorkerMirroredStrategy" and "A counter variable
# under each aggregation/synchronization"). Runs each STAGE (a script of this folder and its
# arguments; stages are separated by --then) on $WORKERS containers from $IMAGE, on a labelled
# network and one labelled volume at /shared that every stage of the call shares, then removes
# all of it. Direct TF_CONFIG (no proxy): these are measurements of TF and Keras, not of faults.
# Prints each worker's exit code and "@@ " JSON lines per stage; for opt_steps.py also how
# often each hooked method executed; for counter.py train --then resume, a Markdown table.
#
#   benchmarks/keras3/run.sh fit.py plain                         # Keras 3 fit: ValueError (PerReplica)
#   KERAS=2 benchmarks/keras3/run.sh fit.py plain                 # tf-keras: trains, equal digests
#   ENV="-e FIT_PATCH=map+reduce" WORKERS=3 benchmarks/keras3/run.sh fit.py dfd
#   ENV="-e FIT_PATCH=map+reduce" benchmarks/keras3/run.sh backup.py 2 1 --then backup.py -1 1
#   ENV="-e FIT_PATCH=map+reduce -e BACKUP_PER_WORKER=1" benchmarks/keras3/run.sh backup.py 2 1 --then backup.py -1 1
#   benchmarks/keras3/run.sh ctl.py probe
#   benchmarks/keras3/run.sh ctl.py train 4 2 --then ctl.py train 4
#   KERAS=2 benchmarks/keras3/run.sh ctl.py train 4 2 --then KERAS=3 ctl.py train 4   # the upgrade
#   benchmarks/keras3/run.sh opt_steps.py accum_py                # also: fn eager loop_fn accum_cond ...
#   benchmarks/keras3/run.sh counter.py train int64 3 replica task --then counter.py resume int64 3 replica task
#
# A stage may start with KERAS=2 or KERAS=3 to override $KERAS for that stage.
# Env: IMAGE (tfchaos/worker-deps:tf2.21, the default TF; the deps image holds TF, Keras 3 and tf-keras and sets
# TF_USE_LEGACY_KERAS=1, which KERAS=3 clears), WORKERS (2), KERAS (3), ENV (extra docker run
# flags), LOGS (a folder to keep every worker's full log in), DEADLINE (s per stage, 300: a hang
# is killed and said so).
set -uo pipefail
IMAGE=${IMAGE:-tfchaos/worker-deps:tf2.21}
WORKERS=${WORKERS:-2}
DEADLINE=${DEADLINE:-300}
HERE=$(cd "$(dirname "$0")" && pwd)
TAG=tfchaos-keras3-$$
LABEL=io.tfchaos.bench=$TAG
OUT=${LOGS:-$(mktemp -d)}
mkdir -p "$OUT"
cleanup() {
  docker ps -aq --filter "label=$LABEL" | xargs -r docker rm -f >/dev/null
  docker volume rm -f "$TAG" >/dev/null 2>&1 || true
  docker network rm "$TAG" >/dev/null 2>&1 || true
  [ -n "${LOGS:-}" ] || rm -rf "$OUT"
}
trap cleanup EXIT
docker network create --label "$LABEL" "$TAG" >/dev/null
docker volume create --label "$LABEL" "$TAG" >/dev/null
peers=""
for ((i = 0; i < WORKERS; i++)); do peers+="\"$TAG-w$i:2222\","; done
peers=${peers%,}

run_stage() {  # run_stage N ARGS...: one stage on every worker, logs to $OUT/sN/wI.log
  local n=$1; shift
  local keras=$KERAS
  case "${1:-}" in KERAS=*) keras=${1#KERAS=}; shift ;; esac
  local legacy=$([ "$keras" = 2 ] && echo 1 || echo "")
  mkdir -p "$OUT/s$n"
  echo "### stage $n: $* (Keras ${keras/2/2 = tf-keras}, $WORKERS workers, $IMAGE)"
  for ((i = 0; i < WORKERS; i++)); do
    # shellcheck disable=SC2086
    docker run -d --name "$TAG-w$i" --hostname "$TAG-w$i" --label "$LABEL" --network "$TAG" \
      -v "$HERE:/m:ro" -v "$TAG:/shared" -e TF_CPP_MIN_LOG_LEVEL=1 -e PYTHONUNBUFFERED=1 \
      -e TF_USE_LEGACY_KERAS="$legacy" ${ENV:-} \
      -e TF_CONFIG="{\"cluster\":{\"worker\":[$peers]},\"task\":{\"type\":\"worker\",\"index\":$i}}" \
      --entrypoint /opt/venv/bin/python "$IMAGE" "/m/$@" >/dev/null
  done
  local end=$((SECONDS + DEADLINE))
  for ((i = 0; i < WORKERS; i++)); do
    while [ "$(docker inspect -f '{{.State.Running}}' "$TAG-w$i")" = true ] && [ $SECONDS -lt $end ]; do sleep 1; done
  done
  for ((i = 0; i < WORKERS; i++)); do
    if [ "$(docker inspect -f '{{.State.Running}}' "$TAG-w$i")" = true ]; then
      echo "worker-$i still running after ${DEADLINE}s: killed (a hang)"; docker kill "$TAG-w$i" >/dev/null
    fi
    docker logs "$TAG-w$i" >"$OUT/s$n/w$i.log" 2>&1
    echo "--- worker-$i exit $(docker inspect -f '{{.State.ExitCode}}' "$TAG-w$i")"
    grep '^@@ ' "$OUT/s$n/w$i.log" | cut -c4-
    if [ "$1" = opt_steps.py ]; then
      echo "executed: $(grep -o '^@@RT .*' "$OUT/s$n/w$i.log" | sort | uniq -c | awk '{printf "%s=%s ", $3, $1}')"
    fi
    docker rm -f "$TAG-w$i" >/dev/null
  done
}

KERAS=${KERAS:-3}
stage=1; args=(); first=""
for a in "$@" --then; do
  if [ "$a" = --then ]; then
    [ ${#args[@]} -gt 0 ] || continue
    [ -n "$first" ] || first=${args[0]}
    run_stage $stage "${args[@]}"
    stage=$((stage + 1)); args=()
  else
    args+=("$a")
  fi
done
if [ "$first" = counter.py ] && [ -d "$OUT/s2" ]; then
  python3 "$HERE/counter_table.py" "$OUT/s1" "$OUT/s2"
fi
