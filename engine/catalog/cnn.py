"""Layer tables of convolutional networks, generated from their architecture definitions.

ResNet-50 (He et al. 2016, "Deep Residual Learning", Table 1; torchvision's v1.5 layout with
the stride on the 3×3 convolution) and MobileNetV2 (Sandler et al. 2018, Table 2) are written
down as the papers define them; every convolution's output size, multiply-accumulates (MACs)
and parameters follow from the shapes. The totals reproduce the catalogued whole-model figures
(4.1 G / 0.3 G MACs, 25.6 M / 3.5 M parameters) within 2 %, which a test checks, so the
per-layer roofline and the tutorial's whole-model point describe the same network.

Batch-norm layers are folded into their convolution for traffic (they add 2 parameters per
channel, counted in `params`); pooling and additions move activations only and are omitted
from the MAC count, as torchvision's and the papers' counts omit them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Layer:
    """One convolution or fully connected layer at batch 1 (element counts, not bytes)."""

    name: str
    kind: str  # "conv", "depthwise" or "fc"
    in_channels: int
    out_channels: int
    kernel: int
    stride: int
    out_side: int  # output height = width
    groups: int = 1
    batch_norm: bool = True
    bias: bool = False

    @property
    def in_side(self) -> int:
        return self.out_side * self.stride

    @property
    def weights(self) -> int:
        return self.kernel**2 * self.in_channels // self.groups * self.out_channels

    @property
    def params(self) -> int:
        extra = 2 * self.out_channels if self.batch_norm else 0  # BN scale and shift
        return self.weights + extra + (self.out_channels if self.bias else 0)

    @property
    def macs(self) -> int:
        return self.weights * self.out_side**2

    @property
    def activations_in(self) -> int:
        return self.in_channels * self.in_side**2

    @property
    def activations_out(self) -> int:
        return self.out_channels * self.out_side**2


def _conv(name, cin, cout, k, stride, side_out, groups=1) -> Layer:
    kind = "depthwise" if groups > 1 and groups == cin else "conv"
    return Layer(
        name=name,
        kind=kind,
        in_channels=cin,
        out_channels=cout,
        kernel=k,
        stride=stride,
        out_side=side_out,
        groups=groups,
    )


def resnet50() -> list[Layer]:
    """ResNet-50: a 7×7 stem, four stages of [3, 4, 6, 3] bottlenecks, a 1000-way classifier."""
    layers = [_conv(name="conv1", cin=3, cout=64, k=7, stride=2, side_out=112)]
    cin, side = 64, 56  # after the 3×3 stride-2 max pool
    for stage, (blocks, width) in enumerate(((3, 64), (4, 128), (6, 256), (3, 512)), start=1):
        for block in range(blocks):
            stride = 2 if block == 0 and stage > 1 else 1
            out_side, cout, tag = side // stride, width * 4, f"layer{stage}.{block}"
            layers += [
                _conv(name=f"{tag}.conv1", cin=cin, cout=width, k=1, stride=1, side_out=side),
                _conv(
                    name=f"{tag}.conv2",
                    cin=width,
                    cout=width,
                    k=3,
                    stride=stride,
                    side_out=out_side,
                ),
                _conv(name=f"{tag}.conv3", cin=width, cout=cout, k=1, stride=1, side_out=out_side),
            ]
            if block == 0:  # the projection shortcut
                layers.append(
                    _conv(
                        name=f"{tag}.downsample",
                        cin=cin,
                        cout=cout,
                        k=1,
                        stride=stride,
                        side_out=out_side,
                    )
                )
            cin, side = cout, out_side
    layers.append(
        Layer(
            name="fc",
            kind="fc",
            in_channels=2048,
            out_channels=1000,
            kernel=1,
            stride=1,
            out_side=1,
            batch_norm=False,
            bias=True,
        )
    )
    return layers


# (expansion t, output channels c, repeats n, first stride s): Sandler et al. 2018, Table 2.
_MOBILENET_V2 = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1))
_MOBILENET_V2 += ((6, 160, 3, 2), (6, 320, 1, 1))


def mobilenet_v2() -> list[Layer]:
    """MobileNetV2 (width 1.0): a 3×3 stem, 17 inverted residual blocks, 1×1 to 1280, classifier."""
    layers = [_conv(name="features.0", cin=3, cout=32, k=3, stride=2, side_out=112)]
    cin, side, index = 32, 112, 1
    for t, c, n, s in _MOBILENET_V2:
        for repeat in range(n):
            stride = s if repeat == 0 else 1
            hidden, out_side, tag = cin * t, side // stride, f"features.{index}"
            if t != 1:
                layers.append(
                    _conv(name=f"{tag}.expand", cin=cin, cout=hidden, k=1, stride=1, side_out=side)
                )
            layers.append(
                _conv(
                    name=f"{tag}.depthwise",
                    cin=hidden,
                    cout=hidden,
                    k=3,
                    stride=stride,
                    side_out=out_side,
                    groups=hidden,
                )
            )
            layers.append(
                _conv(name=f"{tag}.project", cin=hidden, cout=c, k=1, stride=1, side_out=out_side)
            )
            cin, side, index = c, out_side, index + 1
    layers.append(_conv(name=f"features.{index}", cin=cin, cout=1280, k=1, stride=1, side_out=side))
    layers.append(
        Layer(
            name="classifier",
            kind="fc",
            in_channels=1280,
            out_channels=1000,
            kernel=1,
            stride=1,
            out_side=1,
            batch_norm=False,
            bias=True,
        )
    )
    return layers


NETWORKS = {"ResNet-50": resnet50, "MobileNetV2": mobilenet_v2}


def network_layers(model_id: str) -> list[Layer]:
    """The layer list of a catalogued CNN by id, or ValueError naming the ones we have."""
    try:
        return NETWORKS[model_id]()
    except KeyError:
        known = ", ".join(NETWORKS)
        raise ValueError(f"no layer table for {model_id!r} (available: {known})") from None
