"""counter_table.py TRAIN_LOGDIR RESUME_LOGDIR: one Markdown row per synchronization/aggregation
pair from counter.py's logs (w0.log, w1.log in each folder): what each worker read after each
step, what each saved, what each read after restoring the chief's save and after more steps.
"""

import json
import sys


def load(d):
    out = {}
    for i in (0, 1):
        for line in open(f"{d}/w{i}.log"):
            if line.startswith("@@ "):
                e = json.loads(line[3:])
                if e["event"] == "combo":
                    out.setdefault(e["combo"], {})[i] = e
    return out


def fmt(e):
    if "error" in e and not e.get("steps"):
        return f"{e['stage']}: {e['error'][:160]}"
    s = e.get("steps") or []
    vals = "/".join(str(x["cross"] if not str(x["cross"]).startswith("ERR") else "ERR") for x in s)
    loc = "/".join(str(x["local"][0]) if isinstance(x["local"], list) else "ERR" for x in s)
    txt = f"read {vals}, local {loc}"
    if "error" in e:
        txt += f"; {e['stage']}: {e['error'][:120]}"
    return txt


t, r = load(sys.argv[1]), load(sys.argv[2])
print("| combo | w0 after each step (train) | w1 | stored (w0, w1) | w0 restored, then steps | w1 |")
print("|---|---|---|---|---|---|")
for c in t:
    a, b = t[c].get(0, {}), t[c].get(1, {})
    ra, rb = r.get(c, {}).get(0, {}), r.get(c, {}).get(1, {})
    stored = ra.get("stored") or (a.get("stored_own"), b.get("stored_own"))

    def res(e):
        if not e:
            return "-"
        if "restored" not in e:
            return f"{e.get('stage')}: {e.get('error', '')[:120]}"
        return f"restored read {e['restored']['cross']} local {e['restored']['local']}; " + fmt(e)

    print(f"| {c} | {fmt(a)} | {fmt(b)} | {stored} | {res(ra)} | {res(rb)} |")
