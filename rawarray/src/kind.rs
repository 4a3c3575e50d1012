//! Element types (`eltype` + `elbyte`) and byte orders.

use std::fmt;

use array_core::ScalarType;

/// `eltype` code 0: user-defined records, carried as raw bytes.
pub const ELTYPE_USER: u64 = 0;
/// `eltype` code 1: signed integers.
pub const ELTYPE_INT: u64 = 1;
/// `eltype` code 2: unsigned integers.
pub const ELTYPE_UINT: u64 = 2;
/// `eltype` code 3: IEEE floats.
pub const ELTYPE_FLOAT: u64 = 3;
/// `eltype` code 4: complex numbers, pairs of IEEE floats; `elbyte` is the size of the pair.
pub const ELTYPE_COMPLEX: u64 = 4;
/// `eltype` code 5: Bool in RawArray.jl (`elbyte` 1, or 8 when bit-packed), bfloat16 in the
/// crates.io `rawarray` 0.1.x (`elbyte` 2).
pub const ELTYPE_BOOL_OR_BF16: u64 = 5;

/// The element type of a RawArray file, resolved from `eltype`, `elbyte` and the flags.
///
/// `eltype` 5 means Bool to RawArray.jl and bfloat16 to the crates.io `rawarray` 0.1.x; `elbyte`
/// tells them apart (1 or a bit-packed 8 = Bool, 2 = bfloat16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// `i8` (eltype 1, elbyte 1).
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `i128` (written by Julia and the Rust crate).
    I128,
    /// `u8` (eltype 2, elbyte 1).
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `u128`.
    U128,
    /// IEEE binary16 (eltype 3, elbyte 2).
    F16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// Complex of two binary16 (eltype 4, elbyte 4; Julia `ComplexF16`).
    C32,
    /// Complex of two `f32` (eltype 4, elbyte 8).
    C64,
    /// Complex of two `f64` (eltype 4, elbyte 16).
    C128,
    /// Bool, one byte 0/1 per element (eltype 5, elbyte 1; RawArray.jl).
    Bool,
    /// bfloat16 (eltype 5, elbyte 2; crates.io `rawarray` 0.1.x).
    BF16,
    /// User-defined records of `elbyte` bytes (eltype 0).
    User(u64),
}

impl ElementKind {
    /// The kind for an `eltype`/`elbyte` pair, or `None` if no writer produces that pair.
    ///
    /// `bit_packed` is flag bit 2 (Julia BitArray, stored with elbyte 8).
    ///
    /// ```
    /// use rawarray::ElementKind;
    /// assert_eq!(ElementKind::from_codes(4, 8, false), Some(ElementKind::C64));
    /// assert_eq!(ElementKind::from_codes(5, 1, false), Some(ElementKind::Bool));
    /// assert_eq!(ElementKind::from_codes(5, 2, false), Some(ElementKind::BF16));
    /// assert_eq!(ElementKind::from_codes(5, 8, true), Some(ElementKind::Bool));
    /// assert_eq!(ElementKind::from_codes(3, 3, false), None);
    /// ```
    pub fn from_codes(eltype: u64, elbyte: u64, bit_packed: bool) -> Option<ElementKind> {
        use ElementKind::*;
        Some(match (eltype, elbyte) {
            (ELTYPE_USER, n) if n > 0 => User(n),
            (ELTYPE_INT, 1) => I8,
            (ELTYPE_INT, 2) => I16,
            (ELTYPE_INT, 4) => I32,
            (ELTYPE_INT, 8) => I64,
            (ELTYPE_INT, 16) => I128,
            (ELTYPE_UINT, 1) => U8,
            (ELTYPE_UINT, 2) => U16,
            (ELTYPE_UINT, 4) => U32,
            (ELTYPE_UINT, 8) => U64,
            (ELTYPE_UINT, 16) => U128,
            (ELTYPE_FLOAT, 2) => F16,
            (ELTYPE_FLOAT, 4) => F32,
            (ELTYPE_FLOAT, 8) => F64,
            (ELTYPE_COMPLEX, 4) => C32,
            (ELTYPE_COMPLEX, 8) => C64,
            (ELTYPE_COMPLEX, 16) => C128,
            (ELTYPE_BOOL_OR_BF16, 8) if bit_packed => Bool,
            (ELTYPE_BOOL_OR_BF16, 1) => Bool,
            (ELTYPE_BOOL_OR_BF16, 2) => BF16,
            _ => return None,
        })
    }

    /// The `eltype` code this kind is written with.
    pub fn eltype(self) -> u64 {
        use ElementKind::*;
        match self {
            I8 | I16 | I32 | I64 | I128 => ELTYPE_INT,
            U8 | U16 | U32 | U64 | U128 => ELTYPE_UINT,
            F16 | F32 | F64 => ELTYPE_FLOAT,
            C32 | C64 | C128 => ELTYPE_COMPLEX,
            Bool | BF16 => ELTYPE_BOOL_OR_BF16,
            User(_) => ELTYPE_USER,
        }
    }

