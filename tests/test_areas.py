"""The area taxonomy: tag normalization, names and aliases, and the classifier."""
from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import seed_reports

from store.understanding.areas import (
    AREAS,
    UnknownArea,
    _parse_rules,
    aliases,
    classify,
    require_area,
    resolve_area,
    title_tags,
)

_PR_HEADING = re.compile(r"^## \d+\. \[(?P<title>.*)\]\(https://github\.com/[^/]+/[^/]+/pull/(?P<number>\d+)\)\s*$")
_CHANGED_FILE = re.compile(r"^  - `(?P<path>[^`]+)`\s*$")


def test_areas_are_the_canonical_names_in_order():
    assert AREAS == (
        "rocm", "nvidia", "xpu", "cpu", "tpu", "ci", "docs", "frontend", "multimodal", "performance",
        "quantization", "speculative-decoding", "structured-output", "tool-calling", "kv-connector",
        "torch-compile", "model-runner-v2", "new-model", "kernels", "moe", "lora", "attention", "core",
        "distributed",
    )


@pytest.mark.parametrize(
    ("title", "tags"),
    [
        ("[Bugfix] Fix a thing", ["bugfix"]),
        ("[BugFix] Fix a thing", ["bugfix"]),
        ("[Bug Fix] Fix a thing", ["bugfix"]),
        ("[bug] Fix a thing", ["bugfix"]),
        ("[Hardware][AMD] Tune a kernel", ["hardware", "amd"]),
        ("[Frontend][CI]  Move the routers", ["frontend", "ci"]),
        ("[XPU][6/N] Add a kernel", ["xpu"]),
        ("[Fix] [CPU Backend] : Pack weights", ["bugfix", "cpubackend"]),
        ("[Model Runner V2] Drop a field", ["modelrunnerv2"]),
        ("[ModelRunner V2] Drop a field", ["modelrunnerv2"]),
        ("[Docs] Explain it", ["doc"]),
        ("[CI/Build] Pin a wheel", ["ci/build"]),
        ("[Core, Scheduler] Split the queue", ["core", "scheduler"]),
        ("fix(cpu): build without AVX512", ["bugfix", "cpu"]),
        ("feat: add a flag", ["feature"]),
        ('Revert "[ROCm] Bump the base image"', ["rocm"]),
        ("Revert #12345", []),
        ("Plain title with [Brackets] later", []),
        ("Qwen3: not a conventional commit", []),
    ],
)
def test_title_tags_are_the_leading_tags_normalized(title: str, tags: list[str]):
    assert title_tags(title) == tags


@pytest.mark.parametrize(
    ("name", "area"),
    [
        ("AMD", "rocm"),
        ("amd", "rocm"),
        ("CI/Build", "ci"),
        ("ci/build", "ci"),
        ("spec-decode", "speculative-decoding"),
        ("Spec Decode", "speculative-decoding"),
        ("spec_decode", "speculative-decoding"),
        ("eagle", "speculative-decoding"),
        ("MRV2", "model-runner-v2"),
        ("model runner v2", "model-runner-v2"),
        ("Model_Runner_V2", "model-runner-v2"),
        ("compile", "torch-compile"),
        ("torch.compile", "torch-compile"),
        ("doc", "docs"),
        ("Documentation", "docs"),
        ("intel", "xpu"),
        ("intel-gpu", "xpu"),
        ("multi-modality", "multimodal"),
        ("MM", "multimodal"),
        ("perf", "performance"),
        ("quant", "quantization"),
        ("fp8", "quantization"),
        ("KV Connector", "kv-connector"),
        ("scheduler", "core"),
        ("kv-cache-manager", "core"),
        ("ray", "distributed"),
        ("  Structured Output ", "structured-output"),
    ],
)
def test_aliases_resolve_whatever_the_case_and_separators(name: str, area: str):
    assert resolve_area(name) == area


@pytest.mark.parametrize("area", AREAS)
def test_every_canonical_name_resolves_to_itself(area: str):
    assert resolve_area(area) == area
    assert resolve_area(area.upper().replace("-", " ")) == area


