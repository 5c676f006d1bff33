"""Declaring exports: signature strings (pytrees of types) and the registry."""
import numpy as np
import pytest
from redraft.compiler.aot.exports import REGISTRY, parse_signature

import redraft


def test_flat_signature_gives_zero_arrays_of_those_types():
    a, b, c = parse_signature("f32[100],i32[], bool[2, 3]")
    assert (a.shape, a.dtype) == ((100,), np.float32)
    assert (b.shape, b.dtype) == ((), np.int32)
    assert (c.shape, c.dtype) == ((2, 3), np.bool_)


def test_pytree_signature():
    (params, x) = parse_signature("{'w': f32[3], 'b': (f32[], [u8[2]])}, f32[4,3]")
    assert params["w"].shape == (3,) and params["b"][0].shape == ()
    assert params["b"][1][0].dtype == np.uint8
    assert x.shape == (4, 3)


def test_empty_signature_is_no_arguments():
    assert parse_signature("") == ()


@pytest.mark.parametrize("text", ["f32[3", "float[3]", "f32[3] f32[2]", "{'a': 3}"])
def test_unreadable_signature_is_a_clear_error(text):
    with pytest.raises(ValueError, match="signature"):
        parse_signature(text)


def test_export_records_function_and_declaration_line():
    def f(x):
        return x

    line = f.__code__.co_firstlineno + 4
    assert redraft.export("f32[2]", name="tested_f")(f) is f
    record = REGISTRY[__name__][-1]
    assert record.name == "tested_f" and record.signatures == ("f32[2]",)
    assert record.origin == (__file__, line)


def test_export_rejects_a_bad_signature_at_the_declaration():
    with pytest.raises(ValueError, match="cannot read the signature"):
        redraft.export("f32[")
