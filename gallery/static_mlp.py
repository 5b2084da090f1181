"""A static graph (vizgrad.static): one MLP traced once, compiled into a training step,
then split over two data-parallel replicas.  Each picture is one of the graphs below:

    vizgrad render --static-graph forward gallery/static_mlp.py
    vizgrad render --static-graph step gallery/static_mlp.py
    vizgrad render --static-graph parallel gallery/static_mlp.py

Forward ops are blue, backward orange, optimizer green, communication purple; buffers
show their name, shape and dtype; a red dashed edge joins buffers that
``compile_inplace`` merged; each replica is a box.
"""

import numpy as np
from sklearn.datasets import load_digits

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
from vizgrad import static

vizgrad.manual_seed(0)
digits = load_digits()
images = (digits.data[:64] / 16.0).astype(np.float32)
onehot = np.eye(10, dtype=np.float32)[digits.target[:64]]  # labels as a tensor input

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def loss_fn(x, target):
    return -(F.log_softmax(model(x), 1) * target).sum(1).mean()


forward = static.trace(loss_fn, vizgrad.tensor(images), vizgrad.tensor(onehot),
                       input_names=["images", "onehot"])
step = static.compile_inplace(
    static.compile_optimizer(static.compile_backward(forward), "sgd", lr=0.5))
parallel = static.compile_data_parallel(step, 2)

workspace = static.Workspace()
engine = static.Engine(workspace, step)
assert step.loss is not None  # compile_backward names the loss it differentiates
for _ in range(5):  # replay the compiled step: no Python model code runs
    print(f"loss {engine.run(images=images, onehot=onehot)[step.loss]:.3f}")
