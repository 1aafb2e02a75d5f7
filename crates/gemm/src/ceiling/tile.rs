//! [`CeilingTile`]: the tiles the ceiling kernel is compiled for, each with its SPIR-V module,
//! and the shape of its workgroups.

use crate::{Layout, Problem};

/// The invocations of one workgroup of the ceiling kernel (4 x 2 subgroups of 32).
pub const WORKGROUP_SIZE: u32 = 256;

/// The subgroup size the kernel assumes (`gl_SubgroupID` picks a subgroup's part of the tile).
pub const SUBGROUP_SIZE: u32 = 32;

/// A workgroup tile of the ceiling kernel: `m x n` elements of `C`, `K` walked `k` at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CeilingTile {
    /// Rows of `C` per workgroup (`TILE_M`).
    pub m: u32,
    /// Columns of `C` per workgroup (`TILE_N`).
    pub n: u32,
    /// The `K` slice staged in workgroup memory per step (`TILE_K`).
    pub k: u32,
}

/// Every tile a module is compiled for: the sample's 128- and 256-wide tiles (it runs 128x128,
/// 128x256, 256x128 and 256x256) with `K` slices of 16, 32 and 64, less those whose workgroup
/// memory exceeds the 48 KiB NVIDIA's Vulkan driver offers (256x128x64 and 128x256x64 need
/// 53 and 51 KiB) and 256x256, which the sample leaves out for `f32` results (32 accumulator
/// fragments per subgroup: "too slow and may TDR").
pub const CEILING_TILES: [CeilingTile; 7] = [
    CeilingTile::new(128, 128, 16),
    CeilingTile::new(128, 128, 32),
    CeilingTile::new(128, 128, 64),
    CeilingTile::new(256, 128, 16),
    CeilingTile::new(256, 128, 32),
    CeilingTile::new(128, 256, 16),
    CeilingTile::new(128, 256, 32),
];

/// The SPIR-V of each of [`CEILING_TILES`], as `shaders/compile.sh` writes it.
const MODULES: [(CeilingTile, &[u8]); 7] = [
    (
        CEILING_TILES[0],
        include_bytes!("../../shaders/ceiling_128x128x16.spv"),
    ),
    (
        CEILING_TILES[1],
        include_bytes!("../../shaders/ceiling_128x128x32.spv"),
    ),
    (
        CEILING_TILES[2],
        include_bytes!("../../shaders/ceiling_128x128x64.spv"),
    ),
    (
        CEILING_TILES[3],
        include_bytes!("../../shaders/ceiling_256x128x16.spv"),
    ),
    (
        CEILING_TILES[4],
        include_bytes!("../../shaders/ceiling_256x128x32.spv"),
    ),
    (
        CEILING_TILES[5],
        include_bytes!("../../shaders/ceiling_128x256x16.spv"),
    ),
    (
        CEILING_TILES[6],
        include_bytes!("../../shaders/ceiling_128x256x32.spv"),
    ),
];

impl CeilingTile {
    /// The tile `m x n`, slices of `k`.
    pub const fn new(m: u32, n: u32, k: u32) -> CeilingTile {
        CeilingTile { m, n, k }
    }

    /// `ceiling_{m}x{n}x{k}`, the name of its module.
    pub fn name(&self) -> String {
        format!("ceiling_{}x{}x{}", self.m, self.n, self.k)
    }

    /// Bytes of workgroup memory the kernel declares: the `m x k` tile of `A` and the `k x n`
    /// tile of `B`, `f16`, each row padded by 8 elements (16 bytes).
    pub fn workgroup_bytes(&self) -> u32 {
        2 * (self.m * (self.k + 8) + self.k * (self.n + 8))
    }

    /// True when the kernel computes `problem`: layout [`Layout::AB`], and `M`, `N`, `K`
    /// non-zero multiples of the tile's `m`, `n`, `k`.
    pub fn divides(&self, problem: &Problem) -> bool {
        problem.layout == Layout::AB
            && problem.m > 0
            && problem.n > 0
            && problem.k > 0
            && problem.m.is_multiple_of(self.m)
            && problem.n.is_multiple_of(self.n)
            && problem.k.is_multiple_of(self.k)
    }

    /// Workgroups for `problem`: `[N / n, M / m, 1]`.
    pub fn grid(&self, problem: &Problem) -> [u32; 3] {
        [problem.n / self.n, problem.m / self.m, 1]
    }

    /// A problem the tile divides with odd multiples of it, for checking every element:
    /// `3 m x 5 n x 7 k` (e.g. 384 x 640 x 224 for 128x128x32).
    pub fn check_problem(&self) -> Problem {
        Problem::new(3 * self.m, 5 * self.n, 7 * self.k, Layout::AB)
    }

    /// The compiled module's bytes, `None` for a tile that has none.
    pub fn spirv(&self) -> Option<&'static [u8]> {
        MODULES
            .iter()
            .find(|(t, _)| t == self)
            .map(|&(_, bytes)| bytes)
    }
}

impl std::fmt::Display for CeilingTile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}
