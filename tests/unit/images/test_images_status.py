"""Status computation against a fake docker client (no Docker needed)."""

import docker.errors
import pytest

from chaos.images import base as base_image
from chaos.images import image_status, plans, wheelhouse


class FakeImage:
    def __init__(self, id, labels=None, created="2026-01-02T03:04:05.123Z", size=123_000_000):
        self.id = id
        self.short_id = id[:19]
        self.attrs = {"Config": {"Labels": labels or {}}, "Created": created, "Size": size}


class FakeImages:
    def __init__(self, images):
        self.by_ref = images

    def get(self, ref):
        if ref not in self.by_ref:
            raise docker.errors.ImageNotFound(ref)
        return self.by_ref[ref]


class FakeClient:
    def __init__(self, images, arch="x86_64"):
        self.images = FakeImages(images)
        self.arch = arch

    def info(self):
        return {"Architecture": self.arch}


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    """A complete fake proxy wheelhouse in a temporary cache."""
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    deps, _ = plans.proxy_plans()
    d = tmp_path / "wheels" / "proxy"
    d.mkdir(parents=True)
    for name, version in deps.lock.pins.items():
        (d / f"{name.replace('-', '_')}-{version}-py3-none-any.whl").write_bytes(b"w" * 10)
    return d


def _base(recipe=None):
    return FakeImage("sha256:base", {plans.LABEL_INPUTS: recipe or base_image.base_recipe_hash()})


def _expected_hashes(base_img):
    deps, app = plans.proxy_plans()
    d = wheelhouse.wheelhouse_dir("proxy")
    files = wheelhouse.wheels_for(d, deps.lock)
    deps.inputs = plans.deps_inputs(
        deps,
        base_image.BaseRef(base_image.FALLBACK_BASE_TAG, base_img.id, "debootstrap"),
        deps.lock,
        wheelhouse.wheel_manifest(d, files),
    )
    app.inputs = plans.app_inputs(app)
    return deps.hash, app.hash


def _states(client):
    return {r.name: r.state for r in image_status((), proxy=True, client=client)}


def test_all_missing(wheels):
    assert _states(FakeClient({})) == {"base": "missing", "proxy-deps": "missing", "proxy": "missing"}


def test_exists_and_missing(wheels):
    base = _base()
    dh, ah = _expected_hashes(base)
    client = FakeClient(
        {base_image.FALLBACK_BASE_TAG: base, plans.PROXY_IMAGE: FakeImage("sha256:app", {plans.LABEL_INPUTS: ah})}
    )
    rows = {r.name: r for r in image_status((), client=client)}
    assert {k: r.state for k, r in rows.items()} == {"base": "exists", "proxy-deps": "missing", "proxy": "exists"}
    assert rows["proxy"].built_at == "2026-01-02 03:04:05" and rows["proxy"].size == 123_000_000


def test_stale_when_label_differs(wheels):
    base = _base()
    dh, ah = _expected_hashes(base)
    client = FakeClient(
        {
            base_image.FALLBACK_BASE_TAG: base,
            plans.PROXY_DEPS_IMAGE: FakeImage("sha256:d", {plans.LABEL_INPUTS: dh}),
            plans.PROXY_IMAGE: FakeImage("sha256:app", {plans.LABEL_INPUTS: "old"}),
        }
    )
    assert _states(client) == {"base": "exists", "proxy-deps": "exists", "proxy": "stale"}


def test_stale_when_a_wheel_changes(wheels):
    base = _base()
    dh, ah = _expected_hashes(base)
    next(wheels.iterdir()).write_bytes(b"bigger wheel")
    client = FakeClient(
        {
            base_image.FALLBACK_BASE_TAG: base,
            plans.PROXY_DEPS_IMAGE: FakeImage("sha256:d", {plans.LABEL_INPUTS: dh}),
            plans.PROXY_IMAGE: FakeImage("sha256:app", {plans.LABEL_INPUTS: ah}),
        }
    )
    assert _states(client) == {"base": "exists", "proxy-deps": "stale", "proxy": "stale"}


