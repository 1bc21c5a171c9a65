from pathlib import Path

import pytest

from chaos.diagnose import build, watch_for
from chaos.diagnose.catalogue import default_findings
from chaos.diagnose.match import rank
from chaos.diagnose.observe import observe_files

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def catalogue():
    """What `chaos diagnose` ranks field logs against: every shipped scenario and the
    entries from the field, built once for the session."""
    entries, notes = build([ROOT / "scenarios"], default_findings(), field=True)
    assert not notes
    return entries


@pytest.fixture
def rank_log(tmp_path, catalogue):
    """Rank the catalogue against one log file holding ``text``, read as
    ``chaos diagnose FILE`` reads it (its name can matter: a name says the worker)."""

    def ranked(text: str, name: str = "job.log"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        workers, _ = observe_files([path], watch_for(catalogue))
        return rank(catalogue, workers)

    return ranked
