"""The one compiled module: the ``hard`` bot's deals and playouts in C
(``games/rules/bots/_compiled.pyx``), built by Cython. Everything else is in pyproject.toml; the
bot plays the same moves without it, in pure Python, only slower."""

import platform

from Cython.Build import cythonize
from setuptools import Extension, setup

# no fused multiply-add: the same floating-point results as Python's; on x86-64 the POPCNT
# instruction (every such CPU since 2008) instead of a call per card count
FLAGS = ["-O2", "-ffp-contract=off"]
if platform.machine().lower() in ("x86_64", "amd64"):
    FLAGS.append("-mpopcnt")

setup(
    ext_modules=cythonize(
        [
            Extension(
                "games.rules.bots._compiled",
                ["games/rules/bots/_compiled.pyx"],
                extra_compile_args=FLAGS,
            )
        ],
        compiler_directives={"language_level": "3"},
    )
)
