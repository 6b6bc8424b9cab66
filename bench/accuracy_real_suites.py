"""Accuracy of the static classifier on real open-source torch test suites (ground truth from a CPU run).

For each chosen project: `pip download` its sdist (which ships the test suite), install the package and
its test dependencies into a virtual environment that reuses the installed CPU torch (`--no-deps` for
anything that pins torch), run the suite on this CPU-only machine with a time cap, label every test from
its outcome, run `python -m tools.classify --format json` on the unpacked sdist, and print a confusion
matrix per project and overall. Ground-truth rules (docs/classifier-accuracy.md):

* `gpu`: skipped with a reason about CUDA/GPU/accelerators (or "no device"), or failed with a CUDA error
  (`Torch not compiled with CUDA enabled`, `No CUDA GPUs are available`, ...);
* `cpu`: passed, xfailed, or failed/skipped for another reason;
* excluded (listed, not scored): failed/skipped for an unrelated environment reason (missing optional
  package, no network / offline hub, per-test timeout).

Usage (slow: minutes per project):
    python bench/accuracy_real_suites.py [--projects accelerate skorch] [--time-cap 600] [--workdir DIR]
                                         [--reuse] [--show-errors 20]

`--reuse` keeps the venv, sources and ground truth in --workdir and only reruns the classifier.
`--classifier-python suite` runs the classifier with the suite's venv Python, so that it sees the packages
installed for the suite (test base classes of installed packages; the host Python does not have them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the ground truth ran on a machine without GPUs: a key that names another case there is scored by that case
from tools.contract.classification import label_without_gpus  # noqa: E402


@dataclass(frozen=True)
class Project:
    name: str  # the PyPI name
    version: str
    tests: str  # test directory inside the unpacked sdist; several separated by spaces (a capped subset)
    deps: tuple[str, ...] = ()  # installed normally (must not pull another torch: checked with --dry-run)
    nodeps: tuple[str, ...] = ()  # installed with --no-deps (they pin torch)
    pytest_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    jobs: int | None = None  # pytest-xdist workers (1: the suite's parametrizations differ between workers)
    drop: tuple[str, ...] = ()  # files deleted from the unpacked sdist (they break the run outside a checkout)
    # installed first, torch allowed: a suite needing torchvision gets the torch/torchvision pair that lies on this
    # disk (PyPI's torchvision does not import beside the host's CPU torch 2.13); a CUDA build without a driver
    # runs on the CPU as the CPU build does
    torch_pins: tuple[str, ...] = ()
    # compiled modules copied from the installed wheel into the unpacked sdist (globs under site-packages, with the
    # libraries the wheel vendors beside them), as a build in place makes them: a suite whose tests live inside its
    # package imports it from the source tree
    inplace: tuple[str, ...] = ()


# the CPU torch of requirements_dev.txt, installed into a suite's venv when the host Python lacks it
CPU_TORCH = "torch==2.13.0"
# the torch / torchvision pair that lies on this disk, for suites that need torchvision (Project.torch_pins)
TORCHVISION_PAIR = ("torch==2.14.1", "torchvision==0.29.1")

PROJECTS: dict[str, Project] = {
    "accelerate": Project(
        "accelerate", "1.15.0", "tests",
        deps=("psutil", "pyyaml", "huggingface_hub", "safetensors", "parameterized", "transformers",
              "pytest-subtests", "pytest-order", "scipy", "scikit-learn", "tqdm"),
        env=(("RUN_SLOW", "1"),)),
    "skorch": Project(
        "skorch", "1.4.0", "skorch/tests",
        deps=("scikit-learn", "scipy", "tabulate", "tqdm", "pandas", "flaky", "safetensors"),
        pytest_args=("-o", "addopts=")),  # its addopts need pytest-cov
    "gpytorch": Project(
        "gpytorch", "1.15.2", "test",
        deps=("scikit-learn", "scipy", "mpmath<=1.3", "jaxtyping"), nodeps=("linear_operator",)),
    # Round 2 (docs/classifier-accuracy.md, "Round 2").
    "pytorch-ignite": Project(
        "pytorch-ignite", "0.5.5", "tests/ignite/engine tests/ignite/handlers tests/ignite/distributed "
        "tests/ignite/base tests/ignite/contrib tests/ignite/test_utils.py tests/ignite/metrics/test_accuracy.py "
        "tests/ignite/metrics/test_metric.py tests/ignite/metrics/test_confusion_matrix.py "
        "tests/ignite/metrics/test_precision.py tests/ignite/metrics/test_loss.py "
        "tests/ignite/metrics/test_gpu_info.py",
        deps=("packaging", "dill", "filelock", "numpy", "scipy", "scikit-learn", "tqdm", "matplotlib", "pandas",
              "pytest-order"),
        # test_clearml_logger.py imports clearml (not installed): without the flag that one collection error
        # interrupts the whole run before any test
        pytest_args=("-o", "addopts=", "-p", "no:cov", "--continue-on-collection-errors")),
    "e3nn": Project(
        "e3nn", "0.6.0", "tests", deps=("sympy", "scipy", "opt_einsum"), nodeps=("opt_einsum_fx",), jobs=1),
    "linear_operator": Project(
        "linear_operator", "0.6.1", "test", deps=("scipy", "mpmath<=1.3", "jaxtyping")),
    # Round 3 (docs/classifier-accuracy.md, "Round 3").
    "stable-baselines3": Project(
        "stable-baselines3", "2.9.2", "tests",
        deps=("gymnasium", "cloudpickle", "pandas", "matplotlib", "tqdm", "rich", "psutil"),
        # tests/test_utils.py imports ale_py (Atari, not installed): one collection error would stop the run
        pytest_args=("-o", "addopts=", "-p", "no:cov", "--continue-on-collection-errors")),
    "torchsde": Project("torchsde", "0.2.6", "tests", deps=("scipy", "trampoline", "boltons")),
    "torch-optimizer": Project("torch-optimizer", "0.3.0", "tests", nodeps=("pytorch_ranger",)),
    "peft": Project(
        "peft", "0.21.2", "tests",
        deps=("psutil", "pyyaml", "huggingface_hub", "safetensors", "parameterized", "transformers",
              "tqdm", "scipy", "accelerate"),
        pytest_args=("--ignore=tests/regression",)),
    # Issue 12: suites this project had never seen (docs/classifier-accuracy.md, "Round 3: baseline on real
    # suites").
    "pytorch_optimizer": Project(
        "pytorch_optimizer", "4.1.0", "tests", deps=("numpy",),
        pytest_args=("-o", "addopts=", "-p", "no:cov")),  # its addopts need pytest-cov
    "nflows": Project("nflows", "0.14", "tests", deps=("numpy", "tqdm", "matplotlib", "tensorboard", "torchtestcase")),
    "zuko": Project("zuko", "1.6.0", "tests", deps=("numpy",)),
    # its top-level __init__.py (`from .roma.mappings import *`) makes the sdist root a package that only
    # imports from a checkout named roma/: pytest's package setup fails on every test
    "roma": Project("roma", "1.8.0", "test", deps=("numpy",), drop=("__init__.py",)),
    "torchkbnufft": Project("torchkbnufft", "1.5.2", "tests", deps=("numpy>=2", "scipy")),
    # Round 7 (docs/classifier-accuracy.md, "Round 7: new suites"): four more suites never used before.
    # Mostly CUDA-only tests (`.cuda()` in the test body, no skip): the false-CPU case.
    "pytorch-memlab": Project("pytorch-memlab", "0.3.2", "test", deps=("calmsize", "pandas")),
    # A session-scoped `device` fixture parametrized ["cpu", "cuda"] that skips the cuda half off-GPU.
    # Without tests/pipeline/test_convergence.py and test_manual.py (1752 slow ids per device): pytest orders
    # the session-scoped parametrization cpu first, so under the time cap no cuda test would run.
    "cooper-optim": Project(
        "cooper-optim", "1.0.1", "tests/constraints tests/formulations tests/multipliers tests/optim "
        "tests/penalty_coefficients tests/test_cmp.py tests/pipeline/test_checkpoint.py",
        deps=("typing-extensions", "cvxpy")),
    # Tests inside the package; the backends to test come from an environment variable.
    "einops": Project("einops", "0.8.2", "einops/tests", deps=("numpy",),
                      env=(("EINOPS_TEST_BACKENDS", "numpy,torch"),)),
    # unittest classes in `*_test.py` files; `skipIf(not torch.cuda.is_available())` and "Need at least 2 GPUs".
    # Without grad_samples/ and dp_layers/ (hypothesis runs of 100 examples per test, no device code): the
    # files with CUDA tests come after them alphabetically and would miss the time cap.
    # Six files import torchvision, which cannot be installed here (PyPI's torchvision 0.28 for torch 2.13 is a
    # CUDA build whose operators fail to register on the CPU torch; newer ones pull torch 2.14 with CUDA): they
    # fail collection (excluded) and --continue-on-collection-errors runs the rest.
    "opacus": Project("opacus", "1.6.0", "opacus/tests", deps=("numpy", "scipy", "opt_einsum", "hypothesis"),
                      pytest_args=("--ignore=opacus/tests/grad_samples", "--ignore=opacus/tests/dp_layers",
                                   "--continue-on-collection-errors")),
    # `*_test.py` modules beside the code they test, inside the package; no device code (CPU routing only).
    "normflows": Project("normflows", "1.7.3", "normflows", deps=("numpy",)),
    # Round 8 (docs/classifier-accuracy.md, "Round 8: new suites"): suites never used before.
    # `@pytest.mark.parametrize("cuda", [False, True])` whose True half moves to CUDA only when it is there.
    # Without test_packets.py, test_matrix_fwt_2.py, test_convolution_fwt*.py, test_matrix_fwt_3.py,
    # test_separable_conv_fwt.py and test_sparse_math.py (9,900 of 10,848 ids, no device code; the whole suite
    # ran 1,696 tests in 600 s): the files left hold the `cuda` parametrizations and the Mackey-Glass
    # generator whose device defaults to "cuda". Tests that fetch scipy.datasets fail offline (excluded).
    "ptwt": Project("ptwt", "1.0.1", "tests/test_cwt.py tests/test_jit.py tests/test_matrix_fwt.py "
                    "tests/test_swt.py tests/test_util.py tests/test_wavelet.py",
                    deps=("PyWavelets", "scipy", "numpy", "pooch")),
    # unittest classes, no device code (CPU routing only).
    "julius": Project("julius", "0.2.8", "tests", deps=("resampy",)),
    # `dev = torch.device('cuda') if HAVE_GPU else 'cpu'` at module level, plus skipif(not HAVE_GPU) tests.
    "pytorch_wavelets": Project("pytorch_wavelets", "1.3.0", "tests",
                                deps=("numpy", "six", "dtcwt", "PyWavelets", "py3nvml")),
    # Tests in `tests/` folders inside the package (tltorch/*/tests), tensorly's torch backend; no device code.
    "tensorly-torch": Project("tensorly-torch", "0.5.0", "tltorch", deps=("tensorly", "numpy", "scipy")),
    # Round 9 (docs/classifier-accuracy.md, "Round 9: new suites"): suites never used before.
    # unittest classes made per device by `parameterized_class` (`@expand()` in torchani/_testing.py: `Test_cpu`,
    # `Test_cuda`, `Test_cpu_jit` ...), the CUDA ones skipped by `setUpClass`; `skipIf(not
    # torch.cuda.is_available())` in test_cuaev.py. Tests that load built-in models download their weights
    # (offline: excluded). torchani pins `torch<=2.13`: installed without its dependencies.
    "torchani": Project(
        "torchani", "2.9.0", "tests",
        deps=("numpy", "typing_extensions", "h5py", "tqdm", "typer", "rich", "ase", "pandas", "pyarrow", "zarr<3",
              "huggingface_hub", "parameterized", "expecttest")),
    # `@pytest.mark.gpu` tests (and `pytest.param("gpu", marks=pytest.mark.gpu)` halves) that conftest.py's
    # `pytest_collection_modifyitems` skips when `gpu_available()` is false; `process_device("gpu")` in the
    # bodies. A subset of tests/: the files with device code and a few fast CPU ones (the whole suite trains
    # networks for hours on one core).
    "sbi": Project(
        "sbi", "0.27.0", "tests/inference_on_device_test.py tests/compose_standardization_test.py "
        "tests/analysis_test.py tests/prior_device_test.py tests/torchutils_test.py tests/tarp_test.py "
        "tests/mixture_density_estimator_test.py",
        deps=("numpy", "scipy", "scikit-learn", "matplotlib", "joblib", "pillow", "tqdm", "tensorboard", "pandas",
              "pytest-harvest", "pyro-ppl", "tabulate", "torchtestcase"),
        nodeps=("nflows", "zuko", "skorch")),
    # Test problems built from settings dicts whose `device` list is `get_available_devices()` (CUDA only when
    # present) and whose ids name the device; the tests live in a top-level package named `test`. Files that
    # import torchvision (test/converter/, test/extensions/firstorder/) cannot be collected here (see opacus):
    # excluded, and --continue-on-collection-errors runs the rest. test/core (1,690 derivative tests, no device
    # code of their own) comes last: the whole suite does not finish in 480 s on one core, and the cap then
    # cuts test/core rather than the files with device lists.
    "backpack-for-pytorch": Project(
        "backpack-for-pytorch", "1.7.1", "test/adaptive_avg_pool test/automated_kfac_test.py test/automated_test.py "
        "test/bugfixes_test.py test/conv2d_test.py test/converter test/custom_module test/extensions "
        "test/hessianfree test/interface_test.py test/linear_test.py test/test___init__.py test/test_batch_first.py "
        "test/test_retain_graph.py test/test_second_order_warnings.py test/utils test/utils_test.py test/core",
        deps=("einops", "unfoldNd", "scipy", "numpy", "pytorch_memlab",
                                                     "pytest-optional-tests==0.1.1"),  # 0.1.3 ships no module
        pytest_args=("--continue-on-collection-errors",)),
    # Tests inside the package; `DEVICES = [torch.device("cpu")]` plus CUDA when it is there, and
    # `skipif(not torch.cuda.is_available())` tests that use `device="cuda"`; the device list is imported by a bare
    # module name that pytest's `pythonpath` ini option makes importable. cupy and jax are optional (their tests
    # skip without them: excluded).
    "torchsparsegradutils": Project(
        "torchsparsegradutils", "0.2.7", "torchsparsegradutils/tests", deps=("scipy", "packaging", "numpy")),
    # Round 11 (docs/classifier-accuracy.md, "Round 11: new suites"): suites never used before.
    # `if not torch.cuda.is_available(): pytest.skip(...)` in the body (test_gpu.py) and a module-level-free
    # `torch.device("cuda" if torch.cuda.is_available() else "cpu")` in test_to.py. Its dependencies come
    # from a requirements.txt that pins the dev tools (pytest==7.3.0, black, pylint ...): --no-deps.
    "torch_pca": Project("torch_pca", "1.1.0", "tests", deps=("scikit-learn", "pytest-check", "pytest-mock")),
    # A module-scoped `device` fixture whose params are ["cpu"] plus "cuda"/"mps"/"xpu" when present (conftest.py),
    # `skipif(not torch.cuda.is_available())` on the optimized (AWQ, Marlin, TinyGEMM) kernels' tests, and a CUDA
    # extension name appended to a parametrize list under `if torch.cuda.is_available()`. Without test/models and
    # test/cli (transformers/diffusers models from the Hub: offline here).
    "optimum-quanto": Project(
        "optimum-quanto", "0.2.7", "test",
        deps=("ninja", "numpy", "safetensors", "huggingface_hub"),
        pytest_args=("--ignore=test/models", "--ignore=test/cli")),
    # `@pytest.mark.parametrize("device", ["cpu", "cuda"])` with (test_compile.py) and without (test_schedulefree.py)
    # a skip in the body, module-level `device = "cuda" if torch.cuda.is_available() else "cpu"`, fixtures whose
    # params are `["cuda"] if CUDA_AVAILABLE else ["cpu"]` (or `else []`), and `skipif(not torch.cuda.is_available())`.
    # A subset of tests/: the files with device code (test_compile.py last: torch.compile on CPU is slow) and two
    # fast CPU ones; most other files train models for minutes each. mace-torch pins e3nn==0.4.4 (no torch pin);
    # the package itself is installed with --no-deps like every project.
    "mace-torch": Project(
        "mace-torch", "0.3.16", "tests/test_schedulefree.py tests/test_cueq_oeq.py tests/test_polar_cueq.py "
        "tests/test_maceles.py tests/test_benchmark.py tests/test_freeze.py tests/test_cg.py tests/test_tools.py "
        "tests/test_compile.py",
        deps=("e3nn==0.4.4", "numpy", "opt_einsum", "ase", "torch-ema", "prettytable", "matscipy", "h5py",
              "torchmetrics", "python-hostlist", "configargparse", "GitPython", "pyYAML", "tqdm", "lmdb", "orjson",
              "matplotlib", "pandas", "schedulefree", "pytest-benchmark")),
    # Linear operators over torch/jax/numpy backends; a `parametrize` class of its own (cola/utils/utils_for_tests.py)
    # whose ids are `str()` of `pytest.param(...)` objects, `.excluding[...]` indexing that marks cases `tricky` (the
    # suite's addopts deselect them), `Op.device = "cuda"` attribute assignments on CPU tensors, and
    # `xnp.device("cuda:0") if xnp.is_cuda_available() else device_cpu`. jax is not installed: its cases fail
    # with ModuleNotFoundError (excluded).
    "cola-ml": Project("cola-ml", "0.0.7", "tests",
                       deps=("scipy", "tqdm>=4.38", "cola-plum-dispatch==0.1.4", "optree")),
    # `@requires_gpu` / `@requires_gpu(2)` (tests/testing_utils.py: a decorator usable bare or called, a skipif on
    # `torch.accelerator.device_count()`), helpers that call `.cuda()` (`get_random_mat`), `.cuda()` and
    # `device="cuda"` in test bodies; `torch.accelerator.current_accelerator()` as a parametrize value. Tests that load
    # models from the Hub fail offline (excluded); test_examples/test_compression_examples.py imports `datasets` (not
    # installed): its collection error would stop the run before any test.
    "compressed-tensors": Project(
        "compressed-tensors", "0.20.1", "tests",
        deps=("transformers", "pydantic>=2.0", "loguru", "psutil", "accelerate"),
        pytest_args=("--continue-on-collection-errors",)),
    # Tests inside the package (xitorch/_tests); `@device_dtype_float_test(...)`, a decorator factory that returns
    # `pytest.mark.parametrize("dtype,device,...", product(dtypes, devices, ...))` with CUDA in `devices` only when
    # it is there (xitorch/_tests/utils.py:9-41).
    "xitorch": Project("xitorch", "0.5.1", "xitorch/_tests", deps=("numpy>=1.24.1", "scipy>=1.10.0")),
    # Round 12 (docs/classifier-accuracy.md, "Round 12: new suites"): suites never used before.
    # `@pytest.mark.parametrize("device", ["cpu", "cuda:0"])` with no skip: the cuda cases build the calculator on
    # CUDA and fail on a CPU machine. The reference values come from ase's DFTD3 calculator, which runs an external
    # `dftd3` program (not installed: those comparisons fail, scored cpu).
    "torch-dftd": Project("torch-dftd", "0.4.0", "tests", deps=("ase", "pymatgen")),
    # unittest classes whose setUp or default arguments say `device='cuda'`, `.cuda()` in the bodies, no skips.
    # accelerate pins torch (--no-deps).
    "hqq": Project("hqq", "0.2.8.post1", "tests",
                   deps=("numpy", "tqdm", "einops", "termcolor", "transformers", "huggingface_hub", "safetensors",
                         "psutil", "pyyaml"),
                   nodeps=("accelerate",)),
    # Tests inside the package (neuralop/**/tests); devices chosen by `torch.backends.cuda.is_built()` and the
    # deprecated `torch.has_cuda` (both False on the CPU build), at module level and in test bodies. The tests of
    # torch_harmonics-based layers skip at module level (torch_harmonics builds C++/CUDA extensions: not installed).
    # All of neuralop/'s test files, in an order that lets the 420 s cap reach each device idiom: the trainer test
    # (`dist.is_initialized()` in the library), data/ and two layers files (`torch.backends.cuda.is_built()`), then
    # test_fno.py and test_fnogno.py (`torch.has_cuda`; 294 and 72 cases); test_codano.py (256 slow cases) last.
    "neuraloperator": Project(
        "neuraloperator", "2.0.0",
        "neuralop/training/tests/test_trainer.py neuralop/data neuralop/layers/tests/test_gno_block.py "
        "neuralop/layers/tests/test_sin_embeddings.py neuralop/models/tests/test_fno.py "
        "neuralop/models/tests/test_fnogno.py neuralop/models/tests/test_local_no.py neuralop/tests "
        "neuralop/training/tests/test_optim.py neuralop/training/tests/test_patching.py "
        "neuralop/models/tests/test_gino.py neuralop/models/tests/test_uno.py neuralop/models/tests/test_uqno.py "
        "neuralop/losses neuralop/layers/tests/test_attention_layer.py neuralop/layers/tests/test_coda_layer.py "
        "neuralop/layers/tests/test_disco_conv.py neuralop/layers/tests/test_finite_difference_conv.py "
        "neuralop/layers/tests/test_fno_block.py neuralop/layers/tests/test_fourier_continuation.py "
        "neuralop/layers/tests/test_grid_embeddings.py neuralop/layers/tests/test_legacy_spectral_convolution.py "
        "neuralop/layers/tests/test_local_no_block.py neuralop/layers/tests/test_neighbor_search.py "
        "neuralop/layers/tests/test_padding.py neuralop/layers/tests/test_resample.py "
        "neuralop/layers/tests/test_segment_csr.py neuralop/layers/tests/test_spectral_convolution.py "
        "neuralop/layers/tests/test_spectral_projection.py neuralop/layers/tests/test_spherical_convolution.py "
        "neuralop/models/tests/test_codano.py",
        deps=("wandb", "ruamel-yaml", "zencfg>=0.3.0", "configmypy", "tensorly", "tensorly-torch", "matplotlib",
              "numpy>=1.25", "opt-einsum", "h5py", "flaky"),
        pytest_args=("--continue-on-collection-errors",)),
    # Reinforcement learning; its torch config tests are parametrized over device strings ("cuda", "cuda:0",
    # "cuda:10", None, "edge-case") that the library parses into `torch.device` objects without touching CUDA, with
    # `torch.cuda.is_available()` / `torch.cuda.device_count()` deciding the expected value. Only the torch file:
    # test_jax_config.py and test_warp_config.py need jax and NVIDIA warp.
    "skrl": Project("skrl", "2.1.1", "tests/test_torch_config.py",
                    deps=("gymnasium", "packaging", "tensorboard", "tqdm", "hypothesis")),
    # Curvature linear operators (by backpack-for-pytorch's authors); test cases are dicts built by module-level
    # loops over `DEVICES = get_available_devices()` (test/utils.py:62-73: CPU, plus CUDA when present), fixtures
    # parametrized over them with ids made from the cases. Its dependencies that require torch go in --no-deps.
    "curvlinops-for-pytorch": Project(
        "curvlinops-for-pytorch", "3.0.1", "test",
        deps=("scipy", "numpy", "tqdm", "einops", "opt-einsum", "jaxtyping", "mpmath<=1.3", "matplotlib",
              "pytest-optional-tests==0.1.1"),
        nodeps=("backpack-for-pytorch", "unfoldNd", "einconv", "linear_operator")),
    # Round 14 (docs/classifier-accuracy.md, "Round 14: new suites"). Time-series models on Lightning: a `device`
    # fixture parametrized `["cuda", "cpu"]` whose cuda half patches `torch.cuda.*` and `Tensor.cuda` away
    # (tests/test_metrics.py), `accelerator="gpu" if torch.cuda.is_available() else "cpu"` Trainers. Tests
    # needing its example data download it from GitHub (unreachable here: excluded as "no network").
    "pytorch-forecasting": Project(
        "pytorch-forecasting", "1.8.0", "tests",
        deps=("lightning>=2.0.0,<2.6.2", "scipy", "pandas", "scikit-learn", "scikit-base<1.1.0", "numpy",
              "pyarrow", "matplotlib", "statsmodels"),
        pytest_args=("-o", "addopts=", "-p", "no:cov")),
    # Einstein-notation tensor ops over many backends: the root conftest builds one test setup per backend it
    # finds (`importlib.util.find_spec("torch")`, jax, tensorflow, mlx...), CPU ones plus `make_setup("cuda")` where
    # `torch.cuda.is_available()`, and tests loop over or are parametrized by those setups. (nnAudio 0.3.4, tried
    # first: its sdist lacks tests/parameters.py, which every test file imports.)
    "einx": Project("einx", "0.4.3", "test", deps=("numpy", "sympy", "frozendict")),
    # 8-bit optimizers and int8/4-bit matmuls: the last release with an sdist (later ones ship wheels only). Most
    # tests put tensors on "cuda" with no skip, so on a CPU-only machine they fail for want of CUDA: a suite whose
    # truly-GPU tests measure false-CPU. No conftest ships in the sdist; test_generation.py needs transformers and
    # the Hub (excluded as a collection error). Its ids hold random sizes (`dim1_59_dim2_56...` from
    # `torch.randint` at collection), so two collections differ: one worker, and no exact ids to expect.
    "bitsandbytes": Project("bitsandbytes", "0.42.0", "tests", deps=("scipy", "numpy", "einops"),
                            pytest_args=("--continue-on-collection-errors",), jobs=1),
    # Round 15 (docs/classifier-accuracy.md, "Round 15"). Probabilistic time-series models on Lightning: the torch
    # half of the suite (`test/torch`), models trained for an epoch by Lightning's Trainer, one GPU test
    # (`accelerator="gpu"` under `skipif(not torch.cuda.is_available())`).
    "gluonts": Project("gluonts", "0.17.0", "test/torch",
                       deps=("lightning>=2.2.2,<2.7", "scipy", "pandas<3", "pydantic<3", "toolz", "tqdm",
                             "typing-extensions", "matplotlib"),
                       pytest_args=("-o", "addopts=", "-p", "no:cov")),
    # Tensor decompositions over a backend chosen by an environment variable (`TENSORLY_BACKEND=pytorch`): tests
    # inside the package, no device code in them; dispatch through a backend registry reaches torch's code.
    "tensorly": Project("tensorly", "0.10.0", "tensorly", deps=("numpy", "scipy"),
                        env=(("TENSORLY_BACKEND", "pytorch"),)),
    # NLP models whose device is a package global chosen at import (`flair.device = torch.device("cuda:0") if
    # torch.cuda.is_available() else "cpu"`), moved with `.to(flair.device)`; a `pytest_generate_tests` hook
    # parametrizing `force_cpu` by a command-line option. Its sdist lacks tests/resources: tests reading them fail
    # (for a reason other than CUDA: `cpu`).
    "flair": Project("flair", "0.15.1", "tests",
                     deps=("boto3", "conllu<5", "deprecated", "ftfy", "gdown", "huggingface-hub", "langdetect", "lxml",
                           "matplotlib", "more-itertools", "mpld3", "pptree", "python-dateutil", "regex",
                           "scikit-learn", "segtok", "sqlitedict", "tabulate", "tqdm", "transformers[sentencepiece]<5",
                           "wikipedia-api", "bioc<3", "transformer-smaller-training-vocab"),
                     nodeps=("pytorch_revgrad",),
                     # its addopts need pytest-black etc.; its `filterwarnings = error` turns pytest-benchmark's
                     # warning under xdist (the host's plugin, seen through the venv) into an internal error
                     pytest_args=("-o", "addopts=", "-p", "no:benchmark")),
    # Round 15, more suites. Interpretability on Hugging Face models: unit tests of a large in-repo library (model
    # bridges for 100+ architectures), `if torch.cuda.is_available()` in autouse fixtures, models the Hub would
    # give (offline here: those tests fail for want of the Hub, so `cpu`).
    "transformer-lens": Project(
        "transformer-lens", "4.3.0", "tests/unit",
        deps=("accelerate>=1.1.0", "beartype>=0.14.1", "datasets>=2.7.1", "einops>=0.6.0", "fancy-einsum>=0.0.3",
              "huggingface-hub>=0.23.2", "jaxtyping>=0.3", "numpy", "packaging", "pandas", "protobuf", "rich",
              "sentencepiece", "tqdm", "transformers-stream-generator<0.1,>=0.0.5", "transformers>=5.9.0",
              "typeguard<5,>=4.2", "typing-extensions", "wandb"),
        pytest_args=("-o", "addopts=", "-p", "no:benchmark")),
    # Tracing and editing models' internals (greenlets, serialised interventions); its tests build gpt2 from the
    # Hub in module fixtures (offline: they fail, `cpu`), quantization tests ask for CUDA capabilities.
    "nnsight": Project(
        "nnsight", "0.8.1", "tests",
        deps=("greenlet", "pydantic", "pyyaml", "cloudpickle", "transformers", "huggingface-hub", "websocket-client",
              "zstandard", "httpx", "tqdm", "accelerate"),
        pytest_args=("-o", "addopts=", "-p", "no:benchmark")),
    # Round 16: four small suites the earlier rounds listed but did not try.
    # Quantum circuits in torch; a module-level `DEVICE = torch.device("cuda") if ... else "cpu"`; parametrizations
    # drawn with `random` at import (ids differ between two collections).
    "pyqtorch": Project("pyqtorch", "1.7.8", "tests", deps=("numpy", "qutip", "flaky"),
                        pytest_args=("-o", "addopts=")),
    # RL algorithms on stable-baselines3; `model_class.load(..., device="cuda")` falls back to the CPU inside
    # sb3's get_device when CUDA is absent.
    "sb3-contrib": Project("sb3-contrib", "2.9.2", "tests",
                           deps=("gymnasium", "cloudpickle", "pandas", "matplotlib", "tqdm", "rich", "psutil"),
                           nodeps=("stable-baselines3==2.9.2",),
                           pytest_args=("-o", "addopts=", "-p", "no:cov")),
    # Settings modules build problem lists over `get_available_devices()` (cpu, plus cuda when present); ids from
    # a `make_id` helper.
    "unfoldNd": Project("unfoldNd", "0.2.3", "test", deps=("packaging", "numpy"),
                        pytest_args=("-o", "addopts=")),
    # unittest classes choosing `self.device = torch.device('cuda') if torch.cuda.is_available() else ...`.
    "pytorch-warmup": Project("pytorch-warmup", "0.2.0", "test"),
    # Equivariant tensor products (NVIDIA); a module-level `device = torch.device("cuda:0") if
    # torch.cuda.is_available() else ...` in most test files, CUDA-kernel tests under skipif.
    "cuequivariance-torch": Project("cuequivariance-torch", "0.13.0", "tests",
                                    deps=("cuequivariance", "numpy", "scipy"), pytest_args=("-o", "addopts=")),
    # Round 21 (docs/classifier-accuracy.md, "Round 21: new suites"). Spherical harmonics and convolutions on the
    # sphere: `parameterized_class` over a device list that gains `cuda` when it is there, distributed tests
    # (their `util` helper is not in the sdist: collection errors).
    "torch-harmonics": Project("torch-harmonics", "0.8.0", "tests", deps=("numpy", "parameterized"),
                               pytest_args=("--continue-on-collection-errors",)),
    # Tensor networks; one file picks `device = 'cuda' if torch.cuda.is_available() else 'cpu'` at import.
    "tntorch": Project("tntorch", "1.1.2", "tests", deps=("numpy", "scipy")),
    # Knowledge-graph embeddings; unittest classes, models moved with `.cuda()` only where CUDA is there.
    "torchkge": Project("torchkge", "0.17.7", "tests", deps=("numpy", "pandas", "tqdm", "requests")),
    # Inverse problems in imaging: a `device` fixture over `list(dict.fromkeys([cpu, get_device()]))` (one case on a
    # CPU machine), physics operators and denoisers; tests needing downloaded weights or datasets fail offline
    # (excluded). Needs torchvision, so it runs on the torch 2.14.1 / torchvision 0.29.1 pair.
    "deepinv": Project("deepinv", "0.5.0", "deepinv/tests",
                       deps=("numpy", "matplotlib", "tqdm", "torchmetrics", "einops", "requests", "h5py", "natsort",
                             "scipy", "PyWavelets"),
                       torch_pins=TORCHVISION_PAIR),
    # Image models (timm); `torch_device = os.environ.get('TORCH_DEVICE', 'cpu')`, CUDA tests under skipif. Without
    # test_models.py (thousands of model forward passes: past the time cap alone) and test_hub.py (the Hub is
    # unreachable here). Needs torchvision: the torch 2.14.1 / torchvision 0.29.1 pair, as deepinv.
    "timm": Project("timm", "1.0.31",
                    "tests/test_checkpoint_loading.py tests/test_checkpoint_saver.py tests/test_data.py "
                    "tests/test_dataset_info.py tests/test_factory.py tests/test_input_conv.py tests/test_layers.py "
                    "tests/test_layers_drop.py tests/test_layers_pool.py tests/test_layers_pos_embed.py "
                    "tests/test_model_input.py tests/test_multilabel.py tests/test_naflex_dataset.py "
                    "tests/test_optim.py tests/test_prune.py tests/test_reader_wds.py tests/test_scheduled_sampler.py "
                    "tests/test_scheduler.py tests/test_sweep.py tests/test_sweep_fuzz.py tests/test_task.py "
                    "tests/test_train_resume.py tests/test_utils.py",
                    deps=("pyyaml", "huggingface_hub", "safetensors", "numpy", "pillow"),
                    torch_pins=TORCHVISION_PAIR),
    # Round 24 (docs/classifier-accuracy.md). Continual learning: strategies trained on synthetic benchmarks,
    # `get_device()` reading `USE_GPU` from the environment, distributed helpers, a GPU lock through GPUtil. Needs
    # torchvision: the torch 2.14.1 / torchvision 0.29.1 pair.
    "avalanche-lib": Project("avalanche-lib", "0.6.0", "tests",
                             deps=("typing-extensions", "psutil", "gputil", "scikit-learn", "matplotlib", "numpy",
                                   "pytorchcv", "tensorboard", "tqdm", "torchmetrics", "gdown", "qpsolvers",
                                   "quadprog", "dill", "packaging", "wandb"),
                             pytest_args=("-o", "addopts=", "--continue-on-collection-errors"),
                             torch_pins=TORCHVISION_PAIR),
    # Round 22 (docs/classifier-accuracy.md). Evolutionary algorithms: `@on_cuda`/`on_device("cuda:1")` decorators
    # whose tests only read the attributes they set, problems taking a `device=` argument, a ray cluster started by
    # the conftest (`ray.init(local_mode=True)`: removed from later ray releases).
    "evotorch": Project("evotorch", "0.6.1", "tests",
                        deps=("cma", "gymnasium", "matplotlib", "numpy", "packaging", "pandas", "ray<2.45"),
                        pytest_args=("-o", "addopts=")),  # its addopts need pytest-cov
    # Knowledge-graph embeddings: unittest templates (`unittest_templates`) over hundreds of model, loss and
    # training classes; devices resolved by the library (`resolve_device`).
    "pykeen": Project("pykeen", "1.11.1", "tests",
                      deps=("dataclasses-json", "numpy", "scipy", "click", "click_default_group", "scikit-learn",
                            "tqdm", "requests", "optuna", "pandas", "tabulate", "more_click", "more_itertools",
                            "pystow", "docdata", "class_resolver", "pyyaml", "torch_max_mem", "torch-ppr",
                            "typing_extensions", "unittest-templates")),
    # Survival analysis: metrics checked against lifelines and scikit-survival, a CUDA test under skipif, devices
    # kept through input coercion.
    "torchsurv": Project("torchsurv", "0.2.0", "tests",
                         deps=("numpy", "pydantic", "scipy", "torchmetrics", "lifelines", "scikit-survival",
                               "hypothesis", "loguru", "matplotlib"),
                         pytest_args=("-o", "addopts=")),  # its addopts need pytest-cov
    # Round 25 (docs/classifier-accuracy.md). Fisher matrices and NTKs: task builders in tests/tasks.py choose
    # `device = "cuda" if torch.cuda.is_available()` at import, backward hooks, a conftest fixture keyed on CUDA's
    # presence. Needs torchvision: the torch 2.14.1 / torchvision 0.29.1 pair.
    "nngeometry": Project("nngeometry", "0.4", "tests", deps=("numpy", "scipy"),
                          pytest_args=("-o", "addopts=", "--continue-on-collection-errors"),
                          torch_pins=TORCHVISION_PAIR),
    # Round 29 (docs/classifier-accuracy.md). Structured pruning over dependency graphs of torchvision models,
    # almost all on the CPU; one module moves a model to `cuda:0` at import (a collection error without CUDA), one
    # test picks `"cuda" if torch.cuda.is_available()`. Needs torchvision: the torch 2.14.1 / torchvision 0.29.1 pair.
    "torch-pruning": Project("torch-pruning", "1.6.1", "tests", deps=("numpy",),
                             pytest_args=("--continue-on-collection-errors",), torch_pins=TORCHVISION_PAIR),
    # Physics-informed networks on PyTorch Lightning: domains, samplers, conditions and solvers, no device in any
    # test (every one a CPU test).
    "torchphysics": Project("torchphysics", "1.1.2", "tests",
                            deps=("pytorch-lightning", "numpy<2", "matplotlib", "scipy", "importlib-metadata",
                                  "networkx", "trimesh", "shapely", "rtree"),
                            pytest_args=("-o", "addopts=")),  # its addopts need pytest-cov
    # Triton kernels for LLM training: `device = infer_device()` at import in test/utils.py ("cuda" where CUDA is
    # there, else "cpu"), kernels launched on tensors made there; model patching tests against transformers.
    # Its Triton kernel tests (test/transformers, test/ops, test/triton: the chunked-loss references alone run past
    # the time cap on a CPU).
    "liger-kernel": Project("liger-kernel", "0.8.5", "test/transformers test/ops test/triton",
                            deps=("triton", "transformers", "tokenizers", "numpy", "packaging", "datasets"),
                            pytest_args=("--continue-on-collection-errors",)),
    # Minimum-distortion embeddings: tests inside the package, `@testing.cpu_and_cuda` parametrizes a test over
    # "cpu" and, where CUDA is there, "cuda"; a default device set through the library (`util.set_default_device`).
    "pymde": Project("pymde", "0.3.0", "pymde", deps=("numpy", "scipy", "matplotlib", "requests"),
                     torch_pins=TORCHVISION_PAIR, inplace=("pymde/_native*.so", "pymde.libs/*")),
    # Conditional flow matching: flow matchers, optimal-transport plans and small models, no device in its tests.
    "torchcfm": Project("torchcfm", "1.0.7", "tests",
                        deps=("matplotlib", "numpy", "scipy", "scikit-learn", "pot", "absl-py", "pandas", "attrs",
                              "trampoline", "pytorch-lightning"),
                        nodeps=("torchdyn", "torchdiffeq", "torchsde", "torchcde")),
    # Forecasting models trained with PyTorch Lightning (`accelerator="auto"` by default, "cpu" in some tests),
    # distributed fitting through Ray and Spark.
    "neuralforecast": Project("neuralforecast", "3.3.0", "tests",
                              deps=("coreforecast", "fsspec", "numpy", "pandas", "scipy", "tornado",
                                    "pytorch-lightning", "safetensors", "ray[train,tune]", "optuna", "utilsforecast",
                                    "polars", "matplotlib"),
                              pytest_args=("-o", "addopts=")),  # its addopts need pytest-cov
    # Differentiable programming for control and optimisation: constraints, maps, dynamics, a hypothesis strategy
    # that draws the device (`st.sampled_from(['cpu', 'cuda:1'])`).
    "neuromancer": Project("neuromancer", "1.5.6", "tests",
                           deps=("dill", "graphviz", "matplotlib", "networkx<4", "numpy", "pandas",
                                 "plum-dispatch==1.7.3", "scikit-learn", "scipy", "six", "pydot==1.4.2", "pyts",
                                 "toml", "lightning", "cvxpy", "diffcp", "casadi", "trampoline", "hypothesis", "wandb"),
                           nodeps=("torchdiffeq", "torchsde", "cvxpylayers")),
    # Functional tensor algebra for probabilistic programming: thousands of cases parametrized by tuples, strings
    # and `ids=str`; the backend is chosen by FUNSOR_BACKEND (numpy when unset, as here: the classifier reads the
    # same default). No device in its tests.
    "funsor": Project("funsor", "0.4.8", "test",
                      deps=("makefun", "multipledispatch", "numpy", "opt_einsum", "typing_extensions", "scipy")),
    # Training framework: test classes named `*Test` (its pyproject's `python_classes = ["*Test"]`), GPU tests
    # behind `skipif(not torch.cuda.is_available())`; torchvision for its image callbacks.
    "poutyne": Project("poutyne", "1.19.0", "tests",
                       deps=("lightning_utilities", "numpy", "torchmetrics", "scikit-learn", "tensorboard",
                             "colorama", "pandas", "omegaconf"),
                       pytest_args=("-o", "addopts="), torch_pins=TORCHVISION_PAIR),  # (its addopts need pytest-cov)
    # Compiles scikit-learn, LightGBM and XGBoost models into torch programs (`device="cuda"` an option of convert;
    # its tests run on the CPU, and skip where an optional backend is missing).
    "hummingbird-ml": Project("hummingbird-ml", "0.4.12", "tests",
                              deps=("numpy", "onnxconverter-common", "scipy", "scikit-learn", "psutil", "dill",
                                    "protobuf", "packaging")),
    # Bayesian optimisation (round 39; its sdist ships only the community tests): a candidate's fixed features put
    # on CUDA only when a given value already is (`get_device_of_sequence`), models from gpytorch.
    "botorch": Project("botorch", "0.16.1", "test_community",
                       deps=("typing_extensions", "pyre_extensions", "scipy", "multipledispatch", "threadpoolctl",
                             "requests", "opt_einsum", "pyro-api", "tqdm", "jaxtyping", "mpmath", "scikit-learn"),
                       nodeps=("gpytorch", "linear_operator", "pyro-ppl")),
}

COMMON_DEPS = ("pytest", "pytest-timeout", "pytest-xdist")

# What a CPU-only run says when a test needs an accelerator. "no device" (torchani's `skipIf(not
# torch.cuda.is_available(), "There is no device to run this test")`): a CPU is always there, so the missing
# device is an accelerator.
GPU_TEXT = re.compile(
    r"cuda|\bgpus?\b|accelerator|nccl|cudnn|nvidia|\bxpu\b|\bmps\b|\bnpu\b|\bhpu\b|multi-?device|\bno device\b|"
    r"multiple devices|more than one device|device does not support|bitsandbytes.*(?:gpu|cuda)|triton",
    re.IGNORECASE)
CUDA_ERROR = re.compile(
    r"Torch not compiled with CUDA enabled|No CUDA GPUs are available|Found no NVIDIA driver|"
    r"CUDA driver initialization failed|invalid device ordinal|CUDA error|"
    r"Cannot access accelerator device when none is available|nccl|"
    r"device type at start of device string|Expected one of cpu, cuda|NCCL|"
    # Triton without a GPU driver, and a Triton kernel given CPU tensors
    r"0 active drivers|cannot be accessed from Triton", re.IGNORECASE)
# Environment problems that say nothing about devices.
UNRELATED = re.compile(
    r"ModuleNotFoundError|No module named|ImportError|not installed|requires? (?:the )?[\w.-]+ (?:library|package)|"
    r"is not available\b(?!.*(?:cuda|gpu|accelerator))|OfflineModeIsEnabled|LocalEntryNotFoundError|"
    r"offline mode|ConnectionError|Max retries exceeded|Name or service not known|Temporary failure in name|"
    r"couldn't connect|huggingface\.co|HF_HUB_OFFLINE|Timeout >|Failed: Timeout|test is slow|"
    r"requires the internet|network", re.IGNORECASE)

# A skip that names a requirement other than a device is a missing optional dependency ("test requires
# torchao", "requires the Hugging Face suite"): it says nothing about what the test needs on a CPU.
MISSING_DEP = re.compile(r"\brequires?\b|\bneeds?\b|unavailable|not available|not found", re.IGNORECASE)

PLUGIN = '''
import json, os

_OUT = os.environ["ACCURACY_REPORT"]


def _text(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        path, line, reason = report.longrepr
        return f"{reason} @{path}:{line}"
    try:
        return str(report.longreprtext)[-4000:]
    except Exception:
        return ""


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        xfail = bool(getattr(report, "wasxfail", None))
        with open(_OUT, "a") as f:
            f.write(json.dumps({"id": report.nodeid, "when": report.when, "outcome": report.outcome,
                                "xfail": xfail, "text": _text(report)}) + "\\n")


def pytest_collectreport(report):
    if report.outcome != "passed":
        with open(_OUT, "a") as f:
            f.write(json.dumps({"id": report.nodeid, "when": "collect", "outcome": report.outcome,
                                "xfail": False, "text": _text(report)}) + "\\n")
'''


def sh(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float | None = None,
       check: bool = True) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, check=check, text=True, capture_output=True)


def ensure_venv(work: Path, proj: Project) -> Path:
    """One venv per suite (their test dependencies conflict), reusing the host's CPU torch."""
    venv = work / "venvs" / proj.name
    py = venv / "bin" / "python"
    if not (venv / "bin" / "pip").exists():  # none yet, or one whose creation was interrupted
        venv.parent.mkdir(parents=True, exist_ok=True)
        sh([sys.executable, "-m", "venv", "--clear", "--system-site-packages", str(venv)])
    # a host Python without torch (a suite with torch_pins installs its own pair)
    if not proj.torch_pins and sh([str(py), "-c", "import torch"], check=False).returncode != 0:
        sh([str(py), "-m", "pip", "install", "-q", CPU_TORCH])
    return py


