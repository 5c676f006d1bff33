"""The tracing fallback: Core for a function whose source cannot be read, built by running it.

A function made by `exec`, `python -c` or another library has no source file, so the
frontend cannot parse it. Such a function is run once on stand-in values (tracer.py) with
the library modules it reads swapped for recording proxies (environment.py); every library
call and operator on a stand-in becomes one Core statement (trace.py), and the recorded
straight-line program is that function's Core, which every transform then reads.
"""
