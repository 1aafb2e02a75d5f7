# Sourced by the scripts that run on the lent H200 (benches/notes/**/*.sh, through the `device`
# tool, in the repository root): wgpu's Vulkan there (the loader, carried in .gl/ from
# ../shared/device/vulkan-debs, and NVIDIA's driver), unbuffered Python, and `clocks`, the
# GPU's clocks, temperature, power and load, printed before and after each timed run.
for f in .gl/*.deb; do dpkg -x "$f" / ; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
export PYTHONUNBUFFERED=1
clocks() {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu \
        --format=csv,noheader
}
# Binaries carried compressed (`xz`: a carry is at most 64 MiB, and Burn's peer alone is 62 MB
# stripped): `unpack DIR.xz-folder DIR` writes each `NAME.xz` of the first as the executable NAME
# in the second (python's lzma: the device image need not have xz).
unpack() {
    mkdir -p "$2"
    python3 - "$1" "$2" <<'PY'
import lzma, os, sys
from pathlib import Path
for f in Path(sys.argv[1]).glob("*.xz"):
    out = Path(sys.argv[2]) / f.stem
    out.write_bytes(lzma.decompress(f.read_bytes()))
    os.chmod(out, 0o755)
    print(f"unpacked {out}")
PY
}
