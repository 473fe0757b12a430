"""pip install --no-build-isolation .  builds acco's Python package with CMake.

Debian's setuptools drives the project's own CMake build (no package index is reached): the
extension acco._core is built by CMake (ACCO_WITH_PYTHON=ON, for the interpreter running pip) and
copied beside the pure-Python files of python/acco. The build directory is build/pip, configured
with the default preset's flags so ccache shares its objects; ACCO_BUILD_DIR names an existing
configured build to reuse instead (e.g. build/default: only acco_python_core is built there).
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).parent.resolve()


def project_version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(acco VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build_dir = pathlib.Path(os.environ.get("ACCO_BUILD_DIR", "build/pip"))
        if not build_dir.is_absolute():
            build_dir = ROOT / build_dir
        if not (build_dir / "CMakeCache.txt").exists():
            subprocess.run(
                [
                    "cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                    "-DCMAKE_UNITY_BUILD=ON",
                    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG",
                    "-DACCO_WITH_PYTHON=ON",
                    f"-DPython3_EXECUTABLE={sys.executable}",
                    "-DACCO_BUILD_TESTS=OFF",
                    "-DACCO_BUILD_BENCH=OFF",
                    "-DACCO_BUILD_EXAMPLES=OFF",
                ],
                check=True,
            )
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(
            ["cmake", "--build", str(build_dir), "--target", "acco_python_core", "-j", jobs],
            check=True,
        )
        built = sorted((build_dir / "python" / "acco").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"acco: no acco/_core*.so under {build_dir}/python after the build")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    name="acco",
    version=project_version(),
    description="acco: accelerator connection optimizer (probe, bench, transfer engine)",
    packages=["acco"],
    package_dir={"acco": "python/acco"},
    package_data={"acco": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("acco._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
