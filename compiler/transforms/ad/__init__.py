"""Automatic differentiation: forward and reverse mode, their rules."""
