import sys
from pathlib import Path

# The project runs pytest with --import-mode=importlib, which keeps test
# directories off sys.path; the tests here share fake_backend.py.
sys.path.insert(0, str(Path(__file__).parent))


def pytest_collection_modifyitems(items):
    """Unit tests start nothing on the engine and time nothing that a loaded machine
    breaks: with --chaos-scenarios they run first, the scenarios beside them
    (chaos.pytest_plugin)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker("chaos_beside_scenarios")
