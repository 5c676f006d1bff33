"""The functions whose GPU kernels `redraft ir --stage nvvm|ptx` prints (see README):

    redraft ir examples/gpu_kernels.py::selu --sig 'f32[1000000]' --stage ptx
    redraft ir examples/gpu_kernels.py::grad_sum_logistic --sig 'f32[1000000]' --stage nvvm
    redraft ir examples/gpu_kernels.py::decay --sig 'f32[2000,2000]' --stage ptx --arch sm_90
    redraft ir examples/gpu_kernels.py::matmul --sig 'f32[128,784],f32[784,512]' --stage ptx
    redraft ir examples/gpu_kernels.py::mlp_step \\
        --sig 'f32[784,512],f32[512],f32[512,10],f32[10],f32[128,784],f32[128,10]' --stage ptx
"""
import redraft
import redraft.numpy as jnp


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


grad_sum_logistic = redraft.grad(sum_logistic)


def decay(x):
    for i in range(10):
        x -= 0.1 * x
    return x


def matmul(a, b):
    return a @ b


def mlp_loss(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return jnp.mean((logits - y) ** 2)


def mlp_step(w1, b1, w2, b2, x, y, lr=0.01):
    """One step of gradient descent on a 784-512-10 MLP."""
    g1, gb1, g2, gb2 = redraft.grad(mlp_loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, y)
    return w1 - lr * g1, b1 - lr * gb1, w2 - lr * g2, b2 - lr * gb2
