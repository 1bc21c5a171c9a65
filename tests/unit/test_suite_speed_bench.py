"""The pure parts of benchmarks/suite_speed.py: /proc/stat, CPU between sample
times, and a worker container's CPU split at its go and its first step from a
hand-made report."""

import importlib.util
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "suite_speed.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("suite_speed_bench", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


PROC_STAT = """cpu  1000 20 300 50000 400 5 6 7 0 0
cpu0 500 10 150 25000 200 3 3 7 0 0
cpu1 500 10 150 25000 200 2 3 0 0 0
intr 123456 0 0
ctxt 987654
"""


def test_busy_ticks_sums_user_nice_system_irq_softirq(bench):
    assert bench.busy_ticks(PROC_STAT) == 1000 + 20 + 300 + 5 + 6  # idle, iowait, steal left out


def test_busy_seconds_divides_the_delta_by_the_clock_tick(bench):
    later = PROC_STAT.replace("cpu  1000 20 300 50000 400 5 6", "cpu  1150 20 340 50100 400 7 8", 1)
    assert bench.busy_seconds(PROC_STAT, later, 100) == pytest.approx((150 + 40 + 2 + 2) / 100)


def test_busy_ticks_without_the_aggregate_line_is_an_error(bench):
    with pytest.raises(ValueError):
        bench.busy_ticks("cpu0 1 2 3 4 5 6 7\n")


def test_proc_times_reads_a_command_name_with_spaces_and_parentheses(bench):
    stat = "1434 (odd (name) x) S 1 1434 1434 0 -1 4194560 1 2 3 4 700 80 9 1 20 0 40 0 3701 0 0"
    own, children, comm, start = bench.proc_times(stat)
    assert (own, children, comm, start) == (780, 10, "odd (name) x", "3701")


def test_cpu_between_interpolates_between_samples_and_clamps_at_the_ends(bench):
    samples = [(10.0, 0.0), (11.0, 1.0), (12.0, 1.0), (13.0, 3.0)]
    assert bench.cpu_between(samples, 10.5, 12.5) == pytest.approx(1.5)
    assert bench.cpu_between(samples, 0.0, 100.0) == pytest.approx(3.0)
    assert bench.cpu_between(samples, 12.5, 12.0) == 0.0


def test_container_names(bench):
    assert bench.parse_container_name("tfchaos-6900d1e9-worker-1-g2") == ("6900d1e9", "worker-1", 2)
    assert bench.parse_container_name("/tfchaos-6900d1e9-worker-0-g0") == ("6900d1e9", "worker-0", 0)
    assert bench.parse_container_name("tfchaos-6900d1e9-proxy") is None
    assert bench.parse_container_name("tfchaos-6900d1e9-volume-owner") is None


def ev(kind, t, source, **fields):
    return {"event": kind, "t": t, "source": source, **fields}


# worker-1: started at 100 (address 96), first step 104, killed; standby of
# generation 1 told to go at 110 (address), started 111, first step 113.
EVENTS = [
    ev("address", 96.0, "runner", task="worker-1", address="172.19.0.4"),
    ev("start", 100.0, "worker-1"),
    ev("step", 104.0, "worker-1", step=1),
    ev("step", 105.0, "worker-1", step=2),
    ev("step", 104.5, "worker-0", step=1),
    ev("exit", 106.0, "worker-1", exit_code=137),
    ev("address", 110.0, "runner", task="worker-1", address="172.19.0.5"),
    ev("start", 111.0, "worker-1"),
    ev("step", 113.0, "worker-1", step=41),
]


def test_generations_are_the_kth_start_with_its_first_step_and_go(bench):
    gens = bench.generations(EVENTS, "worker-1")
    assert gens == [
        {"start_t": 100.0, "first_step_t": 104.0, "address_t": 96.0},
        {"start_t": 111.0, "first_step_t": 113.0, "address_t": 110.0},
    ]


