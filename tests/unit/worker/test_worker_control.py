"""chaos.worker.control without TensorFlow: the command file (written by a
real shell, read by the channel), the address-space cap (in a child process,
so this one keeps its limits), the callback and the memory_demand applier."""

import io
import json
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from chaos.events import CommandEvent, parse_line
from chaos.worker import control
from chaos.worker.control import MB, ControlChannel, control_file_script, make_control_callback, memory_demand_applier
from chaos.worker.emit import Emitter

ROOT = Path(__file__).resolve().parents[3]


def write(path: Path, data) -> None:
    path.write_text(data if isinstance(data, str) else json.dumps(data))


# --- ControlChannel ----------------------------------------------------------------


def test_poll_returns_each_command_once_per_seq(tmp_path):
    path = tmp_path / "control.json"
    channel = ControlChannel(str(path))
    assert channel.poll() is None  # no file yet
    first = {"seq": 1, "command": "memory_demand", "params": {"demand_mb": 10, "cap_mb": 5}}
    write(path, first)
    assert channel.poll() == first
    assert channel.poll() is None  # already applied
    write(path, {"seq": 1, "command": "memory_demand", "params": {"demand_mb": 99}})
    assert channel.poll() is None  # same seq: the same command
    second = {"seq": 2, "command": "memory_demand", "params": {"demand_mb": 0, "cap_mb": None}}
    write(path, second)
    assert channel.poll() == second
    assert channel.poll() is None


@pytest.mark.parametrize("partial", ["", "{", '{"seq": 3, "comm', "not json"])
def test_poll_ignores_a_partial_or_invalid_file_and_takes_the_command_once_complete(tmp_path, partial):
    path = tmp_path / "control.json"
    channel = ControlChannel(str(path))
    write(path, partial)
    assert channel.poll() is None
    command = {"seq": 3, "command": "memory_demand", "params": {}}
    write(path, command)
    assert channel.poll() == command  # the broken read did not consume seq 3


# --- control_file_script --------------------------------------------------------------


@pytest.fixture
def control_dir(tmp_path, monkeypatch):
    directory = tmp_path / "run" / "chaos"  # does not exist yet: the script creates it
    monkeypatch.setattr(control, "CONTROL_DIR", str(directory))
    monkeypatch.setattr(control, "CONTROL_PATH", str(directory / "control.json"))
    return directory


def test_control_file_script_writes_the_command_file_with_a_real_shell(control_dir):
    params = {"demand_mb": 2048, "cap_mb": 512, "note": "quotes \" and ' and $HOME and `id` and 100% and \\n"}
    argv = control_file_script(7, "memory_demand", params)
    subprocess.run(argv, check=True, timeout=30)
    path = control_dir / "control.json"
    assert json.loads(path.read_text()) == {"seq": 7, "command": "memory_demand", "params": params}
    assert sorted(p.name for p in control_dir.iterdir()) == ["control.json"]  # the temp file was renamed
    assert ControlChannel(str(path)).poll() == {"seq": 7, "command": "memory_demand", "params": params}


def test_a_second_command_replaces_the_first_and_the_channel_sees_it(control_dir):
    path = control_dir / "control.json"
    channel = ControlChannel(str(path))
    subprocess.run(control_file_script(1, "memory_demand", {"demand_mb": 10, "cap_mb": None}), check=True, timeout=30)
    assert channel.poll()["seq"] == 1
    subprocess.run(control_file_script(2, "memory_demand", {"demand_mb": 0, "cap_mb": None}), check=True, timeout=30)
    assert channel.poll() == {"seq": 2, "command": "memory_demand", "params": {"demand_mb": 0, "cap_mb": None}}
    assert channel.poll() is None


# --- cap_address_space (in a child process) ------------------------------------------


