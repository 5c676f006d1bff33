"""compiler/transforms."""
