"""The layer the runner puts at /opt/tfchaos-agent: complete, importable
with the standard library alone, and importing neither TensorFlow nor NumPy."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from chaos.agent import layer

AGENT_MODULES = ["install", "fit", "start", "report", "errors", "importhook", "runtime", "digest", "guard"]


def test_files_hold_the_bootstrap_and_every_module_the_agent_imports():
    files = layer.files()
    assert files["sitecustomize.py"] == layer.package_root() / "chaos/agent/sitecustomize.py"
    for name in layer.SHARED_MODULES:
        assert files[name].is_file()
    assert {f"chaos/agent/{m}.py" for m in AGENT_MODULES} <= set(files)


def test_the_layer_alone_imports_every_agent_module_without_tensorflow_or_numpy(tmp_path):
    tree = layer.write_tree(tmp_path / "agent")
    code = (
        "import sys\n"
        + "".join(f"import chaos.agent.{m}\n" for m in AGENT_MODULES)
        + "print(sorted(m for m in ('tensorflow', 'numpy', 'tf_keras', 'keras') if m in sys.modules))\n"
        + "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('chaos')}))\n"
        + "print(sys.modules['chaos'].__file__)\n"
    )
    # -S: no site-packages (nor the editable install of this project): the layer must suffice.
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        env={"PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "[]" and lines[1] == "['chaos']" and lines[2].startswith(str(tree))


def test_tar_holds_the_same_files_under_the_agent_dir():
    with tarfile.open(fileobj=io.BytesIO(layer.tar_bytes())) as tar:
        members = {m.name: m for m in tar.getmembers()}
    files = {f"opt/tfchaos-agent/{rel}" for rel in layer.files()}
    assert files <= set(members)
    assert all(members[f].mode == 0o644 for f in files)
    assert members["opt/tfchaos-agent/chaos/agent"].isdir()


def test_environment_turns_the_agent_on_and_keeps_the_images_pythonpath():
    env = layer.environment(1, "/checkpoints", {"PYTHONPATH": "/app/lib"})
    assert env == {
        "PYTHONPATH": "/opt/tfchaos-agent:/app/lib",
        "CHAOS_AGENT": "1",
        "CHAOS_WORKER_INDEX": "1",
        "CHAOS_CHECKPOINT_DIR": "/checkpoints",
    }
    assert layer.environment(0, "/c")["PYTHONPATH"] == "/opt/tfchaos-agent"


# The agent runs in the job's own Python: TF 2.12 and 2.13 run on 3.8, so the layer must too.
OLDEST_JOB_PYTHON = "3.8"


def test_every_layered_file_runs_on_the_oldest_python_a_tf_job_has():
    """vermin reads each file for the Python features and library members it needs
    (functools.cache is 3.9, dataclasses' kw_only 3.10: both were once in chaos/events.py)."""
    paths = [str(p) for p in layer.files().values()]
    vermin = shutil.which("vermin", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    assert vermin, "vermin is a test dependency: pip install -e '.[test]'"
    run = subprocess.run(
        [vermin, "--no-tips", "--violations", f"-t={OLDEST_JOB_PYTHON}-", *paths],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:]
