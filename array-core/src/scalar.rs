//! Scalar element types: one enum for every format, every property an exhaustive `match`.

use std::fmt;

/// A scalar element type.
///
/// The names are the ASDF Standard's (`ndarray-1.1.0`); `int128`, `uint128` and `complex32`
/// (two `float16`) are ASDF.jl/asdf-cxx and RawArray extensions that NumPy-based peers cannot
/// hold. Adding a type here makes every `match` in the workspace that must handle it fail to
/// compile until it does.
///
/// ```
/// use array_core::ScalarType;
/// for t in ScalarType::ALL {
///     assert_eq!(ScalarType::from_name(t.name()), Some(t));
/// }
/// assert_eq!(ScalarType::Complex64.swap_unit(), 4);
/// assert_eq!(ScalarType::Bool8.numpy_code(), Some(('b', 1)));
/// assert_eq!(ScalarType::Complex32.numpy_code(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// Signed 8-bit integer.
    Int8,
    /// Signed 16-bit integer.
    Int16,
    /// Signed 32-bit integer.
    Int32,
    /// Signed 64-bit integer.
    Int64,
    /// Signed 128-bit integer (not in the ASDF Standard).
    Int128,
    /// Unsigned 8-bit integer.
    UInt8,
    /// Unsigned 16-bit integer.
    UInt16,
    /// Unsigned 32-bit integer.
    UInt32,
    /// Unsigned 64-bit integer.
    UInt64,
    /// Unsigned 128-bit integer (not in the ASDF Standard).
    UInt128,
    /// IEEE 754 binary16.
    Float16,
    /// IEEE 754 binary32.
    Float32,
    /// IEEE 754 binary64.
    Float64,
    /// Complex of two binary16 (not in the ASDF Standard).
    Complex32,
    /// Complex of two binary32.
    Complex64,
    /// Complex of two binary64.
    Complex128,
    /// Boolean, one byte, nonzero is true.
    Bool8,
}

impl ScalarType {
    /// Every scalar type, in the ASDF Standard's order.
    pub const ALL: [ScalarType; 17] = [
        ScalarType::Int8,
        ScalarType::Int16,
        ScalarType::Int32,
        ScalarType::Int64,
        ScalarType::Int128,
        ScalarType::UInt8,
        ScalarType::UInt16,
        ScalarType::UInt32,
        ScalarType::UInt64,
        ScalarType::UInt128,
        ScalarType::Float16,
        ScalarType::Float32,
        ScalarType::Float64,
        ScalarType::Complex32,
        ScalarType::Complex64,
        ScalarType::Complex128,
        ScalarType::Bool8,
    ];

    /// The ASDF name (`"float64"`).
    pub fn name(self) -> &'static str {
        use ScalarType::*;
        match self {
            Int8 => "int8",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            Int128 => "int128",
            UInt8 => "uint8",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
            UInt128 => "uint128",
            Float16 => "float16",
            Float32 => "float32",
            Float64 => "float64",
            Complex32 => "complex32",
            Complex64 => "complex64",
            Complex128 => "complex128",
            Bool8 => "bool8",
        }
    }

    /// Parses an ASDF name.
    pub fn from_name(s: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Size of one value in bytes.
    pub fn size(self) -> usize {
        use ScalarType::*;
        match self {
            Int8 | UInt8 | Bool8 => 1,
            Int16 | UInt16 | Float16 => 2,
            Int32 | UInt32 | Float32 | Complex32 => 4,
            Int64 | UInt64 | Float64 | Complex64 => 8,
            Int128 | UInt128 | Complex128 => 16,
        }
    }

    /// Size of the unit that byte swapping reverses (each half of a complex separately).
    pub fn swap_unit(self) -> usize {
        if self.is_complex() {
            self.size() / 2
        } else {
            self.size()
        }
    }

    /// Whether this type is part of the ASDF Standard (`ndarray-1.1.0`).
    pub fn is_standard(self) -> bool {
        !matches!(
            self,
            ScalarType::Int128 | ScalarType::UInt128 | ScalarType::Complex32
        )
    }

    /// Whether this is a complex type.
    pub fn is_complex(self) -> bool {
        matches!(
            self,
            ScalarType::Complex32 | ScalarType::Complex64 | ScalarType::Complex128
        )
    }

    /// Whether this is a signed integer type.
    pub fn is_signed_int(self) -> bool {
        use ScalarType::*;
        matches!(self, Int8 | Int16 | Int32 | Int64 | Int128)
    }

    /// Whether this is an unsigned integer type.
    pub fn is_unsigned_int(self) -> bool {
        use ScalarType::*;
        matches!(self, UInt8 | UInt16 | UInt32 | UInt64 | UInt128)
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        use ScalarType::*;
        matches!(self, Float16 | Float32 | Float64)
    }

    /// NumPy's kind character and item size (`('f', 8)` for `float64`), or `None` for the
    /// types NumPy has no dtype for (`int128`, `uint128`, `complex32`).
    pub fn numpy_code(self) -> Option<(char, usize)> {
        use ScalarType::*;
        let kind = match self {
            Int128 | UInt128 | Complex32 => return None,
            Int8 | Int16 | Int32 | Int64 => 'i',
            UInt8 | UInt16 | UInt32 | UInt64 => 'u',
            Float16 | Float32 | Float64 => 'f',
            Complex64 | Complex128 => 'c',
            Bool8 => 'b',
        };
        Some((kind, self.size()))
    }

    /// The type NumPy calls `kind` + `size` (`('u', 2)` → `uint16`).
    pub fn from_numpy_code(kind: char, size: usize) -> Option<ScalarType> {
        ScalarType::ALL
            .into_iter()
            .find(|t| t.numpy_code() == Some((kind, size)))
    }

    /// NumPy's name for the type (`str(dtype)`: `"bool"` for `bool8`), or `None` where NumPy
    /// has no such dtype.
    pub fn numpy_name(self) -> Option<&'static str> {
        match self {
            ScalarType::Bool8 => Some("bool"),
            t => t.numpy_code().map(|_| t.name()),
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_codes_and_sizes_agree() {
        for t in ScalarType::ALL {
            assert_eq!(ScalarType::from_name(t.name()), Some(t));
            assert!(t.size().is_power_of_two());
            assert_eq!(t.size() % t.swap_unit(), 0);
            if let Some((k, n)) = t.numpy_code() {
                assert_eq!(n, t.size());
                assert_eq!(ScalarType::from_numpy_code(k, n), Some(t));
                assert!(t.numpy_name().is_some());
            } else {
                assert!(!t.is_standard());
            }
        }
        assert_eq!(ScalarType::from_name("bool"), None);
        assert_eq!(ScalarType::from_numpy_code('f', 16), None);
    }
}
