//! The compaction packer: assigns surviving scalar varyings to vec4 slots.
