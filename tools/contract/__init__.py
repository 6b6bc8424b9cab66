"""The pipeline's contract: the formats and names that join classify, the rules, the runner, the GPU
wrapper, the manifest exporter, the planner's renderers and the feedback loop.

One owner per format (docs/tags.md, "Who owns the contract"):

* `classification` - the classification file's schema, validator, file-label rules and I/O;
* `runtime` - test keys (node id -> classification key) and the environment variables between the
  macro, the runner, the GPU wrapper and the renderers (standard library only: the Bazel runner loads it);
* `tags` - the tag vocabulary, formatted and parsed.

The Starlark twins are rules/private/contract.bzl and tags.bzl; tests/rules/contract_cases.json feeds both.
"""
