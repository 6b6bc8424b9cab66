"""A helper whose device use static analysis cannot see: the torch.cuda function is looked up by a
name assembled at run time, so only running the test reveals that it needs CUDA."""

import codecs

import torch


def _hidden_name() -> str:
    # rot13 of "synchronize": opaque to the classifier's constant folding.
    return codecs.decode("flapuebavmr", "rot13")


def wait_for_device() -> None:
    """Wait for queued device work, the way a benchmark helper would."""
    getattr(torch.cuda, _hidden_name())()
