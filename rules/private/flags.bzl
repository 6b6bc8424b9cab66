"""Build settings of //rules: the torch lock switch and the default of flags that must be set."""

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

def _unset_label_flag_impl(ctx):
    fail(ctx.attr.message)

unset_label_flag = rule(
    implementation = _unset_label_flag_impl,
    attrs = {"message": attr.string(mandatory = True, doc = "What to set, and where.")},
    doc = "The default of a `label_flag` that must be set: analysing it fails with `message`.",
)
