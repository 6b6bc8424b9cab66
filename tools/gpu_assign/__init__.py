"""Local GPU assignment for `bazel test --config=gpu` (stdlib only: it runs inside Bazel's sandbox)."""