@pytest.mark.parametrize("name", ["xyz", "", "deepseek", "v1", "bug"])
def test_unknown_names_resolve_to_nothing(name: str):
    assert resolve_area(name) is None


def test_unknown_area_names_every_known_area_on_one_line():
    with pytest.raises(UnknownArea) as caught:
        require_area("xyz")
    message = str(caught.value)
    assert message == "unknown area 'xyz'; known areas: " + ", ".join(AREAS)
    assert "\n" not in message
    assert isinstance(caught.value, ValueError)


def test_require_area_returns_the_canonical_name():
    assert require_area("AMD") == "rocm"


def test_aliases_map_normalized_names_to_canonical_areas():
    table = aliases()
    assert table["ci/build"] == "ci"
    assert table["specdecode"] == "speculative-decoding"
    assert table["modelrunnerv2"] == "model-runner-v2"
    assert set(table.values()) == set(AREAS)
    table["ci/build"] = "docs"
    assert resolve_area("ci/build") == "ci"


@pytest.mark.parametrize(
    ("area", "path"),
    [
        ("rocm", "vllm/platforms/rocm.py"),
        ("rocm", "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"),
        ("nvidia", "csrc/quantization/cutlass_w8a8/scaled_mm_c3x.cu"),
        ("nvidia", "vllm/platforms/cuda.py"),
        ("xpu", "vllm/platforms/xpu.py"),
        ("xpu", ".buildkite/scripts/hardware_ci/run-xpu-test.sh"),
        ("cpu", "csrc/cpu/attention.cpp"),
        ("cpu", "vllm/v1/worker/cpu_worker.py"),
        ("cpu", "docker/Dockerfile.cpu"),
        ("tpu", "vllm/platforms/tpu.py"),
        ("tpu", "vllm/v1/worker/tpu_model_runner.py"),
        ("ci", ".buildkite/test-pipeline.yaml"),
        ("ci", ".github/workflows/pre-commit.yml"),
        ("ci", "requirements/common.txt"),
        ("ci", "CMakeLists.txt"),
        ("ci", "setup.py"),
        ("docs", "README.md"),
        ("docs", "docs/features/lora.md"),
        ("docs", "examples/offline_inference/basic.py"),
        ("frontend", "vllm/entrypoints/openai/api_server.py"),
        ("multimodal", "vllm/multimodal/inputs.py"),
        ("multimodal", "tests/models/multimodal/processing/test_common.py"),
        ("performance", "benchmarks/benchmark_throughput.py"),
        ("performance", "vllm/benchmarks/serve.py"),
        ("quantization", "vllm/model_executor/layers/quantization/fp8.py"),
        ("speculative-decoding", "vllm/v1/spec_decode/eagle.py"),
        ("speculative-decoding", "vllm/model_executor/models/deepseek_mtp.py"),
        ("structured-output", "vllm/v1/structured_output/backend_xgrammar.py"),
        ("tool-calling", "vllm/tool_parsers/hermes_tool_parser.py"),
        ("tool-calling", "vllm/entrypoints/openai/tool_parsers/mistral_tool_parser.py"),
        ("tool-calling", "vllm/reasoning/qwen3_reasoning_parser.py"),
        ("kv-connector", "vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py"),
        ("torch-compile", "vllm/compilation/backends.py"),
        ("torch-compile", "tests/compile/test_fusion.py"),
        ("model-runner-v2", "vllm/v1/worker/gpu/model_runner.py"),
        ("kernels", "csrc/layernorm_kernels.cu"),
        ("kernels", "vllm/v1/attention/ops/triton_decode_attention.py"),
        ("moe", "vllm/model_executor/layers/fused_moe/layer.py"),
        ("moe", "tests/kernels/moe/test_moe.py"),
        ("lora", "vllm/lora/layers/base.py"),
        ("lora", "tests/lora/test_layers.py"),
        ("attention", "vllm/v1/attention/backends/flash_attn.py"),
        ("attention", "vllm/attention/layer.py"),
        ("core", "vllm/v1/core/sched/scheduler.py"),
        ("core", "vllm/v1/engine/core.py"),
        ("core", "vllm/engine/llm_engine.py"),
        ("distributed", "vllm/distributed/parallel_state.py"),
        ("distributed", "vllm/v1/executor/ray_executor.py"),
    ],
)
def test_each_area_fires_on_its_paths(area: str, path: str):
    assert area in classify("Update things", [path])


