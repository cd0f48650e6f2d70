"""The one compiled module: the ``hard`` bot's deals and playouts in C
(``games/rules/bots/_compiled.pyx``), built by Cython. Everything else is in pyproject.toml; the
bot plays the same moves without it, in pure Python, only slower."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [
            Extension(
                "games.rules.bots._compiled",
                ["games/rules/bots/_compiled.pyx"],
                # no fused multiply-add: the same floating-point results as Python's
                extra_compile_args=["-O2", "-ffp-contract=off"],
            )
        ],
        compiler_directives={"language_level": "3"},
    )
)
