"""chaos matrix in reduced form on real clusters: a connection reset on the
non-chief's link is a bounded UnavailableError with bit-exact recovery; a
blackhole on it holds training for the whole window with no error (the
heartbeats to the chief do not cross that link), which the matrix reports as a
silent-hang finding and exits 1. The full matrix: docs/network-matrix.md."""

from __future__ import annotations

import pytest

from chaos.cli import main

# Beside the scenarios under --chaos-scenarios (chaos.pytest_plugin): judged on error classes and a window with no step, not on step times.
pytestmark = [pytest.mark.integration, pytest.mark.chaos_beside_scenarios]


def test_reduced_matrix_names_the_error_and_the_silent_hang(images, tmp_path, capsys):
    table = tmp_path / "matrix.md"
    code = main(
        [
            "matrix",
            "--toxic",
            "connection_reset",
            "blackhole",
            "--direction",
            "both",
            "--target",
            "non-chief",
            "--when",
            "mid_training",
            "--markdown",
            str(table),
        ],
        embedded=True,
    )
    out = capsys.readouterr().out
    assert code == 1, out  # the blackhole cell hangs silently
    rows = {line.split("|")[1].strip(): line for line in table.read_text().splitlines()[2:]}
    assert "**error**" in rows["connection_reset"] and "UnavailableError" in rows["connection_reset"], out
    assert "| yes |" in rows["connection_reset"], out  # bit-exact recovery
    assert "**hang**" in rows["blackhole"], out
    # who is missing: TF names no task in a held collective; the row says so, with each worker's last step
    assert "no task named missing in the logs; last steps: worker-0 step" in rows["blackhole"], out
    assert "FINDING: matrix-blackhole-both-non-chief-mid-training hangs silently" in out
    assert "collective_timeout_s" in out
