//! Byte order of stored values.

/// Byte order of stored values.
///
/// ```
/// use array_core::ByteOrder;
/// assert_eq!(ByteOrder::from_name("big"), Some(ByteOrder::Big));
/// assert_eq!(ByteOrder::Little.name(), "little");
/// assert!(ByteOrder::NATIVE.is_native());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ByteOrder {
    /// Least significant byte first.
    #[default]
    Little,
    /// Most significant byte first.
    Big,
}

impl ByteOrder {
    /// The byte order of this machine.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };

    /// `"little"` or `"big"`, as ASDF trees write it.
    pub fn name(self) -> &'static str {
        match self {
            ByteOrder::Little => "little",
            ByteOrder::Big => "big",
        }
    }

    /// Parses `"little"` or `"big"`.
    pub fn from_name(s: &str) -> Option<ByteOrder> {
        match s {
            "little" => Some(ByteOrder::Little),
            "big" => Some(ByteOrder::Big),
            _ => None,
        }
    }

    /// Whether this is the machine's byte order.
    pub fn is_native(self) -> bool {
        self == ByteOrder::NATIVE
    }

    /// NumPy's byte-order character: `'<'` or `'>'`.
    pub fn numpy_char(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
        }
    }
}
