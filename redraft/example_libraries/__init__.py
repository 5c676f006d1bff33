"""redraft.example_libraries: JAX's small reference libraries (optimizers, stax), written on
redraft's public API so that grad, vmap and jit transform them like user code."""