def test_a_start_with_no_step_before_the_next_start_has_none(bench):
    events = [ev("start", 1.0, "worker-0"), ev("start", 5.0, "worker-0"), ev("step", 6.0, "worker-0", step=1)]
    assert [g["first_step_t"] for g in bench.generations(events, "worker-0")] == [None, 6.0]


def test_a_fresh_worker_splits_at_its_first_step(bench):
    samples = [(96.0, 0.0), (100.0, 4.0), (104.0, 6.0), (106.0, 7.0)]
    split = bench.attribute_worker(samples, standby=False, go_t=None, first_step_t=104.0, started=True)
    assert split["imported_ahead"] == 0.0
    assert split["to_first_step"] == pytest.approx(6.0)
    assert split["training"] == pytest.approx(1.0)


def test_a_standby_splits_at_its_go_and_its_first_step(bench):
    # Created at 101, imported TensorFlow (3 s of CPU) while waiting, go at 110.
    samples = [(101.0, 0.0), (105.0, 3.0), (110.0, 3.1), (113.0, 4.6), (120.0, 9.6)]
    split = bench.attribute_worker(samples, standby=True, go_t=110.0, first_step_t=113.0, started=True)
    assert split["used"] is True
    assert split["imported_ahead"] == pytest.approx(3.1)
    assert split["to_first_step"] == pytest.approx(1.5)
    assert split["training"] == pytest.approx(5.0)


def test_a_standby_never_told_to_go_is_all_imported_ahead_unused(bench):
    samples = [(101.0, 0.0), (105.0, 3.0), (120.0, 3.2)]
    split = bench.attribute_worker(samples, standby=True, go_t=None, first_step_t=None, started=False)
    assert (split["used"], split["imported_ahead"], split["to_first_step"]) == (False, pytest.approx(3.2), 0.0)


def test_go_from_cpu_shares_leaving_the_standby_weight(bench):
    samples = [(101.0, 0.0, 0), (101.5, 0.5, 2), (102.0, 1.0, 2), (102.5, 1.5, 1024)]
    assert bench.go_from_shares(samples) == pytest.approx(102.25)
    assert bench.go_from_shares(samples[:3]) is None


def test_runs_are_matched_to_reports_by_subnet_and_time(bench):
    report = {"timeline": {"events": EVENTS}}
    runs = {
        "aaaa0001": {"subnets": ["172.18.0.0/16"], "t0": 90.0, "t1": 130.0},  # a reference run beside it
        "aaaa0002": {"subnets": ["172.19.0.0/16"], "t0": 95.0, "t1": 130.0},
        "aaaa0003": {"subnets": ["172.19.0.0/16"], "t0": 300.0, "t1": 330.0},  # the subnet again, later
    }
    assert bench.match_runs(runs, {"killed-worker": report}) == {"killed-worker": "aaaa0002"}


