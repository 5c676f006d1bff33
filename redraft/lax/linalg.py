"""redraft.lax.linalg: the factorisation primitives (as jax.lax.linalg)."""
from redraft.compiler.primitives.factorizations import (
                                                        cholesky,
                                                        eig,
                                                        eigh,
                                                        lu,
                                                        qr,
                                                        svd,
                                                        triangular_solve,
)

__all__ = ["cholesky", "eig", "eigh", "lu", "qr", "svd", "triangular_solve"]
