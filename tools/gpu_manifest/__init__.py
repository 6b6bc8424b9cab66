"""Export Bazel GPU test targets into a versioned planner manifest (docs/manifest.md)."""