def pip_install(py: Path, pkgs: list[str], nodeps: bool) -> None:
    if not pkgs:
        return
    if not nodeps:
        dry = sh([str(py), "-m", "pip", "install", "--dry-run", *pkgs], check=False)
        # torch itself, not a name ending in "-torch" ("tensorly-torch-0.5.0" has a word boundary before "torch")
        if re.search(r"^Would install .*(?<=\s)torch-\d", dry.stdout, re.MULTILINE):
            raise SystemExit(f"refusing: installing {pkgs} would replace torch:\n{dry.stdout[-2000:]}")
    sh([str(py), "-m", "pip", "install", "-q", *(["--no-deps"] if nodeps else []), *pkgs])


def fetch_source(work: Path, proj: Project) -> Path:
    src = work / "src" / f"{proj.name}-{proj.version}"
    if src.exists():
        return src
    dl = work / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    # the sdist of this project only: `--no-binary :all:` would also build its build backend from source
    # (uv_build needs a Rust toolchain), so the download fails before the archive is kept
    sh([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", proj.name, "-d", str(dl),
        f"{proj.name}=={proj.version}"])
    norm = re.sub(r"[-_.]+", "[-_.]", proj.name)
    archive = next(p for p in sorted(dl.iterdir()) if re.match(rf"(?i){norm}-{re.escape(proj.version)}\.tar\.gz",
                                                               p.name))
    (work / "src").mkdir(exist_ok=True)
    with tarfile.open(archive) as tf:
        tf.extractall(work / "src", filter="data")
    for p in (work / "src").iterdir():  # sdists name their folder after the normalised project name
        if p.is_dir() and p != src and p.name.lower().replace("_", "-") == src.name.lower().replace("_", "-"):
            p.rename(src)
    for rel in proj.drop:
        (src / rel).unlink(missing_ok=True)
    missing = [t for t in proj.tests.split() if not (src / t).exists()]
    if missing:
        raise SystemExit(f"{proj.name} {proj.version}: sdist has no {', '.join(missing)}")
    return src


