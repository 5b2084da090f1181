"""vizgrad.accelerator answers as torch.accelerator: on this machine (no GPU) the same
values and errors as torch; with CuPy (a stand-in here) through vizgrad's backend."""

import contextlib
import types

import pytest
import torch

import vizgrad as vg
import vizgrad.accelerator as acc
from vizgrad.core import backend

NO_GPU = not torch.accelerator.is_available() and backend.cuda_device_count() == 0
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="compares the answers without a GPU")


@needs_no_gpu
def test_without_a_gpu_the_answers_are_torchs():
    for name, args in [("is_available", ()), ("device_count", ()),
                       ("current_accelerator", ()), ("current_accelerator", (True,))]:
        assert getattr(vg.accelerator, name)(*args) == getattr(torch.accelerator, name)(*args)
    assert vg.accelerator.is_available() is False and vg.accelerator.device_count() == 0
    assert vg.accelerator.current_accelerator() is None


@needs_no_gpu
@pytest.mark.parametrize("call", ["current_device_index", "current_device_idx", "synchronize",
                                  "set_device_index", "set_device_idx", "device_index"])
def test_without_a_gpu_the_device_calls_raise_torchs_error(call):
    for lib in (vg, torch):
        function = getattr(lib.accelerator, call)
        args = (0,) if call.startswith("set") or call == "device_index" else ()
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                               "available."), \
                pytest.warns(FutureWarning) if call.endswith("idx") else _nothing():
            if call == "device_index":
                with function(*args):
                    pass
            else:
                function(*args)


def _nothing():
    return contextlib.nullcontext()


def test_device_index_none_does_nothing():
    for lib in (vg, torch):
        with lib.accelerator.device_index(None):
            pass


class _FakeCuPy:
    """Just the CuPy calls vizgrad.accelerator makes, recorded."""

    def __init__(self, count):
        self.log = []
        self.current = 0
        log, fake = self.log, self

        class Device:
            def __init__(self, index=None):
                self.index = index

            def __enter__(self):
                log.append(("enter", self.index))

            def __exit__(self, *exc):
                log.append(("exit", self.index))

        def set_device(index):
            log.append(("setDevice", index))
            fake.current = index

        runtime = types.SimpleNamespace(
            getDeviceCount=lambda: count, getDevice=lambda: fake.current, setDevice=set_device,
            deviceSynchronize=lambda: log.append(("deviceSynchronize",)))
        self.cuda = types.SimpleNamespace(runtime=runtime, Device=Device)


@pytest.fixture
def fake_cupy(monkeypatch):
    def install(count):
        cupy = _FakeCuPy(count)
        monkeypatch.setattr(backend, "_load_cupy", lambda: cupy)
        monkeypatch.setattr(acc, "cuda_device_count", lambda: count)
        return cupy
    return install


def test_with_cupy_and_gpus_the_accelerator_is_cuda(fake_cupy):
    cupy = fake_cupy(2)
    assert vg.accelerator.is_available() and vg.accelerator.device_count() == 2
    device = vg.accelerator.current_accelerator()
    assert device.type == "cuda" and device == vg.accelerator.current_accelerator(True)
    assert vg.accelerator.current_device_index() == 0
    vg.accelerator.set_device_index("cuda:1")
    assert vg.accelerator.current_device_index() == 1
    with vg.accelerator.device_index(0):
        assert vg.accelerator.current_device_index() == 0
    assert vg.accelerator.current_device_index() == 1
    vg.accelerator.synchronize()
    vg.accelerator.synchronize(vg.device("cuda", 0))
    assert cupy.log == [("setDevice", 1), ("setDevice", 0), ("setDevice", 1),
                        ("enter", None), ("deviceSynchronize",), ("exit", None),
                        ("enter", 0), ("deviceSynchronize",), ("exit", 0)]
    with pytest.raises(ValueError, match="not an accelerator device"):
        vg.accelerator.set_device_index("cpu")


def test_with_cupy_but_no_gpu_it_is_torch_built_for_cuda_on_a_machine_without_one(fake_cupy):
    fake_cupy(0)
    assert not vg.accelerator.is_available() and vg.accelerator.device_count() == 0
    assert vg.accelerator.current_accelerator().type == "cuda"  # what it was built for
    assert vg.accelerator.current_accelerator(check_available=True) is None
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        vg.accelerator.current_device_index()
