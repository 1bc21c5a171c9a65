"""How far one call of a traced train step moves its optimizers, known from its traces.

The observer counts a custom loop's steps by reading the optimizers' ``iterations``
after each call of a train step: right for every loop, but a device read per step
(docs/notebook/agent.md). Where the traces show that every call applies each
optimizer exactly once, the read is not needed: ``fixed_advance`` says 1, and the
observer counts calls, checking against a read now and then
(chaos.agent.loop.VERIFY_EVERY). A trace shows that when each of its applies was
traced in the function's own graph, not in a ``tf.cond`` branch, a loop body or
an inner ``tf.function`` (those may apply on some calls only, or several times),
each optimizer once (MirroredStrategy traces one apply per replica for one update),
and every trace of the function applies the same optimizers (a Python-level branch
can make a trace that applies nothing). Anything else: None, read every call.
"""

from __future__ import annotations

from chaos.agent.guard import guarded

TRACES = "_tfchaos_traces"  # on a tf.function: {id(graph): Trace} of the traces that applied
FIXED = "_tfchaos_fixed"  # on a tf.function: (its tracing count, fixed_advance) last decided


class Trace:
    """The applies one trace (one graph) of a tf.function made."""

    def __init__(self, own_graph: bool) -> None:
        self.own_graph = own_graph  # traced in the function's graph, not a nested one
        self.applies: dict[int, int] = {}  # id(optimizer) -> how many applies

    def regular(self) -> bool:
        return self.own_graph and all(n == 1 for n in self.applies.values())


@guarded("custom loop: noting where an apply was traced")  # unnoted, the trace reads: fixed_advance is None
def note_apply(fn, optimizer) -> None:
    """While ``fn`` traces, ``optimizer``'s apply was traced (in the graph being built)."""
    graph = current_graph()
    traces = fn.__dict__.setdefault(TRACES, {})
    trace = traces.get(id(graph))
    if trace is None:
        trace = traces[id(graph)] = Trace(own_graph=is_function_graph(graph))
    trace.applies[id(optimizer)] = trace.applies.get(id(optimizer), 0) + 1


def current_graph():
    from tensorflow.python.framework import ops

    return ops.get_default_graph()


def is_function_graph(graph) -> bool:
    """Whether ``graph`` is a tf.function's own graph: a FuncGraph whose outer graph is none
    (a branch, a loop body and an inner function are FuncGraphs inside another; measured in
    TF 2.21: a cond branch is a CondBranchFuncGraph whose outer graph is the FuncGraph)."""
    from tensorflow.python.framework.func_graph import FuncGraph

    return isinstance(graph, FuncGraph) and not isinstance(getattr(graph, "outer_graph", None), FuncGraph)


def fixed_advance(fn, optimizers) -> int | None:
    """1 when every call of ``fn`` applies each of ``optimizers`` once, else None (read them)."""
    try:
        count = fn.experimental_get_tracing_count()
    except Exception:  # noqa: BLE001 - a TF without it: read every call
        return None
    decided = fn.__dict__.get(FIXED)
    if decided is not None and decided[0] == count:
        return decided[1]
    traces = list(fn.__dict__.get(TRACES, {}).values())
    regular = (
        len(traces) == count  # every trace applied (the cache holds one graph per trace)
        and all(t.regular() for t in traces)
        and len({frozenset(t.applies) for t in traces}) == 1
        and not any(getattr(o, "gradient_accumulation_steps", None) for o in optimizers)  # Keras 3's
    )
    fn.__dict__[FIXED] = (count, 1 if regular else None)
    return 1 if regular else None
