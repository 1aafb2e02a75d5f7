#!/usr/bin/env python3
"""The PyTorch peer for BENCHMARKS.md: the same 784-128-10 MLP, the same MNIST files, data resident
on the GPU, per-epoch wall time and test accuracy.

    python3 benches/peer/mnist_torch.py --epochs 3 --batch-size 128 --lr 0.1 --optimizer sgd

Prints one line per epoch: `epoch E ms M acc A`.
"""
import argparse, gzip, struct, time
from pathlib import Path

import torch


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "data" / "mnist"))
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    d = Path(a.data)
    xtr = idx(d / "train-images.idx3-ubyte.gz").reshape(-1, 784).float().div(255).to(dev)
    ytr = idx(d / "train-labels.idx1-ubyte.gz").long().to(dev)
    xte = idx(d / "t10k-images.idx3-ubyte.gz").reshape(-1, 784).float().div(255).to(dev)
    yte = idx(d / "t10k-labels.idx1-ubyte.gz").long().to(dev)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dev)
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    n = xtr.shape[0]
    for epoch in range(1, a.epochs + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        perm = torch.randperm(n, device=dev)
        for s in range(0, n, a.batch_size):
            idx_b = perm[s:s + a.batch_size]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xtr[idx_b]), ytr[idx_b])
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1000
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print(f"epoch {epoch} ms {ms:.1f} acc {acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
