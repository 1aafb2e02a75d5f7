#!/usr/bin/env python3
"""One run of BENCHMARKS.md's MNIST table: `mnist train` and its peers, each at its best, the
same 784-128-10 network, initialisation scheme, batches and optimizer per setting, one after
another on the same machine. Prints each program's epoch lines as they come, then the tables:
median epoch time over epochs 2..E (the first pays compilation and warm-up), test accuracy after
the last epoch, and per setting the best peer and ours / best (below 1: ours is faster).

    python3 benches/peer/mnist_side_by_side.py --mnist target/release/mnist \\
        --burn benches/peer/burn/target/release/mnist-burn --epochs 5 --peers all --prepare-together

Peers (--peers, comma-separated; `all` is every one below except torch-eager):
- torch-eager: PyTorch, one Python call per operation.
- torch-graph: one training step captured as a CUDA graph, replayed per step.
- torch-epoch: the whole epoch captured as ONE CUDA graph, replayed once per epoch.
- torch-compile: torch.compile(mode="max-autotune-no-cudagraphs") of the step's parts, per step.
- torch-compile-ro: torch.compile(mode="reduce-overhead") (Inductor's own CUDA graphs), per step.
- torch-compile-epoch: max-autotune-no-cudagraphs kernels, the whole epoch as one CUDA graph.
- jax-u1, jax-u2, jax-u4, jax-u8, jax-u16: JAX, the epoch as one jitted lax.scan with
  unroll=N (`jax` is jax-u1, the repository's peer before the sweep).
- burn: Burn on wgpu (fusion, autotune), benches/peer/burn.
- meganeura: kvark/meganeura 0.3 on Vulkan (op-level autodiff, e-graph fusion), its own Trainer,
  benches/peer/meganeura (no SGD momentum: the momentum setting shows `-`).

--repeats N (the way to measure: BENCHMARKS.md's figures since 2026-12-03) runs every program
alone, one after another, N times interleaved (ours, peer 1, peer 2, ..., ours, peer 1, ...): each
process loads, compiles and warms up by itself with nothing else on the GPU or the CPUs, then
times its epochs. A program's figure is the median of its repetitions' medians, shown when the
repetitions agree within --agree (5%); otherwise the table shows the spread (min-max) and the
ratio is marked `?`. The GPU's clocks, temperature and power (nvidia-smi) are printed before and
after each setting.

--prepare-together (withdrawn for reported figures: XLA's compilation and GEMM autotuning of peers
still preparing ran beside timed epochs, which slowed the peers; see BENCHMARKS.md) starts every
Python peer at once: each loads the data, compiles (JAX,
torch.compile) or captures its graph (PyTorch), then waits; the timed epochs still run one
program at a time, and only after every peer is prepared (or --prepare-deadline has passed:
one not prepared by then is stopped and reported), so nothing compiles while anything is timed.

--variant NAME=SPEC (repeatable) also runs `mnist train` with MLP_FUSED_CONFIG=SPEC (another
configuration of the fused kernels, see crates/mlp/src/kernels/fused.rs `choose_with`), or with
more arguments when SPEC is `args:ARGS` (e.g. `--variant "f16=args:--precision f16"`), as the
column `mnist:NAME`; --mnist-args adds arguments to every `mnist train` (e.g. `--precision
f16`); --profile adds `--profile` to every `mnist train` and prints a table of the profiles' GPU
time per step and per-kernel means.

A peer that is missing (no torch, no jax, no Burn binary) or fails shows as `-` with its error
in the log above the table.
"""
import argparse, os, re, shlex, statistics, subprocess, sys, tempfile, time
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
# Peer name -> the arguments of its script (mnist_torch.py or mnist_jax.py), or None for Burn.
TORCH_PEERS = {
    "torch-eager": ["--mode", "eager"],
    "torch-graph": ["--mode", "graph"],
    "torch-epoch": ["--mode", "epoch-graph"],
    "torch-compile": ["--mode", "eager", "--compile", "max-autotune-no-cudagraphs"],
    "torch-compile-ro": ["--mode", "eager", "--compile", "reduce-overhead"],
    "torch-compile-epoch": ["--mode", "epoch-graph", "--compile", "max-autotune-no-cudagraphs"],
}
UNROLLS = (1, 2, 4, 8, 16)
# jax-uN: float32 matmuls at `highest` (no TF32, as ours); jax-uN-tf32: JAX's default precision,
# which is TF32 (tensor cores) on the H200.
JAX_PEERS = {f"jax-u{u}": ["--unroll", str(u)] for u in UNROLLS}
JAX_PEERS.update({f"jax-u{u}-tf32": ["--unroll", str(u), "--precision", "default"] for u in UNROLLS})
JAX_PEERS["jax"] = ["--unroll", "1"]
RUST_PEERS = ("burn", "meganeura")
ALL = [q for q in TORCH_PEERS if q != "torch-eager"] + [f"jax-u{u}" for u in UNROLLS] + list(RUST_PEERS)
PEERS = ["mnist"] + ALL
PYTHON_PEERS = tuple(TORCH_PEERS) + tuple(JAX_PEERS)
# With --prepare-together, a peer starts preparing only once the peer named here (same setting)
# is prepared: it then finds the compiled kernels and autotuning results of that one in the
# compilers' caches (JAX's compilation cache with XLA's per-fusion autotuning cache, Inductor's
# FX graph and autotuning caches) instead of compiling and autotuning the same products again
# at the same time.
AFTER = {**{f"jax-u{u}": "jax-u1" for u in UNROLLS if u != 1},
         **{f"jax-u{u}-tf32": "jax-u1" for u in UNROLLS},
         "torch-compile-epoch": "torch-compile", "torch-compile-ro": "torch-compile"}
