"""redraft's version, in a module of its own so that the compiler's cache can stamp it
without importing the public API above it."""
__version__ = "0.1.0"