def test_base_with_old_recipe_is_stale_and_children_unknown(wheels):
    client = FakeClient(
        {
            base_image.FALLBACK_BASE_TAG: _base(recipe="old"),
            plans.PROXY_IMAGE: FakeImage("sha256:app", {plans.LABEL_INPUTS: "x"}),
        }
    )
    rows = {r.name: r for r in image_status((), client=client)}
    assert rows["base"].state == "stale"
    assert rows["proxy"].state == "stale" and "base" in rows["proxy"].note
    assert rows["proxy-deps"].state == "missing"


def test_stock_base_image_is_used_when_present(wheels):
    stock = FakeImage("sha256:stock")
    client = FakeClient({"python:3.11-slim-bookworm": stock})
    rows = {r.name: r for r in image_status((), client=client)}
    assert rows["base"].tag == "python:3.11-slim-bookworm" and rows["base"].state == "exists"


def test_missing_wheelhouse_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    client = FakeClient(
        {base_image.FALLBACK_BASE_TAG: _base(), plans.PROXY_IMAGE: FakeImage("sha256:app", {plans.LABEL_INPUTS: "x"})}
    )
    rows = {r.name: r for r in image_status((), client=client)}
    assert rows["proxy"].state == "stale" and "wheels" in rows["proxy"].note


def test_bad_version_in_status_is_clear():
    from chaos.errors import ChaosError

    with pytest.raises(ChaosError):
        image_status(("2.x",), client=FakeClient({}))


class PullFails(FakeClient):
    def __init__(self, images):
        super().__init__(images)
        self.pulls = []

        def pull(repo, tag=None):
            self.pulls.append(f"{repo}:{tag}")
            raise docker.errors.APIError("no such host")

        self.images.pull = pull


@pytest.fixture
def no_bootstrap(monkeypatch):
    calls = []
    monkeypatch.delenv("TFCHAOS_BASE_IMAGE", raising=False)
    monkeypatch.setattr(
        base_image,
        "bootstrap_base",
        lambda client, progress=None: calls.append(1) or base_image.BaseRef("boot", "sha256:new", "debootstrap"),
    )
    return calls


def test_base_choice_stock_present_wins_even_with_force(no_bootstrap):
    client = PullFails({"python:3.11-slim-bookworm": FakeImage("sha256:stock"), base_image.FALLBACK_BASE_TAG: _base()})
    for force in (False, True):
        ref = base_image.ensure_base(client, force=force)
        assert (ref.tag, ref.kind) == ("python:3.11-slim-bookworm", "stock")
    assert client.pulls == [] and no_bootstrap == []


def test_base_choice_current_fallback_needs_no_network(no_bootstrap):
    client = PullFails({base_image.FALLBACK_BASE_TAG: _base()})
    assert base_image.ensure_base(client).tag == base_image.FALLBACK_BASE_TAG
    assert client.pulls == [] and no_bootstrap == []


def test_base_choice_pull_fails_then_bootstrap(no_bootstrap):
    client = PullFails({base_image.FALLBACK_BASE_TAG: _base(recipe="old")})
    assert base_image.ensure_base(client).id == "sha256:new"
    assert client.pulls == ["python:3.11-slim-bookworm"] and no_bootstrap == [1]


def test_base_choice_explicit_image_is_pulled_then_falls_back(no_bootstrap):
    client = PullFails({base_image.FALLBACK_BASE_TAG: _base()})
    ref = base_image.ensure_base(client, "python:3.11-slim")
    assert client.pulls == ["python:3.11-slim"] and ref.tag == base_image.FALLBACK_BASE_TAG
    assert no_bootstrap == []


def test_base_choice_force_rebootstraps_without_pulling(no_bootstrap):
    client = PullFails({base_image.FALLBACK_BASE_TAG: _base()})
    assert base_image.ensure_base(client, force=True).id == "sha256:new"
    assert client.pulls == [] and no_bootstrap == [1]
