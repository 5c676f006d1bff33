"""Convolutions the conv-lowering tests compile (module level: redraft reads source)."""
from redraft import lax


def conv_strided_dilated(x, w):
    return lax.conv_general_dilated(x, w, (2, 1), [(1, 2), (0, 1)], lhs_dilation=(1, 2),
                                    rhs_dilation=(2, 1))


def conv_nhwc_same(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def conv_1d_valid(x, w):
    return lax.conv_general_dilated(x, w, (1,), "VALID")


def conv_3d(x, w):
    return lax.conv_general_dilated(x, w, (1, 2, 1), "SAME")


def conv_negative_padding(x, w):
    return lax.conv_general_dilated(x, w, (1,), [(-1, 2)])


def conv_grouped(x, w):
    return lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2)


def conv_depthwise(x, w):
    return lax.conv_general_dilated(x, w, (2, 1), "SAME", feature_group_count=x.shape[-1],
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def conv_batch_grouped(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), [(1, 0), (0, 1)], batch_group_count=2)


def depthwise_loss(x, w):
    return (conv_depthwise(x, w) ** 2).sum()


def conv_loss(x, w):
    return (conv_nhwc_same(x, w) ** 2).sum()
