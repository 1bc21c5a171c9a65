"""Packaging beyond what pyproject.toml can say: docker/, scenarios/ and field/ stay
at the repository root and ship inside the wheel as chaos/_assets/docker,
chaos/_assets/scenarios and chaos/_assets/field (chaos.resources finds them in
either place).

pyproject.toml cannot add packages mapped from outside the tree to a discovered
list, and a list kept by hand would silently drop the next new subpackage, so
the list is computed here. Asset folders whose names are identifiers are
listed as packages too (setuptools warns about importable folders it is not
told about); ``**/*`` also takes the others (``worker/tf2.20``).
"""

from setuptools import find_namespace_packages, find_packages, setup

ASSETS = {
    "chaos._assets.docker": "docker",
    "chaos._assets.scenarios": "scenarios",
    "chaos._assets.field": "field",
}

asset_packages = [
    f"{name}.{sub}" if sub else name
    for name, folder in ASSETS.items()
    for sub in ["", *find_namespace_packages(where=folder, exclude=["*__pycache__*"])]
]

setup(
    packages=find_packages(include=["chaos", "chaos.*"]) + asset_packages,
    package_dir=ASSETS,
    package_data={"chaos.scenario": ["schema.json"], **{name: ["**/*"] for name in asset_packages}},
    exclude_package_data={name: ["**/__pycache__/*", "**/*.pyc"] for name in asset_packages},
)