# Optional: another build of mnist (e.g. main's, before a change), run like "mnist".
BASELINE = "mnist-baseline"


def is_ours(peer):
    return peer in ("mnist", BASELINE) or peer.startswith("mnist:")


def command(peer, a, opt, batch, lr, mom):
    data = ["--data", a.data]
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
        c += a.mnist_args.split()
        return c + (["--optimizer", "adam"] if opt == "adam" else ["--momentum", str(mom)])
    peer_opts = ["--optimizer", opt] + (["--momentum", str(mom)] if opt == "sgd" else [])
    if peer in TORCH_PEERS:
        return [sys.executable, str(HERE / "mnist_torch.py"), *TORCH_PEERS[peer], *common,
                *peer_opts]
    if peer in JAX_PEERS:
        return [sys.executable, str(HERE / "mnist_jax.py"), *JAX_PEERS[peer], *common, *peer_opts]
    if peer in RUST_PEERS:
        return [getattr(a, peer), *common, *peer_opts]
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
        results.setdefault((s, peer), []).append((statistics.median(later), rows[-1][2], len(rows)))
    if is_ours(peer) and "GPU time per step" in out:
        profiles[(s, peer)] = parse_profile(out)
        for line in out.splitlines():
            if line.startswith(("kernel ", "step (sum")) or PROFILE_KERNEL.match(line.strip()) \
                    or line.startswith(("GPU time per step", "host time per step")):
                print(f"   | {line}", flush=True)


