"""The Starlark half of the contract's parity test: contract_cases.json through contract.bzl and tags.bzl.

The Python half is tests/tools/contract/test_contract_parity.py, which also checks that
contract_cases.bzl (the JSON as a Starlark string) is current. Key resolution has no Starlark twin:
the runner resolves keys at run time with tools/contract/runtime.py itself.
"""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# buildifier: disable=bzl-visibility (tests of the private helpers)
load("//rules/private:contract.bzl", "canonical_path", "validate_classification")

# buildifier: disable=bzl-visibility (tests of the private helpers)
load("//rules/private:tags.bzl", "parse_tags", "part_tags")
load(":contract_cases.bzl", "CASES")

def _validator_test_impl(ctx):
    env = unittest.begin(ctx)
    for case in CASES["validate"]:
        error = validate_classification(case["data"], "cases")
        if case["error"] == None:
            asserts.equals(env, None, error, "%s: should be valid" % case["name"])
        else:
            asserts.true(env, error != None and case["error"] in error, "%s: expected an error with %r, got %r" % (case["name"], case["error"], error))
    return unittest.end(env)

validator_test = unittest.make(_validator_test_impl)

def _paths_test_impl(ctx):
    env = unittest.begin(ctx)
    for case in CASES["paths"]:
        asserts.equals(env, case["canonical"], canonical_path(case["path"]), "canonical_path(%r)" % case["path"])
    return unittest.end(env)

paths_test = unittest.make(_paths_test_impl)

def _format_test_impl(ctx):
    env = unittest.begin(ctx)
    for case in CASES["format"]:
        args = case["args"]
        part = {
            "gpu_count": args.get("gpu_count", 0),
            "sources": {s: True for s in args["sources"]},
            "torch": args.get("torch", True),
            "unclassified": args.get("unclassified", False),
            "vram_gb": args.get("vram_gb", 0),
        }
        got = part_tags(
            args["device"],
            part,
            cuda_min = args.get("cuda_min"),
            gpu_model = args.get("gpu_model"),
            gpu_interconnect = args.get("gpu_interconnect"),
        )
        asserts.equals(env, case["tags"], got, case["name"])
    return unittest.end(env)

format_test = unittest.make(_format_test_impl)

def _parse_test_impl(ctx):
    env = unittest.begin(ctx)
    for case in CASES["parse"]:
        got = parse_tags(case["tags"])
        if "error" in case:
            asserts.true(env, got["error"] != None and case["error"] in got["error"], "%r: expected an error with %r, got %r" % (case["tags"], case["error"], got["error"]))
        else:
            asserts.equals(env, None, got["error"], "%r: unexpected error" % case["tags"])
            asserts.equals(env, case["values"], got["values"], "%r" % case["tags"])
    return unittest.end(env)

parse_test = unittest.make(_parse_test_impl)

def contract_parity_test_suite(name):
    """Every section of contract_cases.json that has a Starlark twin, as one test_suite.

    Args:
      name: the test_suite's name.
    """
    unittest.suite(name, validator_test, paths_test, format_test, parse_test)
