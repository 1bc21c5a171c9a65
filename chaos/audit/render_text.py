"""The card as Markdown (for a pull request or a terminal) and as JSON."""

from __future__ import annotations

import json

from chaos.audit.card import Card
from chaos.audit.findings import FAILURES, FINDING, NOT_MEASURED, OK
from chaos.audit.measure import SIGTERM_POLL_S, Figure
from chaos.audit.policy import NOT_RECOVERED, RECOVERED, describe, plural
from chaos.audit.policy_yaml import compose_note, documents, example_tf_config

MARK = {OK: "ok", FINDING: "FINDING", NOT_MEASURED: "not measured"}


def seconds(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.2f} s"


def figure(f: Figure) -> str:
    return f"{seconds(f.value)} ({f.note})" if f.known else f"not measured ({f.note})"


def percent(value: float | None) -> str:
    return "not computed" if value is None else f"{100 * value:.2f} %"


def model_lines(card: Card) -> list[str]:
    """The model's figures with their formulas, one line each (shared by Markdown and HTML)."""
    m, a = card.model, card.assumptions
    lines = [
        f"M = node MTBF / nodes = {a.node_mtbf_hours:g} h x 3600 / {a.nodes} = {m.mtbf_s:.0f} s",
        f"C (save cost) = {figure(m.save_s)}",
        f"R (restart -> first step) = {figure(m.restart_s)}",
        f"D (fault -> first process exit) = {figure(m.detect_s)}",
        f"step time = {figure(m.step_time_s)}",
        f"tau (interval) = {m.interval_steps} steps x step time = {seconds(m.interval_s)}",
    ]
    if m.now is None:
        lines.append(f"ETTR: {m.missing}")
        return lines
    c, r, d, tau = m.save_s.value, m.restart_s.value, m.detect_s.value, m.interval_s
    best = m.recommended.costs.interval_s
    lines += [
        f"tau_Young = sqrt(2 C M) = sqrt(2 x {c:.4g} x {m.mtbf_s:.0f}) = {m.young_s:.2f} s",
        f"tau_Daly = sqrt(2 C (M + R)) - C = sqrt(2 x {c:.4g} x ({m.mtbf_s:.0f} + {r:.3g})) - {c:.4g} = {m.daly_s:.2f} s"
        f" -> {m.best_interval_steps} steps ({best:.2f} s)",
        f"ETTR now = tau/(tau + C) x (1 - (D + R + (tau + C)/2)/M) = {tau:.3g}/({tau:.3g} + {c:.4g}) x "
        f"(1 - ({d:.3g} + {r:.3g} + {(tau + c) / 2:.3g})/{m.mtbf_s:.0f}) = {percent(m.now.ettr)}",
        f"ETTR at tau_Daly = {best:.3g}/({best:.3g} + {c:.4g}) x (1 - ({d:.3g} + {r:.3g} + {(best + c) / 2:.3g})/"
        f"{m.mtbf_s:.0f}) = {percent(m.recommended.ettr)}",
        f"time lost to saves and failures now: {m.waste_ratio:.2f}x what it is at tau_Daly",
    ]
    return lines


def run_rows(card: Card) -> list[list[str]]:
    rows = []
    for r in card.runs:
        if not r.measured:
            rows.append([r.title, "not measured", r.why, "", "", "", ""])
            continue
        detection = (
            ", ".join(
                f"{w} {seconds(f.value)}" + (f" ({f.note})" if f.known else " (none)") for w, f in r.detection.items()
            )
            if r.kind in FAILURES
            else "-"
        )
        if r.sigterm_noticed_s.known:  # the SIGTERM reached the job through TF's 1 s poll: say where it went
            answer = r.exit_after_sigterm_noticed_s
            detection += (
                f"; TF noticed the SIGTERM {seconds(r.sigterm_noticed_s.value)} after it (it polls each "
                f"{SIGTERM_POLL_S:g} s), "
                + (f"the job exited {seconds(answer.value)} later" if answer.known else answer.note)
            )
        lost = "-" if not r.steps_lost.known else f"{r.steps_lost.value:g} / {r.save_interval_steps or '?'}"
        exact = r.verdicts.get("matches_uninterrupted")
        rows.append(
            [
                r.title,
                "measured",
                detection,
                "-" if not r.detect_s.known or r.kind not in FAILURES else seconds(r.detect_s.value),
                "-" if not r.restart_s.known else seconds(r.restart_s.value),
                lost,
                "-" if exact is None else exact.status.value,
            ]
        )
    return rows


RUN_HEADER = [
    "fault",
    "status",
    "detection per worker (fault -> first error/exit)",
    "D: fault -> first exit",
    "R: restart -> first step",
    "steps lost / interval",
    "bit-exact",
]


