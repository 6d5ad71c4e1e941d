//! The `.pair` text format: scanner with positions, parser and canonical printer.
