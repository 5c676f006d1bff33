"""Maps the design card's top-level folders into the one `redraft` package.

compiler/, runtime/ and kernels/ are stages that live at the top of the repository (as the
design card asks) but import as redraft.compiler, redraft.runtime and redraft.kernels.
"""
from setuptools import find_packages, setup

ROOTS = {
    "redraft": "redraft",
    "redraft.compiler": "compiler",
    "redraft.runtime": "runtime",
    "redraft.kernels": "kernels",
}

packages, package_dir = [], {}
for name, folder in ROOTS.items():
    package_dir[name] = folder
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=package_dir)
