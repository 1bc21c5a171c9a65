"""A build container carries its session under its own key, and the image it commits claims none."""

from chaos import SESSION_ENV
from chaos.images.plans import LABEL_BUILD_SESSION, build_container_labels, commit_labels, proxy_plans


def test_a_build_container_carries_the_session_that_built_it(monkeypatch):
    monkeypatch.setenv(SESSION_ENV, "s-123")
    assert build_container_labels()[LABEL_BUILD_SESSION] == "s-123"
    monkeypatch.delenv(SESSION_ENV)
    assert build_container_labels()[LABEL_BUILD_SESSION] == ""


def test_the_committed_image_blanks_the_build_session_before_its_own_labels():
    changes = commit_labels(proxy_plans()[1])
    assert changes[0] == f"LABEL {LABEL_BUILD_SESSION}="
    assert any(c.startswith("LABEL io.tfchaos.kind=") for c in changes[1:])
