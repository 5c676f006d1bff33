"""The persistent compile cache: jitted functions' machine code kept on disk across processes.

    fingerprint   what a compiled function depends on: the source of every function it
                  reaches, the values of the globals they read, redraft and the CPU
    store         entries on disk: written atomically, checked by content hash on load
    jit_cache     the jit's side: look a compilation up, or save one in the background
    kernel_library  the thread pool and matmul kernels, built once per machine, which the
                  JIT and the cached entries run on (REDRAFT_KERNEL_LIBRARY=0: off)

On by default under REDRAFT_CACHE_DIR (default ~/.cache/redraft)/compiled; REDRAFT_CACHE=0
turns it off. `redraft cache info|clear`.
"""
