"""`redraft.export`: mark functions for an ahead-of-time build (`redraft build`).

    @redraft.export("f32[100],f32[]", "f64[100],f64[]")
    def step(x, dt): ...

    loss_grad = redraft.export("f32[10],f32[32,10],f32[32]", name="loss_grad")(
        redraft.grad(loss))

Each signature becomes an entry point of the built library; the built package's function
picks the one matching its arguments' shapes and dtypes. The function itself is returned
unchanged, so the module still runs (and jits) as before.
"""
from redraft.compiler.aot.exports import export

__all__ = ["export"]
