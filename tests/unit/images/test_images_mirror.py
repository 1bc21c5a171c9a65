import os

import pytest

from chaos.errors import InfrastructureError
from chaos.images import mirror

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def test_deb822_picks_the_suite_not_security():
    assert mirror.debian_mirror("bookworm", os.path.join(FIX, "apt")) == "http://mirror.example/debian"


def test_one_line_format_with_options_and_deb_src():
    assert mirror.debian_mirror("bookworm", os.path.join(FIX, "apt-oneline")) == "http://mirror.example/debian"
    assert mirror.debian_mirror("trixie", os.path.join(FIX, "apt-oneline")) == "http://other.example/debian"


def test_parse_deb822_fields():
    text = open(os.path.join(FIX, "apt", "sources.list.d", "debian.sources")).read()
    srcs = mirror.parse_deb822(text)
    assert [s.uri for s in srcs] == ["http://mirror.example/debian", "http://mirror.example/debian-security"]
    assert srcs[0].suites == ("bookworm", "bookworm-updates")
    assert srcs[0].components == ("main",)


def test_deb822_disabled_and_deb_src_skipped():
    text = (
        "Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n\n"
        "Enabled: no\nTypes: deb\nURIs: http://off.example/debian\nSuites: bookworm\n\n"
        "Types: deb\nURIs: http://on.example/debian/\nSuites: bookworm\nComponents: main\n"
    )
    assert [s.uri for s in mirror.parse_deb822(text)] == ["http://on.example/debian/"]


def test_no_mirror_is_a_clear_error(tmp_path):
    (tmp_path / "sources.list").write_text("deb http://mirror.example/debian trixie main\n")
    with pytest.raises(InfrastructureError) as exc:
        mirror.debian_mirror("bookworm", str(tmp_path))
    assert "bookworm" in exc.value.message and exc.value.hint


def test_env_override(monkeypatch):
    monkeypatch.setenv("TFCHAOS_DEBIAN_MIRROR", "http://env.example/debian/")
    assert mirror.resolve_mirror("bookworm", os.path.join(FIX, "apt")) == "http://env.example/debian"
