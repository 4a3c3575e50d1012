//! Violations and reports.

use std::fmt;

/// One broken rule: where (a JSON Pointer into the tree, `""` for the root), which rule
/// (a schema keyword such as `required`, `type`, `tag`, `datatype`, or a built-in rule such as
/// `strides-length`) and a human-readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer (RFC 6901) of the offending node; `""` is the root.
    pub pointer: String,
    /// The rule broken (a schema keyword or a built-in rule name).
    pub rule: String,
    /// What was expected and what was found.
    pub message: String,
}

impl Violation {
    /// Builds a violation.
    pub fn new(
        pointer: impl Into<String>,
        rule: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Violation {
            pointer: pointer.into(),
            rule: rule.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: [{}] {}", self.rule, self.message)
    }
}

/// The result of a validation: every violation found (empty when valid).
///
/// ```
/// use asdf_schema::{Report, Violation};
/// let r = Report::new(vec![Violation::new("/a", "required", "'version' is a required property")]);
/// assert!(!r.is_valid());
/// assert_eq!(r.to_string(), "1 violation:\n  /a: [required] 'version' is a required property\n");
/// assert_eq!(Report::default().to_string(), "valid\n");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The violations, in tree order.
    pub violations: Vec<Violation>,
}

impl Report {
    /// A report from a list of violations.
    pub fn new(violations: Vec<Violation>) -> Self {
        Report { violations }
    }

    /// Whether no rule is broken.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    /// Violations at a given pointer.
    pub fn at<'a>(&'a self, pointer: &'a str) -> impl Iterator<Item = &'a Violation> + 'a {
        self.violations.iter().filter(move |v| v.pointer == pointer)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.violations.is_empty() {
            return writeln!(f, "valid");
        }
        let n = self.violations.len();
        writeln!(f, "{n} violation{}:", if n == 1 { "" } else { "s" })?;
        for v in &self.violations {
            writeln!(f, "  {v}")?;
        }
        Ok(())
    }
}
