#!/usr/bin/env python3
"""One run of BENCHMARKS.md's MNIST table: `mnist train` and its peers (PyTorch eager, PyTorch with
one step as a CUDA graph, JAX with the epoch as one jitted lax.scan, Burn on wgpu), the same
784-128-10 network, initialisation scheme, batches and optimizer per setting, one after another
on the same machine. Prints each program's epoch lines as they come, then the table: median epoch
time over epochs 2..E (the first pays compilation and warm-up), test accuracy after the last
epoch, and each peer's time over ours.

    python3 benches/peer/mnist_side_by_side.py --mnist target/release/mnist \\
        --burn benches/peer/burn/target/release/mnist-burn --epochs 5

A peer that is missing (no torch, no jax, no Burn binary) or fails shows as `-` with its error
in the log above the table.
"""
import argparse, re, statistics, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# (name, optimizer, batch, lr, momentum)
SETTINGS = {
    "sgd128": ("SGD lr 0.1, batch 128", "sgd", 128, 0.1, 0.0),
    "sgd1024": ("SGD lr 0.1, batch 1024", "sgd", 1024, 0.1, 0.0),
    "adam128": ("Adam lr 1e-3, batch 128", "adam", 128, 0.001, 0.0),
    "default64": ("SGD lr 0.05 momentum 0.9, batch 64 (mnist's default)", "sgd", 64, 0.05, 0.9),
}
PEERS = ["mnist", "torch-eager", "torch-graph", "jax", "burn"]
# Optional: another build of mnist (e.g. main's, before a change), run like "mnist".
BASELINE = "mnist-baseline"


def command(peer, a, opt, batch, lr, mom):
    data = ["--data", str(ROOT / "data" / "mnist")]
    common = ["--epochs", str(a.epochs), "--batch-size", str(batch), "--lr", str(lr), *data]
    if peer in ("mnist", BASELINE):
        c = [a.mnist if peer == "mnist" else a.baseline, "train", *common,
             "--steps-per-chunk", str(a.steps_per_chunk)]
        return c + (["--optimizer", "adam"] if opt == "adam" else ["--momentum", str(mom)])
    peer_opts = ["--optimizer", opt] + (["--momentum", str(mom)] if opt == "sgd" else [])
    if peer.startswith("torch"):
        mode = peer.split("-")[1]
        return [sys.executable, str(HERE / "mnist_torch.py"), "--mode", mode, *common, *peer_opts]
    if peer == "jax":
        return [sys.executable, str(HERE / "mnist_jax.py"), *common, *peer_opts]
    if peer == "burn":
        return [a.burn, *common, *peer_opts]
    raise ValueError(peer)


OURS = re.compile(r"epoch (\d+)/\d+: .*test accuracy ([\d.]+)%")
OURS_TRAIN = re.compile(r"train(?:ing)?(?: time)? ([\d.]+) (ms|s)\b")
OURS_RATE = re.compile(r"\(([\d.]+) samples/s\)")
PEER = re.compile(r"^epoch (\d+) ms ([\d.]+) acc ([\d.]+)")


def parse(peer, out, n_train=60000):
    """[(epoch, ms, accuracy in %)] from a program's output."""
    rows = []
    for line in out.splitlines():
        if peer in ("mnist", BASELINE):
            m = OURS.search(line)
            if not m:
                continue
            t = OURS_TRAIN.search(line)
            if t:
                ms = float(t.group(1)) * (1000.0 if t.group(2) == "s" else 1.0)
            else:
                ms = 1000.0 * n_train / float(OURS_RATE.search(line).group(1))
            rows.append((int(m.group(1)), ms, float(m.group(2))))
        else:
            m = PEER.search(line)
            if m:
                rows.append((int(m.group(1)), float(m.group(2)), 100.0 * float(m.group(3))))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mnist", default=str(ROOT / "target" / "release" / "mnist"))
    p.add_argument("--burn", default=str(HERE / "burn" / "target" / "release" / "mnist-burn"))
    p.add_argument("--baseline", default=None,
                   help="another mnist binary, shown as the column mnist-baseline")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--steps-per-chunk", type=int, default=100)
    p.add_argument("--settings", default=",".join(SETTINGS), help="of " + ",".join(SETTINGS))
    p.add_argument("--peers", default=",".join(PEERS), help="of " + ",".join(PEERS))
    p.add_argument("--timeout", type=float, default=300)
    a = p.parse_args()
    settings = a.settings.split(",")
    peers = a.peers.split(",")
    if a.baseline:
        peers.insert(1, BASELINE)
    results = {}
    for s in settings:
        title, opt, batch, lr, mom = SETTINGS[s]
        for peer in peers:
            cmd = command(peer, a, opt, batch, lr, mom)
            print(f"## {s} {peer}: {' '.join(cmd)}", flush=True)
            t0 = time.time()
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
                out = r.stdout
                if r.returncode != 0:
                    print(f"   exit {r.returncode}: {r.stderr.strip()[-1500:]}", flush=True)
            except (OSError, subprocess.TimeoutExpired) as e:
                out = ""
                print(f"   failed: {e}", flush=True)
            rows = parse(peer, out)
            for e, ms, acc in rows:
                print(f"   epoch {e}: {ms:.2f} ms, test accuracy {acc:.2f}%", flush=True)
            print(f"   ({time.time() - t0:.1f} s wall)", flush=True)
            if rows:
                later = [ms for e, ms, _ in rows if e >= 2] or [rows[0][1]]
                results[(s, peer)] = (statistics.median(later), rows[-1][2], len(rows))
    print()
    print(f"median epoch time over epochs 2..{a.epochs} (ms), test accuracy after epoch {a.epochs}; "
          "ratio = peer's time / ours (above 1: ours is faster)")
    head = "| setting | " + " | ".join(peers) + " |"
    print(head)
    print("|" + "---|" * (len(peers) + 1))
    for s in settings:
        ours = results.get((s, "mnist"))
        cells = []
        for peer in peers:
            r = results.get((s, peer))
            if r is None:
                cells.append("-")
                continue
            cell = f"{r[0]:.2f} ms, {r[1]:.2f}%"
            if peer != "mnist" and ours:
                cell += f" ({r[0] / ours[0]:.2f}x)"
            cells.append(cell)
        print(f"| {SETTINGS[s][0]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