def prepare(a, settings, others, tmp):
    """Start the Python peers (at most --prepare-jobs preparing at once, each after the peer it
    waits for, AFTER), wait until each is prepared (its --ready file) or --prepare-deadline has
    passed, stop the ones not prepared. Returns {(setting, peer): (cmd, proc, ready, go, log)}."""
    t0 = time.time()
    queue = []
    for tier in (0, 1):
        for s in settings:
            for peer in others:
                if peer in PYTHON_PEERS and (peer in AFTER) == (tier == 1):
                    queue.append((s, peer))
    started, preparing, done = {}, {}, {}
    deadline = t0 + a.prepare_deadline
    while (queue or preparing) and time.time() < deadline:
        for key in list(queue):
            if len(preparing) >= a.prepare_jobs:
                break
            s, peer = key
            dep = AFTER.get(peer)
            if dep and dep in others and done.get((s, dep)) is None:
                continue
            queue.remove(key)
            title, opt, batch, lr, mom = SETTINGS[s]
            ready, go = tmp / f"{s}-{peer}.ready", tmp / f"{s}-{peer}.go"
            cmd = command(peer, a, opt, batch, lr, mom) + ["--ready", str(ready), "--go", str(go)]
            log = open(tmp / f"{s}-{peer}.err", "w+")
            try:
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
            except OSError as e:
                print(f"## {s} {peer}: failed to start: {e}", flush=True)
                done[key] = "failed"
                continue
            started[key] = preparing[key] = (cmd, proc, ready, go, log)
        for key, (_, proc, ready, _, _) in list(preparing.items()):
            if ready.exists() or proc.poll() is not None:
                state = "ready" if ready.exists() else f"exited {proc.returncode}"
                print(f"## prepared {key[0]} {key[1]}: {state} at {time.time() - t0:.1f} s",
                      flush=True)
                done[key] = state
                del preparing[key]
        time.sleep(0.05)
    for key, (_, proc, _, _, _) in preparing.items():
        proc.kill()
        del started[key]
        print(f"## {key[0]} {key[1]}: not prepared in {a.prepare_deadline:.0f} s: stopped",
              flush=True)
    for key in queue:
        print(f"## {key[0]} {key[1]}: not started in {a.prepare_deadline:.0f} s", flush=True)
    print(f"## {sum(v == 'ready' for v in done.values())} of {len(started) + len(queue)} peers "
          f"prepared in {time.time() - t0:.1f} s", flush=True)
    return started


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mnist", default=str(ROOT / "target" / "release" / "mnist"))
    p.add_argument("--data", default=str(ROOT / "data" / "mnist"), help="the MNIST files")
    p.add_argument("--burn", default=str(HERE / "burn" / "target" / "release" / "mnist-burn"))
    p.add_argument("--meganeura",
                   default=str(HERE / "meganeura" / "target" / "release" / "mnist-meganeura"))
    p.add_argument("--baseline", default=None,
                   help="another mnist binary, shown as the column mnist-baseline")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--seed", type=int, default=0,
                   help="seed of initialisation and shuffling, passed to every program")
    p.add_argument("--steps-per-chunk", type=int, default=100)
    p.add_argument("--settings", default=",".join(SETTINGS), help="of " + ",".join(SETTINGS))
    p.add_argument("--peers", default="mnist,all",
                   help="of " + ",".join(["mnist", "torch-eager", "jax"] + ALL) + ", or all")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=SPEC",
                   help="also run mnist with MLP_FUSED_CONFIG=SPEC, or with more arguments if "
                        "SPEC is args:ARGS, as the column mnist:NAME")
    p.add_argument("--variant-settings", default=None,
                   help="settings the variants run in (default: all)")
    p.add_argument("--mnist-args", default="", help="more arguments of every `mnist train`")
    p.add_argument("--profile", action="store_true", help="mnist train --profile")
    p.add_argument("--prepare-together", action="store_true",
                   help="start every Python peer at once, time them one at a time")
    p.add_argument("--prepare-deadline", type=float, default=240,
                   help="seconds the peers prepared together may take; later ones are stopped")
    p.add_argument("--prepare-jobs", type=int, default=12,
                   help="peers preparing at the same time (compilers are CPU-bound)")
    p.add_argument("--timeout", type=float, default=300, help="seconds one timed program may take")
    p.add_argument("--repeats", type=int, default=1,
                   help="run every program this many times, alone and interleaved")
    p.add_argument("--agree", type=float, default=0.05,
                   help="repetitions agreeing within this fraction give one figure")
    a = p.parse_args()
    if a.prepare_together and a.repeats > 1:
        p.error("--repeats runs each program alone: it cannot be used with --prepare-together")
    # JAX preallocates 75% of the GPU per process: peers prepared together would run out.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    # torch.compile's worker pools (one per CPU per process) would multiply the processes.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    # JAX's persistent compilation cache (which also turns on XLA's per-fusion autotuning
    # cache inside it): the unroll variants of a setting share their products' autotuning.
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(Path(tempfile.gettempdir()) / "jax_cache"))
    settings = a.settings.split(",")
    peers = []
    for q in a.peers.split(","):
        for r in (ALL if q == "all" else [q]):
            if r not in peers:
                peers.append(r)
    if a.baseline:
        peers.insert(1, BASELINE)
    variants = dict(v.split("=", 1) for v in a.variant)
    variant_settings = set((a.variant_settings or a.settings).split(","))
    ours_columns = [q for q in peers if is_ours(q)] + [f"mnist:{n}" for n in variants]
    others = [q for q in peers if not is_ours(q)]
    results, profiles = {}, {}
    started = {}
    tmp = Path(tempfile.mkdtemp(prefix="side_by_side_"))
    if a.prepare_together:
        started = prepare(a, settings, others, tmp)
    for s in settings:
        title, opt, batch, lr, mom = SETTINGS[s]
        runs = [q for q in ours_columns if not q.startswith("mnist:") or s in variant_settings]
        gpu_state(f"before {s}")
        for rep, peer in [(r, q) for r in range(a.repeats) for q in runs + others]:
            if a.repeats > 1:
                print(f"## repetition {rep + 1} of {a.repeats}", flush=True)
            t0 = time.time()
            if (s, peer) in started:
                cmd, proc, ready, go, log = started[(s, peer)]
                print(f"## {s} {peer}: {' '.join(cmd)}", flush=True)
                go.touch()
                try:
                    out, _ = proc.communicate(timeout=a.timeout)
                    if proc.returncode != 0:
                        log.seek(0)
                        print(f"   exit {proc.returncode}: {log.read().strip()[-1500:]}", flush=True)
                except subprocess.TimeoutExpired as e:
                    proc.kill()
                    out = ""
                    print(f"   failed: {e}", flush=True)
                report(s, peer, out, t0, results, profiles)
                continue
            if peer in PYTHON_PEERS and a.prepare_together:
                continue  # failed to start, reported above
            env = dict(os.environ)
            base = peer.split(":")[0] if peer.startswith("mnist:") else peer
            extra = []
            if peer.startswith("mnist:"):
                spec = variants[peer.split(":", 1)[1]]
                if spec.startswith("args:"):
                    extra = shlex.split(spec[len("args:"):])
                    env.pop("MLP_FUSED_CONFIG", None)
                else:
                    env["MLP_FUSED_CONFIG"] = spec
            cmd = command(base, a, opt, batch, lr, mom) + extra
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
        gpu_state(f"after {s}")
    for _, proc, _, _, _ in started.values():
        if proc.poll() is None:
            proc.kill()
    if profiles:
        print()
        print("profiles (`mnist train --profile`): GPU us per step (chunk timed whole), host us per "
              "step; per kernel: mean us with a timestamp after every dispatch")
        for (s, peer), (step, host, kernels) in profiles.items():
            ks = ", ".join(f"{k} {v:.2f}" for k, v in kernels.items() if k != "begin_chunk")
            print(f"{s:10} {peer:22} step {step} host {host} | {ks}")
    print_tables(a, settings, ours_columns, others, results)


