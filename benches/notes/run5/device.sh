# Sourced by chunks.sh and side_by_side.sh: the device's set-up. Run from the repository root on
# the device, with .gl (the Vulkan loader debs) carried and D a directory holding the release
# binary `mnist` and `mnist-nopipe` (benches/notes/run5/); P is the peers' folder.
set -u
. benches/notes/device_env.sh
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
D=${D:-.dev/lead}
P=benches/peer