def ground_truth(work: Path, proj: Project, py: Path, src: Path, time_cap: int, jobs: int) -> Path:
    out = work / "gt" / f"{proj.name}.jsonl"
    out.parent.mkdir(exist_ok=True)
    plugin_dir = work / "plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "accuracy_report_plugin.py").write_text(PLUGIN)
    out.unlink(missing_ok=True)
    env = {**os.environ, "ACCURACY_REPORT": str(out), "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": str(plugin_dir), **dict(proj.env)}
    cmd = [str(py), "-m", "pytest", "-p", "accuracy_report_plugin", "-p", "no:cacheprovider", "-q", "-rs",
           "--timeout", "120", f"--rootdir={src}", *(["-n", str(jobs)] if jobs > 1 else []),
           *proj.pytest_args, *proj.tests.split()]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    t0 = time.monotonic()
    try:
        subprocess.run(cmd, cwd=src, env=env, timeout=time_cap, text=True, capture_output=True, check=False)
    except subprocess.TimeoutExpired:
        print(f"  {proj.name}: time cap {time_cap}s reached; scoring the tests that ran", file=sys.stderr)
    print(f"  {proj.name}: ground truth in {time.monotonic() - t0:.0f}s", file=sys.stderr)
    if not out.exists():  # nothing scored would read as a perfect score of nothing
        print(f"  {proj.name}: WARNING: no test finished within the cap (collection alone may take longer "
              f"under xdist): raise --time-cap or use --jobs 1", file=sys.stderr)
    return out


