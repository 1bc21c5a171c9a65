import os

import pytest

from chaos import resources
from chaos.images import dockerfile, hashing, parse_tf_version, plans, wheelhouse
from chaos.images.base import BaseRef


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A fake repo with worker code, and a copy of docker/ we can edit."""
    root = tmp_path / "repo"
    (root / "chaos" / "worker").mkdir(parents=True)
    for rel, body in {
        "chaos/__init__.py": "x = 1\n",
        "chaos/events.py": "E = 1\n",
        "chaos/errors.py": "",
        "chaos/worker/__main__.py": "print('hi')\n",
        "chaos/worker/sub/a.py": "A = 1\n",
        "chaos/other.py": "not copied\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    (root / "chaos" / "worker" / "__pycache__").mkdir()
    (root / "chaos" / "worker" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"junk")
    import shutil

    shutil.copytree(resources.docker_dir(), root / "docker")
    monkeypatch.setattr(resources, "package_root", lambda: root)
    monkeypatch.setattr(resources, "docker_dir", lambda: root / "docker")
    return root


def _hashes(repo, wheels=None, base_id="sha256:base1"):
    deps, app = plans.worker_plans(parse_tf_version("2.20"))
    app.dockerfile = str(repo / "docker" / "worker" / "Dockerfile")
    wheels = wheels if wheels is not None else [("tensorflow_cpu-2.20.0-x.whl", 100), ("tf_keras-2.20.1-y.whl", 10)]
    deps.inputs = plans.deps_inputs(deps, BaseRef("tfchaos/base:x", base_id, "debootstrap"), deps.lock, wheels)
    app.inputs = plans.app_inputs(app)
    return deps.hash, app.hash


def test_collect_files_globs_and_skips_bytecode(repo):
    files = hashing.collect_files(str(repo), plans.WORKER_FILES)
    assert files == [
        "chaos/__init__.py",
        "chaos/errors.py",
        "chaos/events.py",
        "chaos/worker/__main__.py",
        "chaos/worker/sub/a.py",
    ]


def test_missing_paths_are_skipped(tmp_path):
    assert hashing.collect_files(str(tmp_path), ["chaos/__init__.py", "chaos/proxy/**"]) == []


def test_stable_when_nothing_changes(repo):
    assert _hashes(repo) == _hashes(repo)


def test_copied_file_change_changes_app_only(repo):
    d0, a0 = _hashes(repo)
    (repo / "chaos" / "worker" / "sub" / "a.py").write_text("A = 2\n")
    d1, a1 = _hashes(repo)
    assert d1 == d0 and a1 != a0


def test_new_copied_file_changes_app(repo):
    _, a0 = _hashes(repo)
    (repo / "chaos" / "worker" / "new.py").write_text("")
    assert _hashes(repo)[1] != a0


def test_uncopied_file_and_bytecode_do_not_matter(repo):
    before = _hashes(repo)
    (repo / "chaos" / "other.py").write_text("changed\n")
    (repo / "chaos" / "worker" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"other junk")
    assert _hashes(repo) == before


def test_app_dockerfile_change(repo):
    _, a0 = _hashes(repo)
    with open(repo / "docker" / "worker" / "Dockerfile", "a") as fh:
        fh.write("ENV X=1\n")
    assert _hashes(repo)[1] != a0


def test_venv_dockerfile_or_script_change_changes_both(repo):
    d0, a0 = _hashes(repo)
    with open(repo / "docker" / "venv" / "install-venv.sh", "a") as fh:
        fh.write("# tweak\n")
    d1, a1 = _hashes(repo)
    assert d1 != d0 and a1 != a0


def test_wheel_list_change(repo):
    d0, a0 = _hashes(repo)
    d1, a1 = _hashes(repo, wheels=[("tensorflow_cpu-2.20.0-x.whl", 101), ("tf_keras-2.20.1-y.whl", 10)])
    d2, _ = _hashes(repo, wheels=[("tensorflow_cpu-2.20.0-z.whl", 100), ("tf_keras-2.20.1-y.whl", 10)])
    assert len({d0, d1, d2}) == 3 and a1 != a0


def test_base_id_change(repo):
    d0, a0 = _hashes(repo)
    d1, a1 = _hashes(repo, base_id="sha256:base2")
    assert d1 != d0 and a1 != a0


def test_wheel_manifest_uses_name_and_size(tmp_path):
    (tmp_path / "a-1-py3-none-any.whl").write_bytes(b"12345")
    assert wheelhouse.wheel_manifest(str(tmp_path), ["a-1-py3-none-any.whl"]) == [("a-1-py3-none-any.whl", 5)]


def test_inputs_hash_is_order_independent():
    assert hashing.inputs_hash({"a": 1, "b": [1, 2]}) == hashing.inputs_hash({"b": [1, 2], "a": 1})
    assert hashing.inputs_hash({"a": 1}) != hashing.inputs_hash({"a": 2})


def test_dockerfile_instructions_parse_the_real_files():
    text = open(os.path.join(resources.docker_dir(), "proxy", "Dockerfile")).read()
    ins = dockerfile.instructions(text)
    words = [w for w, _ in ins]
    assert words[:2] == ["ARG", "FROM"] and "COPY" in words
    assert ("EXPOSE", "8474") in ins
    assert ("ENV", "PYTHONUNBUFFERED=1 PYTHONPATH=/opt/tfchaos") in ins
    entry = dict(ins)["ENTRYPOINT"]
    assert entry == '["/opt/venv/bin/python", "-m", "chaos.proxy", "--host", "0.0.0.0", "--port", "8474"]'
    # the worker Dockerfile never sets TF_USE_LEGACY_KERAS itself (it comes from the deps image, >= 2.16 only)
    assert (
        "TF_USE_LEGACY_KERAS"
        not in open(os.path.join(resources.docker_dir(), "worker", "Dockerfile")).read().split("ENV", 1)[1]
    )


def test_user_script_change_changes_both(repo):
    d0, a0 = _hashes(repo)
    with open(repo / "docker" / "venv" / "add-user.sh", "a") as fh:
        fh.write("# tweak\n")
    d1, a1 = _hashes(repo)
    assert d1 != d0 and a1 != a0


def test_how_the_deps_container_is_made_is_part_of_the_hash(repo, monkeypatch):
    """The fix for the stray VOLUMEs changed only how the build container mounts the
    wheelhouse; the images built the old way must come out stale."""
    d0, a0 = _hashes(repo)
    monkeypatch.setattr(plans, "DEPS_CONTAINER", {**plans.DEPS_CONTAINER, "mounted_via": "volumes="})
    d1, a1 = _hashes(repo)
    assert d1 != d0 and a1 != a0