    /// Bytes per element in decoded (unpacked) form: the `elbyte` of an unpacked file.
    pub fn size(self) -> u64 {
        use ElementKind::*;
        match self {
            I8 | U8 | Bool => 1,
            I16 | U16 | F16 | BF16 => 2,
            I32 | U32 | F32 | C32 => 4,
            I64 | U64 | F64 | C64 => 8,
            I128 | U128 | C128 => 16,
            User(n) => n,
        }
    }

    /// Size of the scalar that byte swapping works on (a complex swaps each half separately).
    /// `None` for user records, whose layout only the caller knows.
    pub fn swap_unit(self) -> Option<u64> {
        match self {
            ElementKind::User(_) => None,
            ElementKind::C32 | ElementKind::C64 | ElementKind::C128 => Some(self.size() / 2),
            _ => Some(self.size()),
        }
    }

    /// Whether Julia's LEB128 varint encoding applies (integers and Bool).
    pub fn is_integer_like(self) -> bool {
        use ElementKind::*;
        matches!(
            self,
            I8 | I16 | I32 | I64 | I128 | U8 | U16 | U32 | U64 | U128 | Bool
        )
    }

    /// The workspace scalar type with the same bytes, `None` for bfloat16 and user records.
    ///
    /// ```
    /// use rawarray::ElementKind;
    /// use array_core::ScalarType;
    /// assert_eq!(ElementKind::Bool.scalar(), Some(ScalarType::Bool8));
    /// assert_eq!(ElementKind::BF16.scalar(), None);
    /// ```
    pub fn scalar(self) -> Option<ScalarType> {
        use ElementKind::*;
        Some(match self {
            I8 => ScalarType::Int8,
            I16 => ScalarType::Int16,
            I32 => ScalarType::Int32,
            I64 => ScalarType::Int64,
            I128 => ScalarType::Int128,
            U8 => ScalarType::UInt8,
            U16 => ScalarType::UInt16,
            U32 => ScalarType::UInt32,
            U64 => ScalarType::UInt64,
            U128 => ScalarType::UInt128,
            F16 => ScalarType::Float16,
            F32 => ScalarType::Float32,
            F64 => ScalarType::Float64,
            C32 => ScalarType::Complex32,
            C64 => ScalarType::Complex64,
            C128 => ScalarType::Complex128,
            Bool => ScalarType::Bool8,
            BF16 | User(_) => return None,
        })
    }

    /// The RawArray kind of a workspace scalar type (every one has one).
    pub fn from_scalar(t: ScalarType) -> ElementKind {
        use ElementKind::*;
        match t {
            ScalarType::Int8 => I8,
            ScalarType::Int16 => I16,
            ScalarType::Int32 => I32,
            ScalarType::Int64 => I64,
            ScalarType::Int128 => I128,
            ScalarType::UInt8 => U8,
            ScalarType::UInt16 => U16,
            ScalarType::UInt32 => U32,
            ScalarType::UInt64 => U64,
            ScalarType::UInt128 => U128,
            ScalarType::Float16 => F16,
            ScalarType::Float32 => F32,
            ScalarType::Float64 => F64,
            ScalarType::Complex32 => C32,
            ScalarType::Complex64 => C64,
            ScalarType::Complex128 => C128,
            ScalarType::Bool8 => Bool,
        }
    }

    /// Whether the kind is a signed integer (zigzag-encoded under LEB128).
    pub fn is_signed_int(self) -> bool {
        use ElementKind::*;
        matches!(self, I8 | I16 | I32 | I64 | I128)
    }
}

impl fmt::Display for ElementKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ElementKind::*;
        let s = match self {
            I8 => "int8",
            I16 => "int16",
            I32 => "int32",
            I64 => "int64",
            I128 => "int128",
            U8 => "uint8",
            U16 => "uint16",
            U32 => "uint32",
            U64 => "uint64",
            U128 => "uint128",
            F16 => "float16",
            F32 => "float32",
            F64 => "float64",
            C32 => "complex32 (2 x float16)",
            C64 => "complex64",
            C128 => "complex128",
            Bool => "bool",
            BF16 => "bfloat16",
            User(n) => return write!(f, "user records of {n} bytes (eltype 0)"),
        };
        write!(f, "{s} (eltype {}, elbyte {})", self.eltype(), self.size())
    }
}

/// Byte order of the data segment (flag bit 0) or of the header fields (the workspace's one
/// byte-order type, from `array-core`).
pub use array_core::ByteOrder;