def collect_ids(work: Path, proj: Project, py: Path, src: Path) -> Path:
    """`pytest --collect-only -q`'s node ids (one per line), the reference the classifier's keys must equal."""
    out = work / "collect" / f"{proj.name}.txt"
    out.parent.mkdir(exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "", **dict(proj.env)}
    # an absolute verbosity after the suite's own options: `-q` on top of an `addopts = "-q"` (sbi) prints
    # per-file counts instead of node ids
    cmd = [str(py), "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", f"--rootdir={src}",
           *proj.pytest_args, "--verbosity=-1", *proj.tests.split()]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    got = subprocess.run(cmd, cwd=src, env=env, timeout=900, text=True, capture_output=True, check=False)
    ids = [ln.strip() for ln in got.stdout.splitlines() if "::" in ln and not ln.startswith(("ERROR", "FAILED"))]
    errors = [ln.strip() for ln in got.stdout.splitlines() if ln.startswith("ERROR ")]
    if not ids:
        raise SystemExit(f"{proj.name}: pytest --collect-only found no tests (rc {got.returncode}):\n"
                         f"{(got.stdout + got.stderr)[-3000:]}")
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(f"{i}\n" for i in ids))
    tmp.rename(out)
    (work / "collect" / f"{proj.name}.errors").write_text("".join(f"{e}\n" for e in errors))
    print(f"  {proj.name}: {len(ids)} node ids collected, {len(errors)} collection errors", file=sys.stderr)
    return out


