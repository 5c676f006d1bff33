"""The special functions of jax.scipy.special beyond the gamma/error family: each a numerically
careful composition of redraft.numpy (series, asymptotic expansions, continued fractions), so
jit, grad and vmap see plain array code. redraft.scipy.special re-exports them."""