def test_new_model_needs_a_model_file_and_the_registry():
    model = "vllm/model_executor/models/foo.py"
    registry = "vllm/model_executor/models/registry.py"
    assert "new-model" in classify("[Model] Support Foo", [model, registry])
    assert "new-model" not in classify("[Model] Fix Foo", [model])
    assert "new-model" not in classify("[Model] Fix Foo", [registry])


@pytest.mark.parametrize(
    ("area", "title"),
    [
        ("rocm", "[ROCm] Tune a kernel"),
        ("rocm", "[Hardware][AMD] Tune a kernel"),
        ("nvidia", "[NVIDIA] Enable on Blackwell"),
        ("xpu", "[XPU][2/N] Port a kernel"),
        ("xpu", "[Intel GPU] Port a kernel"),
        ("cpu", "[CPU Backend] Pack weights"),
        ("cpu", "fix(cpu): build without AVX512"),
        ("tpu", "[TPU] Pad the batch"),
        ("ci", "[CI/Build] Pin a wheel"),
        ("ci", "[CI] Skip a flaky test"),
        ("docs", "[Doc] Explain it"),
        ("docs", "[Docs] Explain it"),
        ("frontend", "[Frontend] Accept a field"),
        ("multimodal", "[Multimodal] Cache encoder outputs"),
        ("performance", "[Perf] Avoid a copy"),
        ("quantization", "[Quantization] Load checkpoints"),
        ("speculative-decoding", "[Spec Decode] Verify drafts"),
        ("structured-output", "[Structured Output] Reject a schema"),
        ("tool-calling", "[Tool Calling] Stream arguments"),
        ("kv-connector", "[KV Connector] Retry a transfer"),
        ("kv-connector", "[P/D] Retry a transfer"),
        ("torch-compile", "[torch.compile] Cache the graph"),
        ("model-runner-v2", "[MRV2] Drop a field"),
        ("model-runner-v2", "[Model Runner V2] Drop a field"),
        ("new-model", "[New Model] Support Foo"),
        ("kernels", "[Kernel] Fuse two ops"),
        ("moe", "[MoE] Route tokens"),
        ("lora", "[LoRA] Load adapters"),
        ("attention", "[Attention] Pad the heads"),
        ("core", "[Core] Split the queue"),
        ("distributed", "[Distributed] Split the groups"),
    ],
)
def test_each_area_fires_on_its_title_tags(area: str, title: str):
    assert area in classify(title, [])


@pytest.mark.parametrize(
    ("label", "area"),
    [
        ("documentation", "docs"),
        ("ci/build", "ci"),
        ("multi-modality", "multimodal"),
        ("intel-gpu", "xpu"),
        ("torch.compile", "torch-compile"),
        ("mrv2", "model-runner-v2"),
        ("speculative-decoding", "speculative-decoding"),
        ("kv-connector", "kv-connector"),
        ("scheduler", "core"),
        ("kv-cache-manager", "core"),
        ("ray", "distributed"),
        ("new-model", "new-model"),
        ("ROCm", "rocm"),
    ],
)
def test_github_labels_fire_their_area(label: str, area: str):
    assert classify("Update things", [], [label]) == [area]


def test_model_family_and_workflow_labels_are_not_areas():
    assert classify("Update things", [], ["deepseek", "qwen", "llama", "v1", "bug", "ready"]) == []