@dataclass
class Truth:
    label: str  # cpu | gpu | excluded
    why: str


def _source_lines(src: Path, path: str, first: int, last: int) -> str:
    """Lines first..last (1-based, inclusive) of a suite file, stripped and joined; "" when unreadable."""
    try:
        lines = (src / path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return " ".join(x.strip() for x in lines[max(first - 1, 0):max(last, 0)])


def _source_near(src: Path, where: str) -> str:
    """The lines before a reason-less skip (`if device == "cuda" and not torch.cuda.is_available(): skip()`)."""
    path, _, line = where.rpartition(":")
    try:
        n = int(line)
    except ValueError:
        return ""
    return _source_lines(src, path, n - 2, n)


def label_of(rows: list[dict[str, object]], src: Path) -> Truth:
    """One test's ground truth from its setup/call/teardown reports."""
    bad = [r for r in rows if r["outcome"] != "passed"]
    if not bad:
        return Truth("cpu", "passed")
    r = next((r for r in bad if r["outcome"] == "failed"), bad[0])
    text = str(r["text"])
    if r["xfail"]:
        return Truth("cpu", "xfail")
    if r["outcome"] == "skipped":
        text, _, where = text.rpartition(" @")
        if text.strip() in ("Skipped", "Skipped: ", "") and where:
            text = f"{text} (no reason; source: {_source_near(src, where)})"
        if GPU_TEXT.search(text):
            return Truth("gpu", f"skipped: {text.strip()[:120]}")
        if UNRELATED.search(text) or MISSING_DEP.search(text):
            return Truth("excluded", f"skipped: {text.strip()[:120]}")
        return Truth("cpu", f"skipped: {text.strip()[:120]}")
    # the error itself (pytest's `E ` lines), not source quoted in the traceback (`TORCH_NCCL_TRACE_BUFFER_SIZE`
    # in torch.distributed's code when a gloo setup fails)
    error = "\n".join(ln for ln in text.splitlines() if ln.startswith("E ")) or text
    if CUDA_ERROR.search(error):
        m = CUDA_ERROR.search(error)
        return Truth("gpu", f"failed: {m.group(0) if m else ''}")
    if UNRELATED.search(text):
        m = UNRELATED.search(text)
        return Truth("excluded", f"failed: {m.group(0) if m else ''}")
    last = [ln for ln in text.strip().splitlines() if ln.strip()][-1:] or [""]
    at = re.match(r"(\S+\.py):(\d+): \w+", last[0].strip())
    if at:
        n = int(at.group(2))
        line = _source_lines(src, at.group(1), n, n)
        if "skip" in line and GPU_TEXT.search(line):
            # the test asked to be skipped for lack of CUDA and the skip call itself failed (pytest 8 removed
            # `pytest.skip(msg=...)`): it wants a GPU, as the skip says
            return Truth("gpu", f"failed in a skip for lack of CUDA: {line.strip()[:100]}")
    return Truth("cpu", f"failed: {last[0].strip()[:120]}")


def read_truth(path: Path, src: Path) -> tuple[dict[str, Truth], dict[str, Truth]]:
    """(per test id, per file skipped or broken at collection)."""
    by_id: dict[str, list[dict[str, object]]] = {}
    files: dict[str, Truth] = {}
    if not path.exists():
        return {}, {}
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if r["when"] == "collect":
            text = str(r["text"])
            kind = "gpu" if GPU_TEXT.search(text) and r["outcome"] == "skipped" else (
                "gpu" if CUDA_ERROR.search(text) else "excluded")
            files[str(r["id"]).split("::", 1)[0]] = Truth(kind, f"collection {r['outcome']}: {text.strip()[-160:]}")
            continue
        by_id.setdefault(str(r["id"]), []).append(r)
    return {k: label_of(v, src) for k, v in by_id.items()}, files


def classify(src: Path, proj: Project, classifier_root: Path = ROOT, jobs: int = 1,
             save: Path | None = None, python: Path | None = None) -> dict[str, dict[str, object]]:
    """The classifier's report for the suite's test paths (kept in `save` so revisions can be diffed).
    `python`: the interpreter that runs it (default this one); the suite's venv lets the classifier read test
    bases of the packages installed there (docs/classification.md, "Round 12: test bases from installed
    packages")."""
    cmd = [str(python or sys.executable), "-m", "tools.classify", "--root", str(src), "--paths", *proj.tests.split(),
           "--format", "json", "--no-cache", "--jobs", str(jobs)]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    t0 = time.monotonic()
    got = subprocess.run(cmd, cwd=classifier_root, text=True, capture_output=True, check=False)
    print(f"  {proj.name}: classified in {time.monotonic() - t0:.1f}s", file=sys.stderr)
    if got.returncode not in (0, 1) or not got.stdout.strip():
        raise SystemExit(f"classifier failed on {proj.name}:\n{got.stderr[-3000:]}")
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        tmp = save.with_suffix(".tmp")
        tmp.write_text(got.stdout)
        tmp.rename(save)
    report = json.loads(got.stdout)
    return {k: v for k, v in report.items() if "::" in k and isinstance(v, dict)}


def not_ignored(cls: dict[str, dict[str, object]], proj: Project) -> dict[str, dict[str, object]]:
    """The classifier's keys outside the paths the suite's pytest arguments `--ignore=`: pytest never runs those,
    so they are neither scored nor listed as classified but not run."""
    ignored = [a.removeprefix("--ignore=").rstrip("/") for a in proj.pytest_args if a.startswith("--ignore=")]
    return {k: v for k, v in cls.items()
            if not any(k.split("::", 1)[0] == i or k.startswith(i + "/") for i in ignored)}


def revision(root: Path) -> str:
    """Short commit of the classifier checkout (`-dirty` with uncommitted changes), to name saved reports."""
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], text=True,
                          capture_output=True, check=False).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "tools"], text=True,
                           capture_output=True, check=False).stdout.strip()
    return f"{head}-dirty" if dirty else head


