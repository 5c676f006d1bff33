"""The host JIT's shared LLVM state under threads: callbacks, target machines, disposal."""
import ctypes
import gc
import threading

import llvmlite.binding as llvm

from redraft.kernels import jit_host

PROTOTYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)


def _on_threads(body, n=8):
    start = threading.Barrier(n)

    def run():
        start.wait()
        body()

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_a_callback_installed_from_many_threads_at_once_is_one_live_thunk():
    """The symbol must point at the thunk that is kept: with one thunk per racing thread,
    the dropped ones left compiled code calling freed memory (a segfault under pmap)."""
    symbol = "redraft_test_callback_race"
    _on_threads(lambda: jit_host.install_callback(symbol, PROTOTYPE, lambda x: 2 * x + 1))
    kept = jit_host._CALLBACKS[symbol]
    assert llvm.address_of_symbol(symbol) == ctypes.cast(kept, ctypes.c_void_p).value
    module = f"""
declare i64 @{symbol}(i64)
define i64 @twice_plus_one(i64 %x) {{
  %r = call i64 @{symbol}(i64 %x)
  ret i64 %r
}}
"""
    fn = jit_host.compile_module(module).function("twice_plus_one", ctypes.c_int64,
                                                   [ctypes.c_int64])
    assert fn(20) == 41


def test_the_host_target_machine_is_made_once_under_threads():
    jit_host._HOST_MACHINES.clear()
    seen = []
    _on_threads(lambda: seen.append(jit_host.host_target_machine()))
    assert len({id(m) for m in seen}) == 1


def test_modules_compiled_and_dropped_on_many_threads_at_once_stay_sound():
    """Engines are freed under LLVM's lock, whichever thread drops them, so dropping one
    while another thread compiles does not corrupt LLVM's context."""
    def churn():
        for k in range(15):
            text = f"""
define i64 @f(i64 %x) {{
  %r = mul i64 %x, {k + 2}
  ret i64 %r
}}
"""
            fn = jit_host.compile_module(text, opt_level=1).function(
                "f", ctypes.c_int64, [ctypes.c_int64])
            assert fn(3) == 3 * (k + 2)
            del fn
            if k % 5 == 0:
                gc.collect()

    _on_threads(churn, n=4)


SUM_LOOP = """
define i64 @f(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %acc = phi i64 [0, %entry], [%acc2, %loop]
  %acc2 = add i64 %acc, %i
  %next = add i64 %i, 1
  %done = icmp sge i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %acc2
}
"""


def test_codegen_options_apply_to_one_module_while_others_compile():
    """Options given to one module's code generation (the backend turns loop strength
    reduction off for large modules) are restored after it, also with threads compiling
    other modules at once, and the code stays right."""
    def compile_both():
        for _ in range(5):
            off = jit_host.CompiledModule(SUM_LOOP, opt_level=0,
                                          codegen_options={"disable-lsr": ("true", "false")})
            on = jit_host.CompiledModule(SUM_LOOP, opt_level=0)
            for module in (off, on):
                assert module.function("f", ctypes.c_int64, [ctypes.c_int64])(101) == 5050

    _on_threads(compile_both, n=4)
