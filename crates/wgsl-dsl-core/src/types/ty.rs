//! The untyped descriptions of WGSL types: [`Ty`] (what lowering turns into a `naga::Type`),
//! [`ScalarTy`], and the plain enums a `Ty` holds ([`CoopRole`], [`TextureTy`] with its
//! [`TexelFormat`] and [`TextureAccess`]). Below the typed markers and traits of `types`,
//! `types::coop` and `types::texture`, which all describe themselves with them; each is
//! re-exported where users name it (`types::Ty`, `types::coop::CoopRole`,
//! `types::texture::TextureTy`, ...).

/// The scalar types WGSL knows (WGSL spec §6.2 "Plain Types").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarTy {
    /// `bool`
    Bool,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `f32`
    F32,
    /// `f16`
    F16,
}

impl ScalarTy {
    /// The naga scalar for this type.
    pub fn naga(self) -> naga::Scalar {
        match self {
            ScalarTy::Bool => naga::Scalar::BOOL,
            ScalarTy::I32 => naga::Scalar::I32,
            ScalarTy::U32 => naga::Scalar::U32,
            ScalarTy::F32 => naga::Scalar::F32,
            ScalarTy::F16 => naga::Scalar::F16,
        }
    }

    /// The WGSL spelling.
    pub fn wgsl_name(self) -> &'static str {
        match self {
            ScalarTy::Bool => "bool",
            ScalarTy::I32 => "i32",
            ScalarTy::U32 => "u32",
            ScalarTy::F32 => "f32",
            ScalarTy::F16 => "f16",
        }
    }
}

/// A WGSL type, untyped: what lowering turns into a `naga::Type`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// A scalar.
    Scalar(ScalarTy),
    /// `vecN<T>`, `N` in 2..=4.
    Vector(u8, ScalarTy),
    /// `matCxR<f32>`.
    Matrix {
        /// Number of columns.
        columns: u8,
        /// Number of rows.
        rows: u8,
        /// Element type.
        scalar: ScalarTy,
    },
    /// `array<T, N>` (`len: Some(N)`) or `array<T>` (`len: None`, runtime-sized).
    Array {
        /// Element type.
        elem: Box<Ty>,
        /// Element count, `None` when runtime-sized.
        len: Option<u32>,
    },
    /// `atomic<T>`.
    Atomic(ScalarTy),
    /// `coop_matCxR<T, role>`: a cooperative matrix of `rows x columns` (8 or 16 each).
    CoopMatrix {
        /// Number of rows.
        rows: u8,
        /// Number of columns.
        columns: u8,
        /// Element type (`f16` or `f32`).
        scalar: ScalarTy,
        /// Its role in `A * B + C`.
        role: CoopRole,
    },
    /// A texture binding (WGSL spec §6.5): its handle, not memory.
    Texture(TextureTy),
    /// A struct: its WGSL name and its members in declaration order.
    Struct {
        /// The struct's WGSL name.
        name: &'static str,
        /// `(field name, field type)` in declaration order.
        members: Vec<(&'static str, Ty)>,
    },
}

impl Ty {
    /// The WGSL spelling of this type, for messages.
    pub fn wgsl_name(&self) -> String {
        match self {
            Ty::Scalar(s) => s.wgsl_name().to_string(),
            Ty::Vector(n, s) => format!("vec{n}<{}>", s.wgsl_name()),
            Ty::Matrix {
                columns,
                rows,
                scalar,
            } => format!("mat{columns}x{rows}<{}>", scalar.wgsl_name()),
            Ty::Array { elem, len: Some(n) } => format!("array<{}, {n}>", elem.wgsl_name()),
            Ty::Array { elem, len: None } => format!("array<{}>", elem.wgsl_name()),
            Ty::Atomic(s) => format!("atomic<{}>", s.wgsl_name()),
            Ty::CoopMatrix {
                rows,
                columns,
                scalar,
                role,
            } => format!(
                "coop_mat{columns}x{rows}<{}, {}>",
                scalar.wgsl_name(),
                role.wgsl_name()
            ),
            Ty::Struct { name, .. } => name.to_string(),
            Ty::Texture(t) => t.wgsl_name(),
        }
    }

