"""compiler/backend."""