def gpu_state(when):
    """The GPU's clocks, temperature and power now (nvidia-smi), one line."""
    q = "clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,utilization.gpu"
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        print(f"## GPU {when}: {q} = {r.stdout.strip()}", flush=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"## GPU {when}: nvidia-smi failed: {e}", flush=True)


def aggregate(a, reps):
    """(figure ms, accuracy %, agree, text) of a program's repetitions [(median ms, acc, n)]."""
    ms = [r[0] for r in reps]
    lo, hi = min(ms), max(ms)
    agree = hi <= lo * (1 + a.agree)
    fig = statistics.median(ms)
    each = " / ".join(f"{m:.2f}" for m in ms)
    text = f"{fig:.2f} ms" if agree else f"{lo:.2f}-{hi:.2f} ms (spread)"
    if len(ms) > 1:
        text += f" [{each}]"
    return fig, reps[-1][1], agree, text


def print_tables(a, settings, ours_columns, others, results):
    results = {k: aggregate(a, v) for k, v in results.items()}
    """Per setting: each program's time and accuracy; then ours against the best peer."""
    print()
    print(f"median epoch time over epochs 2..{a.epochs} (ms; with --repeats, the median of the "
          f"repetitions' medians, each in [..]), test accuracy after epoch {a.epochs}; "
          "ratio = ours / that program (below 1: ours is faster; ? where repetitions disagree)")
    columns = ours_columns + others
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
            cell = f"{r[3]}, {r[1]:.2f}%"
            if peer != "mnist" and ours:
                cell += f" ({ours[0] / r[0]:.2f}{'' if ours[2] and r[2] else '?'})"
            cells.append(cell)
        print(f"| {SETTINGS[s][0]} | " + " | ".join(cells) + " |")
    print()
    print("ours against the best of each peer family and the best peer overall (ms per epoch; "
          "ours / best: below 1, ours is faster)")
    families = {"PyTorch": [q for q in others if q.startswith("torch")],
                "JAX": [q for q in others if q.startswith("jax") and not q.endswith("-tf32")],
                "JAX TF32": [q for q in others if q.startswith("jax") and q.endswith("-tf32")],
                "Burn": [q for q in others if q == "burn"],
                "meganeura": [q for q in others if q == "meganeura"]}
    families = {f: qs for f, qs in families.items() if qs}
    print("| setting | ours | " + " | ".join(f"best {f}" for f in families)
          + " | best peer | ours / best |")
    print("|" + "---|" * (len(families) + 4))
    for s in settings:
        ours = results.get((s, "mnist"))
        cells, overall = [], None
        for f, qs in families.items():
            timed = [(results[(s, q)][0], q, results[(s, q)][2]) for q in qs if (s, q) in results]
            best = min(timed) if timed else None
            cells.append(f"{best[0]:.2f} ({best[1]})" if best else "-")
            if best and (overall is None or best < overall):
                overall = best
        ours_cell = f"{ours[0]:.2f}" if ours else "-"
        best_cell = f"{overall[0]:.2f} ({overall[1]})" if overall else "-"
        ratio = f"{ours[0] / overall[0]:.2f}" if ours and overall else "-"
        if ours and overall and not (ours[2] and overall[2]):
            ratio += " (repetitions disagree)"
        print(f"| {SETTINGS[s][0]} | {ours_cell} | " + " | ".join(cells)
              + f" | {best_cell} | {ratio} |")


if __name__ == "__main__":
    main()
