"""Calls to other functions: callees, custom rules, inlining, Core of any callable."""
