#!/usr/bin/env bash
# Two MWMS workers (this checkout's harness, direct TF_CONFIG, no proxy) with
# settings per worker: the measurements of docs/findings.md ("Seeds, dropout and
# batch sizes"). Needs the tfchaos/worker:tf2.20 image. Prints, per worker, the
# weights digest at train begin and after step 1, its batch per step, how many
# steps drew the same dropout mask on both, the final digests and any error.
#
#   benchmarks/seeds_and_batches.sh '{"dropout":0.5}' '{"dropout":0.5}'                    # one seed
#   benchmarks/seeds_and_batches.sh '{"dropout":0.5,"seeding":"per_worker"}' '{"dropout":0.5,"seeding":"per_worker"}'
#   benchmarks/seeds_and_batches.sh '{"dropout":0.5,"seeding":"unseeded"}' '{"dropout":0.5,"seeding":"unseeded"}'
#   benchmarks/seeds_and_batches.sh '{}' '{"local_batch_size":8}'                            # batch skew
set -euo pipefail
IMAGE=${IMAGE:-tfchaos/worker:tf2.20}
HERE=$(cd "$(dirname "$0")/.." && pwd)
TAG=tfchaos-bench-$$
LABEL=io.tfchaos.bench=$TAG
OUT=$(mktemp -d)
cleanup() {
  docker ps -aq --filter "label=$LABEL" | xargs -r docker rm -f >/dev/null
  docker volume rm -f "$TAG" >/dev/null 2>&1 || true
  docker network rm "$TAG" >/dev/null 2>&1 || true
  rm -rf "$OUT"
}
trap cleanup EXIT
docker network create --label "$LABEL" "$TAG" >/dev/null
for i in 0 1; do
  extra=$([ "$i" = 0 ] && echo "$1" || echo "$2")
  settings=$(python3 -c 'import json, sys; d = {"epochs": 2, "steps_per_epoch": 10}; d.update(json.loads(sys.argv[1])); print(json.dumps(d))' "$extra")
  docker run -d --name "$TAG-w$i" --label "$LABEL" --network "$TAG" -v "$TAG:/backup" \
    -v "$HERE/chaos:/opt/tfchaos/chaos:ro" -e TF_CPP_MIN_LOG_LEVEL=1 -e CHAOS_WORKER_SETTINGS="$settings" \
    -e TF_CONFIG="{\"cluster\":{\"worker\":[\"$TAG-w0:2222\",\"$TAG-w1:2222\"]},\"task\":{\"type\":\"worker\",\"index\":$i}}" \
    "$IMAGE" >/dev/null
done
for i in 0 1; do docker wait "$TAG-w$i" >/dev/null; docker logs "$TAG-w$i" >"$OUT/w$i.log" 2>&1; done
python3 - "$OUT" <<'PY'
import json, sys
def events(i):
    return [json.loads(l) for l in open(f"{sys.argv[1]}/w{i}.log") if l.startswith('{"')]
a, b = events(0), events(1)
for i, ev in enumerate((a, b)):
    plan = next((e for e in ev if e["event"] == "plan"), {})
    step1 = next((e for e in ev if e["event"] == "step"), {})
    done = next((e for e in ev if e["event"] == "done"), {})
    errors = [f'{e["error_class"]}: {e["message"][:200]}' for e in ev if e["event"] == "error"]
    print(f'worker-{i}: begins {plan.get("weights_digest")} batch {plan.get("local_batch")}; after step 1 '
          f'{step1.get("weights_digest")}; mask 1 {step1.get("dropout_mask") or "-"}; done {done.get("weights_digest")}; '
          f'errors {errors or "none"}')
sa = {e["step"]: e for e in a if e["event"] == "step"}
sb = {e["step"]: e for e in b if e["event"] == "step"}
same = sum(sa[s]["dropout_mask"] == sb[s]["dropout_mask"] != "" for s in sa if s in sb)
print(f"steps with the same dropout mask on both: {same} of {len(sa)}")
PY
