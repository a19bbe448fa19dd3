"""Build hook for the one C extension (the two-phase search kernel); everything else about the
package is declared in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "solver._twophase",
            sources=["solver/_twophase.c"],
            extra_compile_args=["-O3", "-std=c99", "-Wall", "-Wextra"],
        )
    ]
)
