"""A string build setting, so `--//rules:torch_lock=cu124` can switch the torch lock file."""

def _string_setting_impl(ctx):
    value = ctx.build_setting_value
    if value not in ctx.attr.values:
        fail("--%s=%s: must be one of %s" % (ctx.label, value, ", ".join(ctx.attr.values)))
    return []

string_setting = rule(
    implementation = _string_setting_impl,
    build_setting = config.string(flag = True),
    attrs = {"values": attr.string_list(mandatory = True, doc = "Allowed values.")},
    doc = "A command-line string flag restricted to `values` (like bazel_skylib's string_flag).",
)