    /// True if this type is, or contains, `f16`.
    pub fn uses_f16(&self) -> bool {
        match self {
            Ty::Scalar(s) | Ty::Vector(_, s) | Ty::Atomic(s) => *s == ScalarTy::F16,
            Ty::Matrix { scalar, .. } | Ty::CoopMatrix { scalar, .. } => *scalar == ScalarTy::F16,
            Ty::Array { elem, .. } => elem.uses_f16(),
            Ty::Struct { members, .. } => members.iter().any(|(_, t)| t.uses_f16()),
            Ty::Texture(_) => false,
        }
    }

    /// True if this type is, or contains, a cooperative matrix.
    pub fn uses_cooperative_matrix(&self) -> bool {
        match self {
            Ty::CoopMatrix { .. } => true,
            Ty::Array { elem, .. } => elem.uses_cooperative_matrix(),
            Ty::Struct { members, .. } => members.iter().any(|(_, t)| t.uses_cooperative_matrix()),
            _ => false,
        }
    }

    /// The naga capabilities values of this type need (`SHADER_FLOAT16`, `COOPERATIVE_MATRIX`).
    pub fn capabilities(&self) -> naga::valid::Capabilities {
        let mut caps = naga::valid::Capabilities::empty();
        if self.uses_f16() {
            caps |= naga::valid::Capabilities::SHADER_FLOAT16;
        }
        if self.uses_cooperative_matrix() {
            caps |= naga::valid::Capabilities::COOPERATIVE_MATRIX;
        }
        caps
    }
}

/// The role of a cooperative matrix in `A * B + C` (naga's `CooperativeRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoopRole {
    /// The left operand, `M x K`.
    A,
    /// The right operand, `K x N`.
    B,
    /// The accumulator and result, `M x N`.
    Accumulator,
}

impl CoopRole {
    /// naga's role.
    pub fn naga(self) -> naga::CooperativeRole {
        match self {
            CoopRole::A => naga::CooperativeRole::A,
            CoopRole::B => naga::CooperativeRole::B,
            CoopRole::Accumulator => naga::CooperativeRole::C,
        }
    }

    /// The WGSL spelling of the role parameter (`A`, `B`, `C`).
    pub fn wgsl_name(self) -> &'static str {
        match self {
            CoopRole::A => "A",
            CoopRole::B => "B",
            CoopRole::Accumulator => "C",
        }
    }
}

/// A texel format of a storage texture (WGSL spec §6.5.6 "Texel Formats").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexelFormat {
    /// `r32float`: one `f32` channel.
    R32Float,
    /// `r32uint`: one `u32` channel.
    R32Uint,
    /// `r32sint`: one `i32` channel.
    R32Sint,
    /// `rgba8unorm`: four bytes, each read as `byte / 255.0` and written as
    /// `round(clamp(v, 0, 1) * 255)`.
    Rgba8Unorm,
    /// `rgba32float`: four `f32` channels.
    Rgba32Float,
    /// `rgba32uint`: four `u32` channels.
    Rgba32Uint,
    /// `rgba32sint`: four `i32` channels.
    Rgba32Sint,
}