def test_analyse_attributes_a_hand_made_run(bench):
    report = {"scenario": "killed-worker", "status": "pass", "timeline": {"events": EVENTS, "info": {}}}
    labels = {"io.tfchaos.run": "aaaa0002"}
    containers = [
        {
            "name": "tfchaos-aaaa0002-proxy",
            "ours": True,
            "subnets": ["172.19.0.0/16"],
            "labels": {**labels, "io.tfchaos.role": "proxy"},
            "samples": [(94.0, 0.0, 1024), (120.0, 0.5, 1024)],
        },
        {
            "name": "tfchaos-aaaa0002-worker-1-g0",
            "ours": True,
            "subnets": ["172.19.0.0/16"],
            "labels": {**labels, "io.tfchaos.role": "worker"},
            "samples": [(96.0, 0.0, 0), (100.0, 4.0, 1024), (104.0, 6.0, 1024), (106.0, 7.0, 1024)],
        },
        {
            "name": "tfchaos-aaaa0002-worker-1-g1",
            "ours": True,
            "subnets": ["172.19.0.0/16"],
            "labels": {**labels, "io.tfchaos.role": "standby"},
            "samples": [
                (101.0, 0.0, 0),
                (105.0, 3.0, 2),
                (109.8, 3.1, 2),
                (110.2, 3.1, 1024),
                (113.0, 4.6, 1024),
                (120.0, 9.6, 1024),
            ],
        },
        {
            "name": "tfchaos-aaaa0002-worker-1-g2",
            "ours": True,
            "subnets": ["172.19.0.0/16"],
            "labels": {**labels, "io.tfchaos.role": "standby"},
            "samples": [(114.0, 0.0, 0), (120.0, 2.0, 2)],
        },
        {
            "name": "tfchaos-bbbb0001-worker-0-g0",
            "ours": True,
            "subnets": ["172.18.0.0/16"],
            "labels": {"io.tfchaos.run": "bbbb0001", "io.tfchaos.role": "worker"},
            "samples": [(90.0, 0.0, 0), (99.0, 8.0, 1024)],
        },
        {
            "name": "someone-else",
            "ours": False,
            "subnets": [],
            "labels": {},
            "samples": [(90.0, 50.0, 1024), (120.0, 52.5, 1024)],
        },
        {"name": "?", "ours": None, "subnets": [], "labels": {}, "samples": [(97.0, 0.1, 1024), (97.5, 0.3, 1024)]},
    ]
    result = bench.analyse(containers, {"killed-worker": report})
    cpu = result["cpu"]
    assert cpu["workers_to_first_step"] == pytest.approx(6.0 + 1.5)
    assert cpu["workers_training"] == pytest.approx(1.0 + 5.0)
    assert cpu["imported_ahead_used"] == pytest.approx(3.1)
    assert cpu["imported_ahead_unused"] == pytest.approx(2.0)
    assert cpu["reference_runs"] == pytest.approx(8.0)
    assert cpu["proxy"] == pytest.approx(0.5)
    assert cpu["other_containers"] == pytest.approx(2.5)
    assert cpu["unknown_gone"] == pytest.approx(0.2)
    assert result["starts"] == 2
    assert result["runs"]["aaaa0002"]["scenario"] == "killed-worker"
    assert result["runs"]["bbbb0001"]["scenario"] is None


def test_flat_figures_and_the_table(bench):
    cpu = dict.fromkeys(bench.CPU_KEYS, 0.0)
    cpu.update(workers_to_first_step=6.0, workers_training=4.0, proxy=1.0, other_containers=3.0)

    def run(wall, machine):
        return {
            "wall_s": wall,
            "machine_cpu_s": machine,
            "build": {"wall_s": 2.0, "machine_cpu_s": 1.0},
            "analysis": {"cpu": cpu, "starts": 3, "workers": []},
            "runner_cpu_s": 2.0,
            "engine_cpu_s": 3.0,
            "sampler_cpu_s": 0.5,
            "figures": {
                "phases": dict.fromkeys(bench.PHASES, 1.0),
                "verdicts": {"pass": 1, "fail": 0, "unknown": 0, "error": 0},
            },
            "references": {"computed": 1, "cached": 0},
            "left_behind": [],
            "exit_code": 0,
        }

    flat = bench.flat_figures(run(40.0, 20.0))
    assert flat["runner_engine"] == pytest.approx(20.0 - 11.0 - 3.0)
    assert flat["rest"] == pytest.approx(6.0 - 2.0 - 3.0 - 0.5)
    assert flat["per_start"] == pytest.approx(2.0)
    table = bench.format_table([flat], [bench.flat_figures(run(80.0, 20.0))])
    wall = next(line for line in table.splitlines() if line.startswith("suite wall s"))
    assert wall.split()[-3:] == ["40.0", "80.0", "0.50"]


def test_verdict_differences_name_the_scenarios(bench):
    candidate = [{"a": "pass", "b": "pass"}, {"a": "pass", "b": "fail"}]
    baseline = [{"a": "pass", "b": "pass"}, {"a": "pass", "b": "pass", "c": "error"}]
    assert bench.verdict_differences(candidate, baseline) == ["b: candidate failx1 passx1, baseline passx2"]
