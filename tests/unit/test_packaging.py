"""The wheel's package list (pyproject.toml) against lib/'s folders: every package of
lib/ ships as ``kewpie.<name>``, and every listed package is a folder of the checkout.

Covers: pyproject.toml (packages, package-dir), lib/
"""
import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _setuptools():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def _lib_packages():
    lib = os.path.join(ROOT, "lib")
    return sorted("kewpie" + ("." + os.path.relpath(d, lib).replace(os.sep, ".") if d != lib else "")
                  for d, _, files in os.walk(lib) if "__init__.py" in files)


def test_every_lib_package_ships():
    listed = set(_setuptools()["packages"])
    missing = [p for p in _lib_packages() if p not in listed]
    assert not missing, f"lib/ packages missing from pyproject.toml's packages: {missing}"


def test_every_listed_package_is_a_folder():
    tool = _setuptools()
    dirs = tool["package-dir"]
    for package in tool["packages"]:
        top = max((k for k in dirs if package == k or package.startswith(k + ".")), key=len)
        folder = os.path.join(ROOT, dirs[top], *package[len(top):].split(".")[1:])
        assert os.path.isdir(folder), f"{package}: no folder {os.path.relpath(folder, ROOT)}"
