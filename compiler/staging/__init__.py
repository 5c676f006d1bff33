"""Staging: Core run on staged values, recorded as SSA IR (compiler/ir)."""
