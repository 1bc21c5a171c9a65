"""The network helper image's inputs (chaos.images.netns_helper): what it is
built from decides whether it is rebuilt; no Docker needed to tell."""

from chaos.images import netns_helper


def test_without_its_packages_the_helper_image_cannot_be_judged_and_says_where_they_go(tmp_path, monkeypatch):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    want, note = netns_helper.wanted_hash("sha256:base")
    assert want is None and str(tmp_path) in note


def test_the_inputs_hash_follows_the_packages_and_the_base(tmp_path, monkeypatch):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    folder = tmp_path / "debs" / "netns-helper"
    folder.mkdir(parents=True)
    for name in netns_helper.DEBS:
        (folder / f"{name}_1.0_amd64.deb").write_bytes(b"x" * 10)
    first, _ = netns_helper.wanted_hash("sha256:base")
    assert first and netns_helper.wanted_hash("sha256:base")[0] == first
    assert netns_helper.wanted_hash("sha256:other")[0] != first
    (folder / "iptables_1.0_amd64.deb").write_bytes(b"y" * 11)  # another iptables
    assert netns_helper.wanted_hash("sha256:base")[0] != first
