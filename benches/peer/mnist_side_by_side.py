#!/usr/bin/env python3
"""One run of BENCHMARKS.md's MNIST table: `mnist train` and its peers (PyTorch eager, PyTorch with
one step as a CUDA graph, JAX with the epoch as one jitted lax.scan, Burn on wgpu), the same
784-128-10 network, initialisation scheme, batches and optimizer per setting, one after another
on the same machine. Prints each program's epoch lines as they come, then the table: median epoch
time over epochs 2..E (the first pays compilation and warm-up), test accuracy after the last
epoch, and each peer's time over ours.

    python3 benches/peer/mnist_side_by_side.py --mnist target/release/mnist \\
        --burn benches/peer/burn/target/release/mnist-burn --epochs 5

--prepare-together starts every Python peer at once: each loads the data, compiles (JAX) or
captures its graph (PyTorch), then waits; the timed epochs still run one program at a time (a
peer starts its epochs when the previous program has finished). This overlaps the peers'
start-up and compilation (tens of seconds each) without sharing the GPU while anything is timed.

--variant NAME=SPEC (repeatable) also runs `mnist train` with MLP_FUSED_CONFIG=SPEC (another
configuration of the fused kernels, see crates/mlp/src/kernels/fused.rs `choose_with`) as the
column `mnist:NAME`; --profile adds `--profile` to every `mnist train` and prints a table of
the profiles' GPU time per step and per-kernel means.

A peer that is missing (no torch, no jax, no Burn binary) or fails shows as `-` with its error
in the log above the table.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# (name, optimizer, batch, lr, momentum)
SETTINGS = {
    "sgd128": ("SGD lr 0.1, batch 128", "sgd", 128, 0.1, 0.0),
    "sgd1024": ("SGD lr 0.1, batch 1024", "sgd", 1024, 0.1, 0.0),
    "adam128": ("Adam lr 1e-3, batch 128", "adam", 128, 0.001, 0.0),
    "default64": ("SGD lr 0.05 momentum 0.9, batch 64 (mnist's default before schedules)", "sgd", 64, 0.05, 0.9),
}
PEERS = ["mnist", "torch-eager", "torch-graph", "jax", "burn"]
PYTHON_PEERS = ("torch-eager", "torch-graph", "jax")
# Optional: another build of mnist (e.g. main's, before a change), run like "mnist".
BASELINE = "mnist-baseline"


def is_ours(peer):
    return peer in ("mnist", BASELINE) or peer.startswith("mnist:")


def command(peer, a, opt, batch, lr, mom):
    data = ["--data", str(ROOT / "data" / "mnist")]
    common = ["--epochs", str(a.epochs), "--batch-size", str(batch), "--lr", str(lr),
              "--seed", str(a.seed), *data]
    if is_ours(peer):
        # The peers keep the learning rate constant from the first step; so does ours here (its
        # default is a half-epoch warm-up and a cosine decay).
        c = [a.baseline if peer == BASELINE else a.mnist, "train", *common,
             "--schedule", "constant", "--warmup-epochs", "0",
             "--steps-per-chunk", str(a.steps_per_chunk)]
        if a.profile:
            c.append("--profile")
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
PROFILE_STEP = re.compile(r"GPU time per step, the chunk timed as a whole.*: ([\d.]+) us")
PROFILE_HOST = re.compile(r"host time per step, recording and submitting: ([\d.]+) us")
PROFILE_KERNEL = re.compile(r"^(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%$")


def parse(peer, out, n_train=60000):
    """[(epoch, ms, accuracy in %)] from a program's output."""
    rows = []
    for line in out.splitlines():
        if is_ours(peer):
            m = OURS.search(line)
            if not m:
                continue
            # samples/s has more digits than the seconds printed beside it.
            r = OURS_RATE.search(line)
            if r:
                ms = 1000.0 * n_train / float(r.group(1))
            else:
                t = OURS_TRAIN.search(line)
                ms = float(t.group(1)) * (1000.0 if t.group(2) == "s" else 1.0)
            rows.append((int(m.group(1)), ms, float(m.group(2))))
        else:
            m = PEER.search(line)
            if m:
                rows.append((int(m.group(1)), float(m.group(2)), 100.0 * float(m.group(3))))
    return rows


def parse_profile(out):
    """(GPU us per step, host us per step, {kernel: mean us}) of `mnist train --profile`."""
    step = host = None
    kernels = {}
    for line in out.splitlines():
        if m := PROFILE_STEP.search(line):
            step = float(m.group(1))
        elif m := PROFILE_HOST.search(line):
            host = float(m.group(1))
        elif m := PROFILE_KERNEL.match(line.strip()):
            kernels[m.group(1)] = float(m.group(4))
    return step, host, kernels


