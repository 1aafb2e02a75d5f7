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
