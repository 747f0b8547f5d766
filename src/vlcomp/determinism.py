"""The same bits on every CPU of a kind: the kernel pin, the thread pin, and the machine record.

Float results depend on which vector kernels run. torch picks its own (ATen) kernels, oneDNN's and MKL's by the
CPU's instruction set at run time, so the same code, seeds and inputs give different last bits on a CPU with
AVX-512 than on one without, and a tiny model's chain (pretraining -> mining -> fine-tuning) amplifies those bits
into differences of several seed spreads. The pin fixes the kernels of all three libraries:

- ``ATEN_CPU_CAPABILITY=avx2``: torch's own vectorised kernels, capped at AVX2, which every x86-64 CPU of the last
  decade has (read at the first dispatch, so setting it after ``import torch`` still works);
- ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN (convolutions), capped at AVX2;
- ``MKL_CBWR=COMPATIBLE``: MKL's Conditional Numerical Reproducibility mode for its BLAS (every float32 matmul),
  set to its ``COMPATIBLE`` branch (SSE2 code without ``rcpps``/``rsqrtps``). Without an ``MKL_CBWR`` an AVX-512
  CPU gives other matmul bits even with the first two variables set (measured on a Xeon). Until 2026-11-29 the pin
  asked for the ``AVX2`` branch, but MKL honours its ISA branches on Intel CPUs only: on the AMD EPYC the pipeline
  runs on, MKL ran its ``AUTO`` branch instead (read back from MKL with :func:`mkl_cbwr_in_force`;
  ``docs/fingerprint.md``). ``COMPATIBLE`` is the branch oneMKL's CNR guide gives for Intel and non-Intel CPUs
  alike, and MKL reports it in force on that EPYC. Its cost, measured there: about +11 % CPU time on
  pretraining-size training steps (``docs/fingerprint.md``).

What is measured is the same bits on *one* CPU kind (that EPYC, in every fresh process). That two CPU kinds give
the same bits under this pin is what ``COMPATIBLE`` is meant to make possible; it has not been measured on a
second kind.

Thread count changes bits too (parallel reductions split differently), so the stages also run a fixed number of
torch threads, :data:`DEFAULT_THREADS` unless ``VLCOMP_THREADS`` says otherwise; the scheduler
(:mod:`vlcomp.parallel_repro`) gets its speed from running independent stages side by side instead.

Lift the pin with ``VLCOMP_CPU_PIN=off`` (the libraries then use the CPU's best kernels: faster on AVX-512, and
every stage output changes in its last bits, so ``dvc.lock`` no longer matches). The values a run used, and the MKL
branch MKL really ran, are in :func:`machine_record`, which goes to MLflow and to ``runs/<stage>.json``, never into
a stage output.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import MutableMapping
from typing import Any

PIN: dict[str, str] = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}
PIN_SWITCH = "VLCOMP_CPU_PIN"  # "off" lifts the pin
THREADS_ENV = "VLCOMP_THREADS"
DEFAULT_THREADS = 1
#: torch's name of the capability the pin asks for, and those it may fall back to on an older CPU
PINNED_CAPABILITIES = ("AVX2", "DEFAULT")
#: the CPU flags worth recording (the instruction sets the libraries dispatch on)
ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
             "amx_bf16", "amx_tile")
#: MKL's Conditional Numerical Reproducibility branches (``mkl_cbwr_get``'s codes, from ``mkl_types.h``)
MKL_CBWR_NAMES = {0: "OFF", 1: "BRANCH_OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1",
                  8: "SSE4_2", 9: "AVX", 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1",
                  14: "AVX512_E1"}
MKL_CBWR_STRICT = 0x10000


def pin_enabled(environ: MutableMapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    value = env.get(PIN_SWITCH, "on").strip().lower()
    if value not in ("on", "off", "1", "0", "true", "false"):
        raise ValueError(f"{PIN_SWITCH}={env.get(PIN_SWITCH)!r}: expected 'on' or 'off'")
    return value in ("on", "1", "true")


def pin_environment(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set the kernel pin in ``environ`` (default ``os.environ``) unless ``VLCOMP_CPU_PIN=off``; returns what is in
    force. A pin variable already set to another value is an error (it would silently give other bits)."""
    env = os.environ if environ is None else environ
    if not pin_enabled(env):
        return {}
    for key, value in PIN.items():
        have = env.get(key)
        if have is not None and have.lower() != value.lower():
            raise ValueError(f"{key}={have!r} contradicts the CPU pin ({key}={value}); unset it, or lift the pin "
                             f"with {PIN_SWITCH}=off")
        env[key] = value
    return dict(PIN)


