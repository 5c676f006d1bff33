"""Batching (vmap): the transform, batch types, its rules."""