@pytest.mark.parametrize(
    ("area", "title", "paths"),
    [
        ("model-runner-v2", "Fix padding", ["vllm/v1/worker/gpu_model_runner.py"]),
        ("cpu", "Fix offloading", ["vllm/v1/kv_offload/cpu.py"]),
        ("cpu", "Fix offloading", ["tests/v1/kv_offload/test_cpu_offloading.py"]),
        ("cpu", "[Feature] Support selective CPU weight offloading", ["vllm/config/cache.py"]),
        ("cpu", "Fix a CPU memory leak in the scheduler", []),
        ("tpu", "[Feature] Pipeline Parallel async send/recv", []),
        ("tpu", "Fix structured output streaming", ["vllm/v1/engine/output_processor.py"]),
        ("nvidia", "Pin the default wheel", ["requirements/cuda.txt"]),
        ("nvidia", "Fix graph capture", ["vllm/v1/worker/gpu/cudagraph_utils.py"]),
        ("nvidia", "[Bugfix] Fix CUDA graph capture", []),
        ("xpu", "Speed up on Intel Xeon", []),
        ("kv-connector", "Reduce TP/DP padding", []),
        ("distributed", "Retry a transfer", ["vllm/distributed/kv_transfer/kv_connector/v1/base.py"]),
        ("moe", "Fix the Foo model", ["vllm/model_executor/models/qwen3_moe.py"]),
        ("multimodal", "[XPU] Add a scaled_mm kernel", []),
        ("core", "Add a flag", ["vllm/engine/arg_utils.py"]),
        ("ci", "[Test] Cover sampling", ["tests/v1/sample/test_sampler.py"]),
        ("new-model", "[Model] Fix Foo", ["vllm/model_executor/models/foo.py"]),
    ],
)
def test_tricky_titles_and_paths_do_not_fire(area: str, title: str, paths: list[str]):
    assert area not in classify(title, paths)


def test_lookalike_rules_still_fire_on_the_real_thing():
    assert "cpu" in classify("Speed up on Intel Xeon", [])
    assert "kv-connector" in classify("Fix P/D disconnects", [])


def test_classify_lists_areas_once_in_canonical_order():
    areas = classify(
        "[Kernel][ROCm][Kernel] Fuse MoE on AMD",
        ["vllm/model_executor/layers/fused_moe/rocm_aiter_fused_moe.py", "csrc/moe/topk.cu"],
        ["rocm", "ROCm"],
    )
    assert areas == ["rocm", "kernels", "moe"]


def test_classify_accepts_one_shot_iterables():
    assert classify("Update things", iter(["vllm/lora/request.py"]), iter(["documentation"])) == [
        "docs",
        "lora",
    ]


@pytest.mark.parametrize(
    ("toml", "complaint"),
    [
        ("[areas.a]\ntitle = ['ROCm']\n", "must be lowercase"),
        ("[areas.a]\nfiles = ['(']\n", "bad regex in [areas.a] files"),
        ("[areas.a]\nfile = ['x']\n", "unknown keys"),
        ("[areas.a]\naliases = ['x']\n[areas.b]\naliases = ['X']\n", "names both a and b"),
    ],
)
def test_mistakes_in_the_rules_are_reported_when_loading(toml: str, complaint: str):
    with pytest.raises(ValueError, match=re.escape(complaint)):
        _parse_rules(toml)


def _seed_prs() -> dict[int, tuple[str, list[str]]]:
    """(title, changed files) of every PR in the seed reports, by PR number."""
    prs: dict[int, tuple[str, list[str]]] = {}
    files: list[str] = []
    for report in seed_reports():
        for line in report.read_text(encoding="utf-8").splitlines():
            if heading := _PR_HEADING.match(line):
                files = []
                prs[int(heading["number"])] = (heading["title"], files)
            elif changed := _CHANGED_FILE.match(line):
                files.append(changed["path"])
    return prs


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (34108, {"rocm"}),  # [ROCm][Bugfix]
        (34032, {"rocm", "ci"}),  # [ROCm], Dockerfile.rocm_base
        (35070, {"model-runner-v2"}),  # [Model Runner V2]
        (34167, {"model-runner-v2"}),  # [ModelRunner V2], vllm/v1/worker/gpu/
        (34148, {"docs"}),  # [Doc]
        (34049, {"speculative-decoding"}),  # [Spec Decode]
        (33945, {"torch-compile"}),  # [torch.compile]
        (34117, {"xpu", "quantization"}),  # [XPU][6/N]
        (33901, {"cpu", "kernels"}),  # [CPU Backend], csrc/cpu/
        (34052, {"cpu"}),  # fix(cpu):
        (34175, {"kv-connector"}),  # [LMCache]
        (33233, {"structured-output"}),  # [structured output]
        (34123, {"frontend", "ci"}),  # [Frontend][CI]
        (34426, {"new-model"}),  # [New Model]
        (34125, {"core"}),  # [Core]
        (29387, {"core"}),  # scheduler and KV cache manager files
    ],
)
def test_seed_prs_get_the_areas_checked_by_hand(number: int, expected: set[str]):
    title, files = _seed_prs()[number]
    assert expected <= set(classify(title, files))