def run_python(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cap_address_space_makes_a_large_allocation_fail_and_none_lifts_it():
    out = run_python(
        """
        import json, resource
        from chaos.worker.control import MB, cap_address_space, mapped_bytes

        def allocate(mb):
            try:
                block = bytearray(mb * MB)
                return len(block) // MB
            except MemoryError:
                return "MemoryError"

        before = resource.getrlimit(resource.RLIMIT_AS)
        mapped = mapped_bytes()
        limit = cap_address_space(64)
        capped = resource.getrlimit(resource.RLIMIT_AS)
        small = allocate(8)
        large = allocate(512)
        lifted = cap_address_space(None)
        after = resource.getrlimit(resource.RLIMIT_AS)
        large_again = allocate(512)
        print(json.dumps(dict(before=before, mapped=mapped, limit=limit, capped=capped, small=small,
                              large=large, lifted=lifted, after=after, large_again=large_again)))
        """
    )
    assert out["capped"] == [out["limit"], out["before"][1]]  # soft lowered, hard untouched
    assert out["mapped"] + 64 * MB <= out["limit"] <= out["mapped"] + 96 * MB  # what is mapped now + headroom
    assert out["small"] == 8  # within the headroom
    assert out["large"] == "MemoryError"
    assert out["lifted"] is None and out["after"] == out["before"]
    assert out["large_again"] == 512


def test_lifting_the_cap_gives_back_the_soft_limit_the_process_had_and_is_a_no_op_uncapped():
    """The worker lifts the cap whenever it fails (harness.main): that must not
    touch a limit the job's own environment set, capped or not."""
    out = run_python(
        """
        import json, resource
        from chaos.worker.control import MB, cap_address_space

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        own = 64 * 1024 * MB  # the job's own soft limit, well above what it maps
        resource.setrlimit(resource.RLIMIT_AS, (own, hard))
        cap_address_space(None)  # never capped: nothing to give back
        untouched = resource.getrlimit(resource.RLIMIT_AS)[0]
        limit = cap_address_space(32)
        capped = resource.getrlimit(resource.RLIMIT_AS)[0]
        cap_address_space(None)
        lifted = resource.getrlimit(resource.RLIMIT_AS)[0]
        cap_address_space(None)  # twice: still the job's own
        again = resource.getrlimit(resource.RLIMIT_AS)[0]
        print(json.dumps(dict(own=own, untouched=untouched, limit=limit, capped=capped, lifted=lifted, again=again)))
        """
    )
    assert out["untouched"] == out["own"]
    assert out["capped"] == out["limit"] < out["own"]
    assert out["lifted"] == out["again"] == out["own"]


def test_memory_demand_applier_on_cpu_caps_then_lifts_in_the_process():
    out = run_python(
        """
        import json, resource
        from chaos.worker.control import memory_demand_applier

        class Var:
            value = None
            def assign(self, v):
                self.value = v

        var = Var()
        apply = memory_demand_applier(None, var, has_gpu=False)
        on = apply({"demand_mb": 100, "cap_mb": 64})
        on_soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        on_var = var.value
        off = apply({"demand_mb": 0, "cap_mb": None})
        print(json.dumps(dict(on=on, on_soft=on_soft, on_var=on_var, off=off, off_var=var.value,
                              off_soft=resource.getrlimit(resource.RLIMIT_AS)[0])))
        """
    )
    assert out["on"]["demand_mb"] == 100 and out["on_var"] == 100 * MB // 4  # float32 elements
    assert out["on"]["address_space_limit_mb"] == out["on_soft"] // MB
    assert out["off"] == {"demand_mb": 0, "address_space_limit_mb": None}
    assert out["off_var"] == 0 and out["off_soft"] == -1  # RLIM_INFINITY again


def test_memory_demand_applier_on_gpu_leaves_the_address_space_alone():
    class Var:
        value = None

        def assign(self, v):
            self.value = v

    var = Var()
    applied = memory_demand_applier(None, var, has_gpu=True)({"demand_mb": 2048, "cap_mb": 512})
    assert applied["demand_mb"] == 2048 and "device_memory_mb" in applied["cap"]
    assert "address_space_limit_mb" not in applied
    assert var.value == 2048 * MB // 4


# --- the callback (a stand-in keras module: only its Callback base is used) -----------


def fake_keras():
    return types.SimpleNamespace(callbacks=types.SimpleNamespace(Callback=object))


def test_callback_applies_a_new_command_once_and_reports_it(tmp_path):
    path = tmp_path / "control.json"
    stream = io.StringIO()
    applied = []

    def handler(params):
        applied.append(params)
        return {"demand_mb": params["demand_mb"], "ok": True}

    callback = make_control_callback(
        fake_keras(), ControlChannel(str(path)), {"memory_demand": handler}, Emitter("worker-1", stream)
    )()
    callback.on_train_batch_begin(0)
    write(path, {"seq": 1, "command": "memory_demand", "params": {"demand_mb": 5}})
    for batch in range(1, 4):
        callback.on_train_batch_begin(batch)
    assert applied == [{"demand_mb": 5}]
    events = [parse_line(line, "worker-1") for line in stream.getvalue().splitlines()]
    assert len(events) == 1 and isinstance(events[0], CommandEvent)
    assert (events[0].command, events[0].params, events[0].source) == (
        "memory_demand",
        {"demand_mb": 5, "ok": True},
        "worker-1",
    )


def test_callback_reports_an_unknown_command_without_failing(tmp_path):
    path = tmp_path / "control.json"
    stream = io.StringIO()
    callback = make_control_callback(
        fake_keras(), ControlChannel(str(path)), {"memory_demand": dict}, Emitter("worker-0", stream)
    )()
    write(path, {"seq": 1, "command": "explode", "params": {}})
    callback.on_train_batch_begin(0)
    event = parse_line(stream.getvalue().splitlines()[0], "worker-0")
    assert event.command == "explode" and "unknown command" in event.params["error"]
    assert "memory_demand" in event.params["error"]


class _FakeConfig:
    """The two tf.config calls cap_gpu_memory makes (no GPU on these machines)."""

    def __init__(self, gpus):
        self.gpus = gpus
        self.configured = []

    def list_physical_devices(self, kind):
        assert kind == "GPU"
        return self.gpus

    def set_logical_device_configuration(self, device, configs):
        self.configured.append((device, configs))

    class LogicalDeviceConfiguration:
        def __init__(self, memory_limit):
            self.memory_limit = memory_limit


def test_cap_gpu_memory_gives_the_first_gpu_one_logical_device_of_that_size():
    from chaos.worker.control import cap_gpu_memory

    tf = type("tf", (), {"config": _FakeConfig(["GPU:0", "GPU:1"])})
    assert cap_gpu_memory(tf, 512) is True
    ((device, configs),) = tf.config.configured
    assert device == "GPU:0" and [c.memory_limit for c in configs] == [512]


def test_cap_gpu_memory_without_a_gpu_does_nothing():
    from chaos.worker.control import cap_gpu_memory

    tf = type("tf", (), {"config": _FakeConfig([])})
    assert cap_gpu_memory(tf, 512) is False and tf.config.configured == []
