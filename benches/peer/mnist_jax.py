#!/usr/bin/env python3
"""The JAX peer for BENCHMARKS.md: the same 784-128-10 MLP (ReLU, softmax cross-entropy, weights
and biases U(-1/sqrt(in), 1/sqrt(in)) as nn.Linear), the same MNIST files resident on the GPU,
shuffled every epoch, batches of --batch-size with the last one partial (469 steps at 128), SGD
(momentum 0 unless given, as torch.optim.SGD) or Adam (as torch.optim.Adam); the whole epoch is
one jitted `lax.scan` over its steps (compiled before the first epoch is timed).

--precision: `highest` (the default here) runs float32 matmuls at full precision
(`jax_default_matmul_precision = highest`: no TF32), as ours and PyTorch's; `default` leaves
JAX's own default, which on an H100/H200 is TF32 (tensor cores, 10-bit mantissa inputs).

    python3 benches/peer/mnist_jax.py --epochs 3 --batch-size 128 --lr 0.1 --optimizer sgd --unroll 4

--unroll N is `lax.scan(..., unroll=N)`: XLA compiles N steps into one loop iteration, so it can
fuse and schedule across step boundaries and pays the loop's per-iteration overhead 1/N as often.
The best N differs by batch size (mnist_side_by_side.py sweeps 1, 2, 4, 8, 16 and prints each).

The last, partial batch is the scan's last step with the missing rows masked out of the mean
loss, so every step's gradient is the mean over its real examples. Prints one line per epoch:
`epoch E ms M acc A` (epoch time without the evaluation).
"""
import time
from functools import partial
from pathlib import Path

import numpy as np
import jax
import jax.numpy as jnp

import mnist_peer
from mnist_peer import wait_for_go


def idx(path):
    shape, data = mnist_peer.idx(path)
    return np.frombuffer(data, dtype=np.uint8).reshape(shape)


def init(key, sizes):
    params = []
    for i, o in zip(sizes[:-1], sizes[1:]):
        key, kw, kb = jax.random.split(key, 3)
        bound = 1.0 / np.sqrt(i)
        params.append((jax.random.uniform(kw, (o, i), jnp.float32, -bound, bound),
                       jax.random.uniform(kb, (o,), jnp.float32, -bound, bound)))
    return params


def logits_of(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w.T + b)
    w, b = params[-1]
    return x @ w.T + b


def loss_of(params, x, y, mask):
    z = logits_of(params, x)
    lse = jax.nn.logsumexp(z, axis=1)
    ce = lse - jnp.take_along_axis(z, y[:, None], axis=1)[:, 0]
    return jnp.sum(ce * mask) / jnp.sum(mask)


def main():
    p = mnist_peer.parser("compiling")
    p.add_argument("--limit-train", type=int, default=None)
    p.add_argument("--unroll", type=int, default=1,
                   help="steps per iteration of the epoch's lax.scan (its `unroll` argument)")
    p.add_argument("--precision", choices=["highest", "default"], default="highest",
                   help="float32 matmul precision: highest (no TF32) or JAX's default (TF32 on H200)")
    a = p.parse_args()
    if a.precision == "highest":
        jax.config.update("jax_default_matmul_precision", "highest")
    d = Path(a.data)
    xtr = idx(d / "train-images.idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255
    ytr = idx(d / "train-labels.idx1-ubyte.gz").astype(np.int32)
    if a.limit_train:
        xtr, ytr = xtr[:a.limit_train], ytr[:a.limit_train]
    xte = jnp.asarray(idx(d / "t10k-images.idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255)
    yte = jnp.asarray(idx(d / "t10k-labels.idx1-ubyte.gz").astype(np.int32))
    xtr, ytr = jnp.asarray(xtr), jnp.asarray(ytr)
    n, bs = xtr.shape[0], a.batch_size
    steps = -(-n // bs)
    lr, mom = a.lr, a.momentum
    b1, b2, eps = 0.9, 0.999, 1e-8
    key = jax.random.PRNGKey(a.seed)
    key, k0 = jax.random.split(key)
    params = init(k0, [784, 128, 10])
    zeros = lambda: jax.tree_util.tree_map(jnp.zeros_like, params)
    opt = (zeros(), zeros(), jnp.zeros((), jnp.float32)) if a.optimizer == "adam" else zeros()

    def update(params, grads, opt):
        if a.optimizer == "sgd":
            if mom == 0.0:
                return jax.tree_util.tree_map(lambda q, g: q - lr * g, params, grads), opt
            vel = jax.tree_util.tree_map(lambda v, g: mom * v + g, opt, grads)
            return jax.tree_util.tree_map(lambda q, v: q - lr * v, params, vel), vel
        m, v, t = opt
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        params = jax.tree_util.tree_map(
            lambda q, m, v: q - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), params, m, v)
        return params, (m, v, t)

    @partial(jax.jit, donate_argnums=(0, 1))
    def epoch(params, opt, perm, x, y):
        padded = jnp.concatenate([perm, jnp.zeros(steps * bs - n, perm.dtype)])
        valid = (jnp.arange(steps * bs) < n).astype(jnp.float32)

        def step(carry, i):
            params, opt = carry
            index = jax.lax.dynamic_slice(padded, (i * bs,), (bs,))
            mask = jax.lax.dynamic_slice(valid, (i * bs,), (bs,))
            loss, grads = jax.value_and_grad(loss_of)(params, x[index], y[index], mask)
            params, opt = update(params, grads, opt)
            return (params, opt), loss

        (params, opt), losses = jax.lax.scan(step, (params, opt), jnp.arange(steps),
                                             unroll=a.unroll)
        return params, opt, losses

    @jax.jit
    def accuracy(params, x, y):
        return jnp.mean((jnp.argmax(logits_of(params, x), axis=1) == y).astype(jnp.float32))

    permute = jax.jit(lambda k: jax.random.permutation(k, n))
    # Compile before timing (the compiled function is reused for every epoch).
    epoch_c = epoch.lower(params, opt, permute(key), xtr, ytr).compile()
    jax.block_until_ready(accuracy(params, xte, yte))
    wait_for_go(a.ready, a.go)
    for e in range(1, a.epochs + 1):
        key, ke = jax.random.split(key)
        jax.block_until_ready(params)
        t0 = time.perf_counter()
        params, opt, losses = epoch_c(params, opt, permute(ke), xtr, ytr)
        jax.block_until_ready((params, losses))
        ms = (time.perf_counter() - t0) * 1000
        acc = float(accuracy(params, xte, yte))
        print(f"epoch {e} ms {ms:.1f} acc {acc:.4f} loss {float(jnp.mean(losses)):.4f}", flush=True)


if __name__ == "__main__":
    main()