@pytest.mark.parametrize(
    ("number", "unexpected"),
    [
        (34187, "model-runner-v2"),  # only gpu_model_runner.py, MRv1
        (34535, "cpu"),  # CPU weight offloading is not the CPU backend
        (33368, "tpu"),  # "Pipeline Parallel"
    ],
)
def test_seed_prs_avoid_the_lookalike_areas(number: int, unexpected: str):
    title, files = _seed_prs()[number]
    assert unexpected not in classify(title, files)


def test_nearly_every_seed_pr_gets_an_area():
    prs = _seed_prs()
    counts = Counter(bool(classify(title, files)) for title, files in prs.values())
    assert counts[True] / len(prs) >= 0.9


_OVERRIDDEN = """
[tag_synonyms]
bug = "bugfix"

[areas.rocm]
tags = ["rocm"]

[areas.ci]
tags = ["ci"]
files = ["^\\\\.github/"]

[repos."Acme/Widgets"]
drop = ["rocm"]

[repos."Acme/Widgets".areas.ci]
files = ["^ci/"]

[repos."Acme/Widgets".areas.npu]
aliases = ["ascend"]
files = ["^widgets/npu/"]
"""


def test_a_repository_override_drops_replaces_and_adds_areas():
    default = _parse_rules(_OVERRIDDEN)
    widgets = _parse_rules(_OVERRIDDEN, repo="acme/widgets")  # GitHub names compare without case
    assert default.names == ("rocm", "ci")
    assert widgets.names == ("ci", "npu")
    assert widgets.aliases["ascend"] == "npu" and "rocm" not in widgets.aliases
    assert _parse_rules(_OVERRIDDEN, repo="acme/other").names == default.names


def test_classify_follows_the_repository_of_the_pr(tmp_path):
    from store.understanding.areas import use_areas_file

    extra = tmp_path / "areas.toml"
    extra.write_text(_OVERRIDDEN[_OVERRIDDEN.index("[repos."):])  # only the repository's tables
    use_areas_file(extra)
    try:
        # The shipped default table stays, and the repository's own tables apply to its PRs only.
        assert classify("[ROCm] Tune the image", []) == ["rocm"]
        assert classify("[ROCm] Tune the image", [], repo="acme/widgets") == []
        assert classify("Tune", ["widgets/npu/attn.py", "ci/run.sh"], repo="Acme/Widgets") == ["ci", "npu"]
        assert require_area("ascend", "acme/widgets") == "npu"
        with pytest.raises(UnknownArea, match="known areas: nvidia, "):
            require_area("rocm", "acme/widgets")
        assert resolve_area("ascend") is None
    finally:
        use_areas_file(None)
    assert classify("[ROCm] Tune the image", [], repo="acme/widgets") == ["rocm"]


def test_a_broken_areas_file_is_refused_and_changes_nothing(tmp_path):
    from store.understanding.areas import use_areas_file

    broken = tmp_path / "areas.toml"
    broken.write_text('[repos."acme/widgets".areas.npu]\nfiles = ["(unclosed"]\n')
    with pytest.raises(ValueError, match="bad regex"):
        use_areas_file(broken)
    broken.write_text("[repos\n")
    with pytest.raises(ValueError, match=str(broken)):
        use_areas_file(broken)
    assert classify("[ROCm] Tune the image", [], repo="acme/widgets") == ["rocm"]


def test_a_repository_override_with_mistakes_is_refused():
    with pytest.raises(ValueError, match="drops unknown areas"):
        _parse_rules(_OVERRIDDEN + '\n[repos."x/y"]\ndrop = ["nope"]\n', repo="x/y")
    with pytest.raises(ValueError, match="unknown keys"):
        _parse_rules(_OVERRIDDEN + '\n[repos."x/y"]\nareas_extra = 1\n', repo="x/y")