@dataclass
class IdMatch:
    """How the classifier's keys cover `pytest --collect-only`'s node ids.

    exact: the key equals the node id. function: no exact key, but a key without `[...]` for the same
    function (`f.py::C::test_x` for `f.py::C::test_x[cuda-2]`), the fallback the classifier emits where it
    cannot compute the ids: covered for routing, not an equal id. cls: only a class-level key covers it.
    guessed: keys with `[...]` in a collected file that pytest does not collect (ids spelled differently)."""
    collected: int = 0
    exact: int = 0
    function: int = 0
    cls: int = 0
    missing: list[str] = field(default_factory=list)
    function_ids: list[str] = field(default_factory=list)
    guessed: list[str] = field(default_factory=list)

    def merge(self, other: IdMatch) -> None:
        self.collected += other.collected
        self.exact += other.exact
        self.function += other.function
        self.cls += other.cls
        self.missing += other.missing
        self.function_ids += other.function_ids
        self.guessed += other.guessed


def match_ids(collected: list[str], cls: dict[str, dict[str, object]]) -> IdMatch:
    m = IdMatch(collected=len(collected))
    files = {c.split("::", 1)[0] for c in collected}
    for nodeid in collected:
        base = nodeid.split("[", 1)[0]
        if nodeid in cls:
            m.exact += 1
        elif base != nodeid and base in cls:
            m.function += 1
            m.function_ids.append(nodeid)
        elif predicted(cls, nodeid) is not None:
            m.cls += 1
        else:
            m.missing.append(nodeid)
    want = set(collected)
    m.guessed = sorted(k for k in cls if "[" in k and k not in want and k.split("::", 1)[0] in files)
    return m


