"""Primitive: the unit every stage of redraft knows how to handle.

A primitive is declared once, in the file of its family (elementwise.py, reductions.py, ...),
and every rule a stage needs is registered beside it in that stage's table: `impl_rules`
(runtime.eager), `abstract_eval_rules` (compiler.core.abstract), and the transform and
lowering tables of later stages. Arrays are positional operands; static parameters (axes,
shapes, dtypes) are keyword arguments and must be hashable.
"""
from __future__ import annotations

from enum import Enum


class WeakRule(Enum):
    """How a primitive's result inherits `weak_type` from its operands."""
    ALL = "all"  # weak iff every operand is weak (arithmetic, reductions, shape ops)
    NEVER = "never"  # never weak (comparisons, index results, creation with a dtype)
    PARAM = "param"  # the `weak_type` parameter says (convert_element_type)


class Primitive:
    """A named operation; identity is the object, `name` is what printers show."""

    __slots__ = ("name", "weak_rule", "multiple_results", "family", "weak_operands")

    def __init__(self, name: str, family: str, weak_rule: WeakRule = WeakRule.ALL,
                 multiple_results: bool = False, weak_operands: tuple[int, ...] | None = None):
        self.name = name
        self.family = family
        self.weak_rule = weak_rule
        self.multiple_results = multiple_results
        self.weak_operands = weak_operands  # for WeakRule.ALL: which operands count
        ALL_PRIMITIVES[name] = self

    def __repr__(self) -> str:
        return self.name

    def result_weak(self, operand_weaks, params: dict) -> bool:
        if self.weak_rule is WeakRule.ALL:
            if self.weak_operands is not None:
                operand_weaks = [operand_weaks[i] for i in self.weak_operands
                                 if i < len(operand_weaks)]
            return bool(operand_weaks) and all(operand_weaks)
        if self.weak_rule is WeakRule.PARAM:
            return bool(params.get("weak_type", False))
        return False


ALL_PRIMITIVES: dict[str, Primitive] = {}
