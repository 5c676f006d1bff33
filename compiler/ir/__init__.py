"""compiler/ir."""
