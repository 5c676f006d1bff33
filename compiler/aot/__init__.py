"""Ahead-of-time builds: exported functions -> object code -> one shared library, plus an
importable NumPy-only Python package and a C header that call it.

    exports     what a module marks with `redraft.export` (and signature strings)
    target      the target machine for position-independent host (or named CPU) code
    objects     LLVM modules -> object code; the runtime pieces a module links against
    link        object files and C sources -> a shared library with the system `cc`
    entry       one (function, signature) staged, optimised and lowered to an entry point
    glue        the C side: each entry point's C function and the header
    package     the Python side: a package that loads the library with ctypes
    build       the whole build of a module, incremental, with progress per function
"""
