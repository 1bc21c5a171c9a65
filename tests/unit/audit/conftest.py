import sys
from pathlib import Path

# --import-mode=importlib keeps test folders off sys.path: the check tests'
# timeline builder is shared from there, not copied.
sys.path.insert(0, str(Path(__file__).parents[1] / "checks"))
sys.path.insert(0, str(Path(__file__).parent))