POLICY_HEADER = ["fault", "kind", "exit codes (signals) after the fault", "after the restart", "restart", "so"]


def codes(values) -> str:
    return ", ".join(describe(c) for c in values) or "-"


def policy_rows(card: Card) -> list[list[str]]:
    """Per battery entry: the exit codes the job gave and whether a restart fixed them."""
    rows = []
    for f in card.policy.faults if card.policy else ():
        so = {RECOVERED: "retry", NOT_RECOVERED: "fail (a restart did not fix it)"}.get(f.outcome, "-")
        rows.append(
            [f.title + (f" (x{f.runs})" if f.runs > 1 else ""), f.kind, codes(f.codes), codes(f.after), f.outcome, so]
        )
    return rows


def policy_summary(card: Card) -> list[str]:
    """The derived policy in words, one line each (Markdown and HTML)."""
    p = card.policy
    if p is None or p.missing:
        return [f"No failure policy: {p.missing if p else 'not derived'}."]
    lines = [
        f"Retry (Count, RestartJobSet): {plural(p.retryable)} {codes(p.retryable)}; a disruption (DisruptionTarget: "
        "preemption, eviction, node drain): Ignore.",
        (
            f"Fail the job (FailJob, FailJobSet): {plural(p.not_fixed)} {codes(p.not_fixed)}."
            if p.not_fixed
            else "Fail the job (FailJob, FailJobSet): no exit code: no run that a restart failed to recover gave one."
        ),
        f"At most {p.retries} restarts; manifests for {card.target.workers} workers (one per node, --nodes), "
        f"image {card.target.image}.",
    ]
    lines += [f"Note: {n}." for n in p.notes]
    if card.policy_check:
        lines.append(f"Checked: {card.policy_check}.")
    return lines


def policy_snippets(card: Card) -> list[tuple[str, str, str]]:
    """(heading, language, text) of each manifest, in the order the card prints them."""
    if card.policy is None or card.policy.missing:
        return []
    docs = documents(card.policy, card.target)
    return [
        (
            "Kubernetes Job (batch/v1, Indexed) with its headless Service: podFailurePolicy, TF_CONFIG from the "
            "pod's index",
            "yaml",
            docs["job"],
        ),
        ("JobSet: failurePolicy, and the podFailurePolicy of its Job template", "yaml", docs["jobset"]),
        (f"TF_CONFIG in a JobSet's pods (pod 1 gets {example_tf_config(card.target)})", "sh", docs["tf_config"]),
        ("Docker / Compose restart settings. " + compose_note(card.policy), "yaml", docs["compose"]),
    ]


def policy_markdown(card: Card) -> list[str]:
    out = ["", "## Failure policy: which exits a restart fixed", ""]
    if card.policy and card.policy.faults:
        out.append("| " + " | ".join(POLICY_HEADER) + " |")
        out.append("|" + "---|" * len(POLICY_HEADER))
        out += ["| " + " | ".join(row) + " |" for row in policy_rows(card)]
        out.append("")
    out += [f"- {line}" for line in policy_summary(card)]
    for heading, lang, text in policy_snippets(card):
        out += ["", f"### {heading}", "", f"```{lang}", text.rstrip("\n"), "```"]
    return out


def markdown(card: Card) -> str:
    out = [f"# Resilience card: {card.workload}", ""]
    out.append(
        f"Overall: **{card.overall.letter}** ({card.overall.computation}). "
        f"Battery `{card.battery}`, {len(card.runs)} runs; cluster of {card.assumptions.nodes} nodes, "
        f"node MTBF {card.assumptions.node_mtbf_hours:g} h (assumed)."
    )
    if card.command:
        out += ["", f"Reproduce: `{card.command}`"]
    out += ["", "| area | grade | how |", "|---|---|---|"]
    out += [f"| {g.area} | {g.letter} | {g.computation} |" for g in card.grades]
    out += ["", "## Findings", ""]
    for f in card.findings:
        out.append(f"- **{MARK[f.status]}** [{f.area}] {f.title}")
        out.append(f"  - measured: {f.measured}")
        if f.status == FINDING:
            out.append(f"  - why it matters: {f.why}")
            out.append(f"  - fix: {f.fix}")
            if f.setting:
                out.append(f"  - setting: `{f.setting}`")
    out += ["", "## Modelled goodput (ETTR)", "", "```"] + model_lines(card) + ["```", "", "## Runs", ""]
    out.append("| " + " | ".join(RUN_HEADER) + " |")
    out.append("|" + "---|" * len(RUN_HEADER))
    out += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in run_rows(card)]
    out += policy_markdown(card)
    for note in card.notes:
        out += ["", f"Note: {note}"]
    return "\n".join(out) + "\n"


def to_json(card: Card) -> str:
    return json.dumps(card.to_dict(), indent=2, sort_keys=True, default=str) + "\n"
