import sys
from pathlib import Path

# The project runs pytest with --import-mode=importlib, which keeps test
# directories off sys.path; the tests here share fake_backend.py.
sys.path.insert(0, str(Path(__file__).parent))
