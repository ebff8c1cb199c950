"""The request-time pipeline's default knobs (spec/context-pipeline.md), in one import-free place:
``core.context.pipeline.PipelineConfig`` and ``resources.settings_schema.PipelineSettings`` both
take their defaults from here (the settings must not import the pipeline itself: it costs a print
run ~17 ms to load)."""

SNIP_MAX_GROUPS = 50
SNIP_KEEP_FIRST = 3
SNIP_KEEP_LAST = 46
MICRO_KEEP_RECENT = 3
SUMMARY_THRESHOLD_BYTES = 50_000
CACHE_AWARE_PROTECT_TOKENS = 40_000
CACHE_AWARE_MIN_GAIN_TOKENS = 20_000