def thread_count(environ: MutableMapping[str, str] | None = None) -> int:
    """The torch thread count every stage uses: ``VLCOMP_THREADS``, default :data:`DEFAULT_THREADS`."""
    env = os.environ if environ is None else environ
    raw = env.get(THREADS_ENV, str(DEFAULT_THREADS))
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{THREADS_ENV}={raw!r}: expected a whole number of threads >= 1")
    return n


def apply(environ: MutableMapping[str, str] | None = None) -> dict[str, Any]:
    """Pin the kernels and the threads for this process (call before the first torch operation) and check that
    torch really runs the pinned kernels; returns :func:`machine_record`."""
    pin_environment(environ)
    import torch

    torch.set_num_threads(thread_count(environ))
    check_pinned(environ)
    return machine_record(environ)


def check_pinned(environ: MutableMapping[str, str] | None = None) -> None:
    """Raise if the pin is on but torch already chose other kernels (torch ran an operation before the pin was
    set, e.g. an import that computed something)."""
    if not pin_enabled(environ):
        return
    import torch

    cap = torch.backends.cpu.get_cpu_capability()
    if cap not in PINNED_CAPABILITIES:
        raise RuntimeError(f"torch runs {cap} kernels although the CPU pin asks for AVX2: something ran a torch "
                           f"operation before vlcomp.determinism.pin_environment(); set the pin variables "
                           f"({', '.join(f'{k}={v}' for k, v in PIN.items())}) before starting Python")


def cpu_model_and_flags() -> tuple[str, list[str]]:
    """The CPU's model name and its instruction-set flags among :data:`ISA_FLAGS` (Linux /proc/cpuinfo; the
    platform's processor string elsewhere)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name":
                    model = value.strip()
                elif key == "flags":
                    flags = set(value.split())
                if model and flags and key == "":
                    break
    except OSError:
        pass
    return model, [f for f in ISA_FLAGS if f in flags]


def mkl_cbwr_in_force() -> str:
    """MKL's reproducibility branch as MKL itself reports it (``mkl_cbwr_get``), which can differ from the
    ``MKL_CBWR`` asked for: MKL honours its ISA branches (``AVX2``, ``AVX512``, ...) on Intel CPUs only and runs
    ``AUTO`` elsewhere. Empty when torch's MKL cannot be asked (another BLAS, or the symbol not exported).

    It runs one 2x2 matmul (MKL reads ``MKL_CBWR`` at its first call and fixes its branch then), so call it only
    once the pin is in the environment: :func:`machine_record` makes sure of that."""
    import torch

    if not torch.backends.mkl.is_available():
        return ""
    try:
        lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
        get = lib.mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return ""
    torch.ones(2, 2) @ torch.ones(2, 2)  # MKL reads MKL_CBWR at its first call
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    code = get(-1)  # MKL_CBWR_ALL
    name = MKL_CBWR_NAMES.get(code & ~MKL_CBWR_STRICT, str(code & ~MKL_CBWR_STRICT))
    return name + (",STRICT" if code & MKL_CBWR_STRICT else "")


def _pin_in_process_environment() -> bool:
    """Whether this process's environment (what MKL and ATen read) holds every pin variable at its pinned value."""
    return all(os.environ.get(k, "").lower() == v.lower() for k, v in PIN.items())


def machine_record(environ: MutableMapping[str, str] | None = None) -> dict[str, Any]:
    """What a run's float results depend on: CPU model and instruction-set flags, the kernels torch runs, the pin
    asked for and the MKL branch MKL really runs (``mkl_cbwr_in_force``), threads, and the versions of torch and
    numpy. Logged to MLflow and ``runs/<stage>.json`` only.

    Reading MKL's branch runs a matmul, and MKL fixes its branch for the process at its first call, so it is read
    only after :func:`check_pinned` (which raises if torch already runs other kernels than the pin's), and not at
    all while the pin is on but not yet in this process's environment (``mkl_cbwr_in_force`` is then empty): a
    record taken before :func:`pin_environment` does not fix an unpinned MKL branch for the rest of the run."""
    import numpy
    import torch

    env = os.environ if environ is None else environ
    in_force = ""
    if not pin_enabled(env) or _pin_in_process_environment():
        check_pinned(env)
        in_force = mkl_cbwr_in_force()
    model, flags = cpu_model_and_flags()
    return {"cpu_model": model, "cpu_flags": " ".join(flags), "cpu_count": os.cpu_count() or 1,
            "torch_capability": torch.backends.cpu.get_cpu_capability(),
            "cpu_pin": "on" if pin_enabled(env) else "off",
            **{k.lower(): env.get(k, "") for k in PIN}, "mkl_cbwr_in_force": in_force,
            "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}