def predicted(cls: dict[str, dict[str, object]], nodeid: str) -> str | None:
    """The classifier's label for a pytest node id (a key without [...] covers its parametrizations)."""
    if nodeid in cls:
        return label_without_gpus(cls[nodeid])
    base = nodeid.split("[", 1)[0]
    if base in cls:
        return label_without_gpus(cls[base])
    parts = base.split("::")
    while len(parts) > 2:  # a class-level fallback key covers generated method names
        parts = parts[:-1]
        if "::".join(parts) in cls:
            return label_without_gpus(cls["::".join(parts)])
    return None


@dataclass
class Score:
    matrix: dict[tuple[str, str], int] = field(default_factory=dict)
    excluded: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # run by pytest, no classifier entry
    extra: list[str] = field(default_factory=list)  # classified, not run by pytest (collection differs)
    errors: list[tuple[str, str, str, str]] = field(default_factory=list)  # id, truth, predicted, why

    def add(self, truth: str, pred: str) -> None:
        self.matrix[(truth, pred)] = self.matrix.get((truth, pred), 0) + 1

    def merge(self, other: Score) -> None:
        for k, v in other.matrix.items():
            self.matrix[k] = self.matrix.get(k, 0) + v
        self.excluded += other.excluded
        self.missing += other.missing
        self.extra += other.extra
        self.errors += other.errors

    def scored(self) -> int:
        return sum(self.matrix.values())

    def correct(self) -> int:
        return self.matrix.get(("cpu", "cpu"), 0) + self.matrix.get(("gpu", "gpu"), 0)


def score(truth: dict[str, Truth], files: dict[str, Truth], cls: dict[str, dict[str, object]],
          complete: bool) -> Score:
    s = Score()
    for nodeid in sorted(truth):
        t = truth[nodeid]
        if t.label == "excluded":
            s.excluded.append((nodeid, t.why))
            continue
        p = predicted(cls, nodeid)
        if p is None:
            s.missing.append(nodeid)
            continue
        s.add(t.label, p)
        if p != t.label:
            s.errors.append((nodeid, t.label, p, t.why))
    for nodeid in sorted(cls):
        f = nodeid.split("::", 1)[0]
        if f in files:
            t = files[f]
            if t.label == "excluded":
                s.excluded.append((nodeid, t.why))
                continue
            p = label_without_gpus(cls[nodeid])
            s.add(t.label, p)
            if p != t.label:
                s.errors.append((nodeid, t.label, p, t.why))
        elif complete and nodeid not in truth and not any(k.startswith(nodeid + "[") or k.startswith(nodeid + "::")
                                                          for k in truth):
            s.extra.append(nodeid)
    return s


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "n/a"


def rates(s: Score) -> dict[str, float | None]:
    """The issue-12 figures: false-CPU rate over truly-GPU tests, CPU routing over truly-CPU tests, unknown rate
    over all scored tests."""
    m = s.matrix
    gpu = sum(m.get(("gpu", p), 0) for p in ("cpu", "gpu", "unknown"))
    cpu = sum(m.get(("cpu", p), 0) for p in ("cpu", "gpu", "unknown"))
    unknown = m.get(("cpu", "unknown"), 0) + m.get(("gpu", "unknown"), 0)
    n = s.scored()
    return {"false_cpu": m.get(("gpu", "cpu"), 0) / gpu if gpu else None,
            "cpu_routing": m.get(("cpu", "cpu"), 0) / cpu if cpu else None,
            "unknown": unknown / n if n else None}


TARGETS = {"false_cpu": (0.005, "<="), "cpu_routing": (0.95, ">="), "unknown": (0.03, "<="),
           "node_ids": (0.995, ">=")}