def report(s, peer, out, t0, results, profiles):
    rows = parse(peer, out)
    for e, ms, acc in rows:
        print(f"   epoch {e}: {ms:.2f} ms, test accuracy {acc:.2f}%", flush=True)
    print(f"   ({time.time() - t0:.1f} s wall)", flush=True)
    if rows:
        later = [ms for e, ms, _ in rows if e >= 2] or [rows[0][1]]
        results[(s, peer)] = (statistics.median(later), rows[-1][2], len(rows))
    if is_ours(peer) and "GPU time per step" in out:
        profiles[(s, peer)] = parse_profile(out)
        for line in out.splitlines():
            if line.startswith(("kernel ", "step (sum")) or PROFILE_KERNEL.match(line.strip()) \
                    or line.startswith(("GPU time per step", "host time per step")):
                print(f"   | {line}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mnist", default=str(ROOT / "target" / "release" / "mnist"))
    p.add_argument("--burn", default=str(HERE / "burn" / "target" / "release" / "mnist-burn"))
    p.add_argument("--baseline", default=None,
                   help="another mnist binary, shown as the column mnist-baseline")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--seed", type=int, default=0,
                   help="seed of initialisation and shuffling, passed to every program")
    p.add_argument("--steps-per-chunk", type=int, default=100)
    p.add_argument("--settings", default=",".join(SETTINGS), help="of " + ",".join(SETTINGS))
    p.add_argument("--peers", default=",".join(PEERS), help="of " + ",".join(PEERS))
    p.add_argument("--variant", action="append", default=[], metavar="NAME=SPEC",
                   help="also run mnist with MLP_FUSED_CONFIG=SPEC as the column mnist:NAME")
    p.add_argument("--variant-settings", default=None,
                   help="settings the variants run in (default: all)")
    p.add_argument("--profile", action="store_true", help="mnist train --profile")
    p.add_argument("--prepare-together", action="store_true",
                   help="start every Python peer at once, time them one at a time")
    p.add_argument("--timeout", type=float, default=300)
    a = p.parse_args()
    # JAX preallocates 75% of the GPU per process: peers prepared together would run out.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    settings = a.settings.split(",")
    peers = a.peers.split(",")
    if a.baseline:
        peers.insert(1, BASELINE)
    variants = dict(v.split("=", 1) for v in a.variant)
    variant_settings = set((a.variant_settings or a.settings).split(","))
    ours_columns = [q for q in peers if is_ours(q)] + [f"mnist:{n}" for n in variants]
    results, profiles = {}, {}
    started = {}
    tmp = Path(tempfile.mkdtemp(prefix="side_by_side_"))
    if a.prepare_together:
        t0 = time.time()
        for s in settings:
            title, opt, batch, lr, mom = SETTINGS[s]
            for peer in peers:
                if peer not in PYTHON_PEERS:
                    continue
                ready, go = tmp / f"{s}-{peer}.ready", tmp / f"{s}-{peer}.go"
                cmd = command(peer, a, opt, batch, lr, mom) + ["--ready", str(ready), "--go", str(go)]
                try:
                    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True)
                except OSError as e:
                    print(f"## {s} {peer}: failed to start: {e}", flush=True)
                    continue
                started[(s, peer)] = (cmd, proc, ready, go)
        deadline = time.time() + a.timeout
        while time.time() < deadline and any(
                not r.exists() and p.poll() is None for _, p, r, _ in started.values()):
            time.sleep(0.05)
        print(f"## {len(started)} peers prepared together in {time.time() - t0:.1f} s", flush=True)
    for s in settings:
        title, opt, batch, lr, mom = SETTINGS[s]
        columns = [q for q in peers if not is_ours(q)]
        runs = [q for q in ours_columns if not q.startswith("mnist:") or s in variant_settings]
        for peer in runs + columns:
            t0 = time.time()
            if (s, peer) in started:
                cmd, proc, ready, go = started[(s, peer)]
                print(f"## {s} {peer}: {' '.join(cmd)}", flush=True)
                go.touch()
                try:
                    out, err = proc.communicate(timeout=a.timeout)
                    if proc.returncode != 0:
                        print(f"   exit {proc.returncode}: {err.strip()[-1500:]}", flush=True)
                except subprocess.TimeoutExpired as e:
                    proc.kill()
                    out = ""
                    print(f"   failed: {e}", flush=True)
                report(s, peer, out, t0, results, profiles)
                continue
            env = dict(os.environ)
            base = peer.split(":")[0] if peer.startswith("mnist:") else peer
            if peer.startswith("mnist:"):
                env["MLP_FUSED_CONFIG"] = variants[peer.split(":", 1)[1]]
            cmd = command(base, a, opt, batch, lr, mom)
            spec = f"MLP_FUSED_CONFIG={env['MLP_FUSED_CONFIG']} " if "MLP_FUSED_CONFIG" in env else ""
            print(f"## {s} {peer}: {spec}{' '.join(cmd)}", flush=True)
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
                out = r.stdout
                if r.returncode != 0:
                    print(f"   exit {r.returncode}: {r.stderr.strip()[-1500:]}", flush=True)
            except (OSError, subprocess.TimeoutExpired) as e:
                out = ""
                print(f"   failed: {e}", flush=True)
            report(s, peer, out, t0, results, profiles)
    for _, proc, _, _ in started.values():
        if proc.poll() is None:
            proc.kill()
    columns = ours_columns + [q for q in peers if not is_ours(q)]
    if profiles:
        print()
        print("profiles (`mnist train --profile`): GPU us per step (chunk timed whole), host us per "
              "step; per kernel: mean us with a timestamp after every dispatch")
        for (s, peer), (step, host, kernels) in profiles.items():
            ks = ", ".join(f"{k} {v:.2f}" for k, v in kernels.items() if k != "begin_chunk")
            print(f"{s:10} {peer:22} step {step} host {host} | {ks}")
    print()
    print(f"median epoch time over epochs 2..{a.epochs} (ms), test accuracy after epoch {a.epochs}; "
          "ratio = peer's time / ours (above 1: ours is faster)")
    print("| setting | " + " | ".join(columns) + " |")
    print("|" + "---|" * (len(columns) + 1))
    for s in settings:
        ours = results.get((s, "mnist"))
        cells = []
        for peer in columns:
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