impl TexelFormat {
    /// The WGSL spelling (`rgba8unorm`).
    pub fn wgsl_name(self) -> &'static str {
        match self {
            TexelFormat::R32Float => "r32float",
            TexelFormat::R32Uint => "r32uint",
            TexelFormat::R32Sint => "r32sint",
            TexelFormat::Rgba8Unorm => "rgba8unorm",
            TexelFormat::Rgba32Float => "rgba32float",
            TexelFormat::Rgba32Uint => "rgba32uint",
            TexelFormat::Rgba32Sint => "rgba32sint",
        }
    }

    /// The channel type: the element type of the `vec4` that `textureLoad` returns and
    /// `textureStore` takes (WGSL spec §6.5.6).
    pub fn channel(self) -> ScalarTy {
        match self {
            TexelFormat::R32Float | TexelFormat::Rgba8Unorm | TexelFormat::Rgba32Float => {
                ScalarTy::F32
            }
            TexelFormat::R32Uint | TexelFormat::Rgba32Uint => ScalarTy::U32,
            TexelFormat::R32Sint | TexelFormat::Rgba32Sint => ScalarTy::I32,
        }
    }

    /// Bytes of one texel.
    pub fn bytes_per_texel(self) -> u32 {
        match self {
            TexelFormat::R32Float | TexelFormat::R32Uint | TexelFormat::R32Sint => 4,
            TexelFormat::Rgba8Unorm => 4,
            TexelFormat::Rgba32Float | TexelFormat::Rgba32Uint | TexelFormat::Rgba32Sint => 16,
        }
    }

    pub(crate) fn naga(self) -> naga::StorageFormat {
        use naga::StorageFormat as S;
        match self {
            TexelFormat::R32Float => S::R32Float,
            TexelFormat::R32Uint => S::R32Uint,
            TexelFormat::R32Sint => S::R32Sint,
            TexelFormat::Rgba8Unorm => S::Rgba8Unorm,
            TexelFormat::Rgba32Float => S::Rgba32Float,
            TexelFormat::Rgba32Uint => S::Rgba32Uint,
            TexelFormat::Rgba32Sint => S::Rgba32Sint,
        }
    }
}

/// The access mode of a storage texture (WGSL spec §6.5.5 "Storage Texture Types"; `read` and
/// `read_write` need the format's support for them: every format above supports `read`, the
/// `r32` ones `read_write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureAccess {
    /// `read`: `textureLoad` only.
    Read,
    /// `write`: `textureStore` only.
    Write,
    /// `read_write`: both.
    ReadWrite,
}

impl TextureAccess {
    /// The WGSL spelling.
    pub fn wgsl_name(self) -> &'static str {
        match self {
            TextureAccess::Read => "read",
            TextureAccess::Write => "write",
            TextureAccess::ReadWrite => "read_write",
        }
    }

    /// True for `write` and `read_write`.
    pub fn writes(self) -> bool {
        self != TextureAccess::Read
    }

    pub(crate) fn naga(self) -> naga::StorageAccess {
        match self {
            TextureAccess::Read => naga::StorageAccess::LOAD,
            TextureAccess::Write => naga::StorageAccess::STORE,
            TextureAccess::ReadWrite => naga::StorageAccess::LOAD | naga::StorageAccess::STORE,
        }
    }
}

/// The type of a texture binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureTy {
    /// `texture_storage_2d<format, access>`.
    Storage {
        /// The texel format.
        format: TexelFormat,
        /// The access mode.
        access: TextureAccess,
    },
    /// `texture_2d<T>`, `T` being `f32`, `i32` or `u32` (read with `textureLoad` at a mip
    /// level; bound as an unfilterable texture).
    Sampled(ScalarTy),
}

impl TextureTy {
    /// The WGSL spelling (`texture_storage_2d<rgba8unorm, write>`).
    pub fn wgsl_name(self) -> String {
        match self {
            TextureTy::Storage { format, access } => format!(
                "texture_storage_2d<{}, {}>",
                format.wgsl_name(),
                access.wgsl_name()
            ),
            TextureTy::Sampled(s) => format!("texture_2d<{}>", s.wgsl_name()),
        }
    }

    /// True for a storage texture written by the kernel.
    pub fn writes(self) -> bool {
        matches!(self, TextureTy::Storage { access, .. } if access.writes())
    }

    /// True if a texture of `format` can be bound here: the same format for a storage
    /// texture, a format of channel type `T` for a `texture_2d<T>`.
    pub fn accepts(self, format: TexelFormat) -> bool {
        match self {
            TextureTy::Storage { format: f, .. } => f == format,
            TextureTy::Sampled(s) => format.channel() == s,
        }
    }
}
