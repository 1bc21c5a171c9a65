from pathlib import Path

import pytest

from chaos.diagnose import build
from chaos.diagnose.catalogue import default_findings

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def catalogue():
    """What `chaos diagnose` ranks field logs against: every shipped scenario and the
    entries from the field, built once for the session."""
    entries, notes = build([ROOT / "scenarios"], default_findings(), field=True)
    assert not notes
    return entries
