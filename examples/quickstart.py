"""redraft's quickstart: NumPy-style code, its gradient as readable source, and the results.

    python examples/quickstart.py
"""
import redraft
import redraft.numpy as jnp
from redraft import grad, jit, random


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def main() -> None:
    x = jnp.arange(5.0)
    print("selu(arange(5.)) =", selu(x))
    key = random.key(1701)
    big = random.normal(key, (1_000_000,))
    print("random.normal mean/std:", float(big.mean()), float(big.std()))
    print("jit(selu) agrees with eager:", bool(jnp.allclose(jit(selu)(big), selu(big))))
    x_small = jnp.arange(3.0)
    print("grad(sum_logistic)(arange(3.)) =", grad(sum_logistic)(x_small))
    print("third derivative at 1.0 =", grad(grad(grad(sum_logistic)))(1.0))
    print("\nThe gradient redraft wrote for sum_logistic:\n")
    print(redraft.emit(sum_logistic, "grad"))


if __name__ == "__main__":
    main()
