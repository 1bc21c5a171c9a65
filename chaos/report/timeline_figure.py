"""The timeline picture of a run, as an inline SVG (matplotlib; no JavaScript).

One lane per worker: its global step over time (solid) and its loss (thin,
right axis), the fault windows shaded and labelled across every lane, and the
marks of ``chaos.report.marks`` (errors, exits, OOM kills, restarts, the
checkpoint restored from, the resume point, slow steps). A last lane shows
every step's time, so a slowdown stands out against the pre-fault median.
The dashed line is the uninterrupted reference run with the same seed (its
chief's steps, measured when the reference was computed, started at this run's
first step); when no reference was run, the pace of one (the pre-fault median
step time, from the first step to the final step).

Every drawn thing carries an SVG id (``fault-<i>-...``, ``mark-<kind>-...``) so a
browser test can find it. Text stays text (``svg.fonttype: none``), so the
page can be searched and the labels read by a test.
"""

from __future__ import annotations

import io
import re
import threading

from chaos.report.marks import Picture

# Colours per worker (matplotlib's tab10, colour-blind friendlier than the defaults' order)
WORKER_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
FAULT_COLOUR = "#d62728"
# kind -> (matplotlib marker, colour, size, legend text)
MARK_STYLE = {
    "error": ("X", "#d62728", 110, "error"),
    "exit": ("v", "#222222", 80, "exit"),
    "oom_kill": ("P", "#7b1fa2", 130, "OOM kill"),
    "restart": ("^", "#2e7d32", 90, "restart"),
    "restored": ("o", "#0d47a1", 90, "restored from checkpoint"),
    "resumed": ("*", "#0d47a1", 170, "training resumed"),
    "checkpoint_used": ("D", "#42a5f5", 60, "checkpoint later restored"),
    "done": ("s", "#222222", 45, "done"),
    "slow_step": ("o", "#f9a825", 70, "slowdown (3+ steps > 3x pre-fault median)"),
}
LANE_HEIGHT_IN = 1.7
WIDTH_IN = 11.0

_RENDER = threading.Lock()  # rcParams are global; scenarios of a suite write their pages on threads


def timeline_svg(pic: Picture) -> str | None:
    """The SVG markup (no XML prolog, ready to inline), or None when there is nothing to draw."""
    if pic.empty:
        return None
    import matplotlib

    with _RENDER, matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "tfchaos", "font.size": 9}):
        fig = _draw(pic)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None}, bbox_inches="tight")
    svg = out.getvalue()
    # Inline: no XML prolog or doctype; no RDF metadata (namespace URLs a reader could mistake for fetches)
    svg = svg[svg.index("<svg") :]
    return re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)


