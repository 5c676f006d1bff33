"""The first jit compiles the matmul kernel on a background thread: a process may fork or exit
while it runs, and neither may hang or abort (LLVM's state is not fork- or exit-safe)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp

SCRIPT = """
import redraft, redraft.numpy as jnp
import numpy as np
print(float(redraft.jit(lambda x: jnp.sum(jnp.sin(x)))(np.ones(3, np.float32))))
"""


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


def test_a_short_script_exits_cleanly_while_the_kernel_compiles(tmp_path):
    script = tmp_path / "short.py"
    script.write_text(SCRIPT)
    for _ in range(5):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, REDRAFT_CACHE="0"))
        assert done.returncode == 0, done.stderr[-2000:]
