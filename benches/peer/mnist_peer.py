"""What the Python MNIST peers (mnist_torch.py, mnist_jax.py) share: the reader of the MNIST IDX
files, the options every peer takes (mnist_side_by_side.py passes them all), and the --ready /
--go hand-shake of mnist_side_by_side.py --prepare-together. Imported from the peers' folder
(Python puts a script's folder first on its path)."""
import argparse, gzip, struct, time
from pathlib import Path


def idx(path):
    """A gzipped IDX file: its shape and its unsigned bytes, row-major."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return shape, data[4 + 4 * dims:]


def parser(prepared):
    """The options every peer takes; `prepared` says what the peer has done when it creates
    --ready ("compiling", "the set-up")."""
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "data" / "mnist"))
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ready", default=None,
                   help=f"after {prepared}, create this file, then wait for --go before timing")
    p.add_argument("--go", default=None, help="the file whose existence starts the timed epochs")
    return p


def wait_for_go(ready, go):
    """Prepared: create `ready`, then wait until `go` exists (several peers prepare at once and
    are timed one after another, see mnist_side_by_side.py --prepare-together)."""
    if ready is None:
        return
    Path(ready).touch()
    while go is not None and not Path(go).exists():
        time.sleep(0.01)
