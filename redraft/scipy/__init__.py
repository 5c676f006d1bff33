"""redraft/scipy."""
