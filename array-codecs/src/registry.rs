//! The registry of codecs by label; its default lists every built-in codec.

use std::sync::Arc;

use crate::api::Codec;
use crate::Label;

/// Maps compression labels to codecs. [`CodecRegistry::default`] holds every built-in codec this
/// build has (one cargo feature each).
#[derive(Clone, Debug)]
pub struct CodecRegistry {
    codecs: Vec<Arc<dyn Codec>>,
}

impl Default for CodecRegistry {
    fn default() -> Self {
        CodecRegistry {
            codecs: vec![
                #[cfg(feature = "zlib")]
                Arc::new(crate::Zlib),
                #[cfg(feature = "bzip2")]
                Arc::new(crate::Bzip2),
                #[cfg(feature = "lz4")]
                Arc::new(crate::Lz4Chunked),
                #[cfg(feature = "lz4")]
                Arc::new(crate::Lz4Frame),
                #[cfg(feature = "zstd")]
                Arc::new(crate::Zstd),
                #[cfg(feature = "blosc")]
                Arc::new(crate::Blosc),
                #[cfg(feature = "xz")]
                Arc::new(crate::Xz),
                #[cfg(feature = "bls2")]
                Arc::new(crate::Blosc2),
            ],
        }
    }
}

impl CodecRegistry {
    /// A registry with no codecs (only uncompressed blocks can be read).
    pub fn empty() -> Self {
        CodecRegistry { codecs: Vec::new() }
    }

    /// Adds a codec, replacing any codec with the same label.
    pub fn register(&mut self, codec: Arc<dyn Codec>) {
        let label = codec.label();
        self.codecs.retain(|c| c.label() != label);
        self.codecs.push(codec);
    }

    /// The codec for `label`, if registered.
    pub fn get(&self, label: Label) -> Option<&dyn Codec> {
        self.codecs
            .iter()
            .find(|c| c.label() == label)
            .map(|c| c.as_ref())
    }

    /// The codec with this name (`"zlib"`, `"lz4"`, `"xz"`, ...), if registered.
    pub fn by_name(&self, name: &str) -> Option<&dyn Codec> {
        self.codecs
            .iter()
            .find(|c| c.name() == name)
            .map(|c| c.as_ref())
    }

    /// The labels of all registered codecs, in registration order.
    pub fn labels(&self) -> impl Iterator<Item = Label> + '_ {
        self.codecs.iter().map(|c| c.label())
    }

    /// The names of all registered codecs, in registration order (`zlib`, `bzp2`, `lz4`, ...).
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.codecs.iter().map(|c| c.name())
    }

    /// The labels as a comma-separated list, for messages.
    pub fn known(&self) -> String {
        let names: Vec<String> = self.labels().map(|l| l.to_string()).collect();
        names.join(", ")
    }
}
