#!/usr/bin/env python3
"""The PyTorch peers for BENCHMARKS.md: the same 784-128-10 MLP (ReLU, softmax cross-entropy,
nn.Linear's initialisation U(-1/sqrt(in), 1/sqrt(in))), the same MNIST files, data resident on the
GPU, shuffled every epoch, batches of --batch-size with the last one partial (469 steps at 128),
SGD (momentum 0 unless given) or Adam; per-epoch time without the evaluation.

    python3 benches/peer/mnist_torch.py --epochs 3 --batch-size 128 --lr 0.1 --optimizer sgd
    python3 benches/peer/mnist_torch.py --mode graph --epochs 3 --batch-size 128 --lr 0.1
    python3 benches/peer/mnist_torch.py --mode epoch-graph --epochs 3 --batch-size 128 --lr 0.1
    python3 benches/peer/mnist_torch.py --compile max-autotune-no-cudagraphs --mode epoch-graph ...

--mode eager: one Python call per operation. --mode graph: one training step (gather, forward,
loss, backward, optimizer) captured as a CUDA graph per batch size (the full batches and the last,
partial one) and replayed; the host copies the step's slice of the permutation into the graph's
index buffer, then replays. --mode epoch-graph: the whole epoch (every step, each reading its
slice of one permutation buffer) captured as ONE CUDA graph; per epoch the host writes a new
permutation into that buffer and replays the graph once (no per-step host work at all).

--compile MODE: the step's forward and loss (with its backward, through AOTAutograd) and the
optimizer step each go through `torch.compile(mode=MODE, dynamic=False)` (Inductor: fused Triton
kernels; `max-autotune-no-cudagraphs` also autotunes the matrix products; `reduce-overhead` also
replays Inductor's own CUDA graphs, so it is used with --mode eager). Compilation and the
capture happen before --ready, outside the timed epochs, with the warm-up steps they need undone
(parameters and optimizer state restored), so every mode trains from the same start.

Float32 throughout (TF32 off, PyTorch's default for matmuls). Prints one line per epoch:
`epoch E ms M acc A`.
"""
import contextlib
import time
from pathlib import Path

import torch

import mnist_peer


def idx(path):
    shape, data = mnist_peer.idx(path)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).reshape(shape)


def main():
    p = mnist_peer.parser("the set-up")
    p.add_argument("--mode", choices=["eager", "graph", "epoch-graph"], default="eager")
    p.add_argument("--compile", default="none",
                   choices=["none", "default", "max-autotune-no-cudagraphs", "reduce-overhead"],
                   help="torch.compile mode of the step's parts (none: eager kernels)")
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(a.device)
    d = Path(a.data)
    xtr = idx(d / "train-images.idx3-ubyte.gz").reshape(-1, 784).float().div(255).to(dev)
    ytr = idx(d / "train-labels.idx1-ubyte.gz").long().to(dev)
    xte = idx(d / "t10k-images.idx3-ubyte.gz").reshape(-1, 784).float().div(255).to(dev)
    yte = idx(d / "t10k-labels.idx1-ubyte.gz").long().to(dev)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dev)
    graph = a.mode in ("graph", "epoch-graph")
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=a.lr, capturable=graph)
    loss_fn = torch.nn.CrossEntropyLoss()
    n = xtr.shape[0]
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def loss_of(index):
        return loss_fn(model(xtr[index]), ytr[index])

    def optimizer_step():
        opt.step()

    if a.compile != "none":
        loss_of = torch.compile(loss_of, mode=a.compile, dynamic=False)
        optimizer_step = torch.compile(optimizer_step, mode=a.compile, dynamic=False)

    # Inductor's CUDA graphs (reduce-overhead) reuse their output memory on the next replay: a
    # new step has to be marked, or the backward reads a forward output already overwritten.
    mark_step = (torch.compiler.cudagraph_mark_step_begin if a.compile == "reduce-overhead"
                 else (lambda: None))

    def step(index):
        mark_step()
        opt.zero_grad(set_to_none=True)
        loss = loss_of(index)
        loss.backward()
        optimizer_step()
        return loss

    saved = [q.detach().clone() for q in model.parameters()]
    sizes = sorted({a.batch_size, n % a.batch_size} - {0})
    # Warm-up (compilation, cuBLAS and autograd set-up) at every batch size, on a side stream as
    # graph capture requires; undone below.
    side = torch.cuda.Stream() if dev.type == "cuda" else None
    if side is not None:
        side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side) if side is not None else contextlib.nullcontext():
        for bs in sizes:
            index = torch.arange(bs, device=dev)
            for _ in range(3):
                step(index)
    if side is not None:
        torch.cuda.current_stream().wait_stream(side)
    sync()
    graphs = {}
    perm_buf = torch.zeros(n, dtype=torch.long, device=dev)
    if a.mode == "graph":
        # One step per batch size, replayed with the step's indices copied in.
        for bs in sizes:
            index = torch.zeros(bs, dtype=torch.long, device=dev)
            g = torch.cuda.CUDAGraph()
            opt.zero_grad(set_to_none=True)
            with torch.cuda.graph(g):
                step(index)
            graphs[bs] = (index, g)
    elif a.mode == "epoch-graph":
        # Every step of an epoch, each reading its slice of perm_buf, as one graph.
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            for s in range(0, n, a.batch_size):
                step(perm_buf[s:s + a.batch_size])
        graphs["epoch"] = g
    # Undo the warm-up (and the capture, which runs nothing): the same start as eager mode.
    with torch.no_grad():
        for q, s in zip(model.parameters(), saved):
            q.copy_(s)
        for state in opt.state.values():
            for v in state.values():
                if torch.is_tensor(v):
                    v.zero_()
    sync()

    with torch.no_grad():
        model(xte).argmax(1)
    sync()
    mnist_peer.wait_for_go(a.ready, a.go)

    for epoch in range(1, a.epochs + 1):
        sync()
        t0 = time.perf_counter()
        perm = torch.randperm(n, device=dev)
        if a.mode == "epoch-graph":
            perm_buf.copy_(perm)
            graphs["epoch"].replay()
        else:
            for s in range(0, n, a.batch_size):
                batch = perm[s:s + a.batch_size]
                if a.mode == "graph":
                    index, g = graphs[batch.shape[0]]
                    index.copy_(batch)
                    g.replay()
                else:
                    step(batch)
        sync()
        ms = (time.perf_counter() - t0) * 1000
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print(f"epoch {epoch} ms {ms:.1f} acc {acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
