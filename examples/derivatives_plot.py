"""A function and its first three derivatives, as in JAX's introduction (tanh and
grad(tanh), grad(grad(tanh)), grad(grad(grad(tanh)))), each batched over a grid with vmap.

Writes derivatives.png when matplotlib is installed (`pip install matplotlib`); otherwise,
or with --text, prints a table of values and checks each derivative against the closed form
(tanh' = 1 - tanh^2, tanh'' = -2 tanh tanh', tanh''' = -2 (tanh'^2 + tanh tanh'')).

    python examples/derivatives_plot.py [--text] [--out derivatives.png]
"""
import argparse

import numpy as np

import redraft
import redraft.numpy as jnp


def derivatives(x: np.ndarray) -> list[np.ndarray]:
    """tanh and its first three derivatives at the points x."""
    fns = [jnp.tanh]
    for _ in range(3):
        fns.append(redraft.grad(fns[-1]))
    return [np.asarray(redraft.vmap(f)(jnp.asarray(x))) for f in fns]


def closed_forms(x: np.ndarray) -> list[np.ndarray]:
    t = np.tanh(x.astype(np.float64))
    d1 = 1 - t * t
    d2 = -2 * t * d1
    d3 = -2 * (d1 * d1 + t * d2)
    return [t, d1, d2, d3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", action="store_true", help="print a table, plot nothing")
    parser.add_argument("--out", default="derivatives.png", help="where the PNG goes")
    args = parser.parse_args()
    x = np.linspace(-7, 7, 200, dtype=np.float32)
    values = derivatives(x)
    worst = max(float(np.max(np.abs(v - c))) for v, c in zip(values, closed_forms(x)))
    try:
        if args.text:
            raise ImportError
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("     x     tanh    tanh'   tanh''  tanh'''")
        for i in range(0, len(x), 25):
            print(f"{x[i]:6.2f} " + " ".join(f"{v[i]:8.4f}" for v in values))
        print(f"largest difference from the closed forms: {worst:.2e}")
        return
    labels = ["tanh", "1st derivative", "2nd derivative", "3rd derivative"]
    for v, label in zip(values, labels):
        plt.plot(x, v, label=label)
    plt.legend()
    plt.savefig(args.out, dpi=100)
    print(f"wrote {args.out}; largest difference from the closed forms: {worst:.2e}")


if __name__ == "__main__":
    main()
