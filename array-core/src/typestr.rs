//! NumPy's array-interface type strings (`descr` of a `.npy` header, `__array_interface__`'s
//! `typestr`): a byte-order character, a kind character and a size, e.g. `"<f8"`, `"|S7"`.

use std::fmt;

use crate::{ByteOrder, ScalarType};

/// What a type string holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeStrElement {
    /// A number or bool.
    Scalar(ScalarType),
    /// `S<n>`: `n` bytes, NUL-padded (ASDF's `[ascii, n]`).
    Bytes(usize),
    /// `U<n>`: `n` UCS-4 code units (ASDF's `[ucs4, n]`).
    Unicode(usize),
}

/// A parsed type string.
///
/// ```
/// use array_core::{ByteOrder, ScalarType, TypeStr, TypeStrElement};
/// let t = TypeStr::parse("<U5").unwrap();
/// assert_eq!(t.element, TypeStrElement::Unicode(5));
/// assert_eq!(t.to_string(), "<U5");
/// assert_eq!(TypeStr::scalar(ScalarType::UInt8, ByteOrder::Big).to_string(), "|u1");
/// assert!(TypeStr::parse("<M8[ns]").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeStr {
    /// The byte order, or `None` where it does not apply (`'|'`: one-byte types and bytes).
    pub order: Option<ByteOrder>,
    /// The element.
    pub element: TypeStrElement,
}

/// Why a type string was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeStrError {
    /// Not of the form `<order><kind><size>`.
    #[error("malformed NumPy type string {0:?}")]
    Malformed(String),
    /// Well formed, but a type this workspace does not store (datetimes, objects, voids, ...).
    #[error("NumPy type string {0:?} has no equivalent here")]
    Unsupported(String),
}

impl TypeStr {
    /// The type string of a scalar stored in `order` (`'|'` for one-byte types).
    pub fn scalar(t: ScalarType, order: ByteOrder) -> TypeStr {
        TypeStr {
            order: (t.size() > 1).then_some(order),
            element: TypeStrElement::Scalar(t),
        }
    }

    /// The scalar type, if the element is one.
    pub fn scalar_type(&self) -> Option<ScalarType> {
        match self.element {
            TypeStrElement::Scalar(t) => Some(t),
            TypeStrElement::Bytes(_) | TypeStrElement::Unicode(_) => None,
        }
    }

    /// The byte order data is stored in: the given one, or native where none applies.
    pub fn order_or_native(&self) -> ByteOrder {
        self.order.unwrap_or(ByteOrder::NATIVE)
    }

    /// Parses `<f8`, `>i4`, `|b1`, `=u2`, `|S7`, `<U3`.
    pub fn parse(s: &str) -> Result<TypeStr, TypeStrError> {
        let malformed = || TypeStrError::Malformed(s.to_string());
        let mut chars = s.chars();
        let order = match chars.next() {
            Some('<') => Some(ByteOrder::Little),
            Some('>') => Some(ByteOrder::Big),
            Some('=') => Some(ByteOrder::NATIVE),
            Some('|') => None,
            _ => return Err(malformed()),
        };
        let kind = chars.next().ok_or_else(malformed)?;
        let digits = chars.as_str();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            // Datetimes carry a unit (`<M8[ns]`): well formed, but not stored here.
            return Err(if matches!(kind, 'M' | 'm') && !digits.is_empty() {
                TypeStrError::Unsupported(s.to_string())
            } else {
                malformed()
            });
        }
        let size: usize = digits.parse().map_err(|_| malformed())?;
        let element = match kind {
            'S' => TypeStrElement::Bytes(size),
            'U' => TypeStrElement::Unicode(size),
            k => TypeStrElement::Scalar(
                ScalarType::from_numpy_code(k, size)
                    .ok_or_else(|| TypeStrError::Unsupported(s.to_string()))?,
            ),
        };
        Ok(TypeStr { order, element })
    }
}

impl TryFrom<ScalarType> for TypeStr {
    type Error = TypeStrError;

    /// The native-order type string of `t`; an error for types NumPy lacks.
    fn try_from(t: ScalarType) -> Result<TypeStr, TypeStrError> {
        match t.numpy_code() {
            Some(_) => Ok(TypeStr::scalar(t, ByteOrder::NATIVE)),
            None => Err(TypeStrError::Unsupported(t.name().to_string())),
        }
    }
}

impl fmt::Display for TypeStr {
    /// Formats the type string; a scalar NumPy lacks (`complex32`) is written with its ASDF
    /// kind and size (`<c4`), which NumPy refuses — check [`ScalarType::numpy_code`] first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let order = match self.order {
            None => '|',
            Some(o) => o.numpy_char(),
        };
        match self.element {
            TypeStrElement::Bytes(n) => write!(f, "|S{n}"),
            TypeStrElement::Unicode(n) => write!(f, "{order}U{n}"),
            TypeStrElement::Scalar(t) => {
                let (kind, size) = t.numpy_code().unwrap_or(('c', t.size()));
                let order = if size == 1 { '|' } else { order };
                write!(f, "{order}{kind}{size}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_numpy_scalar_round_trips() {
        for t in ScalarType::ALL {
            if t.numpy_code().is_none() {
                assert!(TypeStr::try_from(t).is_err());
                continue;
            }
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let ts = TypeStr::scalar(t, order);
                let back = TypeStr::parse(&ts.to_string()).unwrap();
                assert_eq!(back.scalar_type(), Some(t));
                assert_eq!(back.order, ts.order);
            }
        }
    }

    #[test]
    fn refusals_say_which() {
        for s in ["", "<", "f8", "<f", "<f8x", "<f-8", "?f8"] {
            assert!(
                matches!(TypeStr::parse(s), Err(TypeStrError::Malformed(_))),
                "{s}"
            );
        }
        for s in ["<M8[ns]", "|O8", "|V16", "<f16", "<c4", "<i16"] {
            assert!(
                matches!(TypeStr::parse(s), Err(TypeStrError::Unsupported(_))),
                "{s}"
            );
        }
        assert_eq!(
            TypeStr::parse("=u2").unwrap().order,
            Some(ByteOrder::NATIVE)
        );
        assert_eq!(
            TypeStr::parse("|S0").unwrap().element,
            TypeStrElement::Bytes(0)
        );
    }
}