def _draw(pic: Picture):
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    n = len(pic.lanes)
    fig = Figure(figsize=(WIDTH_IN, LANE_HEIGHT_IN * n + 1.9), layout="constrained")
    axes = fig.subplots(n + 1, 1, sharex=True, height_ratios=[*([1.0] * n), 0.8])
    right = max(pic.duration, max((w.end for w in pic.windows), default=0.0)) or 1.0
    if pic.reference:  # a reference slower than this run still shows to its end
        right = max(right, pic.reference[-1][0])
    top = max([pic.final_step] + [s for lane in pic.lanes for _, s in lane.steps if s is not None]) or 1

    for row, (ax, lane) in enumerate(zip(axes, pic.lanes)):
        colour = WORKER_COLOURS[lane.worker % len(WORKER_COLOURS)]
        _windows(ax, pic, f"w{lane.worker}", label=row == 0)
        if pic.reference:
            xs, ys = zip(*pic.reference)
            ax.plot(xs, ys, linestyle="--", color="#757575", linewidth=1.2, gid=f"reference-w{lane.worker}")
        elif pic.pace:
            xs, ys = zip(*pic.pace)
            ax.plot(xs, ys, linestyle="--", color="#9e9e9e", linewidth=1.2, gid=f"pace-w{lane.worker}")
        if lane.steps:
            xs = [t for t, _ in lane.steps]
            ys = [float("nan") if s is None else s for _, s in lane.steps]
            ax.plot(xs, ys, color=colour, linewidth=2.0, gid=f"steps-w{lane.worker}")
        if lane.losses:
            twin = ax.twinx()
            xs = [t for t, _ in lane.losses]
            ys = [float("nan") if v is None else v for _, v in lane.losses]
            twin.plot(xs, ys, color=colour, linewidth=0.8, alpha=0.55, gid=f"loss-w{lane.worker}")
            if pic.reference_final_loss is not None:
                twin.axhline(
                    pic.reference_final_loss,
                    color="#616161",
                    linestyle=":",
                    linewidth=1.0,
                    gid=f"reference-loss-w{lane.worker}",
                )
            twin.set_ylabel("loss", color="#616161")
            twin.tick_params(axis="y", labelsize=7, colors="#616161")
        for k, m in enumerate(m for m in pic.marks if m.worker == lane.worker):
            marker, mcolour, size, _ = MARK_STYLE[m.kind]
            ax.scatter(
                [m.t],
                [m.step],
                marker=marker,
                s=size,
                color=mcolour,
                edgecolors="white",
                linewidths=0.6,
                zorder=5,
                gid=f"mark-{m.kind}-w{m.worker}-{k}",
            )
        ax.set_ylim(-0.04 * top, top * 1.12)
        ax.set_ylabel(f"worker-{lane.worker}\nglobal step", color=colour)
        ax.grid(axis="y", alpha=0.25)

    ax = axes[-1]
    _windows(ax, pic, "steptime", label=False)
    for lane in pic.lanes:
        if lane.step_times:
            colour = WORKER_COLOURS[lane.worker % len(WORKER_COLOURS)]
            ax.scatter(*zip(*lane.step_times), s=9, color=colour, gid=f"steptimes-w{lane.worker}")
    if pic.median_step_s:
        ax.axhline(pic.median_step_s, color="#616161", linestyle=":", linewidth=1.0, gid="median-step-time")
        if any(d > 0 for lane in pic.lanes for _, d in lane.step_times):
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("step time (s)")
    ax.set_xlabel("seconds since the run started")
    ax.set_xlim(0, right * 1.01)
    ax.grid(axis="y", alpha=0.25)

    handles = [
        Line2D(
            [], [], color=WORKER_COLOURS[l.worker % len(WORKER_COLOURS)], linewidth=2, label=f"worker-{l.worker} step"
        )
        for l in pic.lanes
    ]
    handles.append(Line2D([], [], color="#9e9e9e", linewidth=0.8, label="loss (right axis)"))
    if pic.reference:
        handles.append(Line2D([], [], color="#757575", linestyle="--", label="uninterrupted reference run"))
    elif pic.pace:
        handles.append(Line2D([], [], color="#9e9e9e", linestyle="--", label="uninterrupted pace"))
    if pic.reference_final_loss is not None:
        handles.append(Line2D([], [], color="#616161", linestyle=":", label="reference final loss"))
    for kind in dict.fromkeys(m.kind for m in pic.marks):
        marker, mcolour, size, text = MARK_STYLE[kind]
        handles.append(Line2D([], [], marker=marker, color=mcolour, linestyle="", markersize=7, label=text))
    if pic.windows:
        from matplotlib.patches import Patch

        handles.append(Patch(color=FAULT_COLOUR, alpha=0.15, label="fault window"))
    fig.legend(handles=handles, loc="outside lower center", ncol=min(6, len(handles)), frameon=False, fontsize=8)
    return fig


def _windows(ax, pic: Picture, lane: str, *, label: bool) -> None:
    for w in pic.windows:
        ax.axvspan(
            w.start,
            w.end,
            color=FAULT_COLOUR,
            alpha=0.13 if not w.open else 0.08,
            linewidth=0,
            gid=f"fault-{w.index}-{lane}",
        )
        if label:
            text = w.label + (" (never healed)" if w.open else "")
            ax.annotate(
                text,
                xy=(w.start, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(2, 3 + 11 * (w.index % 3)),
                textcoords="offset points",
                color=FAULT_COLOUR,
                fontsize=8,
                va="bottom",
                annotation_clip=False,
                gid=f"fault-label-{w.index}",
            )
