"""Reading the samples make_vectors.py and make_x64_vectors.py stored from JAX, and the
distance between floats in units in the last place."""
import numpy as np


def stored_samples(case) -> np.ndarray:
    """A stored case's samples: float bit patterns viewed in their dtype, ints as they are."""
    dtype = np.dtype(case["dtype"])
    if dtype.kind == "f":
        bits = np.array(case["bits"], f"uint{dtype.itemsize * 8}")
        return bits.view(dtype).reshape(case["shape"])
    return np.array(case["bits"], dtype).reshape(case["shape"])


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between float arrays of one dtype (0 where both are nan)."""
    signed = np.dtype(f"int{a.dtype.itemsize * 8}")
    ia, ib = a.view(signed).astype(np.int64), b.view(signed).astype(np.int64)
    ia = np.where(ia < 0, np.iinfo(signed).min - ia, ia)  # order negative floats too
    ib = np.where(ib < 0, np.iinfo(signed).min - ib, ib)
    return np.where(np.isnan(a) & np.isnan(b), 0, np.abs(ia - ib))