def verdict(key: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    goal, op = TARGETS[key]
    ok = value <= goal if op == "<=" else value >= goal
    return f"{100 * value:.2f}% ({'ok' if ok else 'MISSED'}: {op} {100 * goal:g}%)"


def print_ids(m: IdMatch, show: int) -> None:
    print(f"node ids: {m.collected} collected; exact {m.exact} = "
          f"{verdict('node_ids', m.exact / m.collected if m.collected else None)}; "
          f"function-level key only {m.function} ({pct(m.function, m.collected)}); "
          f"class-level key only {m.cls}; no key {len(m.missing)}; "
          f"covered (exact + function-level) {pct(m.exact + m.function, m.collected)}; "
          f"guessed ids not collected {len(m.guessed)}")
    if show:
        for nodeid in m.missing[:show]:
            print(f"  NO KEY: {nodeid}")
        for nodeid in m.function_ids[:show]:
            print(f"  FUNCTION KEY ONLY: {nodeid}")
        for nodeid in m.guessed[:show]:
            print(f"  GUESSED (not collected): {nodeid}")


def print_score(name: str, s: Score, show: int) -> None:
    m = s.matrix
    n = s.scored()
    print(f"\n## {name}")
    print(f"scored {n} tests, accuracy {100 * s.correct() / n if n else 0:.1f}%  "
          f"(excluded {len(s.excluded)}, run but unclassified {len(s.missing)}, classified but not run "
          f"{len(s.extra)})")
    print("truth \\ predicted     cpu     gpu unknown")
    for t in ("cpu", "gpu"):
        print(f"{t:<18} {m.get((t, 'cpu'), 0):>7} {m.get((t, 'gpu'), 0):>7} {m.get((t, 'unknown'), 0):>7}")
    unknown = m.get(("cpu", "unknown"), 0) + m.get(("gpu", "unknown"), 0)
    print(f"unknown rate {100 * unknown / n if n else 0:.1f}%  cpu->gpu {m.get(('cpu', 'gpu'), 0)}  "
          f"gpu->cpu {m.get(('gpu', 'cpu'), 0)}")
    r = rates(s)
    print(f"false-CPU {verdict('false_cpu', r['false_cpu'])}; CPU routing {verdict('cpu_routing', r['cpu_routing'])}; "
          f"unknown {verdict('unknown', r['unknown'])}")
    if show:
        for nodeid, t, p, why in s.errors[:show]:
            print(f"  WRONG {t}->{p}: {nodeid}  ({why})")
        for nodeid in s.missing[:show]:
            print(f"  UNCLASSIFIED: {nodeid}")
        for nodeid in s.extra[:show]:
            print(f"  NOT RUN: {nodeid}")


def site_packages(py: Path) -> Path:
    return Path(sh([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())


def copy_inplace(site: Path, proj: Project, src: Path) -> None:
    """Put the installed wheel's compiled modules named by `proj.inplace` into the source tree (Project.inplace);
    a file already there is kept."""
    for pattern in proj.inplace:
        found = sorted(site.glob(pattern))
        if not found:
            raise SystemExit(f"{proj.name}: the installed package has no {pattern} under {site}")
        for f in found:
            dest = src / f.relative_to(site)
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, dest)


def prepare(work: Path, proj: Project, args: argparse.Namespace) -> tuple[Path, Path, Path]:
    """Source, ground truth and collected node ids of one suite, computed unless --reuse finds them."""
    src = fetch_source(work, proj)
    py = ensure_venv(work, proj)
    gt = work / "gt" / f"{proj.name}.jsonl"
    ids = work / "collect" / f"{proj.name}.txt"
    complete_marker = work / "gt" / f"{proj.name}.complete"
    installed = work / "venvs" / f"{proj.name}.installed"
    if not (args.reuse and gt.exists() and ids.exists()) and not installed.exists():
        if proj.torch_pins:
            sh([str(py), "-m", "pip", "install", "-q", *proj.torch_pins])
        pip_install(py, [*COMMON_DEPS, *proj.deps], nodeps=False)
        pip_install(py, [*proj.nodeps, f"{proj.name}=={proj.version}"], nodeps=True)
        installed.write_text("ok\n")
    if proj.inplace:
        copy_inplace(site_packages(py), proj, src)
    if not (args.reuse and gt.exists()):
        t0 = time.monotonic()
        gt = ground_truth(work, proj, py, src, args.time_cap, proj.jobs or args.jobs)
        complete_marker.unlink(missing_ok=True)
        if time.monotonic() - t0 < args.time_cap - 5:
            complete_marker.write_text("ok\n")
    if not (args.reuse and ids.exists()):
        ids = collect_ids(work, proj, py, src)
    return src, gt, ids


def markdown_row(name: str, s: Score, ids: IdMatch) -> str:
    """One line of the summary table (docs/classifier-accuracy.md, /work/realsuites/STATUS.md)."""
    r = rates(s)
    m = s.matrix
    gpu = sum(m.get(("gpu", p), 0) for p in ("cpu", "gpu", "unknown"))

    def fmt(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f}%"

    return (f"| {name} | {s.scored()} | {gpu} | {m.get(('gpu', 'cpu'), 0)} ({fmt(r['false_cpu'])}) | "
            f"{fmt(r['cpu_routing'])} | {fmt(r['unknown'])} | {ids.collected} | {pct(ids.exact, ids.collected)} | "
            f"{pct(ids.exact + ids.function, ids.collected)} | {len(ids.guessed)} |")


MARKDOWN_HEADER = ("| suite | scored | truly GPU | GPU→cpu (false-CPU) | CPU routing | unknown | collected | "
                   "ids exact | exact + function key | guessed ids |\n|---|---|---|---|---|---|---|---|---|---|")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", nargs="*", default=list(PROJECTS), choices=sorted(PROJECTS))
    ap.add_argument("--workdir", type=Path, default=None, help="keep downloads, venvs and ground truth here")
    ap.add_argument("--time-cap", type=int, default=600, help="seconds of pytest wall time per project")
    ap.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers for the ground-truth runs")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse ground truth and collected node ids already in --workdir")
    ap.add_argument("--truth-only", action="store_true", help="prepare ground truth and node ids; do not classify")
    ap.add_argument("--classify-jobs", type=int, default=1, help="the classifier's --jobs")
    ap.add_argument("--show-errors", type=int, default=10,
                    help="misclassified and unmatched node ids to print per project")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--classifier-python", choices=("host", "suite"), default="host",
                    help="run the classifier with this Python (host) or the suite's venv Python (suite: it sees "
                         "the test base classes of the packages installed for the suite, as pytest does)")
    ap.add_argument("--classifier-root", type=Path, default=ROOT,
                    help="checkout whose tools/classify to measure (e.g. an older revision, for before/after)")
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="accuracy-real-suites-"))
    work.mkdir(parents=True, exist_ok=True)
    rev = revision(args.classifier_root)
    total = Score()
    total_ids = IdMatch()
    figures: dict[str, object] = {}
    rows: list[str] = []
    for name in args.projects:
        proj = PROJECTS[name]
        try:
            src, gt, ids_file = prepare(work, proj, args)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError, SystemExit) as exc:
            detail = getattr(exc, "stderr", None) or ""
            print(f"\n## {proj.name} {proj.version}\nNOT PREPARED: {exc}\n{str(detail)[-2000:]}", flush=True)
            continue  # one suite that cannot be installed or run does not stop the others
        if args.truth_only:
            continue
        truth, files = read_truth(gt, src)
        python = ensure_venv(work, proj) if args.classifier_python == "suite" else None
        cls = not_ignored(classify(src, proj, args.classifier_root, args.classify_jobs,
                                   work / "classified" / f"{proj.name}@{rev}.json", python), proj)
        s = score(truth, files, cls, (work / "gt" / f"{proj.name}.complete").exists())
        ids = match_ids(ids_file.read_text().splitlines(), cls)
        print_score(f"{proj.name} {proj.version}", s, args.show_errors)
        print_ids(ids, args.show_errors)
        figures[name] = {"matrix": {f"{t}->{p}": n for (t, p), n in sorted(s.matrix.items())},
                         "scored": s.scored(), "correct": s.correct(), "excluded": len(s.excluded),
                         "unclassified": len(s.missing), "not_run": len(s.extra), **rates(s),
                         "collected": ids.collected, "ids_exact": ids.exact, "ids_function_key": ids.function,
                         "ids_class_key": ids.cls, "ids_no_key": len(ids.missing), "ids_guessed": len(ids.guessed)}
        rows.append(markdown_row(f"{proj.name} {proj.version}", s, ids))
        total.merge(s)
        total_ids.merge(ids)
    if not args.truth_only:
        print_score("all projects", total, 0)
        print_ids(total_ids, 0)
        print(f"\n{MARKDOWN_HEADER}\n" + "\n".join([*rows, markdown_row("**all**", total, total_ids)]))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    print(f"\nwork directory: {work}; classifier {args.classifier_root} at {rev}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
