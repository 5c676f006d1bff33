"""The first jit compiles the matmul kernel on a background thread: a process may fork while
it runs, and the child must neither hang nor crash (LLVM's state is not fork-safe; exit is
tested in test_dot.py)."""
import os

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_during_the_background_compile_can_compile_and_run():
    for i in range(3):
        redraft.jit(lambda x, i=i: jnp.sum(jnp.cos(x) * i))(np.ones(3, np.float32))
        pid = os.fork()
        if pid == 0:  # the child: compile a product (it needs the matmul kernel) and exit
            r = redraft.jit(lambda a, b: a @ b)(np.ones((4, 4), np.float32),
                                                np.ones((4, 4), np.float32))
            os._exit(0 if float(r[0, 0]) == 4.0 else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0

