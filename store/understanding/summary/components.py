"""The components a changed path belongs to, named as a team says them: "the FlashInfer attention
backend", "the scheduler". The table knows vLLM's layout; other repositories get their directories.
"""
from __future__ import annotations

import re
from functools import lru_cache

from store.text.patterns import LazyPattern

# Spellings of names that title case gets wrong.
_NAMES = {
    "flashinfer": "FlashInfer", "flash": "Flash", "attn": "attention", "mla": "MLA", "flashmla": "FlashMLA",
    "triton": "Triton", "rocm": "ROCm", "aiter": "AITER", "cutlass": "CUTLASS", "cuda": "CUDA", "cpu": "CPU",
    "tpu": "TPU", "xpu": "XPU", "gpu": "GPU", "moe": "MoE", "fp8": "FP8", "fp4": "FP4", "nvfp4": "NVFP4",
    "mxfp4": "MXFP4", "gptq": "GPTQ", "awq": "AWQ", "vl": "VL", "ocr": "OCR", "glm": "GLM", "mtp": "MTP",
    "qwen": "Qwen", "deepseek": "DeepSeek", "llama": "Llama", "gpt": "GPT", "oss": "OSS", "kv": "KV",
    "lora": "LoRA", "openai": "OpenAI", "nixl": "NIXL", "lmcache": "LMCache", "api": "API", "eagle": "EAGLE",
    "hf": "HF", "ngram": "n-gram", "gemma": "Gemma", "mistral": "Mistral", "phi": "Phi", "mamba": "Mamba",
}
_SPLIT = LazyPattern(r"[_\-]+")


def humanize(stem: str) -> str:
    """ "qwen3_vl" -> "Qwen3 VL", "flash_attn" -> "Flash attention"."""
    words = []
    for word in _SPLIT.split(stem.lower()):
        head = re.match(r"[a-z]+", word)
        if word in _NAMES or not head or head.group(0) not in _NAMES:
            words.append(_NAMES.get(word, word))
        else:
            words.append(_NAMES[head.group(0)] + word[len(head.group(0)):])
    text = " ".join(word for word in words if word)
    return text[:1].upper() + text[1:] if text and text[0].islower() and text.split(" ")[0].isalpha() else text


