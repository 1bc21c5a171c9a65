"""The NFQUEUE shaper's decisions (chaos.netns.nfqueue.Shaper), apart from the
socket, with a seeded random source: rates, bursts, one flipped bit, holds."""

import random
import struct

import pytest

from chaos.netns import nfqueue
from chaos.netns.nfqueue import Bursty, Shaper, corrupt

N = 20_000


def ipv4(payload: bytes = b"x" * 100) -> bytes:
    header = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    )
    return header + payload


def run(config, n=N):
    shaper = Shaper(config, random.Random(7))
    return shaper, [shaper.decide(ipv4()) for _ in range(n)]


@pytest.mark.parametrize("percent", [1, 5, 20])
def test_loss_rate_is_the_one_asked_for(percent):
    shaper, out = run({"loss_pct": percent})
    dropped = sum(v == "drop" for v, *_ in out) / N * 100
    assert abs(dropped - percent) < 0.5 + percent * 0.1
    assert shaper.counts["dropped"] == sum(v == "drop" for v, *_ in out)


@pytest.mark.parametrize("correlation", [25, 50, 80])
def test_correlated_loss_keeps_the_rate_and_makes_bursts(correlation):
    rng = random.Random(3)
    lose = Bursty(rng, 0.05, correlation)
    draws = [lose() for _ in range(100_000)]
    rate = sum(draws) / len(draws)
    assert abs(rate - 0.05) < 0.01
    bursts = [0]
    for lost in draws:
        if lost:
            bursts[-1] += 1
        elif bursts[-1]:
            bursts.append(0)
    mean = sum(bursts) / len([b for b in bursts if b])
    expected = 1 / ((1 - correlation / 100) * 0.95)
    assert abs(mean - expected) / expected < 0.15


def test_corruption_flips_exactly_one_bit_past_the_ip_header():
    rng = random.Random(1)
    packet = ipv4()
    for _ in range(200):
        out = corrupt(packet, rng)
        diff = [(i, a ^ b) for i, (a, b) in enumerate(zip(packet, out)) if a != b]
        assert len(diff) == 1
        pos, bits = diff[0]
        assert pos >= 20 and bin(bits).count("1") == 1
    assert corrupt(b"\x60" + b"\0" * 40, rng) is None  # not IPv4: left alone


def test_corrupt_and_duplicate_rates_and_a_new_payload_only_when_corrupted():
    shaper, out = run({"corrupt_pct": 10, "duplicate_pct": 5})
    corrupted = [new for _, new, _, _ in out if new is not None]
    assert abs(len(corrupted) / N - 0.10) < 0.01
    assert abs(sum(dup for *_, dup in out) / N - 0.05) < 0.01
    assert shaper.counts["corrupted"] == len(corrupted)


def test_delay_holds_every_packet_for_delay_plus_minus_jitter():
    _, out = run({"delay_ms": 50, "jitter_ms": 10})
    holds = [hold for _, _, hold, _ in out]
    assert min(holds) >= 0.040 and max(holds) <= 0.060
    assert abs(sum(holds) / N - 0.050) < 0.002


def test_reorder_lets_its_share_leave_at_once_and_holds_the_rest():
    shaper, out = run({"delay_ms": 10, "reorder_pct": 25})
    at_once = sum(hold == 0 for _, _, hold, _ in out) / N
    assert abs(at_once - 0.25) < 0.02
    assert shaper.counts["reordered"] + shaper.counts["delayed"] == N


def test_attributes_round_trip_through_the_netlink_encoding():
    data = nfqueue._attr(1, b"\x00\x00\x00\x07\x08\x00\x01") + nfqueue._attr(10, b"abc")
    assert nfqueue._attrs(data) == {1: b"\x00\x00\x00\x07\x08\x00\x01", 10: b"abc"}
    assert len(nfqueue._attr(10, b"abc")) % 4 == 0


def test_the_script_has_usage_for_a_wrong_call(capsys):
    assert nfqueue.main(["nonsense"]) == 2
    assert "usage" in capsys.readouterr().err