# (pattern on the path, name); the first match wins, so specific paths come first. {0} is the
# humanized first group of the pattern.
_COMPONENTS: tuple[tuple[LazyPattern, str], ...] = tuple(
    (LazyPattern(pattern), name)
    for pattern, name in (
        (r"^vllm/v1/attention/backends/mla/(\w+?)(?:_mla)?\.py$", "the {0} MLA backend"),
        (r"^vllm/v1/attention/backends/utils\.py$", "the attention backend helpers"),
        (r"^vllm/v1/attention/backends/(\w+?)(?:_attn)?\.py$", "the {0} attention backend"),
        (r"^vllm/v1/attention/ops/", "the attention ops"),
        (r"^vllm/(?:v1/)?attention/", "the attention layer"),
        (r"^vllm/v1/core/sched/", "the scheduler"),
        (r"^vllm/v1/core/(?:kv_cache|block_pool|single_type)", "the KV cache manager"),
        (r"^vllm/v1/core/", "the engine core"),
        (r"^vllm/v1/engine/detokenizer", "the detokenizer"),
        (r"^vllm/v1/engine/output_processor", "output processing"),
        (r"^vllm/v1/engine/", "the engine"),
        (r"^vllm/v1/worker/gpu/", "Model Runner V2"),
        (r"^vllm/v1/worker/gpu_model_runner", "the GPU model runner"),
        (r"^vllm/v1/worker/(\w+?)_(?:model_runner|worker)", "the {0} worker"),
        (r"^vllm/v1/worker/", "the workers"),
        (r"^vllm/v1/sample/", "the sampler"),
        (r"^vllm/v1/spec_decode/", "speculative decoding"),
        (r"^vllm/v1/structured_output/", "structured output"),
        (r"^vllm/v1/metrics/", "metrics"),
        (r"^vllm/v1/(?:kv_)?offload", "KV offloading"),
        (r"^vllm/model_executor/models/registry\.py$", "the model registry"),
        (r"^vllm/model_executor/models/(\w+)\.py$", "the {0} model"),
        (r"^vllm/models/(\w+)/", "the {0} model"),
        (r"^vllm/model_executor/layers/fused_moe/", "the fused MoE layer"),
        (r"^vllm/model_executor/layers/quantization/utils/", "the quantization helpers"),
        (r"^vllm/model_executor/layers/quantization/(\w+)\.py$", "{0} quantization"),
        (r"^vllm/model_executor/layers/quantization/", "quantization"),
        (r"^vllm/model_executor/layers/mamba/", "the Mamba layers"),
        (r"^vllm/model_executor/layers/(\w+)\.py$", "the {0} layer"),
        (r"^vllm/model_executor/model_loader/", "model loading"),
        (r"^vllm/model_executor/", "the model executor"),
        (r"^vllm/(?:entrypoints/openai/)?tool_parsers/(\w+?)(?:_tool_parser)?\.py$", "the {0} tool parser"),
        (r"^vllm/reasoning/(\w+?)(?:_reasoning_parser)?\.py$", "the {0} reasoning parser"),
        (r"^vllm/entrypoints/openai/", "the OpenAI-compatible server"),
        (r"^vllm/entrypoints/llm\.py$", "the `LLM` class"),
        (r"^vllm/entrypoints/cli/", "the `vllm` command line"),
        (r"^vllm/entrypoints/", "the entrypoints"),
        (r"^vllm/compilation/", "the torch.compile integration"),
        (r"^vllm/distributed/kv_transfer/", "the KV connectors"),
        (r"^vllm/distributed/", "distributed communication"),
        (r"^vllm/multimodal/", "multimodal input processing"),
        (r"^vllm/lora/", "LoRA"),
        (r"^vllm/platforms/(\w+)\.py$", "the {0} platform"),
        (r"^vllm/envs\.py$", "environment variables"),
        (r"^vllm/config/", "the engine configuration"),
        (r"^vllm/engine/arg_utils\.py$", "engine arguments"),
        (r"^vllm/transformers_utils/", "the Transformers helpers"),
        (r"^vllm/benchmarks/", "the benchmark CLI"),
        (r"^csrc/(cpu|rocm|moe|attention|quantization|mamba)/", "the {0} kernels"),
        (r"^csrc/", "the C++/CUDA kernels"),
        (r"^benchmarks/", "the benchmark scripts"),
        (r"^tests/", "tests"),
        (r"^docs/|^[^/]+\.(?:md|rst)$", "documentation"),
        (r"^examples/", "examples"),
        (r"^(?:\.buildkite|\.github|\.circleci)/", "CI configuration"),
        (r"^(?:requirements|docker|cmake)/|^(?:setup\.py|pyproject\.toml|CMakeLists\.txt)$", "the build and dependencies"),
    )
)
# Names a component table gives to files that are not code under review.
SUPPORT = frozenset({"tests", "documentation", "examples", "CI configuration"})


@lru_cache(maxsize=8192)
def component(path: str) -> str:
    """The component a path belongs to; outside the table, its directory in code format."""
    for pattern, name in _COMPONENTS:
        match = pattern.search(path)
        if match:
            return name.format(*(humanize(group) for group in match.groups()))
    parts = path.split("/")
    return f"`{'/'.join(parts[:2])}/`" if len(parts) > 2 else f"`{path}`"


def components(paths: list[str]) -> list[str]:
    """The components of the paths, most files first, then in path order."""
    counts: dict[str, int] = {}
    for path in paths:
        name = component(path)
        counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda name: -counts[name])
